"""Every expression and template of a catalogue vetted once, when the catalogue is loaded: the
verdict (an expression's syntax tree and the names it reads, or the error that refused it; a
template parsed, or its error) is kept in the model (`Catalogue.verdicts`, the same table on each
of its entries and kernels: errkit/catalogue/load.py vets them all), and lint and every generator
read it instead of parsing again.

`vet` is the one place errkit asks errkit/core/expr.py to vet an expression; text that no
catalogue holds yet (a scan's drafts, an imported record) is vetted there too. (The explain side
vets an installed index's expressions on its own: errkit/explain/screen.py, registry.py.)"""

from __future__ import annotations

from typing import Iterable

from errkit.core import expr, template
from errkit.core.helpers import HELPERS


def vet(source: str, names: Iterable[str], functions: Iterable[str] | None = None) -> expr.Checked:
    """`source` vetted: the names it may read, the helpers it may call (HELPERS by default);
    expr.ExprError says why not."""
    return expr.check(source, names, HELPERS if functions is None else functions)


class Verdicts:
    """The verdicts of one catalogue's expressions and templates, each vetted or parsed once: by
    (source, the names it may read, the helpers it may call), and by template text. What was not
    vetted at load (an expression a generator derives) is vetted on first ask and kept."""

    def __init__(self) -> None:
        self._expressions: dict[tuple, expr.Checked | expr.ExprError] = {}
        self._templates: dict[str, template.Template | template.TemplateError] = {}

    def _verdict(self, source: str, names: Iterable[str], functions: Iterable[str] | None):
        key = (source, frozenset(names), None if functions is None else frozenset(functions))
        found = self._expressions.get(key)
        if found is None:
            try:
                found = vet(source, key[1], functions)
            except expr.ExprError as err:
                found = err
            self._expressions[key] = found
        return found

    def expression(self, source: str, names: Iterable[str], functions: Iterable[str] | None = None) -> expr.Checked:
        """The vetted expression (its tree is shared: read it, never change it); raises the
        expr.ExprError that refused it."""
        found = self._verdict(source, names, functions)
        if isinstance(found, expr.ExprError):
            raise found
        return found

    def compiled(self, source: str, names: Iterable[str]) -> tuple:
        """(code object, the names it reads, its loop names) of the vetted expression, what
        errkit/core/suggest.py and helpers.evaluate_code run (the format of explain's index cache:
        expr.compiled), compiled once from a copy of the verdict's tree."""
        key = ("compiled", source, frozenset(names))
        found = self._expressions.get(key)
        if found is None:
            import copy

            checked = self.expression(source, names)
            code = compile(expr.guarded(copy.deepcopy(checked.tree)), "<catalogue expression>", "eval")
            found = self._expressions[key] = (code, tuple(sorted(checked.names)), tuple(sorted(checked.loops)))
        return found

    def refusal(self, source: str, names: Iterable[str], functions: Iterable[str] | None = None) -> expr.ExprError | None:
        """Why the expression was refused, or None when it was not."""
        found = self._verdict(source, names, functions)
        return found if isinstance(found, expr.ExprError) else None

    def _parsed(self, text: str):
        found = self._templates.get(text)
        if found is None:
            try:
                found = template.parse(text)
            except template.TemplateError as err:
                found = err
            self._templates[text] = found
        return found

    def template(self, text: str) -> template.Template:
        """The template parsed (immutable); raises the template.TemplateError that refused it."""
        found = self._parsed(text)
        if isinstance(found, template.TemplateError):
            raise found
        return found

    def refused_template(self, text: str) -> template.TemplateError | None:
        """Why the template does not parse, or None when it does."""
        found = self._parsed(text)
        return found if isinstance(found, template.TemplateError) else None


def suggestion_code(verdicts: Verdicts, suggest: dict, cases, params: Iterable[str]) -> dict:
    """source -> (code object, the names it reads, its loop names) of a fix's suggestions (over
    `params`) and of its cases' (over `params` and what each case assumes), those vetted clean:
    the `vetted` table errkit/core/suggest.py computes them from, as explain's index cache holds it."""
    out = {}
    scopes = [(suggest.values(), set(params))]
    scopes += [(case["suggest"].values(), set(params) | set(case["assume"])) for case in cases or ()]
    for sources, names in scopes:
        for source in sources:
            if source not in out and not verdicts.refusal(source, names):
                out[source] = verdicts.compiled(source, names)
    return out

"""Lint's rules of one entry (errkit/catalogue/lint.py runs them with the rules across entries):
each a small named function of an entry and its Context, yielding Findings; their names, what they
report and their fixtures are registered in errkit/catalogue/rules.py. The expressions they check
come vetted with the catalogue (errkit/catalogue/vetting.py)."""

from __future__ import annotations

import builtins
import keyword
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Iterator, Mapping

from errkit.core import bounds, expr, helpers, normalise, runtime, suggest, template, values
from errkit.catalogue import kernels, wordings, releases, spec
from errkit.catalogue.load import display_path
from errkit.catalogue.model import Entry, Finding, Kernel
from errkit.catalogue.vetting import suggestion_code


@dataclass(frozen=True)
class Context:
    """What the entry rules read besides the entry itself: the catalogue's kernels, by id."""

    kernels: Mapping[str, Kernel]


EntryRule = Callable[[Entry, Context], Iterator[Finding]]


def place(entry: Entry, key_path: tuple) -> tuple[str, int, int]:
    """(path, line, column) of a key of the entry's file."""
    line, col = entry.positions.of(key_path) if entry.positions else (1, 1)
    return display_path(entry.source_path) if entry.source_path else entry.code, line, col


def at(entry: Entry, key_path: tuple, rule: str, message: str, severity: str = "error") -> Finding:
    path, line, col = place(entry, key_path)
    return Finding(path, line, col, rule, message, severity)


def _expressions(entry: Entry, ctx: Context) -> Iterator[tuple[tuple, str]]:
    if entry.check is not None:
        yield ("check",), entry.check
    for i, fix in enumerate(entry.fixes):
        for label, source in fix.suggest.items():
            yield ("fixes", i, "suggest", label), _expanded(entry, fix, source, ctx)


def _expanded(entry: Entry, fix, source: str, ctx: Context) -> str:
    """A suggestion with `valid(...)` written out (kernel_use reports what keeps it from being)."""
    return kernels.expanded(source, kernels.fix_kernel(entry, fix, ctx.kernels), entry.params.keys())


# -- per-entry rules ------------------------------------------------------------------------------


def templates(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Each wording parses, and every placeholder names a declared param."""
    for i in range(len(entry.wordings)):
        try:
            wordings.compile_wording(entry, i)
        except wordings.WordingError as err:
            key = ("message",) if i == 0 else ("variants", i - 1, "message")
            yield at(entry, key, err.rule, str(err))
    for i in range(len(entry.reads)):
        try:
            wordings.compile_read(entry, i)
        except wordings.WordingError as err:
            yield at(entry, ("reads", i), err.rule, str(err))


def own_message_fields(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """A validator raises its message as an f-string over its params, so fields must be bare param names."""
    if entry.explain_only:
        return
    try:
        tpl = entry.verdicts.template(entry.message)
    except template.TemplateError:
        return  # reported by `templates`
    for field in tpl.fields:
        if field.name not in entry.params and template.resolve(field, entry.params, {}) is not None:
            yield at(entry, ("message",), "undeclared-placeholder",
                     f"{{{field.name}}}: a validator's own message may only use declared param names")
        elif field.self_doc and field.doc != field.name + "=":
            yield at(entry, ("message",), "bad-template", f"write {{{field.name}=}} without spaces around the name")
        elif any(ch in field.spec for ch in "'\"\\\n"):
            yield at(entry, ("message",), "bad-template", f"{{{field.name}}}: quotes, backslashes and newlines are not allowed in a format spec")


def readable_wordings(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Explain finds a wording in text it reads normalised (errkit/core/normalise.py: curly quotes
    straightened, zero-width characters dropped, Unicode spaces made plain), refusing text with a
    NUL as binary, and the wording's regex reads a run of spaces as ASCII spaces: fixed text that any
    of these would change could never be read back."""
    texts = [(w.key_path, w.template) for w in wordings.wordings(entry)]
    texts += [(("reads", r.index), r.template) for r in wordings.reads(entry)]
    for key, tpl in texts:
        for run in tpl.literals:
            odd = _unreadable(run)
            if odd is not None:
                yield at(entry, key, "bad-template",
                         f"the fixed text {run!r} holds {odd!r}, which explain never reads as it is (a NUL, a space "
                         "other than ASCII's, a character copying changes: curly quotes, zero-width characters, an "
                         "HTML entity, a colour code); write it plainly")
                break


def _unreadable(run: str) -> str | None:
    """The character (or, for an HTML entity or a colour code, the text) of `run` explain cannot read."""
    for ch in run:
        if ch == "\x00" or (ch.isspace() and ch not in " \t\n\r\f\v") or normalise.normalise(ch)[0] != ch:
            return ch
    return run if normalise.normalise(run)[0] != run else None


# Values of each param type a message may be formatted with: what the generated validators pass
# (a float param may be given an int), every example's value of the param, and None when optional.
SPEC_SAMPLES: Mapping[str, tuple] = MappingProxyType({
    "int": (0, -7, 128), "float": (0.5, -2.0, 3, float("inf"), float("nan")), "bool": (True, False),
    "str": ("value", ""), "dtype": ("float32",), "shape": ((2, 3), ()), "bytes": (1 << 20,),
})
MAX_SPEC_NUMBER = 100  # the widest width or precision a format spec may ask for


def too_wide(field: template.Field) -> bool:
    """A format spec asking for a width or precision above MAX_SPEC_NUMBER: never rendered."""
    return any(len(n.lstrip("0")) > 3 or int(n) > MAX_SPEC_NUMBER for n in re.findall(r"[0-9]+", field.spec))


def format_specs(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Each `{name:spec}` of every wording formats every value of its param's type, as rendering
    will (format(value, spec): `{x:int}` is 'Invalid format specifier'), with no width or precision
    above MAX_SPEC_NUMBER (`{x:>1000000000}` would render a gigabyte)."""
    for wording in wordings.wordings(entry):
        for field in wording.template.fields:
            if not field.spec:
                continue
            shown = f"{{{field.expr}{'!' + field.conversion if field.conversion else ''}:{field.spec}}}"
            if too_wide(field):
                yield at(entry, wording.key_path, "bad-template",
                         f"{shown}: a width or precision above {MAX_SPEC_NUMBER} in a format spec")
                continue
            param = entry.params[wording.param_of(field)]
            kind = field.spec[-1:]
            if param.type in ("int", "bool") and (kind == "c" or (kind in "bBoxX" and "#" not in field.spec)):
                try:
                    written = format(10, field.spec)
                except ValueError:  # not a spec at all ('?X'): the samples below say so
                    written = None
                if written is not None:
                    yield at(entry, wording.key_path, "bad-template",
                             f"{shown}: explain cannot read the value back from this format spec (10 is written "
                             f"{written!r}): write a base with its prefix ('#x', '#b', '#o')")
                    continue
            samples = list(SPEC_SAMPLES.get(param.type, ()))
            for raw in (*entry.bad_examples, *entry.good_examples):
                try:
                    samples += [values.coerce(param.type, raw[param.name])] if param.name in raw else []
                except values.ValueTypeError:
                    continue  # reported by `examples`
            if param.optional:
                samples.append(None)
            for value in samples:
                try:
                    values.format_field(value, field.self_doc, field.conversion, field.spec)
                except Exception as err:  # noqa: BLE001 - whatever format() raises, rendering would
                    what = "None (the param is optional)" if value is None else f"the {param.type} {value!r}"
                    yield at(entry, wording.key_path, "bad-template",
                             f"{shown}: format spec {field.spec!r} cannot format {what}: {type(err).__name__}: {err}")
                    break


def exception_kind(entry: Entry, ctx: Context) -> Iterator[Finding]:
    if not entry.explain_only and entry.exception not in spec.EXCEPTIONS:
        yield at(entry, ("exception",), "wrong-type",
                 f"a validator raises {', '.join(spec.EXCEPTIONS)}; {entry.exception} is for explain_only entries")


def has_fixed_text(message: str) -> bool:
    try:
        return any(len(tok) >= 3 for run in template.parse(message).literals for tok in run.split())
    except template.TemplateError:
        return True  # reported by `templates`


def empty_messages(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """A message with no fixed text can only be recognised by where it was raised."""
    for i, wording in enumerate(entry.wordings):
        if not has_fixed_text(wording.message) and not wording.location:
            key = ("message",) if i == 0 else ("variants", i - 1, "message")
            what = "an empty message" if not wording.message.strip() else "a message with no fixed text"
            yield at(entry, key, "empty-message",
                     f"{what} would match anything: give it a `location` (file, optionally ' in function') so "
                     "explain tries it only for exceptions raised there")
    for i, variant in enumerate(entry.variants):
        if variant.located_only and not variant.location:
            yield at(entry, ("variants", i, "located_only"), "empty-message",
                     "a located_only wording needs a `location`: explain tries it only for exceptions raised there")
    if not entry.message.strip() and not entry.explain_only:
        yield at(entry, ("message",), "empty-message", "a validator must raise a message")


def _prose(entry: Entry) -> Iterator[tuple[tuple, str]]:
    """(key path, text) of every prose field a reader sees on the entry's page."""
    yield ("title",), entry.title
    yield ("explanation",), entry.explanation
    for name, param in entry.params.items():
        yield ("params", name, "description"), param.description
    for field_name in ("triggers", "situations", "prevention"):
        for i, text in enumerate(getattr(entry, field_name)):
            yield (field_name, i), text
    for i, fix in enumerate(entry.fixes):
        yield ("fixes", i, "summary"), fix.summary


def unfinished_drafts(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """A draft (`errkit scan --emit`) marks the prose a reviewer writes with TODO: it cannot be
    published until each is written."""
    for key, text in _prose(entry):
        if isinstance(text, str) and text.lstrip().upper().startswith("TODO"):
            yield at(entry, key, "unfinished-draft",
                     f"{'.'.join(map(str, key))} is still a draft's TODO: write it before the entry is published")


# Names of the generated validators module (errkit/generate/templates/validators.py.j2) besides its
# exception classes, its check_ and validate_ functions and its private `_rt_`, `_fx_`, `_tr_` ones.
MODULE_NAMES = frozenset({"CatalogueError", "ERRORS", "CHECKS", "DOCS_BASE", "DOCS_VERSION", "DOCS_URL_ENV"})


def reserved_name(name: str) -> str | None:
    """Why `name` cannot be a param, an argument or a binding of generated code, or None: it would
    not compile (a keyword), or would shadow what the generated code calls (a helper, a builtin
    such as getattr or type, a name of the module, a private helper's `_` prefix)."""
    if keyword.iskeyword(name):
        return "a Python keyword"
    if name in helpers.HELPERS or name in runtime.BINDINGS:
        return "a helper name"
    if name.startswith("_"):
        return "private (the generated module's helpers start with '_')"
    if name in vars(builtins):  # (dir() sorts a new list each call)
        return "a Python builtin"
    if name in MODULE_NAMES or name.endswith("Error"):
        return "a name of the generated module (its exception classes end in 'Error')"
    return None


def param_names(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Params become Python names in generated code: no keywords, helper names, builtins."""
    for name in entry.params:
        why = reserved_name(name)
        if why:
            yield at(entry, ("params", name), "bad-param-name", f"{name!r} is {why}; choose another name")


def unused_params(entry: Entry, ctx: Context) -> Iterator[Finding]:
    used: set[str] = set()
    for wording in wordings.wordings(entry):
        used.update(c.param for c in wording.captures)
    for read in wordings.reads(entry):
        used.update(c.param for c in read.captures)
    for _, source in _expressions(entry, ctx):
        if not entry.verdicts.refusal(source, entry.params.keys()):
            used |= entry.verdicts.expression(source, entry.params.keys()).names
    for name in entry.params:
        if name not in used:
            yield at(entry, ("params", name), "unused-param", f"param {name!r} is used by no wording, check or suggestion")


def expressions(entry: Entry, ctx: Context) -> Iterator[Finding]:
    for key, source in _expressions(entry, ctx):
        err = entry.verdicts.refusal(source, entry.params.keys())
        if err is not None:
            yield at(entry, key, err.rule, f"{source!r}: {err}")
    if entry.check is None and not entry.explain_only:
        yield at(entry, (), "missing-field", "missing required field 'check' (required unless explain_only)")


def fix_cases(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Each case of a fix gives values to suggestions of its fix, assumes plain values (a bool, number
    or string) of names the expressions may read, and its expressions read only the entry's params
    and those names."""
    for i, fix in enumerate(entry.fixes):
        for c, case in enumerate(fix.cases):
            for name, value in case.assume.items():
                if not isinstance(value, (bool, int, float, str)):
                    yield at(entry, ("fixes", i, "cases", c, "assume", name), "wrong-type",
                             f"assume {name}: {value!r} is not a bool, number or string")
            for label, source in case.suggest.items():
                key = ("fixes", i, "cases", c, "suggest", label)
                if label not in fix.suggest:
                    yield at(entry, key, "unknown-name", f"case {case.when!r}: the fix has no suggestion {label!r}"
                             f"{spec.did_you_mean(label, fix.suggest)}")
                    continue
                names = set(entry.params) | set(case.assume)
                try:  # as the index and the site ship it (kernels.case_sources)
                    written = kernels.expand(source, kernels.fix_kernel(entry, fix, ctx.kernels), names)
                    err = entry.verdicts.refusal(written, names)
                except expr.ExprError as refused:  # valid(...) cannot be written out
                    err = refused
                if err is not None:
                    yield at(entry, key, err.rule, f"{source!r}: {err}")


def examples(entry: Entry, ctx: Context) -> Iterator[Finding]:
    if entry.check is None:
        return
    if entry.verdicts.refusal(entry.check, entry.params.keys()):
        return  # reported by `expressions`
    checked = entry.verdicts.expression(entry.check, entry.params.keys())
    if not entry.bad_examples or not entry.good_examples:
        yield at(entry, ("examples",), "missing-examples", "an entry with a check needs at least one bad and one good example")
    for kind, rows, want in (("bad", entry.bad_examples, False), ("good", entry.good_examples, True)):
        for i, raw in enumerate(rows):
            key = ("examples", kind, i)
            missing = sorted(checked.names - raw.keys())
            unknown = sorted(raw.keys() - entry.params.keys())
            if unknown:
                yield at(entry, key + (unknown[0],), "example-param", f"{unknown[0]!r} is not a declared param")
                continue
            if missing:
                yield at(entry, key, "example-param", f"{kind} example lacks {', '.join(missing)} (used by the check)")
                continue
            try:
                env = entry.typed(raw)
            except values.ValueTypeError as err:
                yield at(entry, key, "example-param", str(err))
                continue
            for name, value in env.items():
                if value is None and not entry.params[name].optional:
                    yield at(entry, key + (name,), "example-param", f"{name} is not optional")
            try:
                holds = bool(helpers.evaluate_code(entry.verdicts.compiled(entry.check, entry.params.keys())[0], env))
            except bounds.OverBound as err:  # the check's cost on these values: the check is what to change
                yield at(entry, ("check",), "costly-expression",
                         f"{entry.check!r} on the {kind} example {dict(env)}: over a bound of an evaluation: {err}")
                continue
            except Exception as err:  # the check itself fails on these values: report, never crash
                yield at(entry, key, "example-error", f"check raised {type(err).__name__}: {err}")
                continue
            if holds != want:
                verdict = "satisfies" if holds else "violates"
                yield at(entry, key, "bad-example-passes" if kind == "bad" else "good-example-fails",
                         f"{kind} example {dict(env)} {verdict} the check {entry.check!r}")


def suggestion_bounds(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Every suggestion computes within the bounds of an evaluation (errkit/core/bounds.py) on
    each of the entry's sample values (its bad examples, then two made up: the values the site's
    pages compute them on), computed as explain computes them: the suggestions of all the fixes
    share one budget, as an answer's do."""
    fixes = [{"suggest": {label: _expanded(entry, fix, source, ctx) for label, source in fix.suggest.items()}}
             for fix in entry.fixes]
    if not any(fix["suggest"] for fix in fixes):
        return
    try:
        samples = wordings.sample_params(entry)
    except values.ValueTypeError:
        return  # reported by `examples`
    vetted = {}  # the suggestions' code, compiled from their verdicts (as explain's index cache holds it)
    for fix in fixes:
        vetted.update(suggestion_code(entry.verdicts, fix["suggest"], (), entry.params.keys()))
    reported = set()
    for params in samples:
        meter = bounds.Meter()
        for i, fix in enumerate(fixes):
            for found in suggest.suggestions(fix, params, vetted, meter=meter):
                if "not_computed" in found and (i, found["label"]) not in reported:
                    reported.add((i, found["label"]))
                    yield at(entry, ("fixes", i, "suggest", found["label"]), "costly-expression",
                             f"{fix['suggest'][found['label']]!r} on {params}: over a bound of an evaluation: "
                             f"{found['not_computed']} (explain would show it as not computed)")


def release_ranges(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Each wording's `releases` is a distribution and a non-empty range of release numbers that,
    when releases of that distribution were harvested, holds at least one of them."""
    root = entry.source_path.parent.parent if entry.source_path else None
    for i, wording in enumerate(entry.wordings):
        if wording.releases is None:
            continue
        key = ("releases",) if i == 0 else ("variants", i - 1, "releases")
        try:
            parsed = releases.parse(wording.releases)
        except releases.ReleasesError as err:
            yield at(entry, key, "bad-releases", str(err))
            continue
        known = releases.harvested(root, parsed.dist) if root else None
        if known and not releases.inside(parsed, known):
            yield at(entry, key, "bad-releases",
                     f"{wording.releases!r} holds none of the {len(known)} harvested {parsed.dist} releases "
                     f"({known[0]} to {known[-1]}, {releases.HARVEST}/{parsed.dist}.json)")


def kernel_use(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """The kernels an entry and its wordings name are declared, `valid(...)` can be written out,
    and each `sets` names a suggestion of its fix and a param of the entry."""
    named = [(("kernel",), entry.kernel)] + [(("raised_by", j), k) for j, k in enumerate(entry.raised_by)]
    for i, v in enumerate(entry.variants):
        named += [(("variants", i, "kernel"), v.kernel)] + [(("variants", i, "raised_by", j), k) for j, k in enumerate(v.raised_by)]
    named += [(("fixes", i, "kernel"), fix.kernel) for i, fix in enumerate(entry.fixes)]
    for key, name in named:
        if name and name not in ctx.kernels:
            yield at(entry, key, "unknown-kernel",
                     f"kernel {name!r} is not declared in catalog/kernels/{spec.did_you_mean(name, ctx.kernels)}")
    for i, fix in enumerate(entry.fixes):
        kernel_id = fix.kernel or entry.kernel
        for label, source in fix.suggest.items():
            if kernels.uses_valid(source) and (not kernel_id or kernel_id in ctx.kernels):
                try:
                    kernels.expand(source, kernels.fix_kernel(entry, fix, ctx.kernels), entry.params.keys())
                except expr.ExprError as err:
                    yield at(entry, ("fixes", i, "suggest", label), err.rule, f"{source!r}: {err}")
        for label, param in fix.sets.items():
            if label not in fix.suggest:
                yield at(entry, ("fixes", i, "sets", label), "unknown-name", f"sets {label!r}: the fix has no suggestion of that label")
            for one in param.split(", "):
                if one not in entry.params:
                    yield at(entry, ("fixes", i, "sets", label), "unknown-name",
                             f"sets {one!r}: not a param of the entry{spec.did_you_mean(one, entry.params)}")


def alternatives_last(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Fixes within the library that raised the error come first; alternatives (another library,
    `alternative: true`) after them, and never alone."""
    for i, fix in enumerate(entry.fixes):
        if not fix.alternative and any(f.alternative for f in entry.fixes[:i]):
            yield at(entry, ("fixes", i), "alternative-first",
                     "a fix within the library comes after an alternative: put alternatives (alternative: true) last")
    if entry.fixes and all(f.alternative for f in entry.fixes):
        yield at(entry, ("fixes", 0), "alternative-first", "every fix is an alternative: give a fix within the library first")


ENTRY_RULES: tuple[EntryRule, ...] = (templates, own_message_fields, readable_wordings, format_specs, param_names, exception_kind, empty_messages, unused_params, expressions,
                                      examples, suggestion_bounds, release_ranges, alternatives_last, kernel_use, fix_cases, unfinished_drafts)

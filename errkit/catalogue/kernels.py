"""A kernel's rules, declared once (catalog/kernels/*.yaml), applied where suggestions compute values.

In a `suggest` expression, `valid(NAME, ITEMS)` is the items for which every rule of the entry's
kernel on NAME holds, the other values those rules read being the ones the message shows. It is
written out as `[candidate_ for candidate_ in ITEMS if RULE and ...]` before the expression is
vetted, compiled for `errkit explain` and translated for the paste page: the rule is stated once,
and every suggestion that picks a value of NAME satisfies all of it. A rule that reads a value the
message does not show cannot be applied there, and is left out of that suggestion.

Catalogue side: imports the full `ast` (never on the explain path).
"""

from __future__ import annotations

import ast
from typing import Iterable

from errkit.core import expr
from errkit.catalogue.model import Kernel

LOOP = "candidate_"


def uses_valid(source: str) -> bool:
    return "valid(" in source


def expand(source: str, kernel: Kernel | None, params: Iterable[str]) -> str:
    """`source` with each `valid(NAME, ITEMS)` written out; ExprError names what is wrong."""
    if not uses_valid(source):
        return source
    shown = set(params)
    expr.parse(source)  # a syntax error is an ExprError with its column

    class Expand(ast.NodeTransformer):
        count = 0  # each valid(...) gets its own loop name: two in one expression do not clash

        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            if not (isinstance(node.func, ast.Name) and node.func.id == "valid"):
                return node
            if kernel is None:
                raise expr.ExprError("unknown-name", "valid() needs the entry's kernel: add `kernel: <id>` (catalog/kernels/)",
                                     node.col_offset)
            if len(node.args) != 2 or node.keywords or not isinstance(node.args[0], ast.Name):
                raise expr.ExprError("bad-expression", "valid(NAME, ITEMS) takes the name of a kernel value and a list",
                                     node.col_offset)
            name = node.args[0].id
            if name not in kernel.values:
                raise expr.ExprError("unknown-name", f"{name!r} is not a value of kernel {kernel.id!r} "
                                     f"(its values: {', '.join(sorted(kernel.values))})", node.col_offset)
            loop = LOOP if not self.count else f"{LOOP}{self.count}"
            self.count += 1
            conditions = [f"({_rename(rule.check, name, loop)})" for rule in applicable(kernel, name, shown)]
            items = ast.unparse(node.args[1])
            written = f"[{loop} for {loop} in {items} if {' and '.join(conditions) or 'True'}]"
            return ast.parse(written, mode="eval").body

    return ast.unparse(Expand().visit(ast.parse(source.strip(), mode="eval")).body)


def applicable(kernel: Kernel, name: str, shown: set[str]) -> list:
    """The kernel's rules on `name` whose other values are all shown."""
    out = []
    for rule in kernel.rules:
        names = kernel.verdicts.expression(rule.check, kernel.values.keys()).names
        if name in names and names - {name} <= shown:
            out.append(rule)
    return out


def _rename(source: str, name: str, loop: str) -> str:
    class Rename(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return ast.copy_location(ast.Name(id=loop if node.id == name else node.id, ctx=node.ctx), node)

    return ast.unparse(Rename().visit(ast.parse(source.strip(), mode="eval")).body)


def suggestion_sources(entry, kernels) -> list[dict[str, str]]:
    """Each fix's suggestions with `valid(...)` written out (what the index and the site compile)."""
    return [{label: expand(source, fix_kernel(entry, fix, kernels), entry.params.keys()) for label, source in fix.suggest.items()}
            for fix in entry.fixes]


def case_sources(entry, kernels) -> list[list[dict]]:
    """Each fix's cases as the index holds them: when, assume, and suggestions with `valid(...)` written out."""
    return [[{"when": case.when, "assume": dict(case.assume),
              "suggest": {label: expand(source, fix_kernel(entry, fix, kernels), set(entry.params) | set(case.assume))
                          for label, source in case.suggest.items()}}
             for case in fix.cases]
            for fix in entry.fixes]


def fix_kernel(entry, fix, kernels) -> Kernel | None:
    """The kernel whose rules a fix's `valid(...)` applies: the fix's own, else the entry's."""
    name = fix.kernel or entry.kernel
    return kernels.get(name) if name else None


def expanded(source: str, kernel: Kernel | None, names: Iterable[str]) -> str:
    """A suggestion with `valid(...)` written out (expand); the source as written when it cannot be
    (lint's kernel rules say why)."""
    if not uses_valid(source):
        return source
    try:
        return expand(source, kernel, names)
    except expr.ExprError:
        return source

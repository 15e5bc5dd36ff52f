"""Copy a module's top-level definitions, and everything they use from that module, into generated
code under a prefix: `carry(runtime, ["shape"], "_rt_")` is the source of `_rt_shape` with the
`_rt_is_array`, `_rt__ARRAY_TYPES` it reads, so a generated module needs no import of errkit.

The copy is the module's own text (comments and docstrings kept), with only the names renamed at
the positions the syntax tree gives: the definitions stay written and tested in one place. Imports
the copied code needs are re-emitted as `import os as _rt_os`, and only standard-library ones are
allowed; imports inside a function body (numpy, jax: read lazily) are copied as written.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class _TopLevel:
    node: ast.stmt
    first_line: int  # 1-based, including the comment block directly above the statement


def _defined_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            return []
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _references(node: ast.AST) -> set[str]:
    """Every name the node reads or writes, annotations left out (the copy postpones them)."""
    found: set[str] = set()

    def visit(n: ast.AST) -> None:
        if isinstance(n, ast.Name):
            found.add(n.id)
        elif isinstance(n, ast.Global):
            found.update(n.names)
        elif isinstance(n, ast.alias) and n.asname:
            found.add(n.asname)
        for field, value in ast.iter_fields(n):
            if field in ("annotation", "returns"):
                continue
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    visit(child)

    visit(node)
    return found


def _locals_shadowing(node: ast.stmt, names: set[str]) -> set[str]:
    """Names of `names` that a function (its parameters, assignments without `global`) or a class
    body binds locally: renaming them everywhere would break that scope, so carry refuses them."""
    clashes: set[str] = set()
    for scope in ast.walk(node):
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = scope.args
            params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
            declared = {g for n in ast.walk(scope) if isinstance(n, ast.Global) for g in n.names}
            stored = {n.id for n in ast.walk(scope) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
            stored |= {a.asname or a.name for n in ast.walk(scope) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
            clashes |= (params | (stored - declared)) & names
        elif isinstance(scope, ast.ClassDef):
            for stmt in scope.body:
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                    clashes |= set(_defined_names(stmt)) & names
    return clashes


def _top_level(module: ModuleType) -> tuple[list[str], dict[str, _TopLevel], list[_TopLevel]]:
    source = inspect.getsource(module)
    lines = source.splitlines()
    statements = []
    for node in ast.parse(source).body:
        first = node.lineno if not getattr(node, "decorator_list", None) else node.decorator_list[0].lineno
        while first > 1 and lines[first - 2].lstrip().startswith("#"):
            first -= 1
        statements.append(_TopLevel(node, first))
    defined = {name: stmt for stmt in statements for name in _defined_names(stmt.node)}
    return lines, defined, statements


def closure(module: ModuleType, names) -> set[str]:
    """`names` and every top-level name of `module` their definitions use, transitively."""
    _, defined, _ = _top_level(module)
    todo, seen = list(names), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in defined:
            raise ValueError(f"{module.__name__} defines no {name!r} to carry")
        seen.add(name)
        node = defined[name].node
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            todo += sorted(_references(node) & defined.keys())
    return seen


def _import_text(node: ast.Import | ast.ImportFrom, wanted: set[str], prefix: str) -> list[str]:
    out = []
    for alias in node.names:
        bound = (alias.asname or alias.name).split(".")[0]
        if bound not in wanted:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level or node.module.split(".")[0] not in sys.stdlib_module_names:
                raise ValueError(f"cannot carry `from {'.' * node.level}{node.module} import {alias.name}`: not the standard library")
            out.append(f"from {node.module} import {alias.name} as {prefix}{bound}")
        else:
            if alias.name.split(".")[0] not in sys.stdlib_module_names:
                raise ValueError(f"cannot carry `import {alias.name}`: not the standard library")
            if "." in alias.name and not alias.asname:
                raise ValueError(f"cannot carry `import {alias.name}` without `as`")
            out.append(f"import {alias.name} as {prefix}{bound}")
    return out


def _renamed(lines: list[str], stmt: _TopLevel, rename: dict[str, str]) -> str:
    """The statement's text (with its comment block) with every name of `rename` renamed in place.

    Edited as UTF-8 bytes: the tree's column offsets count bytes."""
    node = stmt.node
    raw = [line.encode("utf-8") for line in lines]
    edits: list[tuple[int, int, int, bytes]] = []  # (line, start byte, end byte, new text); lines 1-based

    def at(line: int, start: int, end: int | None, pattern: str) -> None:
        found = re.search(pattern.encode("utf-8"), raw[line - 1][start:end])
        if found is None:  # the tree said it is here
            raise ValueError(f"carry: cannot find {pattern!r} on line {line}: {lines[line - 1]!r}")
        edits.append((line, start + found.start("name"), start + found.end("name"), rename[found["name"].decode()].encode()))

    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in rename:
            at(n.lineno, n.col_offset, n.end_col_offset, rf"^(?P<name>{re.escape(n.id)})$")
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name in rename:
            keyword = "class" if isinstance(n, ast.ClassDef) else "def"
            at(n.lineno, n.col_offset, None, rf"\b{keyword}\s+(?P<name>{re.escape(n.name)})\b")
        elif isinstance(n, ast.Global):
            for name in n.names:
                if name in rename:
                    at(n.lineno, n.col_offset, n.end_col_offset if n.end_lineno == n.lineno else None,
                       rf"[\s,](?P<name>{re.escape(name)})\b")
        elif isinstance(n, ast.alias) and n.asname in rename:
            at(n.lineno, n.col_offset, n.end_col_offset, rf"\bas\s+(?P<name>{re.escape(n.asname)})\b")
    text = raw[stmt.first_line - 1 : node.end_lineno]
    for line, start, end, new in sorted(set(edits), reverse=True):
        row = line - stmt.first_line
        text[row] = text[row][:start] + new + text[row][end:]
    return b"\n".join(text).decode("utf-8")


@dataclass(frozen=True)
class Carried:
    imports: tuple[str, ...]  # `import os as _rt_os`: for the generated module's import block
    source: str  # the definitions, in the module's order, blocks two blank lines apart


def carry(module: ModuleType, names, prefix: str) -> Carried:
    """What defines `prefix + name` for each of `names`, and for what they use of `module`."""
    needed = closure(module, names)
    if not needed:
        return Carried((), "")
    lines, defined, statements = _top_level(module)
    rename = {name: prefix + name for name in needed}
    imports, blocks = [], []
    for stmt in statements:
        own = set(_defined_names(stmt.node)) & needed
        if not own:
            continue
        if isinstance(stmt.node, (ast.Import, ast.ImportFrom)):
            imports += _import_text(stmt.node, own, prefix)
            continue
        clashes = _locals_shadowing(stmt.node, needed)
        if clashes:
            raise ValueError(f"cannot carry {module.__name__}.{sorted(own)[0]}: it binds {sorted(clashes)} locally, a top-level name it also uses")
        if set(_defined_names(stmt.node)) - needed:
            raise ValueError(f"cannot carry part of `{lines[stmt.node.lineno - 1].strip()}`: one statement, several names")
        blocks.append(_renamed(lines, stmt, rename))
    return Carried(tuple(imports), "\n\n\n".join(blocks))

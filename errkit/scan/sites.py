"""Raise sites: walking a module for raise/assert sites, their conditions, params and types, and
the exception classes of the scanned tree; `scan_paths` puts it together.

A site is `raise X(...)` / `raise X` where X is ValueError, NotImplementedError, TypeError,
AssertionError or a class of the scanned tree deriving from one of them, or `assert cond, msg`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from errkit.core import expr, helpers, template
from errkit.catalogue.entry_rules import reserved_name
from errkit.catalogue.naming import guess_type, param_name
from errkit.catalogue.vetting import vet
from errkit.scan.files import Skip, display_path, gc_paused, is_generated, parse_source, python_files, read_source
from errkit.scan.messages import Chain, MessageBuilder, field_text, parse_template

BUILTINS = ("ValueError", "NotImplementedError", "TypeError", "AssertionError", "ExceptionGroup")


@dataclass
class RawSite:
    """A raise/assert as the AST shows it, before we know whether its exception is one of ours."""

    exception: str  # the raised name's last part ("ValueError", "MyError", "err")
    line: int
    function: str  # qualified name inside the file ("Config.__post_init__.check"), "<module>" at top level
    template: str  # "" when the raise has no message
    hints: dict[str, str]  # field expression -> type, from %-conversions
    condition: str | None  # when it raises: the guarding `if` test, or `not (assert test)`


@dataclass
class Site:
    path: str  # as displayed
    abspath: str
    raw: RawSite
    base: str  # the builtin the exception is or derives from
    generated: bool
    params: dict[str, str] = field(default_factory=dict)  # param -> type
    param_of: dict[str, str] = field(default_factory=dict)  # field expression -> param
    check: str | None = None  # the invariant, over params, when it is vetted (errkit/catalogue/vetting.py)
    covered_by: str | None = None

    line = property(lambda self: self.raw.line)
    function = property(lambda self: self.raw.function)
    exception = property(lambda self: self.raw.exception)
    template = property(lambda self: self.raw.template)
    condition = property(lambda self: self.raw.condition)

    @property
    def bare_function(self) -> str:
        """The name a traceback shows for the enclosing function."""
        return self.function.rsplit(".", 1)[-1]

    def as_json(self) -> dict:
        return {
            "path": self.path, "line": self.line, "function": self.function, "exception": self.exception,
            "template": self.template, "params": self.params, "condition": self.condition, "covered_by": self.covered_by,
        }


# -- walking a module -------------------------------------------------------------------------------


class SiteCollector:
    """One pass over a module: raise/assert sites with their context, and class bases."""

    def __init__(self) -> None:
        self.sites: list[RawSite] = []
        self.classes: dict[str, set[str]] = {}

    def collect(self, tree: ast.Module) -> "SiteCollector":
        self.block(tree.body, [], [], None)
        return self

    def block(self, stmts: list[ast.stmt], scope: list[str], chain: Chain, guard: ast.expr | None) -> None:
        for i, stmt in enumerate(stmts):
            kind = _STATEMENT_KIND.get(type(stmt), _UNSEEN)
            if kind is _UNSEEN:
                kind = _STATEMENT_KIND[type(stmt)] = _statement_kind(type(stmt))
            if kind is None:
                continue  # a simple statement (assignment, call, return...): no site, nothing inside
            if kind is _FUNCTION:
                self.block(stmt.body, scope + [stmt.name], [], None)
                continue
            here = chain + [(stmts, i)]
            if kind is _RAISE:
                self.raise_site(stmt, scope, here, guard)
            elif kind is _ASSERT:
                if stmt.msg is not None:
                    self.assert_site(stmt, scope, here)
            elif kind is _CLASS:
                self.classes.setdefault(stmt.name, set()).update(filter(None, map(_last_name, stmt.bases)))
                self.block(stmt.body, scope + [stmt.name], [], None)
            elif kind is _IF:
                self.block(stmt.body, scope, here, stmt.test)
                # An `elif`/`else` branch raises under the negation of every test above it: not simple.
                if stmt.orelse:
                    self.block(stmt.orelse, scope, here, None)
            else:
                for body in _child_blocks(stmt):
                    self.block(body, scope, here, None)

    def raise_site(self, stmt: ast.Raise, scope: list[str], chain: Chain, guard: ast.expr | None) -> None:
        if stmt.exc is None:
            return  # a bare re-raise
        call = stmt.exc if isinstance(stmt.exc, ast.Call) else None
        name = _last_name(call.func if call else stmt.exc)
        if name is None:
            return
        message = _message_arg(call) if call else None
        self.add(name, stmt, scope, chain, message, condition_text(guard) if guard is not None else None)

    def assert_site(self, stmt: ast.Assert, scope: list[str], chain: Chain) -> None:
        simple = condition_text(stmt.test) is not None
        self.add("AssertionError", stmt, scope, chain, stmt.msg, ast.unparse(negate(stmt.test)) if simple else None)

    def add(self, name, stmt, scope, chain, message, condition) -> None:
        builder = MessageBuilder()
        text = builder.build(message, chain) if message is not None else ""
        if not _valid_template(text):  # a message we cannot express as a template: one opaque field
            text, builder.hints = field_text(message), {}
            text = text if _valid_template(text) else "{message}"
        self.sites.append(RawSite(name, stmt.lineno, ".".join(scope) or "<module>", text, builder.hints, condition))


def _valid_template(text: str) -> bool:
    try:
        parse_template(text)
    except template.TemplateError:
        return False
    return True


# What a statement is to the walk, by its type (looked up once per type, not tested per statement).
_RAISE, _ASSERT, _FUNCTION, _CLASS, _IF, _COMPOUND = "raise", "assert", "function", "class", "if", "compound"
_UNSEEN = object()
_STATEMENT_KIND: dict[type, str | None] = {}
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statement_kind(kind: type) -> str | None:
    for base, name in ((ast.Raise, _RAISE), (ast.Assert, _ASSERT), (ast.FunctionDef, _FUNCTION),
                       (ast.AsyncFunctionDef, _FUNCTION), (ast.ClassDef, _CLASS), (ast.If, _IF)):
        if issubclass(kind, base):
            return name
    return _COMPOUND if any(f in getattr(kind, "_fields", ()) for f in _BLOCK_FIELDS) else None


def _child_blocks(stmt: ast.stmt) -> Iterator[list[ast.stmt]]:
    for name in ("body", "orelse", "finalbody"):
        body = getattr(stmt, name, None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            yield body
    for handler in getattr(stmt, "handlers", ()) or ():
        yield handler.body
    for case in getattr(stmt, "cases", ()) or ():
        yield case.body


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _message_arg(call: ast.Call) -> ast.expr | None:
    if call.args:
        return None if isinstance(call.args[0], ast.Starred) else call.args[0]
    for kw in call.keywords:
        if kw.arg in ("message", "msg"):
            return kw.value
    return None


# -- conditions -------------------------------------------------------------------------------------

_NEGATED = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
            ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_NOT_SIMPLE = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr, ast.Await,
               ast.Yield, ast.YieldFrom, ast.Starred, ast.JoinedStr)


# What each _NOT_SIMPLE node writes in `ast.unparse`'s text: a condition whose text holds none
# of them has none of those nodes, and its tree need not be walked.
_NOT_SIMPLE_MARKS = ("lambda", " for ", ":=", "await", "yield", "*", "f'", 'f"')


def condition_text(node: ast.expr) -> str | None:
    """The condition as source when it is simple: short, no lambdas, comprehensions or assignments."""
    text = ast.unparse(node)
    if len(text) > 200:
        return None
    if any(mark in text for mark in _NOT_SIMPLE_MARKS) and any(isinstance(n, _NOT_SIMPLE) for n in _nodes(node)):
        return None
    return text


def _nodes(tree: ast.AST) -> list[ast.AST]:
    """The nodes of an expression, in `ast.walk`'s order, less contexts and operators (no caller
    looks for those), as a list: no generator per node."""
    out, i = [tree], 0
    while i < len(out):
        node = out[i]
        i += 1
        for name in _child_fields(node):
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                out.append(value)
            elif isinstance(value, list):
                out += [v for v in value if isinstance(v, ast.AST)]
    return out


def _child_fields(node: ast.AST) -> tuple[str, ...]:
    """The node's fields less its context and operators: leaves no caller looks at or replaces."""
    fields = _CHILD_FIELDS.get(type(node))
    if fields is None:
        fields = _CHILD_FIELDS[type(node)] = tuple(f for f in node._fields if f not in ("ctx", "op", "ops"))
    return fields


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def negate(node: ast.expr) -> ast.expr:
    """`not (node)`, simplified when it is one comparison (negate the operator) or a `not`."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return ast.Compare(left=node.left, ops=[_NEGATED[type(node.ops[0])]()], comparators=node.comparators)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return node.operand
    return ast.UnaryOp(op=ast.Not(), operand=node)


def _key(node: ast.AST):
    """What `ast.dump(node)` says, cheaper for names and attributes: equal keys <=> equal dumps."""
    kind = type(node)
    if kind is ast.Name:
        return kind, node.id, type(node.ctx)
    if kind is ast.Attribute:
        return kind, _key(node.value), node.attr, type(node.ctx)
    return ast.dump(node)


def _field_key(source: str, parsed: dict) -> tuple | None:
    """(key, node type) of a field expression, or None when it does not parse; remembered in `parsed`."""
    if source not in parsed:
        try:
            node = ast.parse(f"({source})", mode="eval").body
        except SyntaxError:
            parsed[source] = None
        else:
            parsed[source] = (_key(node), type(node))
    return parsed[source]


def _to_params(node: ast.AST, param_of_key: dict, kinds: set[type]) -> ast.AST:
    """Replace (in place) each sub-expression that a message field prints by that field's param."""
    if type(node) in kinds:  # only node types some field has are worth a key
        param = param_of_key.get(_key(node))
        if param is not None:
            return ast.Name(id=param, ctx=ast.Load())
    for name in _child_fields(node):
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            setattr(node, name, _to_params(value, param_of_key, kinds))
        elif isinstance(value, list):
            value[:] = [_to_params(v, param_of_key, kinds) if isinstance(v, ast.AST) else v for v in value]
    return node


def invariant(site: Site, parsed: dict | None = None) -> ast.expr | None:
    """The condition that must hold (the raise condition negated), written over the site's params.

    `parsed` remembers field expressions already parsed (sites share most of them)."""
    if not site.condition:
        return None
    parsed = {} if parsed is None else parsed
    param_of_key, kinds = {}, set()
    for source, param in site.param_of.items():
        found = _field_key(source, parsed)
        if found is not None:
            param_of_key[found[0]] = param
            kinds.add(found[1])
    tree = negate(ast.parse(site.condition, mode="eval").body)
    return _to_params(tree, param_of_key, kinds)  # no locations needed: the tree is only unparsed


def _numeric_names(nodes: list[ast.AST]) -> set[str]:
    out: set[str] = set()
    for node in nodes:
        operands: list[ast.expr] = []
        if isinstance(node, ast.BinOp):
            operands = [node.left, node.right]
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, sides, sides[1:]):
                ints = [s for s in (left, right) if isinstance(s, ast.Constant) and type(s.value) is int]
                if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) or ints:
                    operands += [left, right]
        out |= {n.id for n in operands if isinstance(n, ast.Name)}
    return out


# -- params and types -------------------------------------------------------------------------------

_SPEC_INT, _SPEC_FLOAT = "bcdoxXn", "eEfFgG%"


def param_for(expression: str) -> str:
    """A param name for a field expression: `self.block_q` -> block_q, `q.shape` -> q_shape."""
    m = re.fullmatch(r"(?:self|cls)\.([A-Za-z_][A-Za-z0-9_]*)", expression.strip())
    name = param_name(m.group(1) if m else expression)[:60].rstrip("_") or "value"
    if reserved_name(name):  # a draft lints clean: no keyword, helper, builtin (errkit lint's bad-param-name)
        name = f"{name}_value"
    return name


def type_for(field_: template.Field, param: str, hints: dict[str, str]) -> str:
    if field_.name in hints:
        return hints[field_.name]
    kind = field_.spec[-1:] if field_.spec else ""
    if kind and kind in _SPEC_INT or re.search(r"[,_]$", field_.spec or ""):
        return "int"
    if kind and kind in _SPEC_FLOAT:
        return "float"
    if re.match(r"len\(", field_.name):
        return "int"
    if param == "name" or param.endswith("_name"):
        return "str"
    return guess_type(param)


def assign_params(site: Site, parsed: dict | None = None) -> None:
    """Fill the site's params (name -> type), the field -> param map and the check.

    `parsed`: field expressions already parsed, shared by the sites of one scan."""
    tpl = parse_template(site.template)
    for f in tpl.fields:
        if f.name in site.param_of:
            continue
        name, n = param_for(f.name), 2
        while name in site.params:
            name, n = f"{param_for(f.name)}_{n}", n + 1
        site.param_of[f.name] = name
        site.params[name] = type_for(f, name, site.raw.hints)
    tree = invariant(site, parsed)
    if tree is None:
        return
    nodes = _nodes(tree)
    for name in _numeric_names(nodes) & set(site.params):
        if site.params[name] == "str":
            site.params[name] = "int"
    if any(isinstance(n, ast.Name) and n.id not in site.params and n.id not in helpers.HELPERS for n in nodes):
        return  # names the message does not print: vetting would refuse them (quicker to see here)
    source = ast.unparse(tree)
    try:
        vet(source, site.params)
    except expr.ExprError:
        return
    site.check = source


# -- exception classes ------------------------------------------------------------------------------


def exception_bases(classes: dict[str, set[str]]) -> dict[str, str]:
    """Every exception name of ours -> the builtin it derives from (classes of the tree included)."""
    known = {name: name for name in BUILTINS}
    changed = True
    while changed:
        changed = False
        for name, bases in classes.items():
            if name in known:
                continue
            base = next((known[b] for b in sorted(bases) if b in known), None)
            if base:
                known[name] = base
                changed = True
    return known


# -- scanning ---------------------------------------------------------------------------------------


@dataclass
class ScanResult:
    sites: list[Site]
    files: int
    problems: list[str]


def scan_paths(paths: Iterable[str], report=None) -> ScanResult:
    """Scan files and folders; every file that cannot be read or parsed is reported and skipped."""
    problems: list[str] = []

    def note(path: Path, reason: str) -> None:
        line = f"{display_path(path)}: {reason}; skipped"
        problems.append(line)
        if report:
            report(line)

    pending: list[tuple[Path, bool, SiteCollector]] = []
    classes: dict[str, set[str]] = {}
    for path in python_files(paths, note):
        try:
            text = read_source(path)
            with gc_paused():
                collector = SiteCollector().collect(parse_source(text, path))
        except Skip as err:
            note(path, str(err))
            continue
        except Exception as err:  # odd code must never stop the scan
            note(path, f"cannot scan: {type(err).__name__}: {err}")
            continue
        pending.append((path, is_generated(text), collector))
        for name, bases in collector.classes.items():
            classes.setdefault(name, set()).update(bases)
    known = exception_bases(classes)
    sites = []
    for path, generated, collector in pending:
        if not collector.sites:
            continue
        shown, absolute = display_path(path), path.absolute().as_posix()  # once per file, not per site
        sites += [Site(shown, absolute, raw, known[raw.exception], generated)
                  for raw in collector.sites if raw.exception in known]
    parsed: dict[str, tuple | None] = {}  # field expression -> its parsed key (see _field_key), for this scan
    for site in sites:
        try:
            assign_params(site, parsed)
        except Exception:  # a template or condition we cannot type: keep the site, untyped
            site.check = None
    return ScanResult(sites, len(pending), problems)

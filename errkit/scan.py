"""`errkit scan`: find every raise site in a Python tree, audit catalogue coverage, draft entries.

The flow, one direction:

    paths ─▶ files ─▶ ast ─▶ raw sites (+ class bases) ─▶ sites (exception known, params typed)
                                                        ├─▶ coverage (matcher index) ─▶ table / JSON Lines
                                                        └─▶ drafts (ruamel.yaml, lint-shaped) for the gaps

A site is `raise X(...)` / `raise X` where X is ValueError, NotImplementedError, TypeError,
AssertionError or a class of the scanned tree deriving from one of them, or `assert cond, msg`.
Its message becomes an f-string template (template.py's syntax): f-strings (`{x=}`, `{a * b=}`,
format specs), `%` and `.format` formatting, implicit and `+` concatenation, and a message built
in a variable before the raise. A file that cannot be read or parsed is reported and skipped.
"""

from __future__ import annotations

import ast
import contextlib
import errno
import functools
import gc
import io
import itertools
import json
import keyword
import os
import random
import re
import string
import sys
import tokenize
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from . import expr, fixes, runtime, spec, template, values
from .authoring import _guess_type, _param_name
from .errors import UsageError

BUILTINS = ("ValueError", "NotImplementedError", "TypeError", "AssertionError")
GENERATED_MARK = "errkit generate"  # the header of a module `errkit generate` wrote
MAX_FILE_BYTES = 5_000_000
MAX_RESOLVE_DEPTH = 12  # message variables followed through at most this many assignments
SKIP_DIRS = ("__pycache__", "node_modules")
EXIT_OK, EXIT_GAPS, EXIT_NOTHING = 0, 1, 2


# -- sites ------------------------------------------------------------------------------------------


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
    check: str | None = None  # the invariant, over params, when expr.check accepts it
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


class Skip(Exception):
    """A file we cannot scan; the message says why (one line)."""


# -- files ------------------------------------------------------------------------------------------


def display_path(path: Path) -> str:
    try:
        return str(path.absolute().relative_to(Path.cwd().absolute()))
    except ValueError:
        return str(path)


def python_files(paths: Iterable[str], report) -> Iterator[Path]:
    """Every file to scan, once, in a stable order; problems with the paths go to `report`."""
    seen: set[str] = set()
    for raw in paths:
        path = Path(raw)
        try:
            if path.is_dir():
                yield from _walk(path, frozenset(), seen, report)
                continue
            path.stat()  # a missing file or a link loop raises here
        except OSError as err:
            report(path, _os_reason(err))
            continue
        if _first_visit(path, seen):
            yield path


def _walk(folder: Path, ancestors: frozenset, seen: set[str], report) -> Iterator[Path]:
    """Python files under `folder`; a folder link back to one of its own ancestors is a loop."""
    try:
        info = folder.stat()
        here = (info.st_dev, info.st_ino)
        if here in ancestors:
            report(folder, "symlink loop (links back to a folder above it)")
            return
        if not _first_visit(folder, seen):
            return  # reached twice through links: scanned once
        children = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as err:
        report(folder, _os_reason(err))
        return
    for child in children:
        path = Path(child.path)
        try:
            if child.is_dir():
                if not child.name.startswith(".") and child.name not in SKIP_DIRS:
                    yield from _walk(path, ancestors | {here}, seen, report)
            elif child.name.endswith(".py"):
                path.stat()
                if _first_visit(path, seen):
                    yield path
        except OSError as err:
            report(path, _os_reason(err))


def _first_visit(path: Path, seen: set[str]) -> bool:
    key = os.path.realpath(path)
    if key in seen:
        return False
    seen.add(key)
    return True


def _os_reason(err: OSError) -> str:
    if err.errno == errno.ENOENT:
        return "no such file or directory"
    if err.errno == errno.ELOOP:
        return "symlink loop"
    return (err.strerror or str(err)).lower()


def read_source(path: Path) -> str:
    """The file's text, decoded as Python decodes source (PEP 263); Skip when it is not Python text."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise Skip(f"file is {size} bytes; at most {MAX_FILE_BYTES}")
        data = path.read_bytes()
    except OSError as err:
        raise Skip(_os_reason(err)) from None
    if b"\0" in data[:8192]:
        raise Skip("binary file")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:
        if "invalid or missing" not in str(err):
            raise Skip(f"bad encoding declaration: {err}") from None
        encoding = "utf-8"  # no declaration, and the first lines are not UTF-8: say where
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as err:
        raise Skip(f"not {encoding.upper().replace('-SIG', '')} text (byte {err.start})") from None
    except LookupError:
        raise Skip(f"unknown encoding {encoding!r}") from None


def parse_source(text: str, path: Path) -> ast.Module:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in old code
            return ast.parse(text, filename=str(path))
    except SyntaxError as err:
        raise Skip(f"syntax error at line {err.lineno}: {err.msg}") from None
    except (ValueError, RecursionError, MemoryError) as err:
        raise Skip(f"cannot parse: {type(err).__name__}: {err}") from None


@contextlib.contextmanager
def _gc_paused():
    """Building a large AST allocates many objects; none form cycles, so the collector can wait."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def is_generated(text: str) -> bool:
    return GENERATED_MARK in "\n".join(text.splitlines()[:3])


# -- messages: an expression -> a template ---------------------------------------------------------

Chain = list  # [(statements, index), ...] from the function body down to the statement at hand
_PERCENT = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[#0\- +]*)(?P<width>\*|[0-9]+)?(?:\.(?P<prec>\*|[0-9]*))?[hlL]?(?P<type>[diouxXeEfFgGcrsa%])"
)
_INT_CONVERSIONS, _FLOAT_CONVERSIONS = "diouxXc", "eEfFgG"


@functools.lru_cache(maxsize=8192)
def parse_template(text: str) -> template.Template:
    """template.parse, once per distinct text (Templates are immutable)."""
    return template.parse(text)


def escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


class MessageBuilder:
    """Turns the message expression of one raise site into template text (and type hints)."""

    def __init__(self) -> None:
        self.hints: dict[str, str] = {}
        self.depth = 0

    def build(self, node: ast.expr, chain: Chain) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return escape(node.value)
        if isinstance(node, ast.JoinedStr):
            return self.joined(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_str(node.left):
            return self.percent(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (self.textual(node.left, chain) or self.textual(node.right, chain)):
            return self.build(node.left, chain) + self.build(node.right, chain)
        if _is_format_call(node):
            return self.format_call(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("str", "repr") \
                and len(node.args) == 1 and not node.keywords:
            return field_text(node.args[0], "r" if node.func.id == "repr" else None)
        if isinstance(node, ast.Name):
            return self.variable(node, chain)
        return field_text(node)

    def textual(self, node: ast.expr, chain: Chain) -> bool:
        """Does the expression build text (so `+` is concatenation)?"""
        if isinstance(node, ast.Name):
            found = find_assignment(node.id, chain)
            return found is not None and self.textual(found[0], [])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.textual(node.left, chain) or self.textual(node.right, chain)
        return _is_str(node) or isinstance(node, ast.JoinedStr) or _is_format_call(node) or (
            isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_str(node.left))

    def variable(self, node: ast.Name, chain: Chain) -> str:
        found = find_assignment(node.id, chain) if self.depth < MAX_RESOLVE_DEPTH else None
        if found is None:
            return field_text(node)
        value, where = found
        self.depth += 1
        try:
            return self.build(value, where)
        finally:
            self.depth -= 1

    def joined(self, node: ast.JoinedStr) -> str:
        out, pending = [], ""
        for part in node.values:
            if isinstance(part, ast.Constant):
                pending += str(part.value)
                continue
            doc, pending = split_self_doc(pending, part)
            out.append(escape(pending))
            pending = ""
            out.append(formatted_field(part, doc))
        out.append(escape(pending))
        return "".join(out)

    def percent(self, node: ast.BinOp) -> str:
        fmt = node.left.value
        args = node.right
        count = sum(1 for m in _PERCENT.finditer(fmt) if m.group("type") != "%")
        if isinstance(args, ast.Tuple):
            positional = list(args.elts)
        elif count > 1 and not isinstance(args, ast.Dict):  # a tuple held in a variable
            positional = [ast.Subscript(value=args, slice=ast.Constant(i), ctx=ast.Load()) for i in range(count)]
        else:
            positional = [args]
        by_key = {k.value: v for k, v in zip(args.keys, args.values) if isinstance(k, ast.Constant)} if isinstance(args, ast.Dict) else {}
        out, last = [], 0
        for m in _PERCENT.finditer(fmt):
            out.append(escape(fmt[last:m.start()]))
            last = m.end()
            kind = m.group("type")
            if kind == "%":
                out.append("%")
                continue
            for star in (m.group("width"), m.group("prec")):
                if star == "*" and positional:
                    positional.pop(0)  # the width comes from an argument: not kept in the template
            if m.group("key") is not None:
                value = by_key.get(m.group("key")) or ast.Name(id=m.group("key"))
            elif positional:
                value = positional.pop(0)
            else:
                value = ast.Name(id="value")
            out.append(self.percent_field(value, m))
        out.append(escape(fmt[last:]))
        return "".join(out)

    def percent_field(self, value: ast.expr, m: "re.Match[str]") -> str:
        kind, flags = m.group("type"), m.group("flags")
        width = m.group("width") if m.group("width") != "*" else None
        prec = m.group("prec") if m.group("prec") not in ("*", None) else None
        conversion = {"r": "r", "a": "a"}.get(kind)
        spec_text = ""
        if kind in _INT_CONVERSIONS + _FLOAT_CONVERSIONS and kind != "c":
            self.hints[_expr_text(value)] = "int" if kind in _INT_CONVERSIONS else "float"
            if flags or width or prec is not None or kind not in "diu":
                py_kind = "d" if kind in "diu" else kind
                spec_text = _percent_flags(flags) + (width or "") + (f".{prec}" if prec is not None else "") + py_kind
        elif width or "-" in flags:
            spec_text = ("<" if "-" in flags else ">") + (width or "")
        return field_text(value, conversion, spec_text)

    def format_call(self, node: ast.Call) -> str:
        fmt = node.func.value.value
        positional = [a for a in node.args]
        if len(positional) == 1 and isinstance(positional[0], ast.Starred):  # `.format(*args)`: args[0], args[1], ...
            star = positional[0].value
            positional = [ast.Subscript(value=star, slice=ast.Constant(i), ctx=ast.Load()) for i in range(fmt.count("{"))]
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        starred = any(isinstance(a, ast.Starred) for a in positional) or any(k.arg is None for k in node.keywords)
        out, auto = [], 0
        try:
            parsed = list(string.Formatter().parse(fmt))
        except ValueError:
            return field_text(node)
        for literal, name, spec_text, conversion in parsed:
            out.append(escape(literal))
            if name is None:
                continue
            head, rest = re.match(r"([^.\[]*)(.*)", name).groups()
            if head == "":
                head, auto = str(auto), auto + 1
            value = None
            if not starred:
                value = positional[int(head)] if head.isdigit() and int(head) < len(positional) else keywords.get(head)
            text = (_expr_text(value, wrap=bool(rest)) if value is not None else head) + rest
            spec_text = "" if "{" in (spec_text or "") else spec_text
            out.append(_field(text, conversion, spec_text))
        return "".join(out)


def _is_str(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_format_call(node: ast.expr) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and _is_str(node.func.value))


def _percent_flags(flags: str) -> str:
    out = "<" if "-" in flags else ""
    out += "+" if "+" in flags else (" " if " " in flags else "")
    out += "#" if "#" in flags else ""
    out += "0" if "0" in flags and "-" not in flags else ""
    return out


def _expr_text(node: ast.expr, wrap: bool = False) -> str:
    text = ast.unparse(node)
    if isinstance(node, (ast.Lambda, ast.NamedExpr)) or (wrap and not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))):
        text = f"({text})"
    return " " + text if text.startswith("{") else text


def _field(expr_text: str, conversion: str | None = None, spec_text: str = "") -> str:
    return "{" + expr_text + (f"!{conversion}" if conversion else "") + (f":{spec_text}" if spec_text else "") + "}"


def field_text(node: ast.expr, conversion: str | None = None, spec_text: str = "") -> str:
    return _field(_expr_text(node), conversion, spec_text)


def formatted_field(part: ast.FormattedValue, doc: str | None) -> str:
    """`{expr!c:spec}` for one f-string replacement field; `doc` is the `expr=` text of a self-documenting one."""
    conversion = chr(part.conversion) if part.conversion != -1 else None
    spec_text = _spec_text(part.format_spec)
    if doc is not None:
        if conversion == "r" and not spec_text:
            conversion = None  # `{x=}` implies !r
        return "{" + doc + (f"!{conversion}" if conversion else "") + (f":{spec_text}" if spec_text else "") + "}"
    return field_text(part.value, conversion, spec_text)


def _spec_text(spec_node: ast.expr | None) -> str:
    if spec_node is None:
        return ""
    if isinstance(spec_node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in spec_node.values):
        return "".join(str(v.value) for v in spec_node.values)
    return ""  # a spec with nested fields (`{x:{width}}`): the template keeps the value, not the layout


def split_self_doc(text: str, part: ast.FormattedValue) -> tuple[str | None, str]:
    """Recognise `{expr=}`: Python stores it as literal "expr=" before the field.

    Returns (the `expr=` text as written, the literal text before it), or (None, text). `x={x!r}`
    and `{x=}` compile alike and render alike; both come back as `{x=}`.
    """
    if part.conversion == -1 and part.format_spec is None:
        return None, text  # `{x=}` without spec or conversion always carries !r
    body = text.rstrip()
    if not body.endswith("="):
        return None, text
    trailing = text[len(body):]
    before = body[:-1]
    want = ast.dump(part.value)
    for start in range(len(before) - 1, max(-1, len(before) - 201), -1):
        candidate = before[start:]
        if candidate[0].isspace():
            continue
        try:
            parsed = ast.parse(f"({candidate})", mode="eval").body
        except SyntaxError:
            continue
        if ast.dump(parsed) == want:
            return candidate + "=" + trailing, before[:start]
    return None, text


# -- variables assigned before the raise ------------------------------------------------------------


def find_assignment(name: str, chain: Chain) -> tuple[ast.expr, Chain] | None:
    """The value last assigned to `name` before the current statement, walking out through the blocks.

    `x += y` is read as `x + y` (x from further up). An assignment we cannot follow (a loop target,
    a branch that may or may not assign) ends the search: the message keeps `{name}`.
    """
    for depth in range(len(chain) - 1, -1, -1):
        stmts, index = chain[depth]
        for j in range(index - 1, -1, -1):
            stmt = stmts[j]
            found = _assigned(stmt, name)
            if found is _UNKNOWN:
                return None
            if found is not None:
                return found, chain[:depth] + [(stmts, j)]
    return None


_UNKNOWN = object()


def _assigned(stmt: ast.stmt, name: str):
    if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
        return stmt.value
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
        return stmt.value
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
        if isinstance(stmt.op, ast.Add):
            return ast.BinOp(left=ast.Name(id=name, ctx=ast.Load()), op=ast.Add(), right=stmt.value)
        return _UNKNOWN
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return _UNKNOWN if stmt.name == name else None
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            return _UNKNOWN
    return None


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
            here = chain + [(stmts, i)]
            if isinstance(stmt, ast.Raise):
                self.raise_site(stmt, scope, here, guard)
            elif isinstance(stmt, ast.Assert) and stmt.msg is not None:
                self.assert_site(stmt, scope, here)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.block(stmt.body, scope + [stmt.name], [], None)
            elif isinstance(stmt, ast.ClassDef):
                self.classes.setdefault(stmt.name, set()).update(filter(None, map(_last_name, stmt.bases)))
                self.block(stmt.body, scope + [stmt.name], [], None)
            elif isinstance(stmt, ast.If):
                self.block(stmt.body, scope, here, stmt.test)
                # An `elif`/`else` branch raises under the negation of every test above it: not simple.
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


def condition_text(node: ast.expr) -> str | None:
    """The condition as source when it is simple: short, no lambdas, comprehensions or assignments."""
    if any(isinstance(n, _NOT_SIMPLE) for n in ast.walk(node)):
        return None
    text = ast.unparse(node)
    return text if len(text) <= 200 else None


def negate(node: ast.expr) -> ast.expr:
    """`not (node)`, simplified when it is one comparison (negate the operator) or a `not`."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return ast.Compare(left=node.left, ops=[_NEGATED[type(node.ops[0])]()], comparators=node.comparators)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return node.operand
    return ast.UnaryOp(op=ast.Not(), operand=node)


class _ToParams(ast.NodeTransformer):
    """Replace each sub-expression that a message field prints by that field's param."""

    def __init__(self, param_of_dump: dict[str, str], kinds: set[type]):
        self.param_of_dump = param_of_dump
        self.kinds = kinds  # node types some field has: only those are worth an ast.dump

    def visit(self, node: ast.AST) -> ast.AST:
        if type(node) in self.kinds:
            param = self.param_of_dump.get(ast.dump(node))
            if param is not None:
                return ast.Name(id=param, ctx=ast.Load())
        return super().visit(node)


def invariant(site: Site) -> ast.expr | None:
    """The condition that must hold (the raise condition negated), written over the site's params."""
    if not site.condition:
        return None
    dumps, kinds = {}, set()
    for source, param in site.param_of.items():
        try:
            node = ast.parse(f"({source})", mode="eval").body
        except SyntaxError:
            continue
        dumps[ast.dump(node)] = param
        kinds.add(type(node))
    tree = negate(ast.parse(site.condition, mode="eval").body)
    return ast.fix_missing_locations(_ToParams(dumps, kinds).visit(tree))


def numeric_names(tree: ast.expr) -> set[str]:
    """Names a condition does arithmetic on or orders: ints, whatever their name says."""
    out: set[str] = set()
    for node in ast.walk(tree):
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

_RESERVED = set(fixes.HELPERS) | set(runtime.BINDINGS)
_SPEC_INT, _SPEC_FLOAT = "bcdoxXn", "eEfFgG%"


def param_for(expression: str) -> str:
    """A param name for a field expression: `self.block_q` -> block_q, `q.shape` -> q_shape."""
    m = re.fullmatch(r"(?:self|cls)\.([A-Za-z_][A-Za-z0-9_]*)", expression.strip())
    name = _param_name(m.group(1) if m else expression)[:60].rstrip("_") or "value"
    if keyword.iskeyword(name) or name in _RESERVED or name.startswith("_"):
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
    return _guess_type(param)


def assign_params(site: Site) -> None:
    """Fill the site's params (name -> type), the field -> param map and the check."""
    tpl = parse_template(site.template)
    for f in tpl.fields:
        if f.name in site.param_of:
            continue
        name, n = param_for(f.name), 2
        while name in site.params:
            name, n = f"{param_for(f.name)}_{n}", n + 1
        site.param_of[f.name] = name
        site.params[name] = type_for(f, name, site.raw.hints)
    tree = invariant(site)
    if tree is None:
        return
    for name in numeric_names(tree) & set(site.params):
        if site.params[name] == "str":
            site.params[name] = "int"
    if any(isinstance(n, ast.Name) and n.id not in site.params and n.id not in fixes.HELPERS for n in ast.walk(tree)):
        return  # names the message does not print: expr.check would refuse them (quicker to see here)
    source = ast.unparse(tree)
    try:
        expr.check(source, site.params)
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
            with _gc_paused():
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
    sites = [
        Site(display_path(path), path.absolute().as_posix(), raw, known[raw.exception], generated)
        for path, generated, collector in pending for raw in collector.sites if raw.exception in known
    ]
    for site in sites:
        try:
            assign_params(site)
        except Exception:  # a template or condition we cannot type: keep the site, untyped
            site.check = None
    return ScanResult(sites, len(pending), problems)


# -- coverage ---------------------------------------------------------------------------------------


def render(site: Site, type_of: dict[str, str], seed: int) -> str | None:
    """The site's message with a sample value of the given type for each field expression; one line."""
    value_of = {name: values.sample(type_, seed + i) for i, (name, type_) in enumerate(type_of.items())}
    try:
        text = parse_template(site.template).render(lambda f: value_of[f.name])
    except (ValueError, TypeError, KeyError):
        return None  # a spec the sample value cannot take
    return " ".join(text.split("\n")).strip()


def renderings(site: Site) -> list[str]:
    """The site's message rendered with sample values of its inferred param types."""
    type_of = {source: site.params[param] for source, param in site.param_of.items()}
    return [text for text in (render(site, type_of, seed) for seed in (0, 1)) if text is not None]


class Coverage:
    """Which catalogue entry covers a site, by the explain matcher index."""

    def __init__(self, index) -> None:
        self.index = index

    def covered_by(self, site: Site) -> str | None:
        if not site.template:
            found = self.index.match_location(site.abspath, site.bare_function, site.line)
            return found.code if found else ("generated" if site.generated else None)
        texts = renderings(site)
        for text in texts + self.typed_renderings(site, texts):
            found = self.index.match_line(text)
            if found is not None and re.fullmatch(found.wording["regex"], text):
                return found.code
        return "generated" if site.generated else None

    def typed_renderings(self, site: Site, texts: list[str]) -> list[str]:
        """Renderings with the value types of each candidate wording, field by field.

        A guessed type ("batch_axis" reads like an int) must not hide a wording that prints a
        string there: the candidates come from the anchor words, their captures give the types.
        """
        fields = parse_template(site.template).fields
        out = []
        for i in dict.fromkeys(i for text in texts[:1] for i in self.index.candidates(text)):
            captures = self.index.wordings[i]["captures"]
            if len(captures) != len(fields):
                continue
            type_of: dict[str, str] = {}
            for f, capture in zip(fields, captures):
                type_of.setdefault(f.name, capture[2])
            text = render(site, type_of, 0)
            if text is not None:
                out.append(text)
        return out


def load_index(path: str | None):
    from .match import INDEX_FILE, Index

    try:
        return Index.load(path or INDEX_FILE)
    except (OSError, ValueError, KeyError) as err:
        raise UsageError(f"cannot read the matcher index {path or INDEX_FILE}: {err} (run `errkit generate`)") from None


# -- output -----------------------------------------------------------------------------------------


def table(sites: list[Site]) -> list[str]:
    rows = [("path:line", "function", "exception", "covered-by", "template")]
    for s in sites:
        shown = s.template.replace("\n", "\\n").replace("\t", "\\t") if s.template else "(no message)"
        rows.append((f"{s.path}:{s.line}", s.function, s.exception, s.covered_by or "-", shown))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r[:4], widths)) + "  " + r[4] for r in rows]


def gap_lines(sites: list[Site]) -> list[str]:
    return [f"{s.path}:{s.line}: {s.exception}: {s.template or '(no message)'}" for s in sites if not s.covered_by]


# -- drafts -----------------------------------------------------------------------------------------


@dataclass
class Draft:
    sites: list[Site]
    code: str = ""
    slug: str = ""

    @property
    def first(self) -> Site:
        return self.sites[0]


def location_of(site: Site) -> str:
    """`path:line in function`, the path from the package root when it is installed."""
    path = site.abspath.split("site-packages/", 1)[1] if "site-packages/" in site.abspath else site.path.replace(os.sep, "/")
    where = f" in {site.bare_function}" if site.function != "<module>" else ""
    return f"{path}:{site.line}{where}"


def source_of(site: Site) -> str:
    return f"{location_of(site).split(':')[0]} ({site.function})"[:300]


def plain_message(site: Site) -> str:
    """The site's template with every field written as its param (an own message resolves plain names)."""
    tpl = parse_template(site.template)
    out = []
    for part in tpl.parts:
        if isinstance(part, str):
            out.append(escape(part))
        else:
            out.append("{" + site.param_of[part.name] + ("=" if part.self_doc else "")
                       + (f"!{part.conversion}" if part.conversion else "") + (f":{part.spec}" if part.spec else "") + "}")
    return "".join(out)


def slug_for(site: Site) -> str:
    tpl = parse_template(site.template)
    words = re.findall(r"[a-z0-9]+", " ".join(p for p in tpl.parts if isinstance(p, str)).lower())
    if not words:
        words = [site.exception.lower(), "in", *re.findall(r"[a-z0-9]+", site.bare_function.lower())]
    return "-".join(words[:7])[:60].strip("-") or "draft"


def allowed(field_name: str, record: spec.Record | None = None) -> tuple:
    """The values the catalogue format allows for an enum field of an entry (or of `record`)."""
    found = (record or spec.ENTRY).field_named(field_name)
    return getattr(found.kind, "values", ()) if found else ()


def empty_messages_allowed() -> bool:
    """Does the catalogue format accept an empty message (recognised by its `location`)?"""
    message = spec.ENTRY.field_named("message")
    return not spec.validate(message.kind, "") and all(spec.ENTRY.field_named(f) for f in ("location", "source"))


def example_candidates(type_: str) -> list:
    return {
        "int": [4, 8, 3, 1, 2, 16, 0, -1, 128, 5],
        "float": [4.0, 0.5, 1.0, 0.0, -1.0, 2.0],
        "bool": [True, False],
        "str": ["value0", "value1", ""],
        "dtype": ["float32", "bfloat16", "int8"],
        "shape": [(4, 4, 4, 4), (8, 8, 8, 8), (3, 3), (1,), (2, 4), (4, 2, 4, 8), ()],
    }[type_]


def find_examples(check: str, types: dict[str, str]) -> tuple[dict, dict] | None:
    """A param set that violates the check and one that satisfies it, over the names it reads."""
    return _find_examples(check, tuple(sorted(types.items())))


@functools.lru_cache(maxsize=1024)
def _find_examples(check: str, typed: tuple) -> tuple[dict, dict] | None:
    types = dict(typed)
    names = sorted(expr.check(check, types).names)
    pools = [example_candidates(types[n]) for n in names]
    bad = good = None
    for env in _example_envs(names, pools):
        try:
            holds = bool(expr.evaluate(check, env))
        except Exception:
            continue
        if holds and good is None:
            good = env
        elif not holds and bad is None:
            bad = env
        if bad is not None and good is not None:
            return bad, good
    return None


def _example_envs(names: list[str], pools: list[list]) -> Iterator[dict]:
    longest = max((len(p) for p in pools), default=0)
    for k in range(longest):  # everything alike first: equal sizes, matching shapes
        yield {n: p[k % len(p)] for n, p in zip(names, pools)}
    total = 1
    for p in pools:
        total *= len(p)
    if total <= 4096:
        for combo in itertools.product(*pools):
            yield dict(zip(names, combo))
        return
    rng = random.Random(0)
    for _ in range(4096):
        yield {n: rng.choice(p) for n, p in zip(names, pools)}


def yaml_value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


class DraftWriter:
    """Draft entries for uncatalogued sites, under DIR/drafts, lint-shaped and marked for review."""

    AREA = "drafts"
    HEADER = "# DRAFT: review before merging. Written by `errkit scan --emit`; fill in the TODOs, then move it into the catalogue."

    def __init__(self, root: Path, report) -> None:
        self.root = root
        self.report = report
        self.existing = self._existing_entries()

    def _existing_entries(self) -> list:
        if not self.root.is_dir():
            return []
        from .load import load

        return list(load(self.root).entries)

    def write(self, sites: list[Site]) -> list[Path]:
        from .atomic import write_text

        drafts = merge_overlapping(self.group(self.draftable(sites)), self)
        self.number(drafts)
        out = []
        for draft in drafts:
            if not draft.code:
                continue
            path = self.root / self.AREA / f"{draft.code}-{draft.slug}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text(path, self.text(draft))
            out.append(path)
        return out

    def draftable(self, sites: list[Site]) -> list[Site]:
        keep, already = [], self._drafted_wordings()
        for site in sites:
            why = self._not_draftable(site, already)
            if why:
                self.report(f"{site.path}:{site.line}: {why}; not drafted")
            else:
                keep.append(site)
        return keep

    def _not_draftable(self, site: Site, already) -> str | None:
        if not site.template:
            return None if empty_messages_allowed() else "no message, and the catalogue format needs one"
        if len(site.template) > 2000:
            return "message template longer than 2000 characters"
        if not "".join(p for p in parse_template(site.template).parts if isinstance(p, str)).strip():
            return "the message is all placeholders (no fixed wording to recognise)"
        for wording in already:
            if any(re.fullmatch(wording.pattern, text) for text in renderings(site)):
                return f"already drafted as {wording.entry.code} in {self.root}"
        return None

    def _drafted_wordings(self) -> list:
        from . import patterns

        return [w for e in self.existing for w in patterns.wordings(e) if w.variant.message.strip()]

    def group(self, sites: list[Site]) -> list[Draft]:
        """One draft per wording: identical templates (several raise sites) share one."""
        by_key: dict[str, Draft] = {}
        for site in sites:
            key = site.template if site.template else f"\0{site.abspath}:{site.line}"
            by_key.setdefault(key, Draft([])).sites.append(site)
        return list(by_key.values())

    def number(self, drafts: list[Draft]) -> None:
        from .authoring import used_codes

        taken = used_codes(self.root) if self.root.is_dir() else set()
        slugs = {e.slug for e in self.existing}
        codes = (f"RA{n}" for n in range(900, 1000) if f"RA{n}" not in taken)
        for i, draft in enumerate(drafts):
            draft.code = next(codes, "")
            if not draft.code:
                self.report(f"{self.root}: no free code left in RA900-RA999; {len(drafts) - i} draft(s) not written")
                return
            base = slug_for(draft.first)
            slug, n = base, 2
            while slug in slugs:
                slug, n = f"{base}-{n}", n + 1
            slugs.add(slug)
            draft.slug = slug

    # -- one entry --

    def entry(self, draft: Draft):
        from ruamel.yaml.comments import CommentedMap, CommentedSeq
        from ruamel.yaml.scalarstring import LiteralScalarString

        first = draft.first
        params = {}
        for site in draft.sites:
            for name, type_ in site.params.items():
                params.setdefault(name, type_)
        checks = {s.check for s in draft.sites}
        check = checks.pop() if len(checks) == 1 else None
        examples = find_examples(check, params) if check else None
        exception = self._exception(first.base)
        entry = CommentedMap()
        entry["code"] = draft.code or "RA900"
        entry["slug"] = draft.slug or "draft"
        entry["title"] = ("TODO: title for " + (first.template or f"{first.exception} in {first.bare_function}"))[:200]
        entry["exception"] = exception
        entry["message"] = plain_message(first) if first.template else ""
        if not first.template:  # recognised by where it is raised: the entry carries its site
            entry["source"] = source_of(first)
            entry["location"] = location_of(first)
        entry["explain_only"] = True
        if params:
            entry["params"] = CommentedMap(
                (name, CommentedMap([("type", type_), ("description", f"TODO: what {self._printed(draft, name)} is.")]))
                for name, type_ in params.items()
            )
        if check and examples:
            entry["check"] = check
        entry["explanation"] = LiteralScalarString("TODO: explain what the error means and why the code needs the invariant.\n")
        entry["triggers"] = CommentedSeq(["TODO: a concrete input that raises it."])
        entry["fixes"] = CommentedSeq([CommentedMap([("summary", "TODO: what to change.")])])
        if first.template:
            entry["variants"] = CommentedSeq(self._variant(site, exception, params) for site in draft.sites)
        if check and examples:
            bad, good = ({k: yaml_value(v) for k, v in env.items()} for env in examples)
            entry["examples"] = CommentedMap([("bad", CommentedSeq([CommentedMap(bad)])), ("good", CommentedSeq([CommentedMap(good)]))])
            for row in (entry["examples"]["bad"][0], entry["examples"]["good"][0]):
                row.fa.set_flow_style()
        return entry

    @staticmethod
    def _printed(draft: Draft, name: str) -> str:
        for site in draft.sites:
            for source, param in site.param_of.items():
                if param == name:
                    return f"`{source}`"
        return name

    @staticmethod
    def _exception(base: str) -> str:
        """The site's builtin where an entry may name it; otherwise ValueError (the variant says which)."""
        return base if base in allowed("exception") else "ValueError"

    def _variant(self, site: Site, exception: str, params: dict):
        from ruamel.yaml.comments import CommentedMap

        variant = CommentedMap()
        variant["message"] = site.template
        variant["source"] = source_of(site)
        exc = site.base if site.base != exception else None
        if exc and exc in allowed("exception", spec.VARIANT):
            variant["exception"] = exc
        aliases = self._aliases(site, params)
        if aliases:
            variant["aliases"] = CommentedMap(aliases)
            variant["aliases"].fa.set_flow_style()
        variant["location"] = location_of(site)
        if site.exception != site.base:
            variant["note"] = f"Raised as {site.exception}, a subclass of {site.base}."
        return variant

    @staticmethod
    def _aliases(site: Site, params: dict) -> dict[str, str]:
        out = {}
        for f in parse_template(site.template).fields:
            param = site.param_of[f.name]
            if template.resolve(f, params, {}) != param:
                out[f.name] = param
        return out

    def text(self, draft: Draft) -> str:
        from .authoring import MODELINE, formatted
        from .load import yaml

        buffer = io.StringIO()
        yaml().dump(self.entry(draft), buffer)
        return formatted(MODELINE + "\n" + self.HEADER + "\n" + buffer.getvalue())

    def model(self, draft: Draft):
        """The draft as the loader would build it: what lint and the overlap test see."""
        from .load import build_entry, plain
        from .model import Positions

        return build_entry(plain(self.entry(draft)), self.AREA, Positions(Path(draft.code or "draft")))


def merge_overlapping(drafts: list[Draft], writer: DraftWriter) -> list[Draft]:
    """Merge drafts until no two have wordings that match each other's renderings (lint would refuse)."""
    for _ in range(10):
        pairs = overlapping_pairs([writer.model(d) for d in drafts])
        if not pairs:
            return drafts
        parent = list(range(len(drafts)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for a, b in pairs:
            parent[root(b)] = root(a)
        merged: dict[int, Draft] = {}
        for i, draft in enumerate(drafts):
            merged.setdefault(root(i), Draft([])).sites.extend(draft.sites)
        drafts = list(merged.values())
    return drafts


def overlapping_pairs(entries: list) -> set[tuple[int, int]]:
    """(i, j) where a sample rendering of entry i's wording fully matches a wording of entry j.

    The test lint's `overlapping-wording` rule makes, with an anchor-word prefilter so that a few
    thousand drafts stay cheap.
    """
    from . import patterns
    from .generate.index import anchor_words

    compiled = []
    for i, entry in enumerate(entries):
        for wording in patterns.wordings(entry):
            if wording.variant.message.strip():
                compiled.append((i, wording, re.compile(wording.pattern), set(anchor_words(wording))))
    by_word: dict[str, list[int]] = {}
    always = []
    for k, (_, _, _, words) in enumerate(compiled):
        for word in words:
            by_word.setdefault(word, []).append(k)
        if not words:
            always.append(k)
    pairs: set[tuple[int, int]] = set()
    word_re = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    for i, wording, _, _ in compiled:
        for params in patterns.sample_params(wording.entry):
            try:
                text = wording.render(params)
            except (KeyError, ValueError, TypeError):
                continue
            present = set(word_re.findall(text))
            candidates = {k for w in present & by_word.keys() for k in by_word[w]} | set(always)
            for k in candidates:
                j, _, regex, words = compiled[k]
                if j != i and words <= present and regex.fullmatch(text):
                    pairs.add((min(i, j), max(i, j)))
    return pairs


# -- the command ------------------------------------------------------------------------------------


def run(args) -> int:
    def report(line: str) -> None:
        print(line, file=sys.stderr)

    result = scan_paths(args.paths, report)
    if result.files == 0:
        report("errkit scan: nothing could be scanned")
        return EXIT_NOTHING
    coverage = Coverage(load_index(getattr(args, "index", None)))
    for site in result.sites:
        site.covered_by = coverage.covered_by(site)
    if args.json:
        for site in result.sites:
            print(json.dumps(site.as_json(), ensure_ascii=False))
    else:
        for line in table(result.sites):
            print(line)
    gaps = [s for s in result.sites if not s.covered_by]
    if args.emit:
        written = DraftWriter(Path(args.emit), report).write(gaps)
        report(f"errkit scan: {len(written)} draft(s) written under {Path(args.emit) / DraftWriter.AREA}")
    skipped = f", {len(result.problems)} skipped" if result.problems else ""
    report(f"errkit scan: {result.files} file(s){skipped}, {len(result.sites)} site(s), {len(gaps)} uncatalogued")
    if args.fail_on_uncatalogued and gaps:
        report(f"errkit scan: {len(gaps)} uncatalogued site(s):")
        for line in gap_lines(result.sites):
            report("  " + line)
        return EXIT_GAPS
    return EXIT_OK

"""A raise site's message expression -> template text (template.py's syntax), with type hints.

f-strings (`{x=}`, `{a * b=}`, format specs), `%` and `.format` formatting, implicit and `+`
concatenation, and a message built in a variable before the raise.
"""

from __future__ import annotations

import ast
import functools
import re
import string

from errkit.core import template

MAX_RESOLVE_DEPTH = 12  # message variables followed through at most this many assignments

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
    text = _unparse(node)
    if isinstance(node, (ast.Lambda, ast.NamedExpr)) or (wrap and not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))):
        text = f"({text})"
    return " " + text if text.startswith("{") else text


def _unparse(node: ast.expr) -> str:
    """ast.unparse, without its machinery for the most common fields: `name`, `a.b.c`."""
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute and type(node.value) in (ast.Name, ast.Attribute):
        return _unparse(node.value) + "." + node.attr
    return ast.unparse(node)


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
    # The names the expression uses are written in it: a shorter text cannot be it (not worth a
    # parse). Only for ASCII text: the parser normalises other identifiers (NFKC).
    words = _identifiers(part.value) if before.isascii() else ()
    for start in range(len(before) - 1, max(-1, len(before) - 201), -1):
        candidate = before[start:]
        if candidate[0].isspace() or not all(w in candidate for w in words):
            continue
        try:
            parsed = ast.parse(f"({candidate})", mode="eval").body
        except SyntaxError:
            continue
        if ast.dump(parsed) == want:
            return candidate + "=" + trailing, before[:start]
    return None, text


def _identifiers(node: ast.expr) -> set[str]:
    """The names and attribute names an expression uses."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


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

"""The catalogue's expressions and regexes in JavaScript, for the site's paste page.

`to_js` compiles an expression vetted by errkit/core/expr.py to a JavaScript expression over the runtime
of site/docs/assets/errkit/runtime.js (`R`), which keeps Python's types and semantics: ints are
BigInts, `%` and `//` floor, indexes may be negative, `in`, `is None`, tuple/list equality and
chained comparisons behave as in Python, and every helper of errkit/core/helpers.py has a twin there.

`regex_to_js` translates a Python regex to JavaScript syntax (for the `u` flag) and refuses what
JavaScript would read differently; `check_regex` is the generate-time sanity check.
`json_literal` writes any JSON value (a string, a list of names) as a JavaScript literal.
"""

from __future__ import annotations

import ast
import json
import math
import re
from typing import Iterable

from errkit.catalogue.vetting import Verdicts
from errkit.core import expr


# The helpers (errkit/core/helpers.py HELPERS) with a twin in runtime.js (`R.h`); tests keep the three equal.
JS_HELPERS = frozenset({
    "divisors", "common_divisors", "aligned_divisors", "nearest", "next_multiple", "prev_multiple", "is_power_of_two",
    "next_power_of_two", "prev_power_of_two", "is_finite", "gcd", "clamp", "min", "max", "abs", "len",
    "int", "float", "round", "sorted",
})


class Unsupported(ValueError):
    """A construct with no faithful JavaScript translation."""


# -- expressions ----------------------------------------------------------------------------------

_BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
    ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow",
}
_UNARY = {ast.USub: "neg", ast.UAdd: "pos", ast.Not: "not_"}
_COMPARE = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
}


def json_literal(value) -> str:
    """A JSON value (string, number, list, ...) as a JavaScript literal: ASCII-only JSON, valid
    JavaScript (no raw U+2028/U+2029) that no '</script>' can end."""
    return json.dumps(value, ensure_ascii=True).replace("/", "\\/")


def _constant(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}n"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)  # Python's shortest repr is a valid JavaScript number literal
    if isinstance(value, str):
        return json_literal(value)
    raise Unsupported(f"a {type(value).__name__} constant")


class _Compiler:
    """A vetted tree as JavaScript, guarded as errkit/core/expr.guarded guards the Python: every
    operation Python runs through the evaluation's Meter runs through runtime.js's Meter (`meter`)."""

    def __init__(self, params: frozenset[str], env: str, runtime: str, meter: str = "m"):
        self.params, self.env, self.r, self.m = params, env, runtime, meter

    def __call__(self, node: ast.AST) -> str:
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise Unsupported(f"{type(node).__name__} has no JavaScript translation")
        return method(node)

    def thunk(self, node: ast.AST) -> str:
        return f"function () {{ return {self(node)}; }}"

    def visit_Constant(self, node: ast.Constant) -> str:
        return _constant(node.value)

    def visit_Name(self, node: ast.Name) -> str:
        if node.id in self.params:
            return f"{self.env}[{json_literal(node.id)}]"
        raise Unsupported(f"the name {node.id!r} outside a call")

    def visit_BinOp(self, node: ast.BinOp) -> str:
        through = self.m if type(node.op) in expr.GUARDED_OPS else self.r  # the Meter's as in Python
        return f"{through}.{_BINOPS[type(node.op)]}({self(node.left)}, {self(node.right)})"

    def read_whole(self, node: ast.AST) -> str:
        """A value a comparison or a slice reads whole: its size charged (expr._read_whole)."""
        return self(node) if isinstance(node, ast.Constant) else f"{self.m}.v({self(node)})"

    def visit_UnaryOp(self, node: ast.UnaryOp) -> str:
        if isinstance(node.op, ast.Invert):
            raise Unsupported("the operator ~")
        return f"{self.r}.{_UNARY[type(node.op)]}({self(node.operand)})"

    def visit_BoolOp(self, node: ast.BoolOp) -> str:
        name = "and_" if isinstance(node.op, ast.And) else "or_"
        return f"{self.r}.{name}({', '.join(self.thunk(v) for v in node.values)})"

    def visit_Compare(self, node: ast.Compare) -> str:
        links = ", ".join(f"[{json_literal(_COMPARE[type(op)])}, function () {{ return {self.read_whole(right)}; }}]"
                          for op, right in zip(node.ops, node.comparators))
        return f"{self.r}.compare({self.read_whole(node.left)}, [{links}])"

    def visit_IfExp(self, node: ast.IfExp) -> str:
        return f"({self.r}.truthy({self(node.test)}) ? {self(node.body)} : {self(node.orelse)})"

    def visit_Subscript(self, node: ast.Subscript) -> str:
        value = self.read_whole(node.value) if isinstance(node.slice, ast.Slice) else self(node.value)
        return f"{self.r}.getitem({value}, {self(node.slice)})"

    def visit_Slice(self, node: ast.Slice) -> str:
        parts = [self(part) if part is not None else "null" for part in (node.lower, node.upper, node.step)]
        return f"{self.r}.slice({', '.join(parts)})"

    def visit_Tuple(self, node: ast.Tuple) -> str:
        return f"{self.r}.tuple([{', '.join(self(e) for e in node.elts)}])"

    def visit_List(self, node: ast.List) -> str:
        return f"[{', '.join(self(e) for e in node.elts)}]"

    def visit_ListComp(self, node: ast.ListComp) -> str:
        """[elt for NAME in items if cond]: a loop over the items with NAME bound in a copy of the env."""
        gen = node.generators[0]
        inner = _Compiler(self.params | {gen.target.id}, "e", self.r, self.m)
        keep = f"if (!{self.r}.truthy({inner(gen.ifs[0])})) continue; " if gen.ifs else ""
        return (f"(function (items) {{ var out = []; for (var i = 0; i < items.length; i++) {{ "
                f"var e = Object.assign({{}}, {self.env}); e[{json_literal(gen.target.id)}] = items[i]; "
                f"{keep}out.push({inner(node.elt)}); }} return out; }})({self.r}.iterate({self.m}.each({self(gen.iter)}, {expr.pass_steps(node)})))")

    def visit_Call(self, node: ast.Call) -> str:
        if not isinstance(node.func, ast.Name) or node.keywords:
            raise Unsupported("a call of anything but a helper by name")
        args = ", ".join(self(a) for a in node.args)
        if node.func.id in self.params:  # a param shadows a helper: calling its value fails, as in Python
            return f"{self.m}.call({json_literal('<' + node.func.id + '>')}, [{args}])"
        return f"{self.m}.call({json_literal(node.func.id)}, [{args}])"


def to_js(checked: expr.Checked, params: Iterable[str], env: str = "p", runtime: str = "R", meter: str = "m") -> str:
    """JavaScript source of a vetted expression; params are read as env["name"], the guarded
    operations run through the runtime's Meter `meter` (the bounds the evaluation shares)."""
    called = {n.func.id for n in ast.walk(checked.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    missing = called - JS_HELPERS - set(params)
    if missing:
        raise Unsupported(f"helpers without a JavaScript twin: {', '.join(sorted(missing))}")
    return _Compiler(frozenset(params), env, runtime, meter)(checked.tree.body)


def compile_expression(source: str, params: Iterable[str], verdicts: Verdicts | None = None) -> tuple[str, tuple[str, ...]]:
    """(JavaScript function source taking the params object and a runtime Meter, the param names it
    reads); `verdicts`: where the catalogue's expressions were vetted (errkit/catalogue/vetting.py)."""
    params = list(params)
    checked = (verdicts or Verdicts()).expression(source, params)
    body = to_js(checked, params)
    return f"function (p, m) {{ return {body}; }}", tuple(sorted(checked.names))


# -- regexes --------------------------------------------------------------------------------------

# Python's \s (str.isspace) as an explicit class: valid, and the same, in both dialects
_SPACE = r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_SYNTAX = set("^$\\.*+?()[]{}|/")
_SIMPLE = {"n": r"\n", "t": r"\t", "r": r"\r", "f": r"\f", "v": r"\v", "a": r"\x07"}
_QUANT = re.compile(r"\{([0-9]*)(,?)([0-9]*)\}")


def _char_escape(ch: str) -> str:
    """A literal character, escaped for a JavaScript u-mode regex (outside a class)."""
    if ch in _SYNTAX:
        return "\\" + ch
    if ch == "\n":
        return r"\n"
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    return _visible(ch)


def _visible(ch: str) -> str:
    """A non-ASCII space or invisible character as a \\u escape (the same in a u-mode regex, and
    readable in the index), else the character itself."""
    if ord(ch) > 0x7E and (ch.isspace() or not ch.isprintable()):
        return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\u{{{ord(ch):x}}}"
    return ch


def _class_char(ch: str) -> str:
    if ch in "\\]-^[":
        return "\\" + ch
    return _char_escape(ch) if ch not in _SYNTAX else ch


def regex_to_js(pattern: str) -> str:
    """A Python regex (no flags) in JavaScript syntax with the same meaning, for the `u` flag.

    Named groups, escapes, `.`, `$`, `\\s` and `\\Z` are rewritten; `\\d`, `\\w`, `\\b` (Unicode in
    Python, ASCII in JavaScript), inline flags, conditionals and atomic groups raise Unsupported.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    class_start = False
    while i < n:
        ch = pattern[i]
        if in_class:
            if ch == "]" and not class_start:
                out.append("]")
                in_class = False
                i += 1
                continue
            if ch == "^" and class_start and out[-1] == "[":
                out.append("^")
                i += 1
                continue
            class_start = False
            if ch == "\\":
                esc, i = _escape(pattern, i, in_class=True)
                out.append(esc)
                continue
            if ch == "[" and pattern.startswith("[:", i):
                raise Unsupported("POSIX-looking class [: inside a class")
            out.append(_class_char(ch) if ch in "[]" else _visible(ch))
            i += 1
            continue
        if ch == "\\":
            esc, i = _escape(pattern, i, in_class=False)
            out.append(esc)
            continue
        if ch == "[":
            out.append("[")
            in_class = class_start = True
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":  # a leading ']' is literal in Python
                out.append("\\]")
                i += 1
            class_start = False
            continue
        if ch == "(":
            group, i = _group(pattern, i)
            out.append(group)
            continue
        if ch == "{":
            m = _QUANT.match(pattern, i)
            if m and (m.group(1) or m.group(3)) and out and not out[-1].endswith(("(", "|")):
                low, comma, high = m.groups()
                out.append("{" + (low or "0") + comma + high + "}")
                i = m.end()
                if i < n and pattern[i] == "+":
                    raise Unsupported("possessive quantifier")
                continue
            out.append("\\{")
            i += 1
            continue
        if ch in "}]":
            out.append("\\" + ch)
            i += 1
            continue
        if ch in "*+?" and i + 1 < n and pattern[i + 1] == "+":
            raise Unsupported("possessive quantifier")
        if ch == ".":
            out.append(r"[^\n]")
            i += 1
            continue
        if ch == "$":
            out.append(r"(?=\n?$)")  # Python's $: the end, or before a final newline
            i += 1
            continue
        out.append(ch if ch in "^|*+?)" else _char_escape(ch))
        i += 1
    if in_class:
        raise Unsupported("unterminated character class")
    return "".join(out)


def _escape(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    if i + 1 >= len(pattern):
        raise Unsupported("trailing backslash")
    c = pattern[i + 1]
    if c in "dDwWbB":
        raise Unsupported(f"\\{c} is Unicode-aware in Python and ASCII in JavaScript; use an explicit class")
    if c == "s":
        return (_SPACE if in_class else f"[{_SPACE}]"), i + 2
    if c == "S":
        if in_class:
            raise Unsupported("\\S inside a class")
        return f"[^{_SPACE}]", i + 2
    if c in "AZ":
        if in_class:
            raise Unsupported(f"\\{c} inside a class")
        return ("^" if c == "A" else r"(?![\s\S])"), i + 2
    if c in _SIMPLE:
        return _SIMPLE[c], i + 2
    if c == "x":
        m = re.match(r"[0-9a-fA-F]{2}", pattern[i + 2:])
        if not m:
            raise Unsupported("bad \\x escape")
        return "\\x" + m.group(), i + 4
    if c in "uU":
        width = 4 if c == "u" else 8
        m = re.match(r"[0-9a-fA-F]{%d}" % width, pattern[i + 2:])
        if not m:
            raise Unsupported(f"bad \\{c} escape")
        char = chr(int(m.group(), 16))
        return (_class_char(char) if in_class else _char_escape(char)), i + 2 + width
    if c == "N":
        raise Unsupported("\\N{...} escape")
    if c == "0" or (in_class and c.isdigit()):
        m = re.match(r"[0-7]{1,3}", pattern[i + 1:])
        char = chr(int(m.group(), 8))
        return (_class_char(char) if in_class else _char_escape(char)), i + 1 + len(m.group())
    if c.isdigit():
        m = re.match(r"[0-9]{1,2}", pattern[i + 1:])
        return "\\" + m.group(), i + 1 + len(m.group())
    if c.isascii() and c.isalpha():
        raise Unsupported(f"unknown escape \\{c}")
    return (_class_char(c) if in_class else _char_escape(c)), i + 2


def _group(pattern: str, i: int) -> tuple[str, int]:
    if not pattern.startswith("(?", i):
        return "(", i + 1
    rest = pattern[i + 2:]
    if rest.startswith("P<"):
        end = pattern.index(">", i)
        return "(?<" + pattern[i + 4:end] + ">", end + 1
    if rest.startswith("P="):
        end = pattern.index(")", i)
        return "\\k<" + pattern[i + 4:end] + ">", end + 1
    if rest.startswith("#"):
        end = pattern.index(")", i)
        return "", end + 1
    for opener in (":", "=", "!", "<=", "<!"):
        if rest.startswith(opener):
            return "(?" + opener, i + 2 + len(opener)
    if rest.startswith("<"):  # (?<name>...) is Python 3.12+ syntax for a named group
        end = pattern.index(">", i)
        return "(?<" + pattern[i + 3:end] + ">", end + 1
    if rest.startswith(">"):
        raise Unsupported("atomic group")
    if rest.startswith("("):
        raise Unsupported("conditional group")
    raise Unsupported("inline flags")


def js_to_python(js: str) -> str:
    """The translated regex read back as Python syntax (named groups, backreferences and the
    `\\u{e0001}` escapes `_visible` writes for invisible characters above U+FFFF)."""
    js = re.sub(r"\(\?<([A-Za-z_][A-Za-z0-9_]*)>", r"(?P<\1>", js)
    js = re.sub(r"(?<!\\)((?:\\\\)*)\\u\{([0-9a-fA-F]+)\}", lambda m: f"{m.group(1)}\\U{int(m.group(2), 16):08x}", js)
    return re.sub(r"\\k<([A-Za-z_][A-Za-z0-9_]*)>", r"(?P=\1)", js)


def check_regex(python: str, js: str, samples: Iterable[str] = ()) -> None:
    """Generate-time sanity: the translation compiles (read back as Python), keeps the named groups,
    and matches every sample exactly as the original does. ValueError when not."""
    try:
        back = re.compile(js_to_python(js))
    except re.error as err:
        raise ValueError(f"translated regex {js!r} does not compile: {err}") from None
    original = re.compile(python)
    if back.groupindex != original.groupindex:
        raise ValueError(f"translated regex {js!r} changed the named groups of {python!r}")
    for text in samples:
        a, b = original.fullmatch(text), back.fullmatch(text)
        if (a and a.groupdict()) != (b and b.groupdict()) or bool(a) != bool(b):
            raise ValueError(f"translated regex {js!r} reads {text!r} differently from {python!r}")
        a, b = original.search(text), back.search(text)
        if (a and (a.span(), a.groupdict())) != (b and (b.span(), b.groupdict())):
            raise ValueError(f"translated regex {js!r} finds a different match in {text!r} than {python!r}")

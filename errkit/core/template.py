"""Message templates with Python f-string semantics: parse, render, and turn into a typed regex.

This is the one place that knows f-string rules (`{{`/`}}` escapes, `{expr=}`, `!r`, `:spec`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from errkit.core import values


class TemplateError(ValueError):
    def __init__(self, message: str, column: int):
        super().__init__(message)
        self.column = column  # 0-based offset in the template text


@dataclass(frozen=True)
class Field:
    expr: str  # the expression text
    self_doc: bool
    conversion: str | None
    spec: str
    column: int
    doc: str = ""  # for `{expr=}`: the text it prints before the value, spaces kept (`{x = }` -> "x = ")

    @property
    def name(self) -> str:
        return self.expr.strip()

    @property
    def printed_name(self) -> str | None:
        """For `{expr=}`: what it prints before its `=`, spaces trimmed (`{x = }` -> "x"); None
        for any other field."""
        head = self.doc.rstrip()
        return head[:-1].rstrip() if self.self_doc and head.endswith("=") else None


@dataclass(frozen=True)
class Template:
    text: str
    parts: tuple[str | Field, ...]

    @property
    def fields(self) -> tuple[Field, ...]:
        return tuple(p for p in self.parts if isinstance(p, Field))

    @property
    def literals(self) -> tuple[str, ...]:
        """The fixed text runs, `expr=` prefixes included, as the message prints them."""
        return self._runs(cut_equals=False)

    @property
    def unspaced_literals(self) -> tuple[str, ...]:
        """The fixed text every rendering holds whatever the spacing around an `expr=`'s `=`
        (the wording's regex allows any): `literals` with each such `=` and its spaces cut out, what
        a prefilter can look for."""
        return self._runs(cut_equals=True)

    @property
    def pieces(self) -> tuple[str, ...]:
        """The fixed text before, between and after the fields (one more than the fields; empty
        ones kept: where the text starts or ends with a field), `expr=` prefixes included."""
        return self._pieces(cut_equals=False)

    def _runs(self, cut_equals: bool) -> tuple[str, ...]:
        return tuple(run for run in self._pieces(cut_equals) if run)

    def _pieces(self, cut_equals: bool) -> tuple[str, ...]:
        out = [""]
        for part in self.parts:
            if isinstance(part, str):
                out[-1] += part
                continue
            out[-1] += part.printed_name if cut_equals and part.printed_name is not None else part.doc
            out.append("")
        return tuple(out)

    def render(self, value_of: Callable[[Field], Any]) -> str:
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
            else:
                value = value_of(part)
                out.append(part.doc + values.format_field(value, part.self_doc, part.conversion, part.spec))
        return "".join(out)


_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def parse(text: str) -> Template:
    parts: list[str | Field] = []
    literal: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "{":
            if text.startswith("{{", i):
                literal.append("{")
                i += 2
                continue
            if literal:
                parts.append("".join(literal))
                literal = []
            field, i = _parse_field(text, i)
            parts.append(field)
        elif ch == "}":
            if text.startswith("}}", i):
                literal.append("}")
                i += 2
                continue
            raise TemplateError("single '}' is not allowed (write '}}' for a literal brace)", i)
        else:
            literal.append(ch)
            i += 1
    if literal:
        parts.append("".join(literal))
    return Template(text=text, parts=tuple(parts))


def _parse_field(text: str, start: int) -> tuple[Field, int]:
    """Parse the replacement field opening at `start`; return it and the index after its '}'."""
    i = start + 1
    depth: list[str] = []
    quote: str | None = None
    expr_end = conv = spec_start = None
    n = len(text)
    while i < n:
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in _CLOSERS:
            depth.append(_CLOSERS[ch])
        elif depth and ch == depth[-1]:
            depth.pop()
        elif not depth:
            if ch == "!" and not text.startswith("!=", i):
                expr_end = i
                conv = text[i + 1 : i + 2]
                if conv not in ("r", "s", "a"):
                    raise TemplateError(f"conversion must be !r, !s or !a, got !{conv}", i)
                i += 2
                if i < n and text[i] == ":":
                    spec_start = i + 1
                    break
                if i < n and text[i] == "}":
                    break
                raise TemplateError("expected ':' or '}' after the conversion", i)
            if ch == ":":
                expr_end = i
                spec_start = i + 1
                break
            if ch == "}":
                expr_end = i
                break
        i += 1
    else:
        raise TemplateError("unclosed '{' (write '{{' for a literal brace)", start)
    spec = ""
    if spec_start is not None:
        close = text.find("}", spec_start)
        if close < 0:
            raise TemplateError("unclosed '{' (write '{{' for a literal brace)", start)
        spec = text[spec_start:close]
        if "{" in spec:
            raise TemplateError("nested fields in a format spec are not supported", spec_start)
        i = close
    raw = text[start + 1 : expr_end]
    stripped = raw.rstrip()
    self_doc = stripped.endswith("=") and not stripped.endswith(("==", "!=", "<=", ">="))
    expr = stripped[:-1].strip() if self_doc else raw.strip()
    if not expr:
        raise TemplateError("empty replacement field", start)
    _check_expression(expr, start + 1)
    field = Field(expr=expr, self_doc=self_doc, conversion=conv, spec=spec, column=start, doc=raw if self_doc else "")
    return field, i + 1


def _check_expression(expr: str, column: int) -> None:
    import ast  # parse only, never evaluate

    try:
        ast.parse("(" + expr + ")", mode="eval")
    except SyntaxError as err:
        raise TemplateError(f"{{{expr}}} is not a valid Python expression: {err.msg}", column) from None


# -- regex ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Capture:
    group: str
    param: str
    type: str


def to_regex(template: Template, typed: Callable[[Field], tuple]) -> tuple[str, tuple[Capture, ...]]:
    """An unanchored regex for the rendered message and what each named group carries.

    `typed(field)` gives (param name, param type, optional[, form]) for a field. Punctuation that
    ends the message is optional: a message quoted in prose or a table often loses its period.
    Spaces that start or end it may be missing (a log line, a terminal and a paste drop them); the
    text before spaces that end it is then looked for as written.
    """
    pieces: list[str] = []
    captures: list[Capture] = []
    last = len(template.parts) - 1
    for n, part in enumerate(template.parts):
        if isinstance(part, str):
            if n == 0 and part != part.lstrip():
                pieces.append(f"{values.SPACE}*")
                part = part.lstrip()
            if n == last and part != part.rstrip():
                pieces.append((_literal(part.rstrip()) if part.strip() else "") + f"{values.SPACE}*")
                continue
            end = part.rstrip(FINAL_PUNCTUATION) if n == last else part
            pieces.append(_literal(end) if end else "")
            if end != part:
                pieces.append(f"(?:{re.escape(part[len(end):])})?")
            continue
        param, type_, optional, *form = typed(part)
        group = f"g{len(captures)}"
        if part.printed_name is not None:  # any spacing around its "=": f"{x = }" prints "x = 1"
            pieces.append(_literal(part.printed_name) + f"{values.SPACE}*={values.SPACE}*")
        elif part.self_doc:
            pieces.append(_literal(part.doc))
        body = values.pattern(type_, optional, part.conversion, part.self_doc, part.spec, *form)
        pieces.append(f"(?P<{group}>{body})")
        captures.append(Capture(group, param, type_))
    return "".join(pieces), tuple(captures)


FINAL_PUNCTUATION = ".!:;,"


def _literal(text: str) -> str:
    # Runs of spaces match flexibly: logs and terminals rewrap or collapse them.
    return f"{values.SPACE}+".join(re.escape(chunk) for chunk in re.split(r"\s+", text))


def extract(captures: tuple[Capture, ...], match: "re.Match[str]") -> dict[str, Any] | None:
    """Typed params from a match; None when one param shows two different values."""
    out: dict[str, Any] = {}
    for cap in captures:
        value = values.parse(cap.type, match.group(cap.group))
        if cap.param in out and not values.same(out[cap.param], value):
            return None
        out[cap.param] = value
    return out


def resolve(field: Field, params: Mapping[str, Any], aliases: Mapping[str, str]) -> str | None:
    """The param a field carries: an alias, the param of that name, or a dotted name's last part."""
    name = field.name
    if name in aliases:
        return aliases[name]
    if name in params:
        return name
    last = name.rsplit(".", 1)[-1]
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name) and last in params:
        return last
    return None

"""Error-message templates of C++ source (jaxlib's Mosaic TPU and GPU): a small lexer, no compiler.

A message site is a call of one of the functions or macros of `CALLS` (MLIR's emitOpError /
emitError / emitWarning, absl's status constructors, Mosaic TPU's NYI, TPU_CHECK_OP and TPU_ASSERT_*
macros). Its template is what the call prints, as a Python format string like the Python raise
sites' (scripts/harvest.py): string literals as text (braces doubled), every other argument or
`<< value` piece as `{expression}` (squashed, cut to 60 characters), absl::StrCat's arguments
spliced in and absl::StrFormat's %-conversions replaced by their arguments. Only what the source
spells is used; a message built elsewhere (a variable holding a string) is a `{name}` placeholder.

    sites(source) -> [(line, call, template)]
"""

from __future__ import annotations

import re

# Calls whose arguments (and `<<` pieces after them) are an error message.
STREAMED = ("emitOpError", "emitError", "emitWarning")
STATUS = ("InvalidArgumentError", "InternalError", "UnimplementedError", "FailedPreconditionError",
          "ResourceExhaustedError", "OutOfRangeError", "NotFoundError", "UnknownError", "AbortedError")
MACROS = ("NYI", "TPU_CHECK_OP")
ASSERT = re.compile(r"TPU_ASSERT(?:_(EQ|GE|GT|LE|LT))?_(OP|LOC)$")
COMPARE = {"EQ": "==", "GE": ">=", "GT": ">", "LE": "<=", "LT": "<"}
NYI_DEFAULT = "Not implemented: "
PLACEHOLDER_MAX = 60

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<raw>R"(?P<delim>[^(\s]{0,16})\((?P<rawbody>.*?)\)(?P=delim)")
  | (?P<string>(?:u8|u|U|L)?"(?:[^"\\\n]|\\.)*")
  | (?P<char>'(?:[^'\\\n]|\\.)*')
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_~][A-Za-z0-9_]*)*)
  | (?P<number>\d[\w.']*)
  | (?P<shift><<|>>)
  | (?P<punct>->|::|[(){}\[\],;.])
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\", "?": "?", "0": "\0"}


def tokens(source: str) -> list[tuple[str, str, int]]:
    """(kind, text, offset) of every token but spaces, comments and preprocessor lines (a
    `#define` body is not a message site: its uses are)."""
    out = []
    pos = 0
    at_line_start = True
    while pos < len(source):
        if at_line_start:
            m = re.match(r"[ \t]*#(?:[^\n\\]|\\\n|\\.)*", source[pos:])
            if m:
                pos += m.end()
                continue
        m = _TOKEN.match(source, pos)
        kind = m.lastgroup if m.lastgroup not in ("delim", "rawbody") else "raw"
        if kind == "space" or kind == "comment":
            at_line_start = "\n" in m.group() if kind == "space" else at_line_start and m.group().startswith("/*")
        else:
            at_line_start = False
            if kind == "raw":
                out.append(("string", m.group("rawbody"), pos))
            elif kind == "string":
                out.append(("string", _unescape(m.group()[m.group().index('"') + 1:-1]), pos))
            else:
                out.append((kind, m.group(), pos))
        pos = m.end()
    return out


def _unescape(body: str) -> str:
    return re.sub(r"\\(x[0-9a-fA-F]+|[0-7]{1,3}|.)", lambda m: _ESCAPES.get(m.group(1), m.group(1) if len(m.group(1)) == 1 else "?"), body)


OPEN, CLOSE, COMMA = frozenset("([{"), frozenset(")]}"), frozenset(",")
END_OF_PIECE = frozenset(["<<", ";", ")", ",", "}"])


def _is(t: tuple, texts: frozenset) -> bool:
    return t[0] == "punct" and t[1] in texts


def _closing(toks: list, i: int) -> int:
    """Index of the bracket closing the one at toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        if _is(toks[j], OPEN):
            depth += 1
        elif _is(toks[j], CLOSE):
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def _split(toks: list) -> list[list]:
    """Top-level comma-separated arguments of a token run."""
    args, depth, current = [], 0, []
    for t in toks:
        if _is(t, OPEN):
            depth += 1
        elif _is(t, CLOSE):
            depth -= 1
        if _is(t, COMMA) and depth == 0:
            args.append(current)
            current = []
        else:
            current.append(t)
    if current:
        args.append(current)
    return args


def _source(toks: list) -> str:
    text = "".join(t[1] if t[0] != "string" else '"' + t[1] + '"' for t in toks)
    return re.sub(r"\s+", "", text)


def _placeholder(toks: list) -> str:
    name = _source(toks).replace("{", "(").replace("}", ")")[:PLACEHOLDER_MAX]
    return "{" + (name or "?") + "}"


def _literal(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _piece(toks: list) -> str:
    """One argument or streamed value as template text."""
    while toks and _is(toks[0], frozenset("(")) and _closing(toks, 0) == len(toks) - 1:  # (expr)
        toks = toks[1:-1]
    if toks and all(t[0] == "string" for t in toks):
        return _literal("".join(t[1] for t in toks))
    if len(toks) >= 3 and toks[0][0] == "name" and _is(toks[1], frozenset("(")) and _closing(toks, 1) == len(toks) - 1:
        name = toks[0][1].rsplit("::", 1)[-1]
        args = _split(toks[2:-1])
        if name == "StrCat":
            return "".join(_piece(a) for a in args)
        if name == "StrFormat" and args and all(t[0] == "string" for t in args[0]):
            return _formatted("".join(t[1] for t in args[0]), args[1:])
        if name in ("Twine", "StringRef", "string", "str") and len(args) == 1:
            return _piece(args[0])
    return _placeholder(toks)


def _formatted(fmt: str, args: list) -> str:
    """absl::StrFormat's text with each %-conversion replaced by its argument."""
    out, n, pos = [], 0, 0
    for m in re.finditer(r"%%|%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|j|z|t|L)?[a-zA-Z]", fmt):
        out.append(_literal(fmt[pos:m.start()]))
        if m.group() == "%%":
            out.append("%")
        else:
            out.append(_placeholder(args[n]) if n < len(args) else "{?}")
            n += 1
        pos = m.end()
    out.append(_literal(fmt[pos:]))
    return "".join(out)


def _nyi_prefix(source: str) -> str:
    """The text the file's own NYI macro puts before its message."""
    m = re.search(r'#\s*define\s+NYI\s*\(\s*msg\s*\)(?:[^\n\\]|\\\n)*?"((?:[^"\\]|\\.)*)"\s*msg', source)
    return _unescape(m.group(1)) if m else NYI_DEFAULT


def sites(source: str) -> list[tuple[int, str, str]]:
    """(line, call, template) of each message site of a C++ source text, in order."""
    toks = tokens(source)
    nyi = _nyi_prefix(source)
    out = []
    for i, (kind, text, offset) in enumerate(toks):
        if kind != "name" or i + 1 >= len(toks) or not _is(toks[i + 1], frozenset("(")):
            continue
        call = text.rsplit("::", 1)[-1]
        close = _closing(toks, i + 1)
        args = _split(toks[i + 2:close])
        if call in STREAMED:
            if call == "emitError" and args:  # emitError(location[, message])
                args = args[1:]
            pieces = [_piece(a) for a in args]
            j = close + 1
            while j < len(toks) and toks[j][1] == "<<":  # `<< value` pieces, each up to the statement's next operator
                k = j + 1
                while k < len(toks) and not (toks[k][0] in ("shift", "punct") and toks[k][1] in END_OF_PIECE):
                    if _is(toks[k], OPEN):
                        k = _closing(toks, k)
                    k += 1
                pieces.append(_piece(toks[j + 1:k]))
                j = k
            template = "".join(pieces)
        elif call in STATUS and (text.startswith("absl::") or text == call):
            template = "".join(_piece(a) for a in args)
        elif call == "NYI" and len(args) == 1:
            template = _literal(nyi) + _piece(args[0])
        elif call == "TPU_CHECK_OP" and len(args) == 2:
            template = _piece(args[1])
        elif ASSERT.match(call):
            compare, where = ASSERT.match(call).groups()
            args = args[1:] if where == "LOC" else args
            if compare and len(args) == 2:
                lhs, rhs = (_source(a) for a in args)
                template = _literal(f"Internal error: assert failed: {lhs} {COMPARE[compare]} {rhs} (") + \
                    _placeholder(args[0]) + " vs. " + _placeholder(args[1]) + ")"
            elif not compare and len(args) == 1:
                template = _literal("Internal error: assert failed: " + _source(args[0]))
            else:
                continue
        else:
            continue
        template = template.strip()
        if template and template.strip("{}?"):
            out.append((source.count("\n", 0, offset) + 1, call, template))
    return out

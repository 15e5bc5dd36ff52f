"""A line's text as the matcher's rooms read it: cleaned of terminal colours and its line end, the
`SomeError: message` it holds (HEADER, searched from where it can first begin), whether it is a
`raise` statement, and the strings of a JSON log line."""

from errkit.core.index_format import ANSI, HEADER, TAG_REACH

EXC, MSG = HEADER.number("exc"), HEADER.number("msg")
ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_DOTTED_NAME = "".join(sorted(ID_CHARS)) + "."  # a dotted exception name's characters (header_begin)


def clean(line: str) -> str:
    line = ANSI.sub("", line) if "\x1b" in line else line
    return line.rstrip("\r\n")


def header_of(line: str):
    """HEADER.search(line), begun where a match can first start (header_begin)."""
    begin = header_begin(line)
    return None if begin is None else HEADER.search(line, begin)


def header_begin(line: str) -> int | None:
    """Where HEADER can first match in `line` (None: nowhere). Its exception name is a run of
    identifier characters and dots ending in Error or Exception, after a separator or the line's
    start: none starts before the run holding the line's first `Error` or `Exception`, so a log
    line's timestamp and logger are not tried character by character."""
    first = line.find("Error")
    other = line.find("Exception", 0, first if first >= 0 else len(line))
    first = other if other >= 0 else first
    if first < 0:
        return None
    first = len(line[:first].rstrip(_DOTTED_NAME))  # back over the run of the name's characters
    return max(0, first - 1)


def raise_statement(line: str) -> bool:
    """A Python `raise SomeError(...)` line (a traceback's source line, `|`-prefixed in an exception
    group's): the text it quotes, often an f-string's template, is not the message raised."""
    code = line.lstrip("|+ \t")
    return code.startswith("raise ") and "(" in code


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def json_strings(line: str) -> list[str]:
    """The string values of a JSON object or array (two levels deep), in order; [] if not JSON."""
    try:
        import json  # a JSON log line: rare in a paste

        doc = json.loads(line, parse_constant=_no_constant)  # strict JSON, as the paste page's JSON.parse
    except ValueError:
        return []
    except RecursionError:  # nested past the decoder's recursion: read without recursion
        from errkit.explain.jsonline import strings

        return strings(line)
    out: list[str] = []

    def walk(value, depth: int) -> None:
        if isinstance(value, str):
            out.append(value)
        elif depth < 2 and isinstance(value, dict):
            for item in value.values():
                walk(item, depth + 1)
        elif depth < 2 and isinstance(value, list):
            for item in value:
                walk(item, depth + 1)

    walk(doc, 0)
    return out


def json_record(line: str) -> str | None:
    """The strings of a JSON log line, one after another (each line of each), else None."""
    if not line.lstrip().startswith("{"):
        return None
    strings = json_strings(line)
    return "\n".join(strings) if strings else None


# What people and logs write around a message on its own line (issue 51): a traceback begun on the
# same line (vLLM's worker: `<message>, Traceback (most recent call last):`), a comment after ` -- `,
# a closing quote or backtick; before it, an issue title's `[Bug]: ` tag or absl's status
# (`INTERNAL: `). None of it is ever a value.
TRAILERS = (", Traceback (most recent call last)", " -- ")
QUOTES = "\"'`"


def _leading_tag(text: str) -> int:
    """The length of a bracketed tag (`[Bug]: `, `[rank0]: `) or an absl status (`INTERNAL: `) that
    begins `text`, else 0."""
    if text.startswith("["):
        end = text.find("]", 1, TAG_REACH)
        if end > 1:
            at = end + 1 + (text[end + 1:end + 2] == ":")
            return at + (text[at:at + 1] == " ") if at < len(text) else 0
        return 0
    colon = text.find(": ", 0, TAG_REACH)
    head = text[:colon]
    return colon + 2 if colon > 2 and head.replace("_", "").isalpha() and head.isupper() else 0


def message_forms(text: str, quote: str = "") -> list[tuple[int, str]]:
    """(offset, text) of each reading of a message worth a full match, the likeliest first: without
    what was written around it (TRAILERS; a closing `quote` when the text was opened by one; a
    leading tag), then as it is. A free-text value would read it in; a fixed text never needs it."""
    end = len(text)
    for trailer in TRAILERS:
        at = text.find(trailer)
        if 0 < at < end:
            end = at
    if quote:
        at = text.rfind(quote, 0, end)
        if at > 0:
            end = at
    lead = _leading_tag(text)
    forms = []
    for lo, hi in ((lead, end), (0, end), (lead, len(text)), (0, len(text))):
        part = text[lo:hi].rstrip()
        if part and (lo, part) not in forms:
            forms.append((lo, part))
    return forms


def opening_quote(line: str, at: int) -> str:
    """The quote or backtick that opens the text at `at` of `line`, else ''."""
    return line[at - 1] if at > 0 and line[at - 1] in QUOTES else ""


def quoted_message(line: str) -> tuple[int, int] | None:
    """(start, end) of a message quoted in prose (`I get "ValueError: ..." when I run it`, a
    backtick's): from after the quote that opens it, before `SomeError` (which HEADER does not
    read after a quote), to the last such quote on the line (or the line's end)."""
    for quote in QUOTES:
        at = line.find(quote)
        while 0 <= at < len(line) - 1:
            header = header_of(line[at + 1:at + 201])  # (an exception's name is shorter: bounded work per quote)
            if header is not None and header.start(EXC) == 0 and header.group(MSG):
                end = line.rfind(quote, at + 1)
                return at + 1, end if end > at + 1 else len(line)
            at = line.find(quote, at + 1)
    return None

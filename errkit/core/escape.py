"""Text made safe for the medium it is written to, one helper per medium: `terminal` (a control
character is shown as its escape, never sent: no colour, title, clipboard or cursor sequence and
no line break from a log or an installed catalogue), `html` (the five specials as entities),
`markdown` (text that markdown, and the HTML it may be rendered to, shows as written) with its code
span (`markdown_code`) and link destination (`link`). Every writer of errkit uses them: logs,
pasted text and installed catalogues are untrusted.

On `errkit explain`'s start-up path: no imports (str.translate tables).
"""

# C0 and C1 controls, DEL, and the characters that reorder or break what follows them (bidirectional
# overrides and isolates, line and paragraph separators): shown as Python writes them in a string
_INVISIBLE = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029]
_TERMINAL = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _INVISIBLE}
_TERMINAL[ord("\t")] = "\\t"
_TERMINAL[ord("\n")] = "\\n"
_TERMINAL[ord("\r")] = "\\r"
_IN_LINE = dict(_TERMINAL)
del _IN_LINE[ord("\t")]

_HTML = {ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;", ord('"'): "&quot;", ord("'"): "&#x27;"}

# markdown's specials as backslash escapes; HTML's, the backslash and the backtick as entities (a
# renderer that lets HTML through shows them as written; a backslash cannot escape what follows it).
# Within a line: emphasis, links, attribute lists, table cells, strikethrough; what only the start
# of a line makes special (# + - . ! ( ) as headings, lists, images) as well at a line's start.
_MARKDOWN = {ord(c): "\\" + c for c in "*{}[]|~"}  # (`_`: see _underscores)
_MARKDOWN.update({ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;", ord("\\"): "&#92;", ord("`"): "&#96;"})
_MARKDOWN_LINE = {**_MARKDOWN, **{ord(c): "\\" + c for c in "_()#+-.!"}}


def terminal(text, keep_tabs: bool = True) -> str:
    """`text` for a terminal: every control character (a newline too) shown as its escape
    (`\\x1b`, `\\n`), tabs kept unless `keep_tabs` is false."""
    text = str(text)
    if text.isprintable():
        return text
    return text.translate(_IN_LINE if keep_tabs else _TERMINAL)


def html(text) -> str:
    """`text` as HTML text or a quoted attribute's value: & < > " ' as entities."""
    return str(text).translate(_HTML)


def markdown(text, code_spans: bool = False, starts_line: bool = False) -> str:
    """`text` as markdown inline text, shown as written wherever it is rendered (a table cell too):
    whitespace runs (newlines included: nothing can start a block) one space, control characters
    as their escapes, every markdown and HTML special escaped; `starts_line`: text that may begin a
    line (a page's paragraph), whose every character that could start a block is escaped too.
    `code_spans`: catalogue prose, whose `code spans` stay code spans (markdown_code)."""
    text = terminal(" ".join(str(text).split()))
    table = _MARKDOWN_LINE if starts_line else _MARKDOWN

    def plain(piece: str) -> str:
        piece = piece.translate(table)
        return _underscores(piece) if "_" in piece and not starts_line else piece

    if not code_spans or "`" not in text:
        return plain(text)
    out, pos = [], 0
    while True:
        start = text.find("`", pos)
        if start < 0:
            break
        run = start
        while run < len(text) and text[run] == "`":
            run += 1
        ticks = text[start:run]
        end = text.find(ticks, run)
        while end >= 0 and text[end + len(ticks):end + len(ticks) + 1] == "`":  # a longer run: not the closing one
            end = text.find(ticks, end + len(ticks) + 1)
        if end < 0 or not text[run:end].strip():
            out.append(plain(text[pos:run]))
            pos = run
            continue
        out.append(plain(text[pos:start]))
        out.append(markdown_code(text[run:end].strip()))
        pos = end + len(ticks)
    out.append(plain(text[pos:]))
    return "".join(out)


def _underscores(text: str) -> str:
    """`_` escaped where it could open or close emphasis: not between two letters or digits
    (`num_kv_heads` stays as written, readable in a bug report's source)."""
    out = []
    for i, ch in enumerate(text):
        if ch == "_" and not (0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()):
            out.append("\\_")
        else:
            out.append(ch)
    return "".join(out)


def markdown_code(text, in_table: bool = False) -> str:
    """`text` as an inline code span shown verbatim: fenced by more backticks than it holds,
    whitespace runs one space, control characters as their escapes; `in_table`: its pipes escaped
    (a table cell ends at a pipe, even in a code span)."""
    content = terminal(" ".join(str(text).split()))
    longest = run = 0
    for ch in content:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if content.startswith("`") or content.endswith("`") else ""
    if in_table:
        content = content.replace("|", "\\|")
    return f"{fence}{pad}{content}{pad}{fence}"


_URL_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/:?#@!$&'*+,;=%~-._")


def link(url) -> str | None:
    """An http(s) address as a link destination (markdown's `[text](here)` or `<here>`, an HTML
    href): every byte outside the URL characters percent-encoded (no space, parenthesis, angle
    bracket or quote left); None for anything else (`javascript:`, `data:`, a relative path)."""
    url = str(url)
    scheme = url.split(":", 1)[0].lower()
    if scheme not in ("http", "https") or not url[len(scheme):].startswith("://") or len(url) <= len(scheme) + 3:
        return None
    return "".join(chr(b) if b in _URL_SAFE else f"%{b:02X}" for b in url.encode("utf-8"))

"""Undo what copying does to an error text before it is matched: terminal colour codes, curly
quotes, Unicode spaces, zero-width characters, HTML entities; and read text saved as UTF-16 or
with a byte-order mark.

The explain path: no imports. A normalised line keeps, for each of its characters, where it came
from in the original line, so a match is reported on the text as it was pasted.
"""

CHARS = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\uff07", "'"),  # curly and prime quotes
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\uff02", '"'),
    **dict.fromkeys("\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2212", "-"),  # hyphens, en dash, minus sign
    **dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff", ""),  # zero-width characters
}
ENTITIES = {"quot": '"', "apos": "'", "amp": "&", "lt": "<", "gt": ">", "nbsp": " "}


def normalise(line: str) -> tuple[str, list[int] | None]:
    """(the line as matched, where each of its characters starts in `line` plus its end), or
    (line, None) when nothing changes (the common case: plain ASCII without '&' or colour codes)."""
    if line.isascii() and "&" not in line and "\x1b" not in line:
        return line, None
    out: list[str] = []
    origin: list[int] = []
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch == "\x1b" and line.startswith("[", i + 1):  # an ANSI colour code: ESC [ params letter
            j = i + 2
            while j < n and line[j] in "0123456789;?":
                j += 1
            if j < n and line[j].isascii() and line[j].isalpha():
                i = j + 1
                continue
        if ch == "&":
            decoded, length = _entity(line, i)
            if length:
                out.append(decoded)
                origin.append(i)
                i += length
                continue
        mapped = CHARS.get(ch, ch)
        if mapped:
            out.append(mapped)
            origin.append(i)
        i += 1
    text = "".join(out)
    if text == line:
        return line, None
    origin.append(n)
    return text, origin


def _entity(line: str, at: int) -> tuple[str, int]:
    """The character an HTML entity at `at` stands for, and the entity's length (0: none)."""
    end = line.find(";", at + 1, at + 12)
    if end < 0:
        return "", 0
    name = line[at + 1:end]
    if name in ENTITIES:
        return ENTITIES[name], end + 1 - at
    hexadecimal = name[:2] in ("#x", "#X")
    digits = name[2:] if hexadecimal else name[1:] if name[:1] == "#" else ""
    allowed = "0123456789abcdefABCDEF" if hexadecimal else "0123456789"
    if not digits or any(c not in allowed for c in digits):
        return "", 0
    try:
        char = chr(int(digits, 16 if hexadecimal else 10))
    except (ValueError, OverflowError):
        return "", 0
    if char in "\n\r" or not char.isprintable():
        char = " "  # a line stays a line
    return CHARS.get(char, char) or " ", end + 1 - at


def original_span(origin: list[int] | None, start: int, end: int) -> tuple[int, int]:
    """Where characters start:end of a normalised line were in the original line."""
    if origin is None:
        return start, end
    return origin[start], origin[end]


def text_encoding(head: bytes) -> str | None:
    """The encoding of an input whose first bytes are `head`, when it is not UTF-8: UTF-16 with a
    byte-order mark (what PowerShell writes for `2> err.txt`) or without one (NUL in every other
    byte of ASCII text); 'utf-8-sig' for a UTF-8 byte-order mark; None otherwise."""
    if head.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    bom = head.startswith((b"\xff\xfe", b"\xfe\xff"))
    sample = head[2:514] if bom else head[:512]
    if len(sample) >= 8 and b"\x00" in sample:  # text is mostly ASCII: UTF-16 has a NUL in every other byte
        even, odd = sample[0::2], sample[1::2]
        if odd.count(0) >= len(odd) * 0.6 and even.count(0) <= len(even) * 0.1:
            return "utf-16" if bom else "utf-16-le"
        if even.count(0) >= len(even) * 0.6 and odd.count(0) <= len(odd) * 0.1:
            return "utf-16" if bom else "utf-16-be"
    return None

"""Why a file of a triage has no catalogued error (issue 52: a vLLM log listed with 0 matches and no
hint why): its lines that name an error all the same, counted, and the first of them, which
`errkit explain` on that line answers with the closest entries. Read again only for the files with
no match, after the triage."""

from errkit.core.regex import Lazy

# A line naming an error: an exception's name before its message (`torch.OutOfMemoryError: CUDA out
# of memory`, `RuntimeError` at a line's end), or a logger's error level (vLLM's `ERROR 12-01 ...`).
EXCEPTION = Lazy(rb"(?<![\w.])[A-Za-z_][\w.]*(?:Error|Exception)(?::|\s*$)", python=True)
LEVEL = Lazy(rb"(?<!\w)(?:ERROR|FATAL|CRITICAL)(?!\w)", python=True)
SHOWN = 200  # characters of the first such line shown
LONGEST = 1 << 16  # bytes of a line kept while its end is not read yet


class _Seen:
    __slots__ = ("count", "exception", "level")

    def __init__(self):
        self.count, self.exception, self.level = 0, None, None

    def line(self, line: bytes, number: int) -> None:
        named = EXCEPTION.search(line) is not None
        if not named and LEVEL.search(line) is None:
            return
        self.count += 1
        if named and self.exception is None:
            self.exception = _place(line, number)
        elif not named and self.level is None:
            self.level = _place(line, number)


def _place(line: bytes, number: int) -> dict:
    return {"line": number, "text": line.rstrip(b"\r").decode("utf-8", "replace").strip()[:SHOWN]}


def unmatched(path: str) -> dict | None:
    """{"lines": how many lines name an error, "first": {"line", "text"}} of the file `path` (the
    first line naming an exception, else the first with an error level), None when no line does or
    it cannot be read again (its triage read it: a file gone since is left without a hint)."""
    from errkit.explain.inputs import Skipped, text_blocks

    seen, number, rest = _Seen(), 0, b""
    try:
        for block in text_blocks(path):
            lines = (rest + block).split(b"\n")
            rest = lines.pop()[:LONGEST]  # (a line with no end in sight: its start is what names an error)
            for line in lines:
                number += 1
                seen.line(line, number)
        if rest:
            seen.line(rest, number + 1)
    except (Skipped, OSError):
        return None
    first = seen.exception or seen.level
    return None if first is None else {"lines": seen.count, "first": first}

"""A paste read again when nothing in it matched exactly (issue 51): first with its hard-wrapped
lines joined (a terminal's or an editor's wrap at 40-79 columns, or a markdown quote's `> ` on each
wrapped line), then each line without case (a message retyped in lower or upper case: the closest
wordings then, approximate, with the values read). Only a paste is read again, and only when the
first reading found nothing exact: what it did find is never overruled."""

from errkit.core.index_format import APPROXIMATE_MAX, PASTE_SIZE, REREAD_LINES
from errkit.core.regex import engine
from errkit.explain.matching.found import Match
from errkit.explain.matching.text import clean, message_forms

FENCE = "```"
_FOLDED_HEADER = engine().compile(r"(?i)(?:^|[ \t:\[\]|>(])[A-Za-z_][A-Za-z0-9_.]*(?:error|exception): ?")


def unwrapped(text: str) -> tuple[str, list[int]] | None:
    """(the text with each run of wrapped lines joined by a space, the first line number of each of
    its lines), or None when no line was joined. Lines are joined when each is text from the left
    margin (not indented as a traceback's frames, not a code fence, not blank), quoted alike (a
    `> ` quote's marks taken off)."""
    out, numbers = [], []
    before = None  # (whether the line before may be joined, whether it was quoted)
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        quoted = line.startswith(">")
        body = line[1:].lstrip(" ") if quoted else line
        joinable = bool(body.strip()) and not body[:1].isspace() and not body.startswith(FENCE)
        if joinable and before == (True, quoted):
            out[-1] = out[-1].rstrip() + " " + body
        else:
            out.append(body if quoted and joinable else line)
            numbers.append(n)
        before = (joinable, quoted)
    return None if len(out) == text.count("\n") + 1 else ("\n".join(out), numbers)


def reread(index, tail, found: list) -> list:
    """The matches of a paste (chunks.Found, most recent first), read again: `found` as the first
    reading found them, unless the paste (of REREAD_LINES lines at most, when something was found) read
    with its wrapped lines joined finds better ones (`_better`: a message's first line matched a
    shorter wording, `Ran out of memory in memory space vmem`), or nothing was found and a case-folded reading finds something. `tail`
    (chunks.Tail): a paste is all of it."""
    if getattr(tail, "first_line", 1) != 1 or len(tail.encode("utf-8", "replace")) > PASTE_SIZE:
        return found
    from errkit.explain.matching.chunks import Found, explain_chunks

    joined = unwrapped(tail) if not found or tail.strip().count("\n") < REREAD_LINES else None
    if joined is not None:
        again, _, _ = explain_chunks(index, [joined[0].encode("utf-8", "replace")])
        if again and (not found or _better(again, found)):
            for f in again:
                f.match.line = f.last_line = joined[1][min(f.last_line, len(joined[1])) - 1]
            return again
    if found:
        return found
    text, numbers = joined if joined is not None else (tail, None)
    folded = index.room(Folded)
    matches = []
    for n, line in enumerate(text.split("\n"), 1):
        match = folded.match(clean(line), numbers[n - 1] if numbers else n)
        if match is not None and all(m.code != match.code for m in matches):
            matches.append(match)
    out = []
    for match in reversed(matches):  # most recent first, as the first reading's
        f = Found(match)
        f.count = 1
        out.append(f)
    return out


def _fixed(found) -> int:
    return 0 if found.match.weak else found.match.wording["literal_chars"]


def _better(again: list, found: list) -> bool:
    """Whether the second reading's answers replace the first's: as many, the last one with more
    fixed text, holding the text the first reading's last answer matched (a wording continued on
    the next line, not another message the joined lines now make)."""
    return len(again) >= len(found) and _fixed(again[0]) > _fixed(found[0]) and (found[0].match.text or "") in (again[0].match.text or "")


class _Recased:
    """A match without case whose `None`, `True` and `False` are read as written in their case."""

    def __init__(self, m):
        self.m, self.string = m, m.string

    def group(self, group):
        text = self.m.group(group)
        return _WORDS.get(text.strip().lower(), text) if isinstance(text, str) else text


_WORDS = {"none": "None", "true": "True", "false": "False"}


class Folded:
    """What the case-folded reading keeps of an index: its keys lowered, the wordings' regexes
    compiled without case."""

    def __init__(self, index):
        self.index = index
        self._keys = [" ".join(key.split()).lower() for key in index.keys]
        self._compiled: dict = {}

    def regex(self, i: int):
        pattern = self._compiled.get(i)
        if pattern is None:
            pattern = self._compiled[i] = engine().compile("(?i)(?:" + self.index.wordings[i]["regex"] + ")")
        return pattern

    def match(self, line: str, line_no: int) -> Match | None:
        """The wording a line matches without case, the most fixed text first: its message after
        `someerror: ` whole, else the line whole, else anywhere in it; approximate, with its values."""
        lowered = " ".join(line.split()).lower()
        index = self.index
        ids = [i for k, key in enumerate(self._keys) if key in lowered for i in index.keyed[k]]
        if not ids:
            return None
        header = _FOLDED_HEADER.search(line)
        texts = [form for _, form in message_forms(line[header.end():].strip())] if header else []
        best = None
        for how, candidates in (("full", texts + [line.strip()]), ("any", [line.strip()])):
            for text in candidates:
                for i in ids:
                    regex = self.regex(i)
                    m = regex.fullmatch(text) if how == "full" else regex.search(text)
                    params = index.captured(i, _Recased(m)) if m else None
                    wording = index.wordings[i]
                    if params is not None and (best is None or wording["literal_chars"] > best.wording["literal_chars"]):
                        best = Match(wording["code"], wording, params, line_no, exact=False, score=APPROXIMATE_MAX,
                                     text=m.group(0))
            if best is not None:
                return best
        return None

"""A paste read again (issue 51): first with its hard-wrapped lines joined (a terminal's or an
editor's wrap at 40-79 columns, or a markdown quote's `> ` on each wrapped line), then each line
without case (a message retyped in lower or upper case: the closest wordings then, approximate,
with the values read, those its entry `reads` after the message too). Only a paste is read again.
What the first reading found is kept, unless the joined reading finds more of the same message (a
wording with more fixed text, or a value the wrap cut short), or its message, read without case, is
a longer wording of the same entry than the one its start matched exactly (`out of resource: shared
memory` of a lowered `... shared memory, required: 98304, ...`)."""

from errkit.core.index_format import APPROXIMATE_MAX, NEXT_TRACEBACK, PASTE_SIZE, READ_WINDOW, REREAD_LINES
from errkit.core.regex import engine
from errkit.explain.matching.found import Match
from errkit.explain.matching.index import captured
from errkit.explain.matching.text import clean, message_forms

FENCE = "```"
_FOLDED_HEADER = engine().compile(r"(?i)(?:^|[ \t:\[\]|>(])[A-Za-z_][A-Za-z0-9_.]*(?:error|exception): ?")


def unwrapped(text: str, quotes: bool = True) -> tuple[str, list[int]] | None:
    """(the text with each run of wrapped lines joined by a space, the first line number of each of
    its lines), or None when no line was joined. Lines are joined when each is text from the left
    margin (not indented as a traceback's frames, not a code fence, not blank), quoted alike (a
    `> ` quote's marks taken off). Without `quotes`, a leading `>` is text (a message's own
    `smem_bytes=N > max_smem_bytes` wrapped before its `>`)."""
    out, numbers = [], []
    before = None  # (whether the line before may be joined, whether it was quoted)
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        quoted = quotes and line.startswith(">")
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
    if not found and joined is not None and "\n>" in tail:
        literal = unwrapped(tail, quotes=False)
        again, _, _ = explain_chunks(index, [literal[0].encode("utf-8", "replace")]) if literal else ([], None, None)
        if again:
            for f in again:
                f.match.line = f.last_line = literal[1][min(f.last_line, len(literal[1])) - 1]
            return again
    folded = index.room(Folded)
    if found:
        lines = tail.split("\n")
        for f in found:
            _recased(folded, f, lines)
        return found
    text, numbers = joined if joined is not None else (tail, None)
    lines = text.split("\n")
    matches = []
    for n, line in enumerate(lines, 1):
        match = folded.match(clean(line), numbers[n - 1] if numbers else n)
        if match is not None and all(m.code != match.code for m in matches):
            folded.read_after(match, lines, n)
            matches.append(match)
    out = []
    for match in reversed(matches):  # most recent first, as the first reading's
        f = Found(match)
        f.count = 1
        out.append(f)
    return out


def _recased(folded: "Folded", found, lines: list[str]) -> None:
    """A message retyped in another case whose start still matches a shorter wording of its entry
    exactly (lowered, `out of resource: shared memory, required: 98304, ...` starts with the
    wording `out of resource: shared memory`): answered with the entry's wording with more fixed
    text that its line matches without case, approximate, with the values that one reads."""
    match = found.match
    if match.weak or not 1 <= match.line <= len(lines):
        return
    longer = folded.match(clean(lines[match.line - 1]), match.line, longer_than=match)
    if longer is not None and len(longer.params) > len(match.params):
        folded.read_after(longer, lines, match.line)
        found.match = longer


def _fixed(found) -> int:
    return 0 if found.match.weak else found.match.wording["literal_chars"]


def _better(again: list, found: list) -> bool:
    """Whether the second reading's answers replace the first's: as many, the last one holding the
    text the first reading's last answer matched (a wording continued on the next line, not another
    message the joined lines now make), with more fixed text, or, of the same entry, going on past
    where the first one's text ends as no message does (a value cut by the wrap: `float32,
    bfloat16,` then `float16` on the next line; `shapes or` then `layouts`)."""
    if len(again) < len(found):
        return False
    first, second = found[0].match, again[0].match
    shorter, longer = first.text or "", second.text or ""
    if shorter not in longer:
        return False
    after = longer[longer.find(shorter) + len(shorter):]  # what the joined reading goes on with
    return _fixed(again[0]) > _fixed(found[0]) or (
        second.code == first.code and after.strip() != ""
        and (continued(shorter + after[:len(after) - len(after.lstrip(",;:"))]) or continues(after)))


# words a message does not end with: a line that ends with one was cut by a wrap
_CONTINUED = frozenset("a an and are as at be by for from in is of on or than the to with".split())


def continued(text: str) -> bool:
    """Whether `text` ends as no message does: with a comma, colon or semicolon, or an article,
    preposition or conjunction."""
    text = text.rstrip()
    return text.endswith((",", ":", ";")) or (text.rsplit(None, 1)[-1:] or [""])[0].lower() in _CONTINUED


def continues(text: str) -> bool:
    """Whether `text` (what the joined reading read on the next line) starts as only the rest of a
    sentence does: in lower case (`operand shapes or layouts`: a sentence, a log record, a frame
    starts otherwise), or with a conjunction."""
    text = text.lstrip()
    return text[:1].islower() or (text.split(None, 1)[:1] or [""])[0].lower() in ("and", "or", "nor", "but")


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
        self._reads: dict = {}

    def regex(self, i: int):
        pattern = self._compiled.get(i)
        if pattern is None:
            pattern = self._compiled[i] = engine().compile("(?i)(?:" + self.index.wordings[i]["regex"] + ")")
        return pattern

    def match(self, line: str, line_no: int, longer_than: Match | None = None) -> Match | None:
        """The wording a line matches without case, the most fixed text first: its message after
        `someerror: ` whole, else the line whole, else anywhere in it; approximate, with its values.
        `longer_than`: only the wordings of that match's entry with more fixed text than its own."""
        lowered = " ".join(line.split()).lower()
        index = self.index
        ids = [i for k, key in enumerate(self._keys) if key in lowered for i in index.keyed[k]]
        if longer_than is not None:
            ids = [i for i in ids if index.wordings[i]["code"] == longer_than.code
                   and index.wordings[i]["literal_chars"] > longer_than.wording["literal_chars"]]
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

    def read_after(self, match: Match, lines: list[str], n: int) -> None:
        """The values its entry `reads` that `match` (of line `n`) lacks, read without case from its
        line and the lines after it (READ_WINDOW characters at most, to the next traceback), as the
        first reading reads them (errkit/explain/matching/around.py read_on)."""
        reads = (self.index.entries.get(match.code) or {}).get("reads")
        if not reads:
            return
        window = "\n".join(lines[n - 1:])[:READ_WINDOW]
        cut = window.find(NEXT_TRACEBACK, window.find("\n") + 1) if "\n" in window else -1
        window = window if cut < 0 else window[:cut]
        extra = {}
        for k, read in enumerate(reads):
            regex = self._reads.get((match.code, k))
            if regex is None:
                regex = self._reads[(match.code, k)] = engine().compile("(?i)(?:" + read["regex"] + ")")
            m = regex.search(window)
            for param, value in ((captured(read["captures"], _Recased(m)) if m else None) or {}).items():
                if param not in match.params and param not in extra:
                    extra[param] = value
        if extra:  # a new dict: the values may be shared with a remembered match
            match.params = {**match.params, **extra}

"""Find the catalogued errors of a whole input: every exact match, counted and deduplicated, most
recent first; and, when none matched, the closest wordings to its last error lines."""

from errkit.core.index_format import APPROXIMATE_MAX, TAIL
from errkit.explain.match import HEADER, MSG, PASTE_SIZE, Index, Match, clean


class Tail(str):
    """The end of the input (what the approximate pass reads), knowing its first line's number."""

    first_line: int = 1


class Found:
    __slots__ = ("match", "count", "last_line")

    def __init__(self, match: Match):
        self.match, self.count, self.last_line = match, 0, match.line


def explain_chunks(index: Index, chunks, warn=None) -> tuple[list[Found], str, bool]:
    """(distinct exact matches, most recent first; the input's tail; whether any text was seen).

    `chunks` are bytes cut on line boundaries (or str); `warn(message)` hears once of input that
    is not UTF-8 where it mattered: in the first 8 KB or on a line read further.
    """
    found: dict = {}
    line = 1
    tail = b""
    seen_text = False
    warned = []

    def undecodable():
        if not warned and warn is not None:
            warn("errkit: the input is not valid UTF-8; undecodable bytes were replaced")
        warned.append(True)

    chunks = iter(chunks)
    upcoming = next(chunks, None)
    i = -1
    while upcoming is not None:
        chunk, upcoming, i = upcoming, next(chunks, None), i + 1
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8", "replace")
        paste = i == 0 and upcoming is None and len(chunk) <= PASTE_SIZE  # the whole input, and small
        if i == 0:
            try:
                chunk[:8192].decode("utf-8")
            except UnicodeDecodeError as err:
                if err.start < 8192 - 4:  # not a character cut at the 8 KB boundary
                    undecodable()
        if not seen_text and not chunk.isspace() and chunk:
            seen_text = True
        counted = 0  # the scan counted the lines up to its last match; count the rest once
        for match in index.scan(chunk, first_line=line, undecodable=undecodable, paste=paste):
            key = match.key()
            item = found.get(key)
            if item is None:
                item = found[key] = Found(match)
            item.count += 1
            item.last_line = match.line
            line, counted = match.line, match.offset
        line += chunk.count(b"\n", counted)
        tail = (tail + chunk[-TAIL:])[-TAIL:]
    strong = {f.match.code for f in found.values() if not f.match.weak}
    # a note line or a page link under a message that matched says nothing more
    ordered = sorted((f for f in found.values() if not (f.match.weak and f.match.code in strong)),
                     key=lambda f: f.last_line, reverse=True)
    text = Tail(tail.decode("utf-8", "replace"))
    text.first_line = line - text.count("\n")
    return ordered, text, seen_text


def approximate(index: Index, tail: str, limit: int = 3) -> list[Match]:
    """Closest wordings to the error lines of the input (edited, truncated or newer wordings).

    Never 1.0: a text the shape of a wording that did not match exactly differs somewhere (a
    value of another type, a changed word)."""
    from difflib import SequenceMatcher

    first = getattr(tail, "first_line", 1)
    lines = [(first + n, clean(l)) for n, l in enumerate(tail.splitlines()) if l.strip()]
    segments = []
    for line_no, l in lines:
        header = HEADER.search(l)
        if header and (header.group(MSG) or "").strip():
            segments.append((line_no, header.group(MSG).strip()))
    if not segments:
        segments = [(line_no, l.strip()) for line_no, l in lines[-20:]]
    segments = [(line_no, seg[-2000:]) for line_no, seg in segments[-5:]]  # similarity is quadratic: a message-sized piece
    scored: dict[str, Match] = {}
    for line_no, seg in segments:
        norm_seg = normalised_for_similarity(seg)
        for i in index.shortlist(seg):
            wording = index.wordings[i]
            score = min(SequenceMatcher(None, norm_seg, index.normalised_skeleton(i, normalised_for_similarity), autojunk=False).ratio(), APPROXIMATE_MAX)
            best = scored.get(wording["code"])
            if score >= 0.6 and (best is None or score > best.score):
                scored[wording["code"]] = Match(wording["code"], wording, {}, line_no, exact=False, score=round(score, 3), text=seg)
    return sorted(scored.values(), key=lambda m: -m.score)[:limit]


def normalised_for_similarity(text: str) -> str:
    import re

    text = re.sub(r"<[^<>]*>", "#", text)
    text = re.sub(r"\([-0-9, ]*\)|'[^']*'|-?[0-9][0-9.e+-]*", "#", text)
    return " ".join(text.split())


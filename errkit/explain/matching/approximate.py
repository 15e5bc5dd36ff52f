"""Approximate matching: when nothing in an input matched exactly, the wordings closest to its last
error lines (edited, truncated or newer wordings), each with a similarity score, never 1.0.

The wordings compared are a shortlist, those sharing the rarest words with the text, so the work is
bounded whatever the catalogue's size; this room keeps each word's wordings and each wording's
skeleton normalised (`Closest`)."""

from errkit.core.index_format import APPROXIMATE_MAX, HEADER, POSTINGS_BUDGET, QUOTE_COVERAGE, QUOTE_WORDS, QUOTED, SHORTLIST, WORD
from errkit.explain.matching.found import Match
from errkit.explain.matching.text import MSG, clean


class Closest:
    """What the approximate pass keeps of an index: each word's wordings, each wording's skeleton
    normalised for similarity."""

    def __init__(self, index):
        self.index = index
        self._postings: dict[str, list[int]] | None = None
        self._skeletons: dict[int, str] = {}

    def shortlist(self, text: str) -> list[int]:
        """The wordings sharing the rarest words with `text`, best first, at most SHORTLIST.

        The work is bounded whatever the catalogue's size: words are taken rarest first, each
        weighted by how rare it is, until POSTINGS_BUDGET postings have been read.
        """
        if self._postings is None:
            postings: dict[str, list[int]] = {}
            for i, wording in enumerate(self.index.wordings):
                # a wording tried only at its raise site (no key, a location) is not a closest wording either
                if wording["template"] and (wording["key"] or not wording["location"]):
                    for word in dict.fromkeys(WORD.findall(wording["skeleton"])):
                        postings.setdefault(word, []).append(i)
            self._postings = postings
        postings = self._postings
        words = sorted({w for w in WORD.findall(text) if w in postings}, key=lambda w: (len(postings[w]), w))
        scores: dict[int, float] = {}
        get = scores.get
        budget = POSTINGS_BUDGET
        for word in words:
            if budget <= 0:
                break
            ids = postings[word]
            weight = 1.0 / len(ids)  # a word few wordings share says more
            for i in ids[:budget]:
                scores[i] = get(i, 0.0) + weight
            budget -= len(ids)
        from operator import itemgetter  # (not at import: start-up time)

        # by score, highest first, then by id: sorted by id, then stably by score (no key function per id)
        return [i for i, _ in sorted(sorted(scores.items()), key=itemgetter(1), reverse=True)[:SHORTLIST]]

    def skeleton(self, i: int) -> str:
        """Wording `i`'s skeleton, normalised for similarity."""
        text = self._skeletons.get(i)
        if text is None:
            text = self._skeletons[i] = normalised_for_similarity(self.index.wordings[i]["skeleton"])
        return text


def shortlist(index, text: str) -> list[int]:
    """The wordings of `index` sharing the rarest words with `text`, best first (Closest.shortlist)."""
    return index.room(Closest).shortlist(text)


def approximate(index, tail: str, limit: int = 3) -> list[Match]:
    """Closest wordings to the error lines of the input (edited, truncated or newer wordings).

    Never 1.0: a text the shape of a wording that did not match exactly differs somewhere (a
    value of another type, a changed word)."""
    from difflib import SequenceMatcher

    closest = index.room(Closest)
    first = getattr(tail, "first_line", 1)
    lines = [(first + n, clean(l)) for n, l in enumerate(tail.splitlines()) if l.strip()]
    segments = []
    for line_no, l in lines:
        header = HEADER.search(l)
        if header and (header.group(MSG) or "").strip():
            segments.append((line_no, header.group(MSG).strip()))
    if not segments:
        segments = [(line_no, l.strip()) for line_no, l in lines[-20:]]
    segments = [(line_no, seg[-2000:], False) for line_no, seg in segments[-5:]]  # similarity is quadratic: a message-sized piece
    segments += quoted_starts(lines[-20:])
    scored: dict[str, Match] = {}
    for line_no, seg, quoted in segments:
        norm_seg = normalised_for_similarity(seg)
        for i in closest.shortlist(seg):
            wording = index.wordings[i]
            skeleton = closest.skeleton(i)
            if quoted:  # the start of a message, quoted: compared with as much of the wording's start
                if len(norm_seg) >= len(skeleton):
                    continue
                start = SequenceMatcher(None, norm_seg, skeleton[:len(norm_seg)], autojunk=False).ratio()
                score = min(start * (1 - QUOTE_COVERAGE + QUOTE_COVERAGE * len(norm_seg) / len(skeleton)), APPROXIMATE_MAX)
            else:
                score = min(SequenceMatcher(None, norm_seg, skeleton, autojunk=False).ratio(), APPROXIMATE_MAX)
            best = scored.get(wording["code"])
            if score >= 0.6 and (best is None or score > best.score):
                scored[wording["code"]] = Match(wording["code"], wording, {}, line_no, exact=False, score=round(score, 3), text=seg)
    return sorted(scored.values(), key=lambda m: -m.score)[:limit]


def quoted_starts(lines: list[tuple[int, str]]) -> list[tuple[int, str, bool]]:
    """(line, fragment, True) for each fragment of QUOTE_WORDS words or more quoted in these lines
    (the last five): prose that quotes the start of a message."""
    found = []
    for line_no, l in lines:
        for m in QUOTED.finditer(l):
            fragment = m.group(m.lastindex).strip()
            if len(WORD.findall(fragment)) >= QUOTE_WORDS:
                found.append((line_no, fragment, True))
    return found[-5:]


def normalised_for_similarity(text: str) -> str:
    import re

    text = re.sub(r"<[^<>]*>", "#", text)
    text = re.sub(r"\([-0-9, ]*\)|'[^']*'|-?[0-9][0-9.e+-]*", "#", text)
    return " ".join(text.split())

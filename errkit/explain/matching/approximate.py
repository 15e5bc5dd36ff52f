"""Approximate matching: when nothing in an input matched exactly, the wordings closest to its last
error lines (edited, truncated or newer wordings), each with a similarity score, never 1.0.

The wordings compared are a shortlist, those sharing the rarest words with the text, so the work is
bounded whatever the catalogue's size; this room keeps each word's wordings and each wording's
skeleton normalised (`Closest`)."""

from errkit.core.index_format import (APPROXIMATE_MAX, HEADER, POSTINGS_BUDGET, QUOTE_COVERAGE, QUOTE_WORDS, QUOTED, SHORTLIST,
                                     TYPO_LENGTH, TYPO_SIMILARITY, TYPO_WORDS, WORD)
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
    quotes: dict[str, bool] = {}  # code -> whether its best segment was a quoted start
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
                quotes[wording["code"]] = quoted
    found = sorted(scored.values(), key=lambda m: -m.score)[:limit]
    line_text = dict(lines)
    repaired = None  # a misspelt message: the answer to its line put right, alone; of several, the wording with most fixed text
    for best in found:
        if best.score < TYPO_SIMILARITY or quotes[best.code]:
            continue
        if repaired is not None and best.wording["literal_chars"] <= repaired.wording["literal_chars"]:
            continue
        again = misspelt(best.wording, line_text.get(best.line, ""))
        if again is None:
            continue
        from errkit.explain.matching.chunks import explain_chunks

        exact = [f.match for f in explain_chunks(index, [again])[0] if f.match.code == best.code and not f.match.weak]
        if exact:
            repaired = exact[0]
            repaired.exact, repaired.score, repaired.text, repaired.line, repaired.repaired = False, best.score, best.text, best.line, again
    return [repaired] if repaired is not None else found


def misspelt(wording: dict, text: str) -> str | None:
    """`text` with each of `wording`'s fixed words that it lacks (at most TYPO_WORDS, of TYPO_LENGTH
    letters or more) put in for the one word of `text`, not of the wording, one edit from it; None
    when there is no such word for each, or the text so put right does not match the wording."""
    import re

    fixed = dict.fromkeys(WORD.findall(re.sub(r"<[^<>]*>", " ", wording["skeleton"])))
    words = dict.fromkeys(WORD.findall(text))
    missing = [w for w in fixed if w not in words]
    if not 1 <= len(missing) <= TYPO_WORDS or any(len(w) < TYPO_LENGTH for w in missing):
        return None
    spare = [w for w in words if w not in fixed]
    for word in missing:
        near = [w for w in spare if one_edit(w, word)]
        if len(near) != 1:
            return None
        text = re.sub(r"(?<![A-Za-z0-9_])" + re.escape(near[0]) + r"(?![A-Za-z0-9_])", lambda _: word, text, count=1)
    return text if re.search(wording["regex"], text) else None


def one_edit(a: str, b: str) -> bool:
    """Whether `a` becomes `b` by one letter left out, added or changed, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [k for k in range(len(a)) if a[k] != b[k]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    k = 0
    while k < len(short) and short[k] == long_[k]:
        k += 1
    return short[k:] == long_[k + 1:]


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

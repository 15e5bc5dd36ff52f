"""The memory of answered lines: a log repeats its lines behind different stamps, so a line's answer
is remembered for the lines that differ from it only in the digits of their stamp (`line_key`).

Two memories: the whole answer of a line whose surroundings add nothing to it (`Memory.remember`),
and the line's own match before its surroundings are read, for a line whose answer does depend on
them (`Memory.keep_own`: ties, a wording of several kernels, values read after it, the context;
the surroundings are read again each time). Either is kept only when it holds for every line of
its key (`stamp_free`: a match that begins in a stamp with digits has values there)."""

from errkit.core.index_format import FRAME, FRAME_MARK, FRAME_REACH
from errkit.core.normalise import original_span
from errkit.explain.matching.found import Match, again

LINE_CACHE = 4096  # log lines remembered per index (each memory)
MAX_MEMO_LINE = 4096  # bytes of a log line remembered at most
STAMP = b"0123456789 \t:.,/+-[]()TZIWEF"  # the characters of a log line's stamp (line_key)
_ZEROS = bytes.maketrans(b"123456789", b"000000000")
JSON_KEY = -1  # the stamp length line_key gives a JSON line
_JSON_TOKENS: list = []  # the regex of a JSON line's strings and numbers (line_key), compiled when first asked
FRAME_BYTES = FRAME_MARK.encode()


class Memory:
    """What the memory room keeps of an index: the answers of lines, and the own matches of lines
    whose answers read their surroundings, by line_key."""

    def __init__(self, index=None):
        self._answers: dict[bytes, tuple] = {}  # line_key -> (the answer or None, whether the line was undecodable)
        self._own: dict[bytes, Match] = {}  # line_key -> the line's own match, before its surroundings are read

    def recaller(self):
        """The lookup of a line's remembered answer, for the loop over a log's lines: called with
        its key's first part (key[0]), it gives (the answer or None for no match, whether that line
        was undecodable), or None when no line of the key was remembered."""
        return self._answers.get

    def own(self, key: tuple | None, line_no: int) -> Match | None:
        """The own match remembered for `key`, as the match of line `line_no` (its ties too)."""
        own = None if key is None else self._own.get(key[0])
        return None if own is None else again(own, line_no, ties=True)

    def keep_own(self, key: tuple, match: Match, origin, data: bytes, start: int) -> None:
        """Keep `match` as the own match of `key`'s lines, when it holds for them all (stamp_free)."""
        if stamp_free(key, match, origin, data, start):
            if len(self._own) >= LINE_CACHE:
                self._own.clear()
            self._own[key[0]] = again(match, 0, ties=True)  # (a copy: breaking a tie changes the match)

    def remember(self, key: tuple, match: Match | None, origin, line: str, data: bytes, start: int) -> None:
        """Remember the answer to a log line whose lines around add nothing to it, for the lines
        that differ from it only in the digits of their stamp (line_key), when it holds for them
        all (stamp_free)."""
        if match is not None:
            if not stamp_free(key, match, origin, data, start):
                return
            match.key()
            match = again(match, 0)
        if len(self._answers) >= LINE_CACHE:
            self._answers.clear()
        own = key[2] if len(key) > 2 else key[0]  # the line's own key (a traceback's: without its frame)
        self._answers[key[0]] = (match, "\ufffd" in line and not _utf8(own))  # (the stamp is ASCII)

    def clear(self) -> None:
        self._answers.clear()
        self._own.clear()


def key_of(data: bytes, start: int, end: int, traceback: bool) -> tuple | None:
    """The key the line start:end of a log is remembered by (a traceback's exception line: with the
    frame above it, traceback_key), or None when it is not remembered (over MAX_MEMO_LINE bytes)."""
    if end - start > MAX_MEMO_LINE:
        return None
    return traceback_key(data, start, end) if traceback else line_key(data, start, end)


def stamp_free(key: tuple, match: Match, origin, data: bytes, start: int) -> bool:
    """Whether `match` holds the same for every line of its line_key `key` (the line at `start` of
    `data`): not when it begins in the stamp (its digits may be values then); in a JSON line, only a
    match found in one of its strings (span None) that is not made of STAMP's characters (a line
    starting with `{` that is no JSON is matched whole, its digits too)."""
    if key[1] == JSON_KEY:
        return match.span is None and bool((match.text or "").encode("utf-8", "replace").strip(STAMP))
    stamp = data[start:start + max(key[1], 0)]
    if stamp.translate(None, b"0123456789") == stamp:  # no digits in the stamp
        return True
    if match.span is None:
        return False
    begin = original_span(origin, *match.span)[0] if origin is not None else match.span[0]
    return begin >= len(stamp)


def line_key(data: bytes, start: int, end: int) -> tuple[bytes, int]:
    """(a log line start:end with each digit of its stamp written 0, the stamp's length). Its stamp:
    the leading characters of STAMP (a timestamp, a level letter, a thread id): lines that differ
    only there have the same answer, unless a match begins there (stamp_free). A JSON line's
    stamp (length JSON_KEY) is its numbers and its strings made of STAMP's characters only (its
    time): explain reads the other strings of the line, not its numbers."""
    raw = data[start:end]
    if raw[:1] == b"{":
        if not _JSON_TOKENS:
            import re

            # a string's closing quote optional: an unclosed one is read to the line's end once, not
            # again from each escaped quote in it (quadratic)
            _JSON_TOKENS.append(re.compile(rb'"(?:[^"\\]|\\.)*"?|[0-9]+'))
        return _JSON_TOKENS[0].sub(_zeroed, raw), JSON_KEY
    rest = raw.lstrip(STAMP)
    cut = len(raw) - len(rest)
    return (raw[:cut].translate(_ZEROS) + rest if cut else raw), cut


def traceback_key(data: bytes, start: int, end: int) -> tuple | None:
    """The line_key of a traceback's exception line start:end with the frame line above it (the
    raise site is read from the nearest frame within FRAME_REACH bytes: errkit/explain/matching/
    around.py), and the line's own key; None when the nearest `File "` there is no frame (the
    raise site would be looked for further up) or a frame line over MAX_MEMO_LINE bytes."""
    at = data.rfind(FRAME_BYTES, max(0, start - FRAME_REACH), start)
    frame = b""
    if at >= 0:
        line_start = data.rfind(b"\n", 0, at) + 1
        line_end = data.find(b"\n", at, start)
        frame = data[line_start:start if line_end < 0 else line_end]
        if len(frame) > MAX_MEMO_LINE or not FRAME.match(frame.decode("utf-8", "replace")):
            return None
    key, cut = line_key(data, start, end)
    return frame + b"\0" + key, cut, key


def _zeroed(token) -> bytes:
    """A token of a JSON line's key: a number or a string of STAMP's characters, its digits 0."""
    text = token.group()
    return text if text[:1] == b'"' and text[1:-1].strip(STAMP) else text.translate(_ZEROS)


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True

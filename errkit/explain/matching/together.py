"""One error printed over several lines: a status, then "Look at the errors above" under it; two
matches of one entry in one error's printout are one answer with every value (`same_block`), two
errors of one entry a page of a log apart are two."""

from errkit.core.index_format import BLOCK_GAP, CHAINED_NOTE, FRAME_MARK, NEXT_TRACEBACK, TIE_CONTEXT, TRACEBACK_NOTES
from errkit.explain.matching.found import Match

FRAME_BYTES = FRAME_MARK.encode()  # (the matcher reads bytes)
TRACEBACK_NOTES_BYTES = tuple(note.encode() for note in TRACEBACK_NOTES)


def same_block(before: Match, match: Match, data: bytes) -> bool:
    """Whether `match` ends the error `before` began (issue 26, item 2): the next match, of the same
    entry, both exact, within TIE_CONTEXT bytes of the input with only a traceback's lines between
    them (_inside_one_error), their values agreeing, and `before` holding a value `match` lacks (a
    repeated error with the same values is counted, not merged). `data`: the block holding
    `match` (scan_chunks: it holds the TIE_CONTEXT bytes before its line too)."""
    if before.code != match.code or before.weak or match.weak or not (before.exact and match.exact):
        return False
    if not 0 <= match.at - before.at <= TIE_CONTEXT:
        return False
    shared = before.params.keys() & match.params.keys()
    if not all(before.params[k] == match.params[k] for k in shared) or not before.params.keys() - match.params.keys():
        return False
    low = before.at - (match.at - match.offset)  # where `before`'s line starts in `data`
    return low >= 0 and _inside_one_error(data, data.find(b"\n", low, match.offset) + 1 or match.offset, match.offset)


def _inside_one_error(data: bytes, low: int, high: int) -> bool:
    """Whether the lines of data[low:high] may lie inside one error's printout: a traceback's lines
    (_in_traceback) and at most BLOCK_GAP others. Two errors of one entry a page of a log apart
    are two errors, even when their values complete each other (issue 30)."""
    others, after_frame, pos = 0, False, low
    while pos < high:
        end = data.find(b"\n", pos, high)
        end = high if end < 0 else end
        line = data[pos:end]
        frame = line.startswith(FRAME_BYTES)
        if not (frame or after_frame or _in_traceback(line)):
            others += 1
            if others > BLOCK_GAP:
                return False
        after_frame, pos = frame, end + 1
    return True


def _in_traceback(line: bytes) -> bool:
    """A line a traceback prints besides its frames (`File "..."` and the source line under each,
    told by the caller): blank or indented lines, the chaining notes of Python and JAX
    (TRACEBACK_NOTES, also behind IPython's exception name), separators (`-----`, `_ _ _`, `===`),
    and IPython's frames (`path.py in f(x)`, `<ipython-input-3-..> in <module>`, `----> 4 code`)."""
    stripped = line.strip()
    if not stripped or line[:1] in (b" ", b"\t") or not stripped.strip(b"-_= "):
        return True
    if stripped.startswith(b"-") and stripped.lstrip(b"-").startswith(b">"):
        return True
    return b".py in " in line or b"> in " in line or any(note in line for note in TRACEBACK_NOTES_BYTES)


CHAINED = CHAINED_NOTE.encode()
TRACEBACK_HEAD = NEXT_TRACEBACK.encode()


def same_raise(before: Match, match: Match, data: bytes) -> bool:
    """Whether `match` is the error `before` already counted, printed again (issue 52): the same
    entry and values, within one error's printout (_inside_one_error), and either the raise's note
    line under its message (errkit's kernels add `[RA105] ... - see <page>`: a weak match after
    the strong one), or the message printed twice by one failure: logged, then its traceback
    ending in it (`logging.exception`), or a chained traceback repeating it (JAX's `The above
    exception was the direct cause`). Two tracebacks of one error back to back are two raises."""
    if before.code != match.code or before.weak or before.params != match.params or not before.exact:
        return False
    if not 0 < match.at - before.at <= TIE_CONTEXT:
        return False
    low = before.at - (match.at - match.offset)  # where `before`'s line starts in `data`
    if low < 0:
        return False
    after = data.find(b"\n", low, match.offset) + 1 or match.offset  # the line after `before`'s
    if not _inside_one_error(data, after, match.offset):
        return False
    if match.weak:
        return True  # the note line of the raise whose message matched
    between = data[after:match.offset]
    if CHAINED in between:
        return True
    if not between.lstrip().startswith(TRACEBACK_HEAD) or between.count(TRACEBACK_HEAD) != 1:
        return False
    above = data[data.rfind(b"\n", 0, max(low - 1, 0)) + 1:max(low - 1, 0)] if low else b""
    return not (above.startswith((b" ", b"\t")) or above.lstrip().startswith(FRAME_BYTES))  # not a traceback's end

"""One block of text, line by line: the lines worth reading (in a log, those the prefilter finds:
errkit/explain/prefilter.py; in a paste, every line), each answered from memory
(errkit/explain/matching/memory.py) or examined: read by the line room, then around it (line.py,
around.py). A traceback is read at its exception line; in a paste, a line that matches nothing is
tried joined with its neighbours (a hard wrap). No caches of its own: what it remembers is the
rooms'."""

from errkit.core.index_format import FRAME_MARK, HEADER, MAX_LINE, NEXT_TRACEBACK, PASTE_SIZE, TRACEBACK_LINES
from errkit.core.normalise import normalise, original_span
from errkit.explain.matching.around import Around
from errkit.explain.matching.found import Match, again
from errkit.explain.matching.keys import Keys, candidates
from errkit.explain.matching.line import match_line, match_note
from errkit.explain.matching.memory import Memory, key_of
from errkit.explain.matching.text import clean, json_record

FRAME_BYTES = FRAME_MARK.encode()  # (the matcher reads bytes)
FRAME_FIRST = (b" ", b"\t", FRAME_BYTES[:1])  # what a frame line starts with (_is_frame)
NEXT_TRACEBACK_BYTES = NEXT_TRACEBACK.encode()


def scan(index, data: bytes | str, first_line: int = 1, undecodable=None, paste: bool | None = None,
         begin: int = 0, end: int | None = None, reached: list | None = None):
    """Every match in a block of text (bytes as read, or str), in order.

    A traceback is read at its exception line (the last frame tells the raise site). An input of
    PASTE_SIZE bytes or fewer (`paste`, decided by the caller who sees the whole input) is a paste:
    every line naming an exception is read too, and a line that matches nothing is tried joined
    with its neighbours (terminals hard-wrap long lines).
    `undecodable()` is called for each line read further that is not valid UTF-8.

    Only the lines starting in `begin:end` (line starts; `first_line` is the number of the one
    at `begin`) are scanned, the rest of `data` is read around them; `reached[0]` is set to
    where the scan stopped, `end` or past it (a traceback's exception line read after a frame).
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "replace")
    stop = len(data) if end is None else end
    if reached is not None:
        reached[0] = stop
    if not (index.keys or index.always or index.located):
        return  # nothing to look for: no wording can match
    if paste is None:
        paste = len(data) <= PASTE_SIZE
    if not paste:
        import re  # noqa: F401 - a log: the small patterns run on Python's re, faster per call (regex.Lazy)

    keys, memory = index.room(Keys), index.room(Memory)

    def search(*where):  # compiled only when used: a paste rarely needs it (start-up time)
        return keys.locator().search(data, *where)

    # (the loop of a log's lines: what it calls per line bound once)
    recalled, located, count = memory.recaller(), index.located, data.count
    first = None if paste else keys.prefilter().over(data)  # a log: its blocks scanned by the prefilter
    line_no, counted, pos, size = first_line, begin, begin, len(data)
    ahead = None if paste else _ahead(data)  # a log: the windows read after matches, searched once (around.py read_on)
    taken = 0  # where the text of the last match ends: a line before it is not joined to the next
    searched = [-1, -1, 0]  # the last search for a traceback's exception line that found none (_traceback_end)
    while pos < stop:
        if paste:  # every line; a huge one is read around its first hit
            start = pos
            end = data.find(b"\n", pos)
            end = size if end < 0 else end
            hit = search(start, end) if end - start > MAX_LINE else None
            where = hit.start() if hit else start
        else:
            where = first(pos)
            if where is None or where >= stop:
                return
            start = data.rfind(b"\n", 0, where) + 1
            end = data.find(b"\n", where)
            end = size if end < 0 else end
        traceback = False
        if located and data[start:start + 1] in FRAME_FIRST and _is_frame(data, start, end):
            exception_line = _traceback_end(data, end + 1, memo=searched)
            if exception_line is not None:
                start, end = exception_line
                where, traceback = start, True
        pos = end + 1
        if reached is not None and pos > stop:
            reached[0] = pos
        key = None if paste else key_of(data, start, end, traceback)
        if key is not None:
            known = recalled(key[0])
            if known is not None:  # a line read before, but for the digits of its stamp
                line_no += count(b"\n", counted, start)
                counted = start
                template, undecoded = known
                if undecoded and undecodable is not None:
                    undecodable()
                if template is not None:
                    match = again(template, line_no)
                    match.offset = start
                    yield match
                continue
        if paste and not traceback:
            line = _read_line(data, start, end, where, None)
            if not _worth_reading(index, line):
                continue
            if undecodable is not None and "\ufffd" in line:
                _read_line(data, start, end, where, undecodable)  # a line read further: say so
        else:
            line = _read_line(data, start, end, where, undecodable)
        line_no += count(b"\n", counted, start)  # incrementally: lines come in order
        counted = start
        match = examine(index, data, start, line, line_no, traceback, ahead, key)
        if match is None and paste and not traceback:
            match, pos = _joined(index, data, start, end, line_no, undecodable, pos, taken)
        if match is not None:
            taken = pos
            match.offset = start
            yield match


def examine(index, data: bytes, start: int, line: str, line_no: int, traceback: bool, ahead=None,
            key: tuple | None = None) -> Match | None:
    """The match of one line read as pasted: normalised first, reported on the original text.
    `key`: the line's memory key (errkit/explain/matching/memory.py key_of), to remember
    its answer by when the lines around it add nothing to that answer (Memory.remember)."""
    text, origin = normalise(line)
    memory, around = index.room(Memory), index.room(Around)
    own = memory.own(key, line_no)
    if own is not None:  # the line was read before, but for its stamp's digits: only its context is new
        match = own
    else:
        match = match_line(index, text, line_no)
        if match is None and traceback:
            match = around.located_match(data, start, text, line_no)
        if match is None:
            match = match_note(index, text, line_no)
    alone = not around.depends(match)
    if own is None and key is not None and not alone:
        memory.keep_own(key, match, origin, data, start)
    if match is not None:
        record = (lambda: json_record(text)) if match.span is None and not traceback else None
        match = around.read(match, data, start, line, text, origin, record, ahead)
    if match is not None and match.span is not None and origin is not None:
        a, b = original_span(origin, *match.span)
        match.text = line[a:b]
    if key is not None and alone:
        memory.remember(key, match, origin, line, data, start)
    return match


def _joined(index, data: bytes, start: int, end: int, line_no: int, undecodable, pos: int, taken: int = 0):
    """(a match of the line joined with the one before or after it, as a hard wrap split it, or
    None; where to go on). The joined text is reported as it was, newline removed. The line
    before is not joined when it is part of a match already (`taken`: where that match's text
    ends), and a joined match must use text of both lines (`_across`): else one error line and
    the line after it would count that error twice (issue 30)."""
    before = data.rfind(b"\n", 0, max(start - 1, 0)) + 1 if start else start
    after = data.find(b"\n", end + 1) if end < len(data) else -1
    after = len(data) if after < 0 and end < len(data) else after
    windows = []
    if start and start > taken:
        windows.append((before, start - 1, end, -1))
    if end < len(data):
        windows.append((start, end, after, 0))
    for first, cut, last, shift in windows:
        head = _decode(data, first, cut, undecodable)
        tail = _decode(data, cut + 1, last, undecodable)
        if not head.strip() or not tail.strip() or len(head) + len(tail) > MAX_LINE:
            continue
        for glue in _glues(head):
            joined = head.rstrip("\r") + glue + tail
            match = examine(index, data, first, joined, line_no + shift, False)
            if match is not None and _across(match, joined, len(head.rstrip("\r")), len(glue)):
                return match, max(pos, last + 1)
    return None, pos


def _glues(head: str) -> tuple[str, str]:
    """How the line before a hard wrap is joined to the next, the likelier first: with nothing (a
    terminal's wrap at a column cuts anywhere) or with a space (an editor's at a word drops it),
    the space first after a comma, colon or semicolon, which a message follows with one."""
    return (" ", "") if head.rstrip("\r")[-1:] in (",", ";", ":") else ("", " ")


def _across(match: Match, joined: str, cut: int, glue: int) -> bool:
    """Whether a match of two lines joined uses text of both (a hard wrap split it): one that lies
    within one of them is that line's own, read (and counted) on its own already or next."""
    if match.span is None:  # a JSON line's string: no span in the joined text to tell by
        return True
    a, b = original_span(normalise(joined)[1], *match.span)
    return a < cut and b > cut + glue


def _ahead(data: bytes):
    from errkit.explain.ahead import Ahead  # (not for a paste: start-up time)

    return Ahead(data)


def _traceback_end(data: bytes, pos: int, limit: int = TRACEBACK_LINES, memo: list | None = None) -> tuple[int, int] | None:
    """(start, end) of the exception line that ends the traceback whose frames go on at `pos`:
    the first line after them that names an exception (JAX's note about filtered frames and
    separators may come between). None when another traceback or the end comes first.

    `memo` (of the last search that found none: where it stopped, where it began, the lines
    between; one per scan): each frame of a long traceback searches the lines after it, so the
    search of the next frame goes on where the last one stopped, the lines between counted (they
    hold no exception line: the last search read them). Without it a traceback of F frames read
    F x TRACEBACK_LINES lines (1.7 s a MB)."""
    begin, skipped = pos, 0
    if memo is not None and memo[1] <= pos <= memo[0]:
        skipped = memo[2] - data.count(b"\n", memo[1], pos)  # the lines from here to where it stopped
        limit -= skipped
        pos = memo[0]
    found = _traceback_search(data, pos, limit)
    if isinstance(found, tuple):
        return found
    if memo is not None:
        memo[:] = [found[0], begin, skipped + found[1]]
    return None


def _traceback_search(data: bytes, pos: int, limit: int) -> tuple[int, int] | list[int]:
    """_traceback_end's search: (start, end) of the exception line, else [where it stopped, the
    lines it read]."""
    size = len(data)
    for read in range(max(limit, 0)):
        if pos >= size:
            return [pos, read]
        end = data.find(b"\n", pos)
        end = size if end < 0 else end
        first = data[pos:pos + 1]
        if first not in (b" ", b"\t") and end > pos:
            if data.startswith(NEXT_TRACEBACK_BYTES, pos):
                return [pos, read]
            line = data[pos:min(end, pos + MAX_LINE)].decode("utf-8", "replace")
            if HEADER.search(clean(line)):
                return pos, end
        pos = end + 1
    return [pos, max(limit, 0)]


def _read_line(data: bytes, start: int, end: int, where: int, undecodable) -> str:
    """The line start:end as text; a line longer than MAX_LINE characters (counted as the paste
    page counts them) is cut to the MAX_LINE characters around `where`."""
    if end - start <= 4 * MAX_LINE:
        line = _decode(data, start, end, undecodable)
        if len(line) <= MAX_LINE:
            return line
    low, high = max(start, where - 2 * MAX_LINE), min(end, where + 2 * MAX_LINE)  # >= MAX_LINE/2 chars each side
    while low > start and 0x80 <= data[low] < 0xC0:  # cut between characters
        low -= 1
    while high < end and 0x80 <= data[high] < 0xC0:
        high += 1
    before = _decode(data, low, where, undecodable)
    after = _decode(data, where, high, undecodable)
    return before[max(0, len(before) - MAX_LINE // 2):] + after[:MAX_LINE // 2]


def _is_frame(data: bytes, start: int, end: int) -> bool:
    """Whether the line start:end is a traceback frame (`  File "path", line 3, in f`)."""
    body = start
    while body < end and data[body] in b" \t":
        body += 1
    return data.startswith(FRAME_BYTES, body)


def _worth_reading(index, line: str) -> bool:
    """In a paste: a line holding a key (after normalisation), naming an exception, or linking an entry."""
    text, _ = normalise(line)
    return bool(candidates(index, text) or HEADER.search(text) or "/errors/" in text)


def _decode(data: bytes, start: int, end: int, undecodable) -> str:
    raw = data[start:end]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        if undecodable is not None:
            undecodable()
        return raw.decode("utf-8", "replace")

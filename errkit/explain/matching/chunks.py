"""A whole input read in chunks (a paste, a log streamed in blocks): every match in order
(`scan_chunks`), its lines counted and the windows around a match the same wherever a chunk ends;
and the distinct answers (`explain_chunks`): every exact match counted and deduplicated, the entries
seen last first (of one entry's answers with different values, the first failure's first), one
error printed over several lines counted once (errkit/explain/matching/together.py). When none
matched, the caller reads a paste again (rereading.py), then asks for the closest wordings
(approximate.py) to the input's tail."""

from errkit.core.index_format import NEXT_TRACEBACK, PASTE_SIZE, READ_WINDOW, TAIL, TIE_CONTEXT
from errkit.explain.matching.blocks import scan
from errkit.explain.matching.found import Match
from errkit.explain.matching.text import MSG, header_of
from errkit.explain.matching.together import same_block, same_raise

NEXT_TRACEBACK_BYTES = NEXT_TRACEBACK.encode()


class Tail(str):
    """The end of the input (what the approximate pass reads), knowing its first line's number."""

    first_line: int = 1


class Found:
    __slots__ = ("match", "count", "last_line")

    def __init__(self, match: Match):
        self.match, self.count, self.last_line = match, 0, match.line


LONGEST_CARRY = 32 << 20  # bytes of one line kept unscanned while waiting for its end (scan_chunks)
GATHER = 4 * READ_WINDOW  # bytes of small chunks gathered before they are scanned (scan_chunks)


class Reading:
    """What reading a whole input saw besides its matches: the lines read so far, its tail (what
    the approximate pass reads) and whether it held any text."""

    __slots__ = ("line", "tail", "seen_text", "until_line")

    def __init__(self):
        self.line, self.tail, self.seen_text = 1, b"", False
        self.until_line = None  # a part's (scan_chunks' `until`): the line number there


def scan_chunks(index, chunks, warn=None, reading: Reading | None = None, context: bytes = b"", at: int = 0,
                until: int | None = None):
    """Every match of a whole input, in order, with the block holding it (`match.offset`: where its
    line starts there: a chunk with the end of the one before, see below). `chunks` are bytes (or
    str), best cut on line boundaries (the windows read around a match are the same wherever the
    input is cut; one small chunk alone is read as a paste, see blocks.scan): `warn(message)` hears
    once of input that is not UTF-8 where it mattered: in the first 8 KB or on a line read
    further; `reading` keeps the line count, tail and whether text was seen.

    A part of an input (errkit/explain/parts.py): `chunks` start at `at` in it, a line's start,
    after `context` (the bytes before, read around the first lines, never scanned); no line
    starting at `until` or after is scanned (the chunks go on past it: the windows of the lines
    before), and `reading.until_line` is the line number there."""
    reading = Reading() if reading is None else reading
    warned = []

    def undecodable():
        if not warned and warn is not None:
            warn("errkit: the input is not valid UTF-8; undecodable bytes were replaced")
        warned.append(True)

    chunks = iter(chunks)
    upcoming = next(chunks, None)
    i = -1
    carry, begin = context, len(context)  # the end of what was read: lines for the windows before the next ones, then the lines not scanned yet
    base = at - len(context)  # where `carry` starts in the input
    gathered: list[bytes] = []  # small chunks held until GATHER bytes are (a chunk per line is not copied again for each)
    held = 0
    while upcoming is not None:
        chunk, upcoming, i = upcoming, next(chunks, None), i + 1
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8", "replace")
        paste = i == 0 and upcoming is None and len(chunk) <= PASTE_SIZE and not at and until is None  # the whole input, and small
        if paste:
            chunk = unprefixed(chunk)
        if i == 0 and not at:
            try:
                chunk[:8192].decode("utf-8")
            except UnicodeDecodeError as err:
                if err.start < min(8192, len(chunk)) - 4:  # not a character cut where the block ends
                    undecodable()
        if not reading.seen_text and not chunk.isspace() and chunk:
            reading.seen_text = True
        reading.tail = chunk[-TAIL:] if len(chunk) >= TAIL else (reading.tail + chunk)[-TAIL:]
        if upcoming is not None and held + len(chunk) < GATHER:
            gathered.append(chunk)
            held += len(chunk)
            continue
        if gathered:
            chunk = b"".join(gathered + [chunk])
            gathered, held = [], 0
        # The lines scanned now start in begin:stop of `data`: the lines kept from the chunk
        # before, then this one's, less its last READ_WINDOW bytes (scanned with the next chunk),
        # so that the windows a match reads around its line (TIE_CONTEXT before, READ_WINDOW
        # after) are never cut short by where a chunk ends
        data = carry + chunk if carry else chunk
        stop = len(data) if upcoming is None else data.rfind(b"\n", begin, max(begin, len(data) - READ_WINDOW)) + 1
        if stop <= begin and len(data) - begin > LONGEST_CARRY:  # no line's end for that long: scanned as it is
            stop = len(data)
        if until is not None and stop >= until - base:
            stop = max(begin, until - base)
        if stop > begin:
            counted, reached = begin, [stop]  # the scan counted the lines up to its last match; count the rest once
            for match in scan(index, data, first_line=reading.line, undecodable=undecodable, paste=paste,
                                    begin=begin, end=stop, reached=reached):
                reading.line, counted = match.line, match.offset
                match.at = base + match.offset
                yield match, data
            reading.line += data.count(b"\n", counted, reached[0])
            if until is not None and reached[0] >= until - base:  # the part's last lines were scanned
                reading.until_line = reading.line - data.count(b"\n", until - base, reached[0])
                return
            low = max(0, reached[0] - TIE_CONTEXT)
            keep = data.rfind(b"\n", max(0, low - TIE_CONTEXT), low) + 1 or low  # from a line's start where one is near
            carry, begin, base = data[keep:], reached[0] - keep, base + keep
        else:
            carry = data


def unprefixed(data: bytes) -> bytes:
    """A paste whose tracebacks were printed behind a prefix repeated on each line (Ray's
    `(RayTrainWorker pid=812, ip=10.130.0.5) `, vLLM's, a logger's stamp, torchrun's `[rank0]: `,
    pytest's `E   `), read as the process printed them: where a line holds NEXT_TRACEBACK after a
    prefix, the prefix is taken off that line and off each next line that begins with it. A
    prefix of whitespace, `|` and `+` alone, or ending with `Group ` (`Exception Group
    Traceback`), is an exception group's own layout: kept; one that holds a message (vLLM's
    `Exception in worker ... while processing method load_model: <message>, Traceback ...`) is
    that message's line, kept whole. A paste quoted whole in markdown (`> ` on each line that is
    not blank) is read as the text it quotes."""
    data = _unquoted(data)
    if NEXT_TRACEBACK_BYTES not in data:
        return data
    out, prefix = [], None
    for line in data.split(b"\n"):
        at = line.find(NEXT_TRACEBACK_BYTES)
        head = line[:at] if at > 0 else b""
        if head.strip(b" \t|+") and not head.endswith(b"Group ") and not _holds_message(head):
            prefix = head
            out.append(line[at:])
        elif prefix is not None and line.startswith(prefix):
            out.append(line[len(prefix):])
        else:
            prefix = None
            out.append(line)
    return b"\n".join(out)


def _unquoted(data: bytes) -> bytes:
    """A paste whose every line but the blank ones starts with a markdown quote's `>`, without it
    (and the space after it): a quoted message wrapped over lines reads as a wrapped message."""
    if not data.startswith(b">") and b"\n>" not in data:
        return data
    lines = data.split(b"\n")
    if not all(line.startswith(b">") for line in lines if line.strip()):
        return data
    return b"\n".join(line[2:] if line.startswith(b"> ") else line[1:] if line.startswith(b">") else line for line in lines)


def _holds_message(head: bytes) -> bool:
    """Whether the text before `Traceback (most recent call last)` on its line is a message, not a
    prefix: it names an exception with a message, or ends with the comma that joined them."""
    if head.rstrip().endswith(b","):
        return True
    header = header_of(head.decode("utf-8", "replace"))
    return header is not None and bool((header.group(MSG) or "").strip(" ,"))


def _agree(a: dict, b: dict) -> bool:
    return all(repr(a[k]) == repr(b[k]) for k in a.keys() & b.keys())  # (repr: a NaN read twice agrees, as on the page)


def explain_chunks(index, chunks, warn=None, others: dict | None = None) -> tuple[list[Found], str, bool]:
    """(distinct exact matches, most recent first; the input's tail; whether any text was seen),
    of the matches `scan_chunks` finds: at most tally.MAX_ANSWERS per code, those seen last; code
    -> the count of the others goes into `others` (errkit/explain/tally.py)."""
    from errkit.explain.tally import Tally

    found = Tally()
    reading = Reading()
    previous = None  # (the match before, its key)
    for match, data in scan_chunks(index, chunks, warn, reading):
        if previous is None or previous[0].code != match.code:  # (most matches of a log: neither test below holds)
            pass
        elif same_block(previous[0], match, data):
            # one error printed over several lines (a status, then "Look at the errors above"):
            # one answer with every value, counted once
            match.params = {**previous[0].params, **match.params}
            item = found[previous[1]]
            item.count -= 1
            if not item.count:
                del found[previous[1]]
        elif previous[1] in found and same_raise(previous[0], match, data):
            # the same raise printed again (its note line, its traceback's last line): counted once
            if not match.weak:
                found.get(previous[1]).last_line = match.line
                previous = (match, previous[1])
            continue
        key = match.key()
        item = found.get(key)
        if item is None:
            item = found[key] = Found(match)
        item.count += 1
        item.last_line = match.line
        previous = (match, key)
    strong = {f.match.code for f in found.values() if not f.match.weak}
    # a note line or a page link under a message that matched says nothing more
    kept = [f for f in found.values() if not (f.match.weak and f.match.code in strong)]
    # the entries seen last first; of one entry's answers with different values, the first failure's
    # first (issue 51: a log of several failures of one check is answered with the first one's
    # values); of answers whose values agree (one failure printed over lines, the later one with
    # more values read), the one with the most values
    latest: dict[str, int] = {}
    for f in kept:
        latest[f.match.code] = max(latest.get(f.match.code, 0), f.last_line)
    by_code: dict[str, list[Found]] = {}
    for f in kept:
        by_code.setdefault(f.match.code, []).append(f)
    first = {id(f): min(g.match.line for g in by_code[f.match.code] if g is f or _agree(g.match.params, f.match.params))
             for f in kept}  # (within its code: tally.MAX_ANSWERS at most, however many codes a log holds)
    ordered = sorted(kept, key=lambda f: (-latest[f.match.code], first[id(f)], -len(f.match.params)))
    text = Tail(reading.tail.decode("utf-8", "replace"))
    text.first_line = reading.line - text.count("\n")
    if others is not None:
        others.update(found.others)
    return ordered, text, reading.seen_text

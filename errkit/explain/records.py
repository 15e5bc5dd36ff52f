"""Where the lines after a match stop being its error's: at the next log record from another place.

A compiler's dump under an error's header has lines of its own, and one error may be logged as
several records of one place (cuDNN's `Could not create cudnn handle` then `Memory usage: ...`,
both from cuda_dnn.cc at level E). A busy log's next record from elsewhere (another logger or
level: prose, another error) holds values that are not this error's: the lines read for an entry's
`reads` stop there.

A record's prefix is the text of its line before the exception's name (or before the message when
none is named), each run of digits written as one 0 (`shape`); its stamp is the prefix's first
whitespace-separated words that hold a digit and no letter but T and Z (a date and time), or a
first one (glog's level: `E1126`): its time and thread, not its source file (`cuda_dnn.cc:535]`
is the record's place). A later line that starts with the same stamp, any letter first, begins a
record; it is one of the same place when it starts with the whole prefix, else the lines read
stop before it. A line without such a stamp (a paste) stops nothing, and neither does a line
stamped by something outside the program only (each line of `kubectl logs --timestamps`: the
stamp is that timestamp, and the error's own lines repeat the prefix). A JSON log's line is a
record of its own: matching/around.py reads it alone (text.json_record). The paste page's port
is match.js recordEnd.
"""

from errkit.core.index_format import RECORD_SLACK, RECORD_STAMP
from errkit.core.regex import engine, escape, compile_small

_DIGITS = bytes.maketrans(b"0123456789", b"0000000000")
_FINDERS: dict[bytes, object] = {}
_STAMP: list = []
_STAMPS: dict[bytes, bytes] = {}  # a prefix's shape -> its stamp (stamp)
MAX_STAMPS = 4096


def shape(text: bytes) -> bytes:
    """`text` with each run of digits written as one 0 (`2024-07-19 15:49` -> `0-0-0 0:0`)."""
    out = text.translate(_DIGITS)
    while b"00" in out:
        out = out.replace(b"00", b"0")
    return out


def stamp(prefix: bytes) -> bytes:
    """The first words of a prefix's shape that hold a digit and no letter but T, Z or a first
    one, each with the spaces after it (remembered: a log's records have few prefix shapes)."""
    found = _STAMPS.get(prefix)
    if found is None:
        if not _STAMP:
            _STAMP.append(engine().compile(RECORD_STAMP.encode()))
        if len(_STAMPS) >= MAX_STAMPS:
            _STAMPS.clear()
        found = _STAMPS[prefix] = _STAMP[0].match(prefix).group()
    return found


def _finder_source(stamped: str) -> str:
    """The regex of a line starting with the stamp `stamped`: each 0 any digits, a word's first
    letter any letter (glog's level: a record of another level starts there too)."""
    out, word_start = ["\n"], True
    for c in stamped:
        out.append("[0-9]+" if c == "0" else "[A-Za-z]" if word_start and c.isalpha() else escape(c))
        word_start = c in " \t"
    return "".join(out)


def record_end(data: bytes, start: int, line_end: int, prefix_end: int, high: int) -> int:
    """The start of the first line in data[line_end:high] that begins a log record like the one at
    `start` (its prefix ending at `prefix_end`) from another place, else `high`."""
    prefix = shape(data[start:prefix_end])
    stamped = stamp(prefix)
    if not stamped or not stamped.isascii():
        return high
    finder = _FINDERS.get(stamped)
    if finder is None:
        finder = _FINDERS[stamped] = compile_small(_finder_source(stamped.decode("ascii")).encode("ascii"))
    pos, reach = line_end, prefix_end - start + RECORD_SLACK
    while pos < high:
        found = finder.search(data, pos, high)
        if found is None:
            return high
        begin = found.start() + 1
        if not shape(data[begin:begin + reach]).startswith(prefix):
            return begin
        pos = data.find(b"\n", begin, high)
        if pos < 0:
            return high
    return high

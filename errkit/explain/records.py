"""Where the lines after a match stop being its error's: at the next log record of another kind.

A compiler's dump under an error's header has lines of its own (no log prefix), and one error may
be logged as several records of one place (cuDNN's `Could not create cudnn handle` then `Memory
usage: ...`, both from cuda_dnn.cc at level E). A busy log's next record from elsewhere (another
logger or level: prose, another error) holds values that are not this error's: the lines read for
an entry's `reads` stop there. A record's start is told by its first RECORD_HEAD characters, each
run of digits written as one (a timestamp's shape); its place by the text before the message,
digits aside. A line whose own start holds no digit there (a paste, a JSON log) stops nothing.
The paste page's port is match.js recordEnd.
"""

from errkit.core.index_format import RECORD_HEAD
from errkit.core.regex import engine, escape

SLACK = 32  # bytes a record's longer numbers may add to the text before its message
_DIGITS = bytes.maketrans(b"0123456789", b"0000000000")
_FINDERS: dict[bytes, object] = {}


def shape(text: bytes) -> bytes:
    """`text` with each run of digits written as one 0 (`2024-07-19 15:49` -> `0-0-0 0:0`)."""
    out = text.translate(_DIGITS)
    while b"00" in out:
        out = out.replace(b"00", b"0")
    return out


def record_end(data: bytes, start: int, line_end: int, message_at: int, high: int) -> int:
    """The start of the first line in data[line_end:high] that begins a log record like the one at
    `start` (its message at `message_at`) from another place, else `high`."""
    before = shape(data[start:message_at])
    head = before[:RECORD_HEAD]
    if len(head) < RECORD_HEAD or b"0" not in head or not head.isascii():
        return high
    finder = _FINDERS.get(head)
    if finder is None:
        finder = _FINDERS[head] = engine().compile(
            ("\n" + "".join("[0-9]+" if c == "0" else escape(c) for c in head.decode("ascii"))).encode("ascii"))
    pos, reach = line_end, message_at - start + SLACK
    while pos < high:
        found = finder.search(data, pos, high)
        if found is None:
            return high
        begin = found.start() + 1
        if not shape(data[begin:begin + reach]).startswith(before):
            return begin
        pos = data.find(b"\n", begin, high)
        if pos < 0:
            return high
    return high

"""What to explain, as byte chunks cut on line boundaries: the arguments, a file or standard input,
decoded one line at a time later (text saved as UTF-16 or with a byte-order mark is re-encoded as
UTF-8 here); and what a single word names (an entry code or a file path)."""

import os

from errkit.core import UsageError
from errkit.core.normalise import text_encoding

CHUNK = 4 * 1024 * 1024


def _binary_chunks(stream):
    while True:
        block = stream.read(CHUNK)
        if not block:
            return
        yield block


def line_chunks(raw_chunks):
    """Byte chunks cut on line boundaries. Text is decoded later, one line at a time, and only
    for the lines the matcher reads: a log of gigabytes is never decoded whole. Text saved as
    UTF-16 (with or without a byte-order mark) or with a UTF-8 byte-order mark is read as UTF-8."""
    raw_chunks = iter(raw_chunks)
    head = next(raw_chunks, b"")
    encoding = text_encoding(head)
    pending = b""
    ready = b""  # held back one block: the input's last line joins the last block, not a chunk of its own
    first = True
    for block in _transcoded(encoding, head, raw_chunks) if encoding else _chained(head, raw_chunks):
        if first:
            if b"\x00" in block[:8192]:
                raise UsageError("the input looks binary (it has NUL bytes); pass a text log or message")
            first = False
        block = pending + block if pending else block
        cut = block.rfind(b"\n") + 1
        if cut == 0 and len(block) < 8 * CHUNK:
            pending = block
            continue
        cut = cut or len(block)
        pending = block[cut:]
        if ready:
            yield ready
        ready = block[:cut]
    if ready or pending:
        yield ready + pending


def _chained(head: bytes, rest):
    yield head
    yield from rest


def _transcoded(encoding: str, head: bytes, rest):
    import codecs

    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    for block in _chained(head, rest):
        yield decoder.decode(block).encode("utf-8")
    yield decoder.decode(b"", final=True).encode("utf-8")


def open_input(sources: list[str], stdin):
    """Byte chunks of what to explain: '-' or piped stdin, a file path, or the arguments themselves."""
    if sources in ([], ["-"]):
        if sources == [] and (stdin is None or stdin.isatty()):
            raise UsageError("nothing to explain: pass an error text, a file, or '-' for standard input")
        return _binary_chunks(stdin.buffer if hasattr(stdin, "buffer") else stdin)
    if len(sources) == 1 and "\n" not in sources[0] and len(sources[0]) < 4096 and os.path.exists(sources[0]):
        path = sources[0]
        if os.path.isdir(path):
            raise UsageError(f"{path} is a directory; pass a file, an error text, or '-'")
        try:
            handle = open(path, "rb")
        except OSError as err:
            raise UsageError(f"cannot read {path}: {err.strerror}") from None
        return _file_chunks(handle)
    return iter([" ".join(sources).encode("utf-8", errors="replace")])


CODE_SHAPE = (2, 4, 3)  # letters (at least, at most), then digits: RA105, ABCD123
PATH_SUFFIXES = (".txt", ".log", ".out", ".err", ".json", ".jsonl", ".trace", ".tb", ".stderr", ".stdout")


def looks_like_code(word: str) -> bool:
    """An entry code such as RA105 (any prefix of 2-4 letters, case-insensitive)."""
    letters = len(word) - CODE_SHAPE[2]
    return (CODE_SHAPE[0] <= letters <= CODE_SHAPE[1] and word[:letters].isascii() and word[:letters].isalpha()
            and word[letters:].isascii() and word[letters:].isdigit())


def looks_like_path(word: str) -> bool:
    """A file name rather than error text: one word with a folder separator or a log file's suffix."""
    if "://" in word:  # a link to an entry's page
        return False
    return "/" in word or "\\" in word or word.lower().endswith(PATH_SUFFIXES)


def _file_chunks(handle):
    with handle:
        yield from _binary_chunks(handle)


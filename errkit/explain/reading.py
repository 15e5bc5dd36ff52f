"""What to explain, as byte chunks cut on line boundaries: the arguments, a file or standard input,
decoded one line at a time later (text saved as UTF-16 or with a byte-order mark is re-encoded as
UTF-8 here; a gzip, bz2 or zstd stream is decompressed as it is read, never whole); and what a
single word names (an entry code or a file path)."""

import os

from errkit.core import UsageError
from errkit.core.normalise import text_encoding

CHUNK = 1024 * 1024  # bytes read at a time: a block stays in the CPU's cache while it is scanned, counted and copied


def _binary_chunks(stream):
    """The stream's blocks as read (a line may go on in the next one: line_chunks)."""
    while True:
        block = stream.read(CHUNK)
        if not block:
            return
        yield block


def line_chunks(raw_chunks):
    """Byte chunks for the matcher, as read: it reads a line that goes on in the next chunk with
    that chunk (errkit/explain/matching/chunks.py scan_chunks), so a block is not copied to end on a line's
    end. Text is decoded later, one line at a time, and only for the lines the matcher reads: a
    log of gigabytes is never decoded whole. Text saved as UTF-16 (with or without a byte-order
    mark) or with a UTF-8 byte-order mark is read as UTF-8; a NUL byte in the first 8 KB is
    binary input (a usage error)."""
    raw_chunks = iter(raw_chunks)
    head = next(raw_chunks, b"")
    encoding = text_encoding(head)
    first = True
    for block in _transcoded(encoding, head, raw_chunks) if encoding else _chained(head, raw_chunks):
        if first:
            if b"\x00" in block[:8192]:
                raise UsageError("the input looks binary (it has NUL bytes); pass a text log or message")
            first = False
        if block:
            yield block


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
        return stream_blocks(stdin.buffer if hasattr(stdin, "buffer") else stdin, "standard input")
    if len(sources) == 1 and "\n" not in sources[0] and len(sources[0]) < 4096 and os.path.exists(sources[0]):
        path = sources[0]
        if os.path.isdir(path):
            raise UsageError(f"{path} is a directory; pass a file, an error text, or '-'")
        return file_blocks(path)
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


# The first bytes of each compressed format read (a file's name is not trusted: `x.log` may be gzip).
COMPRESSED = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\x28\xb5\x2f\xfd", "zstd"))


def compression(head: bytes) -> str | None:
    """The compressed format whose magic number `head` starts with, else None."""
    return next((name for magic, name in COMPRESSED if head.startswith(magic)), None)


def file_blocks(path: str):
    """The bytes of the file `path` in blocks, decompressed when it is gzip, bz2 or zstd. An
    unreadable file, or one that is no regular file (a FIFO, a device, a socket: read, they could
    block or never end), is a usage error (raised here, before any block is read)."""
    from errkit.core.regular import NotRegular, open_regular

    try:
        handle = open_regular(path)
    except NotRegular as err:
        raise UsageError(f"{path} is {err.strerror}; give it as standard input ('-') to read it") from None
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror}") from None
    return _closing(handle, stream_blocks(handle, path))


def stream_blocks(stream, name: str):
    """The blocks of a binary stream (a file, standard input), decompressed when its first bytes
    are a compressed format's (`peek` where the stream has it, else one block read ahead)."""
    peek = getattr(stream, "peek", None)
    head = peek(4)[:4] if peek is not None else b""
    if peek is None:
        first = stream.read(CHUNK)
        head, stream = first[:4], _Replay(first, stream)
    kind = compression(head)
    if kind is None:
        return _binary_chunks(stream)
    frames = None
    if kind == "zstd":  # zstandard's reader ends quietly where a cut-short stream ends: its frames are followed
        from errkit.explain.frames import Frames

        stream = frames = Frames(stream)
    return _checked(kind, _decompressing(kind, stream, name), name, frames)


def _checked(kind: str, stream, name: str, frames=None):
    """The decompressed blocks; corrupt or cut-short data is a usage error naming the input (zstd's
    cut short: `frames`, errkit/explain/frames.py, not ended where a frame ends)."""
    done = 0
    while True:
        try:
            block = stream.read(CHUNK)
        except Exception as err:  # noqa: BLE001 - each library's own error (zlib.error, EOFError, ZstdError, OSError)
            raise UsageError(f"{name}: corrupt {kind} data after {done:,} bytes ({type(err).__name__}: {err})") from None
        if not block:
            if frames is not None and not frames.whole():
                raise UsageError(f"{name}: corrupt {kind} data after {done:,} bytes (the stream is cut short)")
            return
        done += len(block)
        yield block


class _Replay:
    """A stream whose first block was read already (to see its magic number)."""

    def __init__(self, first: bytes, rest):
        self.first, self.rest = first, rest

    def read(self, size: int = -1) -> bytes:
        if self.first:
            cut = len(self.first) if size is None or size < 0 else size
            block, self.first = self.first[:cut], self.first[cut:]
            return block
        return self.rest.read(size)


def _decompressing(kind: str, stream, name: str):
    if kind == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=stream, mode="rb")
    if kind == "bz2":
        import bz2

        return bz2.BZ2File(stream, mode="rb")
    try:
        import zstandard
    except ImportError:
        raise UsageError(f"{name} is zstd-compressed: reading it needs the zstandard package "
                         "(pip install 'errkit[zstd]'), or decompress it first (zstd -dc)") from None
    return zstandard.ZstdDecompressor().stream_reader(stream, read_across_frames=True)


def _closing(handle, blocks):
    with handle:
        yield from blocks


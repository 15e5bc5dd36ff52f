"""The log files of `errkit explain --all PATH...`: the arguments expanded in a fixed order (files as
given, folders walked recursively in name order, filtered by --include/--exclude globs, `-` for
standard input), a missing path refused naming it; and each file's text blocks, decompressed as
they stream (errkit/explain/reading.py), a binary file told apart from a log by its first block."""

import os

from errkit.core import UsageError
from errkit.core.normalise import text_encoding

STDIN = "-"


class Skipped(Exception):
    """A file that is not a text log (binary, unreadable, corrupt): skipped with a warning."""


def is_path(arg: str) -> bool:
    """Whether an argument names an existing file or folder (a long text or one with a newline never
    does: no file is looked for)."""
    return "\n" not in arg and 0 < len(arg) < 4096 and os.path.exists(arg)


def no_such_path(arg: str) -> UsageError:
    """The one message for a path that does not exist, whether one was given or several
    (site/docs/triage.md shows it)."""
    return UsageError(f"no such file or folder: {arg} (to explain it as text: --text, or pipe it to `errkit explain -`)")


def expand(args: list[str], include: list[str] = (), exclude: list[str] = (), warn=None) -> list[str]:
    """The files to read, in the order given, each once: a folder's files (recursively, sorted by
    name) whose name or path under the folder matches an --include glob (every file when none is
    given) and no --exclude glob. Files named one by one are always read. A path that does not
    exist is a usage error naming it; a folder that cannot be read is skipped, told through `warn`."""
    out: list[str] = []
    seen: set[str] = set()

    def add(path: str) -> None:
        key = path if path == STDIN else os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            out.append(path)

    for arg in args:
        if arg == STDIN:
            add(arg)
        elif not is_path(arg):
            raise no_such_path(arg)
        elif os.path.isdir(arg):
            for path in _walk(arg, warn):
                rel = os.path.relpath(path, arg)
                if _wanted(rel, include, exclude):
                    add(path)
        else:
            add(arg)
    return out


def _walk(folder: str, warn=None):
    def unreadable(err: OSError) -> None:
        if warn is not None:
            warn(f"errkit: skipped the folder {err.filename}: {(err.strerror or str(err)).lower()}")

    for root, dirs, files in os.walk(folder, onerror=unreadable):
        dirs.sort()
        for name in sorted(files):
            yield os.path.join(root, name)


def _wanted(rel: str, include, exclude) -> bool:
    from fnmatch import fnmatch

    rel = rel.replace(os.sep, "/")
    name = rel.rsplit("/", 1)[-1]
    hit = lambda globs: any(fnmatch(name, g) or fnmatch(rel, g) for g in globs)  # noqa: E731
    return (not include or hit(include)) and not hit(exclude)


def text_blocks(path: str, stdin=None):
    """The blocks of a log file (or `-`), decompressed; Skipped when it is binary or cannot be read.
    The first block is read here, so a binary file is known before anything of it is matched."""
    from errkit.explain.reading import file_blocks, stream_blocks

    try:
        if path == STDIN:
            import sys

            stdin = sys.stdin if stdin is None else stdin
            blocks = stream_blocks(stdin.buffer if hasattr(stdin, "buffer") else stdin, "standard input")
        else:
            blocks = file_blocks(path)
        first = next(blocks, b"")
    except UsageError as err:  # unreadable, corrupt compressed data, zstd without zstandard
        raise Skipped(str(err)) from None
    except OSError as err:
        raise Skipped(f"cannot read {path}: {err.strerror or err}") from None
    if b"\x00" in first[:8192] and text_encoding(first) is None:
        raise Skipped(f"{path} looks binary (it has NUL bytes)")
    return _then(first, blocks, path)


def _then(first: bytes, rest, path: str):
    if first:
        yield first
    try:
        yield from rest
    except UsageError as err:  # corrupt data further on: what was read counts, the rest is skipped
        raise Skipped(str(err)) from None

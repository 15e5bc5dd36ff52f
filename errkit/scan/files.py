"""Finding, reading and parsing the files to scan; a file that is not Python text is a Skip, with the reason."""

from __future__ import annotations

import ast
import contextlib
import errno
import gc
import io
import os
import tokenize
import warnings
from pathlib import Path
from typing import Iterable, Iterator

GENERATED_MARK = "errkit generate"  # the header of a module `errkit generate` wrote
MAX_FILE_BYTES = 5_000_000
SKIP_DIRS = ("__pycache__", "node_modules")


class Skip(Exception):
    """A file we cannot scan; the message says why (one line)."""


def display_path(path: Path) -> str:
    try:
        return str(path.absolute().relative_to(Path.cwd().absolute()))
    except ValueError:
        return str(path)


def python_files(paths: Iterable[str], report) -> Iterator[Path]:
    """Every file to scan, once, in a stable order; problems with the paths go to `report`."""
    seen: set[str] = set()
    for raw in paths:
        path = Path(raw)
        try:
            if path.is_dir():
                yield from _walk(path, frozenset(), seen, report)
                continue
            path.stat()  # a missing file or a link loop raises here
        except OSError as err:
            report(path, _os_reason(err))
            continue
        if _first_visit(path, seen):
            yield path


def _walk(folder: Path, ancestors: frozenset, seen: set[str], report) -> Iterator[Path]:
    """Python files under `folder`; a folder link back to one of its own ancestors is a loop."""
    try:
        info = folder.stat()
        here = (info.st_dev, info.st_ino)
        if here in ancestors:
            report(folder, "symlink loop (links back to a folder above it)")
            return
        if not _first_visit(folder, seen):
            return  # reached twice through links: scanned once
        children = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as err:
        report(folder, _os_reason(err))
        return
    for child in children:
        path = Path(child.path)
        try:
            if child.is_dir():
                if not child.name.startswith(".") and child.name not in SKIP_DIRS:
                    yield from _walk(path, ancestors | {here}, seen, report)
            elif child.name.endswith(".py"):
                path.stat()
                if _first_visit(path, seen):
                    yield path
        except OSError as err:
            report(path, _os_reason(err))


def _first_visit(path: Path, seen: set[str]) -> bool:
    key = os.path.realpath(path)
    if key in seen:
        return False
    seen.add(key)
    return True


def _os_reason(err: OSError) -> str:
    if err.errno == errno.ENOENT:
        return "no such file or directory"
    if err.errno == errno.ELOOP:
        return "symlink loop"
    return (err.strerror or str(err)).lower()


def read_source(path: Path) -> str:
    """The file's text, decoded as Python decodes source (PEP 263); Skip when it is not Python text."""
    from errkit.core.regular import NotRegular, open_regular

    try:
        with open_regular(path) as handle:  # (a FIFO, a device or a socket: never read, it could block)
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise Skip(f"file is {size} bytes; at most {MAX_FILE_BYTES}")
            data = handle.read(MAX_FILE_BYTES + 1)
    except NotRegular as err:
        raise Skip(err.strerror) from None
    except OSError as err:
        raise Skip(_os_reason(err)) from None
    if b"\0" in data[:8192]:
        raise Skip("binary file")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:
        if "invalid or missing" not in str(err):
            raise Skip(f"bad encoding declaration: {err}") from None
        encoding = "utf-8"  # no declaration, and the first lines are not UTF-8: say where
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as err:
        raise Skip(f"not {encoding.upper().replace('-SIG', '')} text (byte {err.start})") from None
    except LookupError:
        raise Skip(f"unknown encoding {encoding!r}") from None


def parse_source(text: str, path: Path) -> ast.Module:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in old code
            return ast.parse(text, filename=str(path))
    except SyntaxError as err:
        raise Skip(f"syntax error at line {err.lineno}: {err.msg}") from None
    except (ValueError, RecursionError, MemoryError) as err:
        raise Skip(f"cannot parse: {type(err).__name__}: {err}") from None


@contextlib.contextmanager
def gc_paused():
    """Building a large AST allocates many objects; none form cycles, so the collector can wait."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def is_generated(text: str) -> bool:
    if GENERATED_MARK not in text:
        return False  # the usual answer, without splitting the whole file into lines
    return GENERATED_MARK in "\n".join(text.splitlines()[:3])

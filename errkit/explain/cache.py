"""explain's cache folder, trusted only when it is the user's own: what it holds (the registered
catalogues, the merged index with its compiled expressions, Hyperscan's database) decides answers
and is partly code, so a file another user could have written is never read.

The folder is `$ERRKIT_CACHE_DIR`, else `$XDG_CACHE_HOME/errkit`, else `~/.cache/errkit`, made
0700 when missing. It is used only when it is a folder owned by this user (the effective uid) that
no one else may write (no group or other write bit); otherwise the next one of that list is tried,
and when none is usable explain reads without a cache: either way with one warning on standard
error. Files are opened relative to the folder's descriptor (a folder swapped after the check is
not followed), without following a link and without blocking (a FIFO), and read only when they
are regular files of this user that no one else may write. A file is written whole or not at all:
a temporary file created exclusively (a name nobody can guess, `O_EXCL | O_NOFOLLOW`, mode 0600)
in the folder, then renamed. `framed`/`unframed` put a CRC-32 over a file's bytes, checked before
they are used (a flipped bit is a corrupt file, made again).

On the start-up path of `errkit explain`: os and zlib (imported by the interpreter's start already).
"""

import os
import sys
from zlib import crc32

CACHE_ENV = "ERRKIT_CACHE_DIR"
FRAME = b"errkit-cache\n"  # framed(): then a CRC-32 of the rest (4 bytes, little-endian) and the rest
MAX_FILE = 256 << 20  # bytes of a cache file read at most (a file that says it is bigger is refused)

_DIR_FD = os.open in os.supports_dir_fd  # POSIX: files opened relative to the folder's descriptor
_OWNED = hasattr(os, "geteuid")  # POSIX: files have owners to check
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

_folders: dict = {}  # path -> Folder or None (refused), per process
_warned: list = []


def candidates() -> list[str]:
    """The cache folders in the order they are tried."""
    out = []
    where = os.environ.get(CACHE_ENV)
    if where:
        out.append(where)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    default = os.path.join(base, "errkit")
    if default not in out:
        out.append(default)
    return out


class Folder:
    """A trusted cache folder: its path and, where the platform has them, its open descriptor."""

    __slots__ = ("path", "fd")

    def __init__(self, path: str, fd: int | None):
        self.path, self.fd = path, fd

    def _name(self, name: str) -> tuple[str, dict]:
        if self.fd is not None:
            return name, {"dir_fd": self.fd}
        return os.path.join(self.path, name), {}

    def open(self, name: str):
        """The cache file `name` opened for reading (a binary file object), or None when it is
        missing, not a regular file, not this user's, writable by others, or bigger than MAX_FILE."""
        where, at = self._name(name)
        try:
            fd = os.open(where, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC | _BINARY, **at)
        except (OSError, ValueError):
            return None
        try:
            st = os.fstat(fd)
            if _trusted_file(st):
                return os.fdopen(fd, "rb")
        except OSError:
            pass
        os.close(fd)
        return None

    def read(self, name: str) -> bytes | None:
        """The whole content of the cache file `name` (see `open`), or None."""
        handle = self.open(name)
        if handle is None:
            return None
        with handle:
            try:
                return handle.read(MAX_FILE + 1)
            except OSError:
                return None

    def write(self, name: str, data: bytes) -> bool:
        """`data` into the cache file `name`, whole or not at all: a temporary file created
        exclusively beside it (never through a link), then renamed. False when it cannot be written
        (a cache that cannot be written is only slower)."""
        tmp = f".{name}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
        where, at = self._name(tmp)
        try:
            fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY, 0o600, **at)
        except (OSError, ValueError):
            return False
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            target, _ = self._name(name)
            os.replace(where, target, **({"src_dir_fd": self.fd, "dst_dir_fd": self.fd} if at else {}))
            return True
        except (OSError, ValueError):
            try:
                os.unlink(where, **at)
            except OSError:
                pass
            return False


def _trusted_file(st) -> bool:
    from stat import S_ISREG

    if not S_ISREG(st.st_mode) or st.st_size > MAX_FILE:
        return False
    return not _OWNED or (st.st_uid == os.geteuid() and not st.st_mode & 0o022)


def _why_not(st) -> str | None:
    """Why a folder of these stats is no cache of this user's (None: it is)."""
    from stat import S_ISDIR

    if not S_ISDIR(st.st_mode):
        return "not a folder"
    if not _OWNED:
        return None
    if st.st_uid != os.geteuid():
        return f"owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"writable by {'others' if st.st_mode & 0o002 else 'its group'} (mode {st.st_mode & 0o7777:04o})"
    return None


def _opened(path: str) -> "tuple[Folder | None, str | None]":
    """(the folder at `path`, made 0700 when missing, when it is trusted; else why not)."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as err:
        return None, f"cannot make it ({err.strerror or err})"
    if not _DIR_FD:
        try:
            why = _why_not(os.stat(path))
        except OSError as err:
            return None, err.strerror or str(err)
        return (Folder(path, None), None) if why is None else (None, why)
    try:
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError as err:
        return None, err.strerror or str(err)
    try:
        why = _why_not(os.fstat(fd))
    except OSError as err:
        why = err.strerror or str(err)
    if why is None:
        return Folder(path, fd), None
    os.close(fd)
    return None, why


def folder(warn=None) -> Folder | None:
    """The first trusted cache folder of `candidates()`, or None (no cache: explain reads the
    indexes again). A refused folder is told once per process, through `warn` (else on standard
    error): which, why, and what is used instead."""
    paths = candidates()
    key = tuple(paths)
    if key in _folders:
        return _folders[key]
    chosen, refused = None, []
    for path in paths:
        found, why = _opened(path)
        if found is not None:
            chosen = found
            break
        if why and not why.startswith("cannot make it"):  # an unwritable place is only slower, as always
            refused.append(f"{path}: {why}")
    _folders[key] = chosen
    if chosen is not None:
        _folders[chosen.path] = chosen  # (folder_of: a file of it named by its path)
    if refused and not _warned:
        _warned.append(True)
        instead = f"using {chosen.path}" if chosen is not None else "reading without a cache"
        line = f"errkit: not using the cache folder {'; '.join(refused)}; {instead}"
        if warn is not None:
            warn(line)
        else:
            print(line, file=sys.stderr)
    return chosen


def folder_of(path: str) -> "tuple[Folder | None, str]":
    """(the trusted folder holding the cache file `path`, its name): a cache file named by its
    path (errkit.Matcher's pickled state)."""
    where, name = os.path.split(path)
    if where in _folders:
        return _folders[where], name
    found, _ = _opened(where)
    _folders[where] = found
    return found, name


def framed(payload: bytes) -> bytes:
    """`payload` as a cache file: FRAME, the payload's CRC-32, the payload."""
    return FRAME + crc32(payload).to_bytes(4, "little") + payload


def unframed(data: bytes | None) -> bytes | None:
    """The payload of a framed cache file, or None when it is not one or its CRC-32 is wrong."""
    head = len(FRAME) + 4
    if not data or data[:len(FRAME)] != FRAME or len(data) < head:
        return None
    payload = data[head:]
    return payload if crc32(payload) == int.from_bytes(data[len(FRAME):head], "little") else None

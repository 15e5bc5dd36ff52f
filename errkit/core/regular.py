"""Opening a file to read only when it is a regular file: a FIFO, a device or a socket given as a
path, or found in a folder, would block the read forever (a FIFO with no writer) or never end
(`/dev/zero`). The file is opened without blocking, then its kind checked on the open descriptor
(no race with a file swapped after a check by name), then set back to blocking reads."""

import os

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class NotRegular(OSError):
    """The path names something other than a regular file (a FIFO, a device, a socket, a folder)."""


def kind(mode: int) -> str:
    """What a file of this st_mode is, in words."""
    import stat

    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path):
    """`path` opened for binary reading when it is a regular file; NotRegular (saying what it is)
    otherwise, OSError when it cannot be opened."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _BINARY | _CLOEXEC)
    except OSError:
        try:  # a socket cannot be opened at all (ENXIO): say what it is
            mode = os.stat(path).st_mode
        except OSError:
            mode = stat.S_IFREG
        if not stat.S_ISREG(mode):
            raise NotRegular(0, f"{kind(mode)}, not a regular file", str(path)) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular(0, f"{kind(mode)}, not a regular file", str(path))
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise

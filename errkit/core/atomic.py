"""Writing files so that a failure halfway leaves the previous content intact."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text(path: Path, text: str) -> None:
    """Replace `path` with `text` atomically (temp file in the same folder, fsync, rename)."""
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_all(files: dict[Path, bytes]) -> None:
    """Write several files all or nothing.

    Every new content is first written to a temp file beside its target. Only when all are on disk
    are they renamed into place; the previous contents are kept (hard links) until every rename
    has succeeded, and put back if one fails, so a failure leaves the old set of files as it was.
    """
    staged: list[tuple[str, Path]] = []
    backups: dict[Path, str | None] = {}
    try:
        for path, data in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o644)
        for tmp, path in staged:
            backup = None
            if path.exists():
                backup = f"{tmp}.old"
                os.link(path, backup)
            backups[path] = backup
            os.replace(tmp, path)
    except BaseException:
        for path, backup in backups.items():  # undo the renames that happened
            try:
                if backup is None:
                    os.unlink(path)
                else:
                    os.replace(backup, path)
            except OSError:
                pass
        raise
    finally:
        for tmp, _ in staged:
            for leftover in (tmp, f"{tmp}.old"):
                try:
                    os.unlink(leftover)
                except OSError:
                    pass

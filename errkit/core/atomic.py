"""Writing files so that a failure or a crash halfway leaves the previous content intact.

`write_text`/`write_bytes` replace one file (temp file, fsync, rename). `write_all` replaces a set
of files in several folders as one step that neither an exception nor a `kill -9` can split: a
journal beside the set says what is being switched, and the next `write_all` (or `recover`) with
that journal finishes or undoes the switch before doing anything else.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable

JOURNAL_FORMAT = "errkit-journal/1"
NEW_SUFFIX = ".errkit-new"  # the staged content of a target: .<name>.errkit-new beside it
OLD_SUFFIX = ".errkit-old"  # the previous content of a target (a hard link) until the switch is done


class JournalError(Exception):
    """A journal that cannot be read: the interrupted switch it describes is left as it is."""


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


def staged(path: Path) -> Path:
    return path.with_name(f".{path.name}{NEW_SUFFIX}")


def kept(path: Path) -> Path:
    return path.with_name(f".{path.name}{OLD_SUFFIX}")


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_HELD: dict[str, list] = {}  # folder -> [its open descriptor, how many times this process holds its lock]


@contextmanager
def _locked(folder: Path):
    """The journal's folder locked (flock on the folder itself: no file added) while a set is
    written or settled: a second process waits for the first (two `errkit generate`s at once: one
    settled the other's journal halfway, and it failed with "cannot write : ..."). Reentrant in a
    process; no lock where the platform has no flock."""
    try:
        import fcntl
    except ImportError:  # (Windows)
        yield
        return
    key = os.path.abspath(folder)
    held = _HELD.get(key)
    if held is None:
        fd = os.open(key, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        held = _HELD[key] = [fd, 0]
    held[1] += 1
    try:
        yield
    finally:
        held[1] -= 1
        if not held[1]:
            del _HELD[key]
            os.close(held[0])  # (closing the descriptor releases the lock)


def write_all(files: dict[Path, bytes], *, journal: Path, delete: Iterable[Path] = ()) -> None:
    """Write `files` and delete the paths in `delete`, all or nothing, even across a crash.

    1. The journal is written, state "staging", naming every target.
    2. Each new content goes to `.<name>.errkit-new` beside its target (fsynced); each existing
       target is kept as `.<name>.errkit-old` (a hard link).
    3. The journal turns to "switching": from here the new set is the one that will be on disk.
    4. The staged files are renamed into place and the deleted ones unlinked; then the kept copies
       and the journal are removed.
    A crash before 3 is undone by the next run (the targets were never touched); a crash after it
    is finished by the next run. An exception undoes everything it did, so the old set stays.
    Another process writing or settling with the same journal meanwhile is waited for (`_locked`).
    """
    journal = Path(journal)
    journal.parent.mkdir(parents=True, exist_ok=True)
    with _locked(journal.parent):
        _write_all(files, journal, delete)


def _write_all(files: dict[Path, bytes], journal: Path, delete: Iterable[Path]) -> None:
    recover(journal)
    writes = {Path(p): data for p, data in files.items()}
    deletes = [Path(p) for p in delete if Path(p) not in writes]
    if not writes and not deletes:
        return
    record = {"format": JOURNAL_FORMAT, "state": "staging",
              "writes": [[_rel(journal, p), p.exists()] for p in writes],
              "deletes": [[_rel(journal, p), p.exists()] for p in deletes]}
    folders = {p.parent for p in [*writes, *deletes]}
    _write_journal(journal, record)
    try:
        for path, data in writes.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
            _unlink(staged(path))  # (left by a crash: settled already; a temporary file is made new, never through a link)
            fd = os.open(staged(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(staged(path), mode)
        for path in [*writes, *deletes]:
            if path.exists():
                _keep(path)
        _sync_folders(folders | {journal.parent})
    except BaseException:
        _undo(journal, record)
        raise
    record["state"] = "switching"
    try:
        _write_journal(journal, record)
    except BaseException:
        _undo(journal, record)  # nothing is renamed yet: the targets are the old set
        raise
    try:
        for path in writes:
            os.replace(staged(path), path)
        for path in deletes:
            _unlink(path)
        _sync_folders(folders)
    except BaseException:
        record["state"] = "undoing"
        try:
            _write_journal(journal, record)
        except OSError:
            pass  # undone all the same; only a crash before the undo ends could then mix the set
        _undo(journal, record)
        raise
    _finish(journal, record)


def interrupted(journal: Path) -> bool:
    """Whether a switch was interrupted (by a crash) and waits for the next run to settle it."""
    return Path(journal).exists()


def recover(journal: Path) -> str | None:
    """Settle a switch a crash interrupted: undo it if it had not reached "switching", finish it
    if it had. Returns what was done ("undone", "finished") or None when there was nothing."""
    journal = Path(journal)
    if not journal.parent.is_dir():
        return None
    with _locked(journal.parent):
        return _recover(journal)


def _recover(journal: Path) -> str | None:
    _unlink(_journal_temp(journal))
    if not journal.exists():
        return None
    try:
        record = json.loads(journal.read_text(encoding="utf-8"))
        if record.get("format") != JOURNAL_FORMAT or record.get("state") not in ("staging", "switching", "undoing"):
            raise ValueError(f"not an {JOURNAL_FORMAT} journal")
        for key in ("writes", "deletes"):
            for rel, existed in record[key]:
                if not isinstance(rel, str) or not isinstance(existed, bool):
                    raise ValueError(f"bad {key} item")
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise JournalError(f"{journal}: an interrupted write left this journal, and it cannot be read ({err}); "
                           "check the files it names, then delete it") from None
    if record["state"] == "switching":
        for path, _ in _targets(journal, record["writes"]):
            if staged(path).exists():
                os.replace(staged(path), path)
        for path, _ in _targets(journal, record["deletes"]):
            _unlink(path)
        _sync_folders({p.parent for p, _ in _targets(journal, record["writes"] + record["deletes"])})
        _finish(journal, record)
        return "finished"
    _undo(journal, record)
    return "undone"


def _undo(journal: Path, record: dict) -> None:
    """Put every target back as it was before the journal's switch, then drop the journal."""
    for path, existed in _targets(journal, record["writes"] + record["deletes"]):
        if kept(path).exists():
            if path.exists() and os.path.samefile(kept(path), path):
                _unlink(kept(path))  # never switched; and rename() between two links of one file does nothing
            else:
                os.replace(kept(path), path)
        elif not existed and record["state"] != "staging":
            _unlink(path)  # a file the switch created
        _unlink(staged(path))
    _sync_folders({p.parent for p, _ in _targets(journal, record["writes"] + record["deletes"])})
    _drop_journal(journal)


def _finish(journal: Path, record: dict) -> None:
    for path, _ in _targets(journal, record["writes"] + record["deletes"]):
        _unlink(kept(path))
        _unlink(staged(path))
    _drop_journal(journal)


def _keep(path: Path) -> None:
    _unlink(kept(path))
    try:
        os.link(path, kept(path))
    except OSError:  # a file system without hard links
        shutil.copy2(path, kept(path))


def _targets(journal: Path, items) -> list[tuple[Path, bool]]:
    return [(journal.parent / rel, existed) for rel, existed in items]


def _rel(journal: Path, path: Path) -> str:
    return Path(os.path.relpath(path.absolute(), journal.parent.absolute())).as_posix()


def _journal_temp(journal: Path) -> Path:
    return journal.with_name(f".{journal.name}.tmp")


def _write_journal(journal: Path, record: dict) -> None:
    journal.parent.mkdir(parents=True, exist_ok=True)
    temp = _journal_temp(journal)
    try:
        _unlink(temp)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, journal)
    except BaseException:
        _unlink(temp)
        raise
    _sync_folders({journal.parent})


def _drop_journal(journal: Path) -> None:
    _unlink(journal)
    _sync_folders({journal.parent})


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _sync_folders(folders) -> None:
    """Make renames and unlinks in `folders` durable (a no-op where folders cannot be opened)."""
    for folder in sorted(folders):
        if not folder.is_dir():
            continue
        try:
            fd = os.open(folder, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)

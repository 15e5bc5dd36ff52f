"""write_all is all or nothing across a `kill -9`: killed before any rename, unlink, link or fsync
it makes (and again while the next run settles the journal), the set of files is the old one or
the new one once the next run has settled it, and no temporary file is left."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from errkit.core.atomic import JournalError, recover, write_all

# A set like generate's: files in several folders, some rewritten, two created, one deleted.
OLD = {f"pkg/mod{i}.py": f"old {i}\n" for i in range(6)} | {
    f"site/docs/errors/E{i}.md": f"old page {i}\n" for i in range(8)} | {"pkg/_index.json": "{}\n",
                                                                          "site/docs/gone.md": "orphan\n"}
NEW = {f"pkg/mod{i}.py": f"new {i}\n" for i in range(6)} | {
    f"site/docs/errors/E{i}.md": f"new page {i}\n" for i in range(8)} | {
    "pkg/_index.json": '{"v": 2}\n', "site/docs/errors/E8.md": "new page 8\n", "pkg/added/x.py": "added\n"}
DELETED = ["site/docs/gone.md"]
JOURNAL = ".errkit-journal.json"

# Runs write_all (or recover) in a child that SIGKILLs itself just before its Nth call of a
# function that changes the disk or makes it durable; prints the number of calls it made.
DRIVER = r"""
import json, os, signal, sys
from pathlib import Path
kill_at, root, action = int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
calls = 0
def counted(real):
    def call(*args, **kwargs):
        global calls
        calls += 1
        if calls == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    return call
for name in ("replace", "rename", "fsync", "link", "unlink", "mkdir"):
    setattr(os, name, counted(getattr(os, name)))
from errkit.core.atomic import recover, write_all
new, deleted = json.loads(sys.argv[4]), json.loads(sys.argv[5])
if action == "write":
    write_all({root / k: v.encode() for k, v in new.items()}, journal=root / ".errkit-journal.json",
              delete=[root / k for k in deleted])
else:
    recover(root / ".errkit-journal.json")
print(calls)
"""


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _run(root: Path, action: str, kill_at: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", DRIVER, str(kill_at), str(root), action,
                           json.dumps(NEW), json.dumps(DELETED)], capture_output=True, text=True, timeout=60)


def _state(root: Path) -> str:
    """'old', 'new', or 'mixed' for the set of targets on disk."""
    on_disk = {rel: (root / rel).read_text() if (root / rel).exists() else None for rel in {*OLD, *NEW}}
    if on_disk == {rel: OLD.get(rel) for rel in on_disk}:
        return "old"
    if on_disk == {rel: NEW.get(rel) for rel in on_disk}:
        return "new"
    return "mixed"


def _leftovers(root: Path) -> list[str]:
    expected = {*OLD, *NEW} - set(DELETED) | set(OLD)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and str(p.relative_to(root)) not in expected)


def _calls(root: Path, action: str) -> int:
    done = _run(root, action, kill_at=0)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def test_an_uninterrupted_write_is_the_new_set_and_leaves_nothing_behind(tmp_path):
    _tree(tmp_path, OLD)
    write_all({tmp_path / k: v.encode() for k, v in NEW.items()}, journal=tmp_path / JOURNAL,
              delete=[tmp_path / k for k in DELETED])
    assert _state(tmp_path) == "new"
    assert not (tmp_path / "site/docs/gone.md").exists()
    assert [p for p in tmp_path.rglob("*") if p.is_file() and p.name.startswith(".")] == []


def test_a_kill_at_every_step_leaves_the_old_or_the_new_set_after_the_next_run(tmp_path):
    probe = tmp_path / "probe"
    _tree(probe, OLD)
    total = _calls(probe, "write")
    assert total >= 2 * len(NEW)  # a write and a rename at least per file: the kill points are real
    seen = set()
    for kill_at in range(1, total + 1):
        root = tmp_path / f"k{kill_at}"
        _tree(root, OLD)
        killed = _run(root, "write", kill_at)
        assert killed.returncode == -9, (kill_at, killed.stderr)
        now = _state(root)
        # A mixed set on disk is only ever one the journal describes, for the next run to settle.
        assert now != "mixed" or (root / JOURNAL).exists(), kill_at
        settled = recover(root / JOURNAL)
        after = _state(root)
        seen.add(after)
        assert after in ("old", "new"), (kill_at, now, settled)
        assert _leftovers(root) == [], kill_at
    assert seen == {"old", "new"}  # kills before the switch undo it, kills after it finish it


@pytest.mark.slow
def test_a_kill_while_settling_is_settled_by_the_run_after(tmp_path):
    """The first, a middle and the last kill point of each journal state, each settling killed at
    every step of its own."""
    probe = tmp_path / "probe"
    _tree(probe, OLD)
    total = _calls(probe, "write")
    by_state: dict[str, list[Path]] = {}
    for kill_at in range(1, total + 1):
        root = tmp_path / f"k{kill_at}"
        _tree(root, OLD)
        assert _run(root, "write", kill_at).returncode == -9
        if (root / JOURNAL).exists():
            by_state.setdefault(json.loads((root / JOURNAL).read_text())["state"], []).append(root)
    assert set(by_state) == {"staging", "switching"}
    for roots in by_state.values():
        for root in {roots[0], roots[len(roots) // 2], roots[-1]}:
            _settle_killed_at_every_step(root, tmp_path)


def _settle_killed_at_every_step(root: Path, tmp_path: Path) -> None:
    steps = _calls(_copy(root, tmp_path / f"{root.name}-probe"), "recover")
    for second in range(1, steps + 1):
        again = _copy(root, tmp_path / f"{root.name}-{second}")
        assert _run(again, "recover", second).returncode == -9
        recover(again / JOURNAL)
        assert _state(again) in ("old", "new"), (root.name, second)
        assert _leftovers(again) == [], (root.name, second)


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def test_an_exception_halfway_through_the_renames_puts_the_old_set_back(tmp_path, monkeypatch):
    _tree(tmp_path, OLD)
    real = os.replace
    renames = []

    def failing(src, dst):
        renames.append(dst)
        if len(renames) == 6:  # the journal's two states, then three targets renamed
            raise PermissionError(13, "Permission denied", str(dst))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(PermissionError):
        write_all({tmp_path / k: v.encode() for k, v in NEW.items()}, journal=tmp_path / JOURNAL,
                  delete=[tmp_path / k for k in DELETED])
    assert _state(tmp_path) == "old"
    assert _leftovers(tmp_path) == []


def test_an_unreadable_journal_is_a_clear_error_and_touches_nothing(tmp_path):
    _tree(tmp_path, OLD)
    (tmp_path / JOURNAL).write_text("{not json")
    with pytest.raises(JournalError, match="cannot be read"):
        write_all({tmp_path / "pkg/mod0.py": b"x"}, journal=tmp_path / JOURNAL)
    assert _state(tmp_path) == "old"

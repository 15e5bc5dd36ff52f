"""An error of the machine (a full disk, a forbidden folder) is one line naming it and exit 1, never
"internal error" (exit 70), and nothing is left half-written (issue 48: fmt, new, import, init and
explain's output on a full disk exited 70). The disk is made full by every fsync failing with
ENOSPC (each writer syncs before it renames), and for explain's output by /dev/full."""

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import CATALOG, FIXTURES, ROOT

from errkit import cli

SEED = ROOT.parent / "shared" / "seeds" / "000_0b5ee60503544626.json"
RA105 = "num_q_heads=12 must be divisible by and num_kv_heads=8"


def _files(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _messy(tmp_path: Path) -> None:
    """A catalogue folder whose one entry `errkit fmt` rewrites."""
    shutil.copytree(FIXTURES / "kernels", tmp_path / "catalog")
    entry = next((tmp_path / "catalog").rglob("XX101*.yaml"))
    entry.write_text(entry.read_text().replace("check: n % block", "check:    n % block"))


COMMANDS = {
    "fmt": ["--catalog", "catalog", "fmt"],
    "new": ["--catalog", "catalog", "new", "area", "a-new-entry"],
    "init": ["init", "--project", "full-disk", "--prefix", "FD", "--package", "full_disk"],
    "import": ["import", str(SEED), "--into", "catalog"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_full_disk_is_one_line_and_exit_1(command, tmp_path, monkeypatch, capsys):
    if command == "import" and not SEED.exists():
        pytest.skip("the shared seeds are not here")
    (tmp_path / "project").mkdir()
    project = tmp_path / "project"
    if command != "init":
        _messy(project)
    else:  # a project with its package, as init expects
        (project / "full_disk").mkdir()
        (project / "full_disk" / "__init__.py").write_text("")
    monkeypatch.chdir(project)
    before = _files(project)

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    code = cli.main(COMMANDS[command])
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.strip().splitlines()[-1].startswith("errkit: No space left on device"), err
    assert "internal error" not in err
    assert _files(project) == before, "nothing half-written"


def test_explain_to_a_full_disk_is_one_line_and_exit_1():
    for args in (["explain", RA105], ["explain", "--all", "--report", "--quiet", "-"]):
        with open("/dev/full", "w") as full:
            proc = subprocess.run([sys.executable, "-m", "errkit", *args], input=RA105 + "\n", stdout=full,
                                  stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=60)
        assert (proc.returncode, proc.stderr) == (1, "errkit: No space left on device\n"), args


def test_a_forbidden_folder_is_one_line_and_exit_1(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _messy(tmp_path)

    def forbidden(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(tmp_path / "catalog"))

    monkeypatch.setattr(os, "replace", forbidden)
    assert cli.main(["--catalog", "catalog", "fmt"]) == 1
    assert capsys.readouterr().err.endswith(f"errkit: Permission denied: {tmp_path / 'catalog'}\n")


def test_the_catalogue_needs_no_write(capsys):
    """(The bundled catalogue is formatted: `fmt --check` writes nothing, so no disk is needed.)"""
    assert cli.main(["--catalog", str(CATALOG), "fmt", "--check"]) == 0

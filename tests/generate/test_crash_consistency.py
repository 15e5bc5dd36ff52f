"""`errkit generate` killed (SIGKILL) halfway: `generate --check` says a generation was interrupted,
and the next `errkit generate` settles it before writing, leaving the new set and no temporary
file. The kill at every single step is tests/core/test_atomic.py's; this is the command's side."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from errkit.generate.outputs import render_all
from errkit.generate.files import JOURNAL
from support import CATALOG, ROOT, bundled_catalogue, errkit_subprocess

pytestmark = pytest.mark.slow

# `errkit generate` in a child that SIGKILLs itself before its Nth os.replace of a generated file
# (argv[2] == "rename") or its Nth fsync of a staged one (argv[2] == "stage").
DRIVER = r"""
import os, signal, sys
nth, kind, catalog = int(sys.argv[1]), sys.argv[2], sys.argv[3]
seen = 0
real_replace, real_fsync = os.replace, os.fsync
def replace(src, dst):
    global seen
    if kind == "rename" and str(src).endswith(".errkit-new"):
        seen += 1
        if seen == nth:
            os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(src, dst)
def fsync(fd):
    global seen
    if kind == "stage" and os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).endswith(".errkit-new"):
        seen += 1
        if seen == nth:
            os.kill(os.getpid(), signal.SIGKILL)
    return real_fsync(fd)
os.replace, os.fsync = replace, fsync
from errkit.cli import main
sys.exit(main(["--catalog", catalog, "generate"]))
"""


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(CATALOG, project / "catalog")
    for rel in render_all(bundled_catalogue()):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, project / rel)
    entry = project / "catalog" / "inputs" / "RA105-gqa-head-count.yaml"
    entry.write_text(entry.read_text().replace("title: Query heads", "title: Changed query heads"))
    return project


def _files(project: Path) -> dict[str, bytes]:
    return {str(p.relative_to(project)): p.read_bytes() for p in project.rglob("*")
            if p.is_file() and "catalog" not in p.relative_to(project).parts}


def _killed(project: Path, nth: int, kind: str) -> None:
    done = subprocess.run([sys.executable, "-c", DRIVER, str(nth), kind, str(project / "catalog")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == -9, done.stderr


@pytest.mark.parametrize("kind, expect_after_kill", [("rename", "mixed"), ("stage", "old")])
def test_a_killed_generate_is_reported_then_settled_by_the_next(tmp_path, kind, expect_after_kill):
    project = _project(tmp_path)
    old = _files(project)
    reference = _project(tmp_path / "reference")
    assert errkit_subprocess("--catalog", reference / "catalog", "generate").returncode == 0
    new = _files(reference)
    changed = [rel for rel in new if old.get(rel) != new[rel]]
    assert len(changed) >= 4, changed  # enough files for a kill to fall between two renames

    _killed(project, 3, kind)
    now = _files(project)
    targets = {rel: now.get(rel) for rel in changed}
    state = ("old" if targets == {rel: old.get(rel) for rel in changed}
             else "new" if targets == {rel: new[rel] for rel in changed} else "mixed")
    assert state == expect_after_kill
    assert (project / JOURNAL).exists()

    check = errkit_subprocess("--catalog", project / "catalog", "generate", "--check")
    assert check.returncode == 1
    assert b"an interrupted generation was found" in check.stderr and b"Traceback" not in check.stderr

    again = errkit_subprocess("--catalog", project / "catalog", "generate")
    assert again.returncode == 0, again.stderr
    assert b"an interrupted generation was" in again.stderr
    assert _files(project) == new  # the new set, and no journal, staged or kept file beside it
    assert errkit_subprocess("--catalog", project / "catalog", "generate", "--check").returncode == 0

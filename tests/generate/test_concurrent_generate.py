"""Two or more `errkit generate`s at once on one project either succeed or wait, never fail (issue 48:
one settled the other's journal halfway, and it failed with "cannot write : ..." or a staged file's
name; 12 of 24 runs failed here before the journal's folder was locked, errkit/core/atomic.py)."""

import os
import shutil
import subprocess
import sys

import pytest
from support import FIXTURES, ROOT

pytestmark = pytest.mark.slow  # processes racing (about 30 s on 2 cores)


def _generate(project, *args):
    return subprocess.Popen([sys.executable, "-m", "errkit", "--catalog", "catalog", "generate", *args], cwd=project,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_concurrent_generates_all_succeed(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "kernels", project / "catalog")
    for _ in range(2):
        shutil.rmtree(project / "site", ignore_errors=True)
        shutil.rmtree(project / "kernel", ignore_errors=True)
        runs = [_generate(project) for _ in range(3)]
        for run in runs:
            out, err = run.communicate(timeout=120)
            assert run.returncode == 0, err
            assert "file(s) written" in err and "cannot write" not in err, err
        check = _generate(project, "--check")
        _, err = check.communicate(timeout=120)
        assert check.returncode == 0, err
    assert not list(project.rglob("*.errkit-new")) and not list(project.rglob("*.errkit-old"))

"""The "Adopt errkit" tutorial (site/docs/adopt.md) runs as written: its commands, taken from the
page itself (each shell block after a `<!-- tutorial -->` marker), run in an empty folder with
errkit's wheel in place of the git address, and then the `run:` steps of the page's CI workflow
(the YAML block after `<!-- ci-recipe -->`) run in the project the tutorial made."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from support import ROOT
from wheelhouse import clean_env

pytestmark = pytest.mark.slow

PAGE = ROOT / "site" / "docs" / "adopt.md"
GIT_ADDRESS = "git+https://github.com/errkit/errkit"


def blocks(marker: str, language: str) -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    return re.findall(rf"<!-- {marker} -->\n```{language}\n(.*?)\n```", text, re.S)


def test_the_page_has_the_tutorial_and_the_workflow():
    assert len(blocks("tutorial", "sh")) >= 5 and len(blocks("ci-recipe", "yaml")) == 1
    assert sum(b.count(GIT_ADDRESS) for b in blocks("tutorial", "sh") + blocks("ci-recipe", "yaml")) == 2


def _bash(script: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


def test_the_tutorial_and_its_ci_workflow_run_green(errkit_wheel, tmp_path):
    local = errkit_wheel.as_uri()
    tools = tmp_path / "bin"  # `python` as a CI runner's setup-python provides it
    tools.mkdir()
    (tools / "python").symlink_to(shutil.which("python3", path=os.defpath) or shutil.which("python3"))
    env = {**clean_env(), "PATH": f"{tools}{os.pathsep}{os.defpath}", "NO_COLOR": "1",
           "ERRKIT_CACHE_DIR": str(tmp_path / "cache")}
    work = tmp_path / "work"
    work.mkdir()
    script = "\n".join(blocks("tutorial", "sh")).replace(GIT_ADDRESS, local)
    done = _bash(script, work, env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "[0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]" in done.stdout
    assert "TA100" in done.stdout and "valid num_kv_heads: 1, 2, 3, 4, 6, 12" in done.stdout, done.stdout
    project = work / "tinyattn"
    assert (project / "site" / "build" / "errors" / "TA100" / "index.html").is_file()

    workflow = YAML(typ="safe").load(blocks("ci-recipe", "yaml")[0])
    steps = workflow["jobs"]["catalogue"]["steps"]
    runs = [step["run"] for step in steps if "run" in step]
    assert [step["uses"].split("@")[0] for step in steps if "uses" in step] == ["actions/checkout", "actions/setup-python"]
    assert any("errkit lint" in r for r in runs) and any("generate --check" in r for r in runs)
    for run in runs:
        step = _bash(run.replace(GIT_ADDRESS, local), project, env)
        assert step.returncode == 0, (run, step.stdout[-2000:], step.stderr[-2000:])

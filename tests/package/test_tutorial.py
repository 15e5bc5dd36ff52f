"""The "Adopt errkit" tutorial (site/docs/adopt.md) runs as written, in the four kinds of project an
adopter has: a flat setuptools package, a src-layout hatchling package, a uv project (uv_build,
installed with uv: no pip in its .venv) and a Poetry project (poetry-core). Its commands are taken
from the page itself: each shell block after a `<!-- tutorial -->` marker, and those after
`<!-- tutorial: pip -->` or `<!-- tutorial: uv -->` for the project's installer; the page's
`[build-system]` tables stand in for the first block's, and a flat layout moves `src/tinyattn` to
`tinyattn`, as the page says. They run in an empty folder with errkit's wheel in place of the git
address; the explain check runs from outside the project, so only the installed package can answer.
Then the `run:` steps of the page's CI workflow (the YAML block after `<!-- ci-recipe -->`) run in
one of the projects (each step is the same in all four)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from support import ROOT, mkdocs_said
from wheelhouse import clean_env

pytestmark = pytest.mark.slow

PAGE = ROOT / "site" / "docs" / "adopt.md"
GIT_ADDRESS = "git+https://github.com/errkit/errkit"
# project -> (its [build-system] table on the page, None for the first block's own; flat layout; installer)
PROJECTS = {
    "flat-setuptools": ("setuptools", True, "pip"),
    "src-hatchling": (None, False, "pip"),
    "uv_build": ("uv_build", False, "uv"),
    "poetry": ("poetry-core", False, "pip"),
}
WORKFLOW_IN = "flat-setuptools"


def _page() -> str:
    return PAGE.read_text(encoding="utf-8")


def tutorial(installer: str) -> list[str]:
    """The tutorial's shell blocks, in the page's order, for a project installed with `installer`."""
    found = re.finditer(r"<!-- tutorial(?:: (\w+))? -->\n```sh\n(.*?)\n```", _page(), re.S)
    return [m.group(2) for m in found if m.group(1) in (None, installer)]


def build_systems() -> dict[str, str]:
    return dict(re.findall(r"<!-- build-system: ([\w-]+) -->\n```toml\n(.*?)\n```", _page(), re.S))


def blocks(marker: str, language: str) -> list[str]:
    return re.findall(rf"<!-- {marker} -->\n```{language}\n(.*?)\n```", _page(), re.S)


def script_for(project: str, wheel: Path) -> str:
    build_system, flat, installer = PROJECTS[project]
    script = "\n".join(tutorial(installer)).replace(GIT_ADDRESS, wheel.as_uri())
    if build_system:
        first = re.search(r"\[build-system\]\n.*?\n\n", script, re.S).group(0)
        script = script.replace(first, build_systems()[build_system] + "\n\n", 1)
    if flat:
        script = script.replace("src/tinyattn", "tinyattn")
    return script


def test_the_page_has_the_tutorial_every_project_and_the_workflow():
    assert {b for b, _, _ in PROJECTS.values() if b} <= set(build_systems())
    for installer in ("pip", "uv"):
        steps = tutorial(installer)
        assert len(steps) >= 7 and sum(s.count(GIT_ADDRESS) for s in steps) == 1, installer
        assert "cd ..\n" in "\n".join(steps), "the explain check runs from outside the project"
    assert not [b for b in tutorial("uv") if "/pip" in b], "a uv project's .venv has no pip"
    assert len(blocks("ci-recipe", "yaml")) == 1 and blocks("ci-recipe", "yaml")[0].count(GIT_ADDRESS) == 1


def _bash(script: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


@pytest.fixture(scope="module")
def environment(tmp_path_factory) -> dict:
    """A shell's environment as a new user's: `python` as a CI runner's setup-python provides it,
    uv on the PATH (installed with errkit's test extras), nothing of this checkout's venv."""
    tools = tmp_path_factory.mktemp("bin")
    (tools / "python").symlink_to(shutil.which("python3", path=os.defpath) or shutil.which("python3"))
    uv = Path(sys.executable).with_name("uv")
    assert uv.is_file(), "uv is a test dependency (pyproject.toml's test extra)"
    (tools / "uv").symlink_to(uv)
    return {**clean_env(), "PATH": f"{tools}{os.pathsep}{os.defpath}", "NO_COLOR": "1", "NO_MKDOCS_2_WARNING": "1",
            "UV_PYTHON_DOWNLOADS": "never", "ERRKIT_CACHE_DIR": str(tools.parent / "cache")}


@pytest.mark.parametrize("project", list(PROJECTS))
def test_the_tutorial_runs_green(project, errkit_wheel, environment, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    done = _bash(script_for(project, errkit_wheel), work, environment)
    said = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 0, said
    assert "[0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]" in done.stdout
    answer = done.stdout.split("TA100", 1)[-1]
    assert "TA100" in done.stdout and "valid num_kv_heads: 1, 2, 3, 4, 6, 12" in answer, done.stdout
    assert re.search(r"^  catalogue\s+tinyattn$", answer, re.M), "the installed package's catalogue answered"
    assert "by hand" not in done.stderr, "init asked for a step this project does not need"
    assert mkdocs_said(done.stderr) == [], "mkdocs said more than it always says (at INFO too)"

    root = work / "tinyattn"
    home = (root / "site" / "docs" / "index.md").read_text()
    assert f'pip install "errkit @ {GIT_ADDRESS}"' in home and "pip install errkit " not in home, \
        "the home page installs errkit as it can be installed (it is not on the package index)"
    module = "tinyattn._errkit_errors"
    page = (root / "site" / "docs" / "errors" / "TA100.md").read_text()
    assert f"as `{module}.HeadsNotGroupedError`" in page, "the name the installed package is imported by"
    built = (root / "site" / "build" / "errors" / "TA100" / "index.html").read_text()
    assert '<h2 id="reproduce">Reproduce' in built and 'href="#reproduce"' in built
    snippet = re.search(r"## Reproduce\n.*?``` python\n(.*?)\n```", page, re.S).group(1)
    assert snippet.startswith(f"from {module} import check_ta100\n"), snippet
    raised = subprocess.run([root / ".venv" / "bin" / "python", "-c", snippet], cwd=tmp_path, env=environment,
                            capture_output=True, text=True, timeout=120)
    assert raised.returncode == 1 and f"{module}.HeadsNotGroupedError: num_q_heads=12" in raised.stderr, raised.stderr

    if project == WORKFLOW_IN:
        workflow = YAML(typ="safe").load(blocks("ci-recipe", "yaml")[0])
        steps = workflow["jobs"]["catalogue"]["steps"]
        runs = [step["run"] for step in steps if "run" in step]
        assert [step["uses"].split("@")[0] for step in steps if "uses" in step] == ["actions/checkout", "actions/setup-python"]
        assert any("errkit lint" in r for r in runs) and any("generate --check" in r for r in runs)
        for run in runs:
            step = _bash(run.replace(GIT_ADDRESS, errkit_wheel.as_uri()), root, environment)
            assert step.returncode == 0, (run, step.stdout[-2000:], step.stderr[-2000:])

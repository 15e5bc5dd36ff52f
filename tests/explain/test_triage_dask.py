"""The Dask and Apache Beam recipes of site/docs/triage.md, run as the page says: each recipe's blocks
(those after a `<!-- recipe: NAME -->` marker) saved as one file and run with `python FILE` beside a
`logs/` folder of generated logs (Dask on a LocalCluster of a worker process per core, Beam on its
DirectRunner). Each gives the report `errkit explain --all --json logs/` prints."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import logs
from support import ROOT

ERRKIT = Path(sys.executable).with_name("errkit")
PAGE = ROOT / "site" / "docs" / "triage.md"

pytestmark = pytest.mark.slow  # a cluster of worker processes starts


def recipe(name: str) -> str:
    """The page's python blocks marked `<!-- recipe: NAME -->`, in order, as one file."""
    blocks = re.findall(rf"<!-- recipe: {name} -->\n```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 2, f"the {name} recipe is its function and the call that runs it"
    return "\n\n".join(blocks)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> tuple[Path, dict]:
    """A folder holding logs/: four generated logs (one in a sub-folder) and a binary file; the
    command's report on it, run there."""
    root = tmp_path_factory.mktemp("fleet")
    for n in range(4):
        text, _ = logs.make_log(("english", "tracebacks")[n % 2], 1200, error_every=30, seed=n)
        path = root / "logs" / ("old" if n == 3 else "") / f"host-{n:03d}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "logs" / "core.bin").write_bytes(b"\x00" * 4096)
    done = subprocess.run([str(ERRKIT), "explain", "--all", "--json", "logs/"], capture_output=True, text=True,
                          cwd=root, timeout=120)
    expected = json.loads(done.stdout)
    assert expected["totals"]["files"] == 4 and expected["totals"]["skipped"] == 1
    return root, expected


def _run(script: Path, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, script.name], capture_output=True, text=True, cwd=cwd, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done


def test_the_dask_recipe_run_as_a_script_gives_the_commands_report(folder):
    root, expected = folder
    script = root / "triage_dask.py"
    script.write_text(recipe("dask"))
    done = _run(script, root)
    assert json.loads(done.stdout) == expected


def test_the_beam_recipe_run_as_a_script_gives_the_commands_report(folder):
    root, expected = folder
    script = root / "triage_beam.py"
    script.write_text(recipe("beam"))
    (root / "report.json").unlink(missing_ok=True)
    _run(script, root)
    assert json.loads((root / "report.json").read_text()) == expected

"""The Dask and Apache Beam recipes of site/docs/triage.md, run as the page writes them (Dask on a
dask.distributed LocalCluster of two worker processes, Beam on its DirectRunner): the same report
as `errkit explain --all --json` on the same folder of generated logs."""

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
    """The page's python block that starts with `# recipe: NAME`."""
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    (block,) = [b for b in blocks if b.startswith(f"# recipe: {name}\n")]
    return block


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> tuple[Path, dict]:
    """A folder of four generated logs (one in a sub-folder) and a binary file; the command's report."""
    root = tmp_path_factory.mktemp("fleet")
    for n in range(4):
        text, _ = logs.make_log(("english", "tracebacks")[n % 2], 1200, error_every=30, seed=n)
        (root / ("old" if n == 3 else "") / f"host-{n:03d}.log").parent.mkdir(exist_ok=True)
        (root / ("old" if n == 3 else "") / f"host-{n:03d}.log").write_text(text)
    (root / "core.bin").write_bytes(b"\x00" * 4096)
    done = subprocess.run([str(ERRKIT), "explain", "--all", "--json", str(root)], capture_output=True, text=True,
                          timeout=120)
    expected = json.loads(done.stdout)
    assert expected["totals"]["files"] == 4 and expected["totals"]["skipped"] == 1
    return root, expected


def test_the_dask_recipe_gives_the_commands_report(folder):
    distributed = pytest.importorskip("distributed")
    tmp_path, expected = folder
    namespace = {"__name__": "errkit_dask_recipe"}
    exec(compile(recipe("dask"), str(PAGE), "exec"), namespace)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        doc = namespace["triage_with_dask"]([str(tmp_path)])
        workers = len(client.scheduler_info()["workers"])
    assert workers == 2
    assert doc == expected


def test_the_beam_recipe_gives_the_commands_report(folder, tmp_path):
    pytest.importorskip("apache_beam")
    root, expected = folder
    namespace = {"__name__": "errkit_beam_recipe"}
    exec(compile(recipe("beam"), str(PAGE), "exec"), namespace)
    out = tmp_path / "report.json"
    namespace["triage_with_beam"]([str(root)], str(out))  # DirectRunner: Beam's default
    assert json.loads(out.read_text()) == expected

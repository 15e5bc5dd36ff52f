"""`errkit generate` leaves the compiled index current for explain even when an edit of the
catalogue changes nothing compiled (a comment, a fix's setup): explain takes an index older than
any catalogue file as stale (errkit/explain/registry.py), and the index's bytes, unchanged, are
not rewritten."""

import os
import shutil
import time

import errkit
from errkit.cli import main
from errkit.generate.outputs import render_all
from support import CATALOG, ROOT, bundled_catalogue

MESSAGE = "num_q_heads=12 must be divisible by and num_kv_heads=8"


def test_an_edit_that_compiles_to_the_same_index_leaves_it_current(tmp_path, capsys):
    project = tmp_path / "project"
    shutil.copytree(CATALOG, project / "catalog")
    shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")  # [tool.errkit]: where the index is
    for rel in render_all(bundled_catalogue()):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, project / rel)
    entry = project / "catalog" / "inputs" / "RA105-gqa-head-count.yaml"
    entry.write_text(entry.read_text() + "# a comment: nothing compiled changes\n")
    later = time.time() + 5
    os.utime(entry, (later, later))  # newer than anything generate would write without the mark
    assert main(["--catalog", str(project / "catalog"), "generate"]) == 0
    assert "0 file(s) written" in capsys.readouterr().err
    assert errkit.Matcher(catalog=project / "catalog").explain_text(MESSAGE)[0]["code"] == "RA105"

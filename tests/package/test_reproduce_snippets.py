"""Every "Reproduce" snippet of the bundled catalogue that runs on a CPU, run as a reader of the
entry page runs it (issue 52): in a fresh venv that installed what the page says to install (the
catalogue's `install` setting: errkit with its `kernel` extra, here the built wheel, which brings
jax), from a folder outside the checkout. Each snippet must raise its entry's error: the own
entries' (the kernel's errors) and the upstream entries' alike. Not run here: upstream snippets
for a GPU (`# runs on a GPU`, JAX's Mosaic GPU and Triton kernels lowered for CUDA; tests/advice
runs them with the test extra and tests/snippet_shims.py's stand-ins) and tokamax's, which the
extra does not install.

The snippets run in one process of that venv, each in a namespace of its own (one jax import for
all); a snippet that raises nothing, or another entry's error, fails with the traceback it gave.
"""

from __future__ import annotations

import json
import re

import pytest

from errkit.generate.examples import reproduce

from snippet_shims import GPU_MARK
from support import bundled_catalogue, explain_first
from wheelhouse import clean_env, fresh_venv, run

CATALOGUE = bundled_catalogue()
PYTHON = {e.code: r["code"] for e in sorted(CATALOGUE.entries, key=lambda e: e.code)
          if (r := reproduce(e, CATALOGUE)) and r["lang"] == "python"}
OWN = {e.code for e in CATALOGUE.entries if not e.explain_only}
# Upstream snippets for a GPU: marked so (cuDNN, decode and paged attention), JAX's Mosaic GPU or
# Triton kernels (their snippets lower for CUDA from a CPU, which needs the test extra's absl and
# GPU lowering), and tokamax's.
GPU_OR_TOKAMAX = re.compile(re.escape(GPU_MARK) + r"|pallas\.ops\.gpu|pallas import triton|pallas\.triton|mosaic_gpu"
                            r"|lowering_platforms=\(\"cuda\"|^\s*(from|import)\s+tokamax\b", re.M)
NOT_ON_A_CPU = {code for code, source in PYTHON.items() if GPU_OR_TOKAMAX.search(source)}
SNIPPETS = {code: source for code, source in PYTHON.items() if code not in NOT_ON_A_CPU}

RUNNER = """
import json, sys, traceback
snippets = json.load(open(sys.argv[1]))
raised = {}
for code, source in snippets.items():
    try:
        exec(compile(source, "<reproduce " + code + ">", "exec"), {"__name__": "__main__"})
        raised[code] = None
    except BaseException:
        raised[code] = traceback.format_exc()
json.dump(raised, open(sys.argv[2], "w"))
"""


def test_the_catalogue_says_what_to_install_and_the_pages_show_it():
    install = CATALOGUE.settings.install
    assert install and re.search(r'errkit\[kernel\]', install), install
    page = (CATALOGUE.settings.project_root / "site" / "docs" / "errors" / "RA105.md").read_text()
    reproduce_part = page[page.index("## Reproduce"):page.index("## What it means")]
    assert install in reproduce_part


def test_the_own_entries_have_python_snippets_and_each_runs_on_a_cpu():
    own = OWN & set(PYTHON)
    assert len(own) >= 30 and not own & NOT_ON_A_CPU, sorted(own & NOT_ON_A_CPU)


def test_what_is_not_run_here_is_a_gpu_or_tokamax_snippet_that_says_so():
    assert len(SNIPPETS) - len(OWN & set(PYTHON)) >= 70  # the upstream snippets a CPU runs (72)
    assert len(NOT_ON_A_CPU) <= 50, sorted(NOT_ON_A_CPU)


@pytest.fixture(scope="module")
def raised(errkit_wheel, tmp_path_factory) -> dict:
    """What each snippet raised, run in a reader's venv from a folder outside the checkout."""
    where = tmp_path_factory.mktemp("reader")
    # the page's command, with the wheel just built standing in for the repository
    reader = fresh_venv(where / "venv", f"{errkit_wheel}[kernel]")
    work = where / "work"
    work.mkdir()
    (work / "snippets.json").write_text(json.dumps(SNIPPETS))
    (work / "run.py").write_text(RUNNER)
    run([reader.python, "run.py", "snippets.json", "raised.json"], cwd=work,
        env={**clean_env(), "JAX_PLATFORMS": "cpu"})
    return json.loads((work / "raised.json").read_text())


@pytest.mark.parametrize("code", sorted(SNIPPETS))
def test_the_snippet_raises_its_entrys_error_in_a_readers_venv(raised, code):
    text = raised[code]
    assert text is not None, f"{code}'s snippet raised nothing:\n{SNIPPETS[code]}"
    got = explain_first(text)
    assert got is not None and got["code"] == code, f"{code}'s snippet raised:\n{text[-2000:]}"

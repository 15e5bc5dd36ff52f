"""A pasted traceback printed behind a prefix repeated on each line (errkit/explain/matching/chunks.py
unprefixed; the paste page's match.js the same, tests/site/test_paste_page_js.py): read as the
process printed it, so a wording without fixed text is still told by its raise site.

Prefixes as public reports show them: Ray's worker prefix on every line of a traceback in
https://github.com/hiyouga/EasyR1/issues/82 (`(main_task pid=2462788)`) and with an address in
https://github.com/kingoflolz/mesh-transformer-jax/issues/43 (`(pid=9454, ip=10.164.0.9)`); vLLM's
worker and logger prefix in https://github.com/vllm-project/tpu-inference/issues/2803
(`(EngineCore pid=106339) ERROR 06-03 07:41:11 [core.py:1184] `); torchrun's `[rank0]: ` in
https://github.com/vllm-project/vllm/issues/20303; pytest's `E   `."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from errkit.explain import command
from errkit.explain.matching.chunks import unprefixed

GROUP = Path(__file__).parents[1] / "fixtures" / "texts" / "tokamax-exception-group.txt"

TRACEBACK = """\
Traceback (most recent call last):
  File "/srv/train.py", line 12, in <module>
    step()
  File "/venv/lib/python3.12/site-packages/jax/experimental/pallas/ops/gpu/attention.py", line 204, in mha
    assert q.shape == k.shape
AssertionError"""

PREFIXES = ["(main_task pid=2462788) ", "(pid=9454, ip=10.164.0.9) ", "\x1b[36m(RayTrainWorker pid=812, ip=10.130.0.5)\x1b[0m ",
            "(EngineCore pid=106339) ERROR 06-03 07:41:11 [core.py:1184] ", "[rank0]: ", "E   "]


def _codes(text: str) -> list[tuple[str, int]]:
    out = io.StringIO()
    command.run([text], as_json=True, show_all=True, out=out, err=io.StringIO())
    return [(r["code"], r["line"]) for r in map(json.loads, out.getvalue().splitlines()) if r["confidence"] == "exact"]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_a_prefixed_traceback_is_read_as_printed(prefix):
    # a bare AssertionError is RA502's only where its last frame is in JAX's GPU attention
    text = "\n".join(prefix + line for line in TRACEBACK.splitlines())
    assert unprefixed(text.encode()) == TRACEBACK.encode()
    assert _codes(text) == [("RA502", 6)] == _codes(TRACEBACK)


def test_the_run_of_the_prefix_ends_at_a_line_without_it():
    # another worker's line in between: what follows it is no longer this traceback's
    lines = ["(pid=1) " + line for line in TRACEBACK.splitlines()]
    lines.insert(2, "(pid=2) step 10 done")
    text = "\n".join(["INFO before", *lines, "INFO after"])
    want = "\n".join(["INFO before", "Traceback (most recent call last):", TRACEBACK.splitlines()[1],
                      "(pid=2) step 10 done", *lines[3:], "INFO after"])
    assert unprefixed(text.encode()).decode() == want


def test_layouts_that_are_no_prefix_are_kept():
    indented = "\n".join("    " + line for line in TRACEBACK.splitlines())
    group = GROUP.read_bytes()
    for text in (TRACEBACK.encode(), indented.encode(), group, b"no traceback here\n(pid=1) x"):
        assert unprefixed(text) == text
    assert b"| Traceback (most recent call last):" in group and b"Exception Group Traceback" in group

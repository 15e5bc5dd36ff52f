"""Values and the kernel read from the lines after a message: an entry's `reads`
(templates of the lines of a compiler's dump), the `bytes` param type and the kernels' `names`, in
Python and on the paste page alike."""

from __future__ import annotations

import io
import json
import os
import shutil

import pytest
from support import FIXTURES

from errkit.explain import command
from errkit.generate.outputs import render_all
from errkit.generate import index as index_gen
from errkit.catalogue.load import load
from errkit.explain.matching.index import Index

FIXTURE = FIXTURES / "kernels"
CATALOGUE = load(FIXTURE).catalogue
HEADER = "RuntimeError: kernel compile failed: out of scratch memory"
DUMP = ('\n\nThe dump:\n  %12 = failing op: "tpu.matmul"(%3, %4)\n  allocation in {kernel}.3\n'
        "  scratch 19.85M of 16.00M\n")


def explain_json(text: str) -> list[dict]:
    index = Index(json.loads(json.dumps(index_gen.build(CATALOGUE))))
    out = io.StringIO()
    command.run([text], as_json=True, show_all=True, out=out, err=io.StringIO(), index=index)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_values_are_read_from_the_lines_after_the_message():
    (res,) = explain_json(HEADER + DUMP.format(kernel="somewhere"))
    assert res["code"] == "XX103" and res["confidence"] == "exact"
    assert res["params"] == {"used": 20814234, "limit": 16 << 20, "operation": "tpu.matmul"}
    fixes = res["fixes"]
    assert fixes[0]["suggestions"] == [{"label": "limit to set", "value": 20 << 20}]
    assert [f["kernel"]["id"] for f in fixes[1:]] == ["tiles", "lanes"]  # not told: both, labelled


@pytest.mark.parametrize("kernel, told", [("tiles_kernel", "tiles"), ("lane_kernel_bwd", "lanes")])
def test_a_kernel_named_in_the_dump_is_the_one_that_raised_it(kernel, told):
    (res,) = explain_json(HEADER + DUMP.format(kernel=kernel))
    assert res["matched"]["kernel"]["id"] == told
    assert [f["kernel"] and f["kernel"]["id"] for f in res["fixes"]] == [None, told]
    assert res["fixes"][1]["suggestions"] == [{"label": "shrink by", "value": 1.24}]


def test_two_kernels_named_tell_nothing():
    (res,) = explain_json(HEADER + DUMP.format(kernel="tiles_kernel and lane_kernel"))
    assert res["matched"]["kernel"] is None


def test_reading_stops_at_the_next_traceback():
    later = "\nTraceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n" + DUMP.format(kernel="tiles_kernel")
    (res,) = explain_json(HEADER + later)
    assert res["params"] == {}
    assert res["matched"]["kernel"] is None


def test_each_error_of_a_log_keeps_its_own_values():
    """The same header twice: the values of each come from its own dump (the header's match is
    remembered, its values must not be)."""
    log = (HEADER + DUMP.format(kernel="tiles_kernel") + "\nTraceback (most recent call last):\n"
           + HEADER + DUMP.format(kernel="lane_kernel").replace("19.85M", "40.00M"))
    first, second = sorted(explain_json(log), key=lambda res: res["line"])
    assert (first["params"]["used"], second["params"]["used"]) == (20814234, 40 << 20)
    assert (first["matched"]["kernel"]["id"], second["matched"]["kernel"]["id"]) == ("tiles", "lanes")


@pytest.mark.parametrize("text, size", [("1048576", 1 << 20), ("19.85M", 20814234), ("16.00M", 16 << 20),
                                        ("96.00K", 96 << 10), ("512B", 512), ("1.5GiB", 3 << 29), ("3 MiB", 3 << 20)])
def test_sizes_as_compilers_print_them(text, size):
    from errkit.core import values
    assert values.parse("bytes", text) == size


def test_the_paste_page_reads_like_python(tmp_path):
    """match.js on the fixture catalogue: the same values, kernel and suggestions as Python."""
    from test_paste_page_js import HARNESS, NODE, Node, _python_explain

    if NODE is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs the JavaScript checks: node is not installed")
        pytest.skip("node is not installed")
    assets = tmp_path / "site/docs/assets/errkit"
    shutil.copytree(FIXTURES.parent.parent / "site/docs/assets/errkit", assets)
    for rel, data in render_all(CATALOGUE).items():
        if str(rel).startswith("site/docs/assets/errkit/"):
            (tmp_path / rel).write_bytes(data)
    assert HARNESS.exists()
    texts = [HEADER + DUMP.format(kernel=k) for k in ("somewhere", "tiles_kernel", "lane_kernel_bwd", "tiles_kernel lane_kernel")]
    texts.append(HEADER + "\nTraceback (most recent call last):\n" + DUMP.format(kernel="tiles_kernel"))
    node = Node(assets)
    try:
        got = node({"cases": texts})["cases"]
    finally:
        node.close()
    index = Index(json.loads(json.dumps(index_gen.build(CATALOGUE))))
    want = [_python_explain(index, text) for text in texts]
    assert got == want
    assert want[1][0]["kernel"] == "tiles" and want[1][0]["params"]["used"] == "20814234"

"""A kernel's rules declared once (catalog/kernels/*.yaml) and applied by `valid(...)` in suggestions."""

from __future__ import annotations

import io
import os
import json
import shutil

import pytest

from pathlib import Path

from errkit.explain import command
from errkit.catalogue import kernels
from errkit.generate import index as index_gen
from errkit.generate import site
from errkit.catalogue.load import load
from errkit.explain.matching.index import Index
from support import CATALOG, FIXTURES

FIXTURE = FIXTURES / "kernels"


def fixture_catalogue():
    return load(FIXTURE).catalogue


def test_valid_applies_every_rule_it_can_read():
    kernel = fixture_catalogue().kernels["tiles"]
    written = kernels.expand("valid(block, divisors(n))", kernel, {"n", "block"})
    assert written == "[candidate_ for candidate_ in divisors(n) if n % candidate_ == 0 and candidate_ % 8 == 0]"
    # `major` is not in the message: its rule cannot be applied, and is left out
    assert "major" not in written
    with_major = kernels.expand("valid(block, divisors(n))", kernel, {"n", "block", "major"})
    assert "major % candidate_ == 0" in with_major


def explain_json(index: Index, text: str) -> dict:
    out = io.StringIO()
    command.run([text], as_json=True, show_all=False, out=out, err=io.StringIO(), index=index)
    return json.loads(out.getvalue().splitlines()[0])


def test_explain_computes_values_within_the_kernels_rules():
    index = Index(json.loads(json.dumps(index_gen.build(fixture_catalogue()))))
    res = explain_json(index, "ValueError: n=96 should be divisible by block=36")
    fix = res["fixes"][0]
    assert fix["suggestions"] == [
        {"label": "valid blocks", "value": [8, 16, 24, 32, 48, 96]},
        # `major` is not in the message: its rule is said, not applied
        {"label": "largest valid block", "value": [96], "sets": "block", "requires": ["block divides major."]},
    ]
    none = explain_json(index, "ValueError: n=100 should be divisible by block=64")["fixes"][0]["suggestions"]
    assert none[0]["value"] == []  # no multiple of 8 divides 100: said, not invented
    assert res["fixes"][1]["unverified"] == "needs a TPU."


def test_the_page_states_the_kernels_rules_and_unverified_fixes():
    page = site.pages(fixture_catalogue())["site/docs/errors/XX101.md"]
    assert "What a tiling kernel requires" in page
    assert "block is a multiple of 8\\. (`block % 8 == 0`, enforced at lowering)" in page
    assert '!!! warning "Unverified"' in page and "needs a TPU\\." in page


@pytest.mark.parametrize("edit, rule", [
    (("kernel: tiles", "kernel: tilez"), "unknown-kernel"),
    (("kernel: tiles\n", ""), "unknown-name"),  # valid() with no kernel
    (("valid(block, divisors(n))[-1:]", "valid(size, divisors(n))[-1:]"), "unknown-name"),
    (("      largest valid block: block", "      largest valid blok: block"), "unknown-name"),
    (("      largest valid block: block", "      largest valid block: blok"), "unknown-name"),
])
def test_lint_reports_a_broken_use_of_a_kernel(tmp_path, run_cli, edit, rule):
    shutil.copytree(FIXTURE, tmp_path / "c")
    entry = tmp_path / "c" / "area" / "XX101-block.yaml"
    text = entry.read_text()
    assert edit[0] in text
    entry.write_text(text.replace(edit[0], edit[1], 1))
    code, out, _ = run_cli("lint", tmp_path / "c")
    assert code == 1 and f": {rule}: " in out, out


def test_lint_reports_a_broken_kernel_rule(tmp_path, run_cli):
    shutil.copytree(FIXTURE, tmp_path / "c")
    kernel = tmp_path / "c" / "kernels" / "tiles.yaml"
    kernel.write_text(kernel.read_text().replace("check: block % 8 == 0", "check: block.real % 8 == 0"))
    code, out, _ = run_cli("lint", tmp_path / "c")
    assert code == 1 and "kernels/tiles.yaml:" in out and ": forbidden-expression: " in out, out


def test_the_catalogues_kernels_load():
    loaded = load(CATALOG)
    assert "tpu-flash" in loaded.kernels
    assert not [f for f in loaded.findings if "kernels/" in f.path]


# -- the kernel behind a wording (a fix for one kernel; a wording several kernels raise) ----------

SHARED = "ValueError: length 1024 is not a multiple of the block 96"
FRAME = 'Traceback (most recent call last):\n  File "/venv/site-packages/pkg/{file}", line 9, in run\n    check()\n'


def fixture_index() -> Index:
    return Index(json.loads(json.dumps(index_gen.build(fixture_catalogue()))))


def offered(res: dict) -> list:
    return [(fix["kernel"] and fix["kernel"]["id"], [(s["label"], s.get("value")) for s in fix["suggestions"]]) for fix in res["fixes"]]


def test_a_shared_wording_offers_each_kernels_fix_saying_which_kernel_it_is_for():
    res = explain_json(fixture_index(), SHARED)
    assert res["matched"]["kernel"] is None
    # the padding: none the lane-tiled kernel takes (block 96 is no multiple of 128), 1056 if the tiling kernel raised it
    assert offered(res) == [(None, [("padded length", [])]), ("tiles", [("valid blocks", [1024])]),
                            ("lanes", [("valid blocks", [1024])])]
    assert res["fixes"][0]["suggestions"][0]["cases"] == [{"when": "raised by A tiling kernel", "value": [1056], "kernel": "tiles"}]
    assert res["fixes"][2]["kernel"] == {"id": "lanes", "title": "A lane-tiled kernel"}
    out = io.StringIO()
    command.run([SHARED], as_json=False, show_all=False, out=out, err=io.StringIO(), index=fixture_index())
    assert "fix 3    for a lane-tiled kernel: Use a block" in out.getvalue()


@pytest.mark.parametrize("file, kernel", [("tiles.py", "tiles"), ("lanes.py", "lanes")])
def test_the_tracebacks_path_tells_the_kernel_of_a_shared_wording(file, kernel):
    res = explain_json(fixture_index(), FRAME.format(file=file) + SHARED + "\n")
    assert res["matched"]["kernel"]["id"] == kernel
    assert [k for k, _ in offered(res)] == [None, kernel]


def test_a_wording_of_one_kernel_offers_only_its_fixes():
    res = explain_json(fixture_index(), "ValueError: lanes: block 96 does not divide 1024")
    assert res["matched"]["kernel"]["id"] == "lanes"
    assert offered(res) == [(None, [("padded length", [])]), ("lanes", [("valid blocks", [1024])])]  # lanes refuses 96


def test_valid_in_a_fix_for_a_kernel_applies_that_kernels_rules():
    res = explain_json(fixture_index(), FRAME.format(file="tiles.py") + "ValueError: length 1000 is not a multiple of the block 96\n")
    assert offered(res)[1] == ("tiles", [("valid blocks", [1000])])  # 8, 40, 200, 1000: multiples of 8
    lanes = explain_json(fixture_index(), "ValueError: lanes: block 96 does not divide 1000")
    assert offered(lanes)[1] == ("lanes", [("valid blocks", [])])  # no multiple of 128 divides 1000


def test_a_lookup_offers_every_fix():
    res = explain_json(fixture_index(), "XX102")
    assert [k for k, _ in offered(res)] == [None, "tiles", "lanes"]


def test_the_page_says_which_kernel_a_fix_is_for_and_states_each_kernels_rules():
    page = site.pages(fixture_catalogue())["site/docs/errors/XX102.md"]
    assert "### Fix 2: for a tiling kernel\n" in page and "### Fix 3: for a lane\\-tiled kernel\n" in page
    assert "What a tiling kernel requires" in page and "What a lane\\-tiled kernel requires" in page


def test_the_paste_page_tells_the_kernel_as_explain_does(tmp_path):
    """match.js on the fixture catalogue: the same fixes, kernels and values as Python."""
    import test_paste_page_js as js  # its node harness and the Python side of the comparison

    if js.NODE is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs node for the JavaScript checks (apt-get install -y nodejs)")
        pytest.skip("node is not installed")
    shutil.copytree(js.ROOT / js.ASSETS, tmp_path / js.ASSETS)
    for rel, data in js.render_all(fixture_catalogue()).items():
        if Path(rel).parent == js.ASSETS:
            (tmp_path / rel).write_bytes(data)
    cases = [SHARED, FRAME.format(file="tiles.py") + SHARED + "\n", FRAME.format(file="lanes.py") + SHARED + "\n",
             "ValueError: lanes: block 96 does not divide 1000", "XX102 is what I got"]
    session = js.Node(tmp_path / js.ASSETS)
    try:
        got = session({"cases": cases})["cases"]
    finally:
        session.close()
    want = [js._python_explain(fixture_index(), text) for text in cases]
    assert got == want
    assert [r[0]["kernel"] for r in want[:4]] == [None, "tiles", "lanes", "lanes"]


def test_two_valid_calls_in_one_expression_each_get_their_own_loop_name():
    kernel = fixture_catalogue().kernels["tiles"]
    written = kernels.expand("valid(block, divisors(n))[-1:] + valid(block, [8, 16, 36])", kernel, {"n", "block"})
    from errkit.core import expr
    assert expr.evaluate(written, {"n": 96, "block": 36}) == [96, 8, 16]

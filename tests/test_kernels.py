"""A kernel's rules declared once (catalog/kernels/*.yaml) and applied by `valid(...)` in suggestions."""

from __future__ import annotations

import io
import json
import shutil

import pytest

from errkit import explain, kernels
from errkit.generate import index as index_gen
from errkit.generate import site
from errkit.load import load
from errkit.match import Index
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
    explain.run([text], as_json=True, show_all=False, out=out, err=io.StringIO(), index=index)
    return json.loads(out.getvalue().splitlines()[0])


def test_explain_computes_values_within_the_kernels_rules():
    index = Index(json.loads(json.dumps(index_gen.build(fixture_catalogue()))))
    res = explain_json(index, "ValueError: n=96 should be divisible by block=36")
    fix = res["fixes"][0]
    assert fix["suggestions"] == [
        {"label": "valid blocks", "value": [8, 16, 24, 32, 48, 96]},
        {"label": "largest valid block", "value": [96], "sets": "block"},
    ]
    none = explain_json(index, "ValueError: n=100 should be divisible by block=64")["fixes"][0]["suggestions"]
    assert none[0]["value"] == []  # no multiple of 8 divides 100: said, not invented
    assert res["fixes"][1]["unverified"] == "needs a TPU."


def test_the_page_states_the_kernels_rules_and_unverified_fixes():
    page = site.build(fixture_catalogue())["site/docs/errors/XX101.md"]
    assert "What A tiling kernel requires" in page
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

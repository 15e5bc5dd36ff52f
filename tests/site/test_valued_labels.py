"""A suggestion's label beside a value, without the note saying what an empty one means (issue 47,
item 5: no "(none: no multiple of 64 does)" beside 64): errkit/core/runtime.py `valued` (explain's
terminal, markdown and HTML answers, the entry pages, the generated validators' notes) and the
pages' dom.js `valued` (the paste page, "For your values") alike, on every label of the catalogue
and on generated ones.

The JavaScript half needs node; without it, it skips, except under CI (CI set), where it fails."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from support import ROOT, bundled_catalogue
from errkit.core.runtime import valued
from errkit.explain.answer import answers
from errkit.explain.matching.index import Index
from errkit.explain.render import as_text

LABELS = sorted({label for e in bundled_catalogue().entries for fix in e.fixes for label in fix.suggest})
NOTED = [label for label in LABELS if "none: " in label]


def test_every_noted_label_loses_its_note_and_keeps_the_rest():
    assert len(NOTED) >= 40
    for label in NOTED:
        shown = valued(label)
        assert "none" not in shown.replace("none_", "") and shown and shown == shown.strip(), (label, shown)
        assert label.startswith(shown.split(" (")[0]), (label, shown)  # what it names is kept
        assert shown.count("(") == shown.count(")"), (label, shown)
    assert all(valued(label) == label for label in LABELS if "none: " not in label)


def test_explain_shows_the_label_without_its_note_beside_a_value():
    results, _, _ = answers(Index.load(), [b"ValueError: kv_seq_len=320 must be a multiple of block_kv=128"])
    text = as_text(results[0])
    assert "block_kv dividing kv_seq_len: 64" in text
    assert not [line for line in text.splitlines() if "(none:" in line and line.rstrip().endswith(": 64")]


NODE = shutil.which("node")
DOM = ROOT / "site" / "docs" / "assets" / "errkit" / "dom.js"

label_text = st.text(st.sampled_from("ab_ (;:)none"), max_size=30)
edge = st.sampled_from(["", " ", "block_k dividing kv_seq_len ", " x "]) | label_text  # notes at either end, spaces around


@pytest.fixture(scope="module")
def js_valued():
    if NODE is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs node for the pages' JavaScript (apt-get install -y nodejs)")
        pytest.skip("node is not installed")

    def run(labels: list[str]) -> list[str]:
        script = f"const d = require({json.dumps(str(DOM))}); const labels = JSON.parse(require('fs').readFileSync(0, 'utf8'));" \
                 "process.stdout.write(JSON.stringify(labels.map(d.valued)));"
        done = subprocess.run([NODE, "-e", script], input=json.dumps(labels), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    return run


def test_the_pages_show_every_catalogue_label_as_explain_does(js_valued):
    assert js_valued(LABELS) == [valued(label) for label in LABELS]


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.lists(st.builds(lambda a, b, c: f"{a}(none: {b}){c}", edge, label_text, edge)
                | st.builds(lambda a, b, c, d: f"{a}({b}; none: {c}){d}", edge, label_text, label_text, edge)
                | label_text, min_size=1, max_size=20))
def test_the_pages_and_explain_agree_on_generated_labels(js_valued, labels):
    assert js_valued(labels) == [valued(label) for label in labels]

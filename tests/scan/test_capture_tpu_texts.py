"""scripts/capture_tpu_texts.py on this CPU (--cpu-smoke: its cases at small shapes, the kernels
lowered for TPU, RA815's fixes run in interpret mode), and its captures turned into corpus cases."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest
import yaml

from support import ROOT

SCRIPT = ROOT / "scripts" / "capture_tpu_texts.py"


@pytest.fixture(scope="module")
def capture():
    spec = importlib.util.spec_from_file_location("capture_tpu_texts", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_every_case_runs_on_the_cpu_without_a_fault_of_its_own(capture, tmp_path):
    data = capture.capture(tmp_path, smoke=True, budget=600)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["captures.json", "captures.txt"]  # at most 3 files under --out
    assert json.loads((tmp_path / "captures.json").read_text()) == json.loads(json.dumps(data))
    records = {r["id"]: r for r in data["records"]}
    assert list(records) == [c.id for c in capture.CASES] and not data["skipped"]
    # a fault of the script (a typo, a wrong argument) would be raised in its own frames
    assert [r["id"] for r in records.values() if r.get("raised_here")] == []
    for r in records.values():
        assert r["outcome"] in ("ran", "raised") and r["what"] and r["kind"]
        if r["outcome"] == "raised":
            assert r["message"] in r["traceback"] and r["traceback"].startswith("Traceback (most recent call last):")
    # the kernels lower for TPU on a CPU (the TPU compiler is what refuses them, on the chip); ragged
    # paged attention asks for the chip's generation already when it is lowered
    assert {i for i, r in records.items() if r["outcome"] == "raised"} == {"ragged-vmem-limit"}
    for fix in ("fix-splash-hbm", "fix-ours-hbm"):
        result = records[fix]["result"]
        assert result["finite"] and result["max_abs_error_first_rows"] < 0.05, result
    assert data["versions"]["smoke"] and data["versions"]["platform"] == "cpu"


def test_without_a_tpu_the_script_says_so(capture, tmp_path):
    with pytest.raises(SystemExit, match="not a TPU"):
        capture.capture(tmp_path, smoke=False, budget=1, only=["mosaic-bf16-block-8-rows"])


def test_captures_become_corpus_cases_with_explains_answer(capture, tmp_path):
    text = ("Traceback (most recent call last):\n  File \"capture_tpu_texts.py\", line 9, in compile\n"
            "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem. Used 64.03M of 16.00M vmem. "
            "Exceeded vmem capacity by 48.03M.")
    captures = {"versions": {"device_kind": "TPU v5 lite", "jax": "0.10.2", "jaxlib": "0.10.2", "libtpu": "0.0.21"},
                "records": [{"id": "mosaic-vmem-blocks", "kind": "vmem-oom", "expect": "RA810", "what": "blocks too large",
                             "outcome": "raised", "traceback": text, "raised_here": False},
                            {"id": "fix-splash-hbm", "kind": "fix", "expect": "RA815", "what": "a fix", "outcome": "ran", "result": {}}]}
    path = tmp_path / "captures.json"
    path.write_text(json.dumps(captures))
    cases = yaml.safe_load(capture.corpus(path))
    assert len(cases) == 1
    (case,) = cases
    assert case["id"] == "tpu-v5e-mosaic-vmem-blocks" and case["text"] == text and case["code"] == "RA810"
    assert case["values"] == {"used": 67140321, "limit": 16777216, "exceeded_by": 50363105}
    assert case["source"].startswith("captured on TPU v5 lite, jax 0.10.2, jaxlib 0.10.2, libtpu 0.0.21")

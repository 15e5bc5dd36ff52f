"""scripts/verify_advice.py and scripts/verify_advice_tpu.py without running a kernel: the families
take turns so a run cut short covers them all, attempts add up per entry, and the ledger the script
writes is the one `errkit generate` reads (errkit/catalogue/ledger.py), naming no folder of a machine."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


V = script("verify_advice")


def row(family: str, code: str, outcomes: list[tuple[int, str]]) -> dict:
    return {"chunk": "x", "index": 0, "family": family, "call": {}, "base": {}, "outcome": "explained", "error": "E: e",
            "trace": "Traceback...\nE: e", "code": code, "kernel": None, "skipped": [],
            "tried": [{"code": code, "fix": fix, "label": "l", "param": "p", "value": 1, "kind": "value", "outcome": outcome,
                       "said": "", "explained": None, "trace": ""} for fix, outcome in outcomes]}


def test_the_families_take_turns():
    plan = V.chunks(["a", "b"], 100, 47)
    assert [name for name, _, _ in plan[:4]] == ["a", "b", "a", "b"]
    assert sum(n for _, _, n in plan) == 100 and len({seed for _, seed, _ in plan}) == len(plan)


def test_attempts_add_up_per_entry_and_fix():
    rows = [row("ragged", "RA105", [(1, "worked"), (2, "failed")]), row("ours", "RA105", [(1, "worked"), (1, "declined")]),
            {**row("ours", "RA211", []), "outcome": "unexplained", "code": None}]
    summary = V.tally(rows)
    entry = summary["entries"]["RA105"]
    assert (entry["calls"], entry["offered"], entry["worked"], entry["failed"], entry["declined"]) == (2, 3, 2, 1, 1)
    assert entry["fixes"] == {"1": {"offered": 2, "worked": 2}, "2": {"offered": 1, "worked": 0}}
    assert summary["totals"]["unexplained"] == 1 and "RA105" in V.table(summary)
    errors = V.errors(rows)
    assert [e.get("after") is not None for e in errors] == [False, True, False, False]


def test_the_written_ledger_is_the_one_generate_reads(tmp_path):
    from errkit.catalogue import ledger

    rows = [row("ragged", "RA105", [(1, "worked"), (1, "worked")])]
    record = V.ledger(V.tally(rows), "cpu", 47, rows, ["scripts/verify_advice.py", "--out", "/some/where", "--calls", "9"])
    assert "/some/where" not in json.dumps(record)
    (tmp_path / ledger.LEDGER_DIR).mkdir()
    (tmp_path / ledger.LEDGER_DIR / "cpu.json").write_text(json.dumps(record))
    read = ledger.read(tmp_path)["RA105"][0]
    assert (read["platform"], read["calls"], read["offered"], read["worked"]) == ("cpu", 1, 2, 2)
    assert read["said"].startswith("verified on the CPU")


def test_the_tpu_script_refuses_to_run_without_a_tpu(tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        tpu = script("verify_advice_tpu")
        assert tpu.main(["--out", str(tmp_path)]) == 2
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    assert "no TPU here" in capsys.readouterr().out
    assert [call[0] for call in tpu.issue_calls()] == ["ragged", "ragged", "splash", "splash", "splash", "splash"]

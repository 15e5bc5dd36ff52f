"""What running a catalogue's advice on the real kernels showed: catalog/ledger/*.json, written by
scripts/verify_advice.py (the CPU) and scripts/verify_advice_tpu.py (a TPU), each file one run's
entries: the generated bad calls explained as each, the values and snippet changes offered for them
and those that worked, with the platform, device, versions and date. Files of one platform, device
and versions add up. `errkit generate` puts each entry's records in the index (explain shows them)
and on its page; a fix with `unverified` whose every offered value worked on a TPU loses the label
(`shown_unverified`).

A ledger is data a script wrote, read defensively: a file or record of another shape is left out.
"""

from __future__ import annotations

import json
from pathlib import Path

LEDGER_DIR = "ledger"
KEYS = ("platform", "device", "jax", "libtpu", "date", "calls", "offered", "worked")
PLATFORM_NAMES = {"cpu": "the CPU", "tpu": "a TPU"}

_READ: dict = {}  # folder -> (files' (name, mtime, size), what they hold)


def read(root: Path) -> dict[str, list[dict]]:
    """Entry code -> its records (KEYS, "fixes": fix number -> {offered, worked}, "said"), one per
    platform, device and versions, the runs of each added up; {} without a ledger folder."""
    folder = Path(root) / LEDGER_DIR
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    stamp = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    known = _READ.get(str(folder))
    if known is not None and known[0] == stamp:
        return known[1]
    runs: dict[tuple, dict[str, dict]] = {}
    for path in files:
        data = _load(path)
        if data is None:
            continue
        key = tuple(str(data.get(k) or "") for k in ("platform", "device", "jax", "libtpu"))
        for code, row in data["entries"].items():
            if not _counts(row):
                continue
            into = runs.setdefault(key, {}).setdefault(code, {"calls": 0, "offered": 0, "worked": 0, "fixes": {}, "date": ""})
            for name in ("calls", "offered", "worked"):
                into[name] += row[name]
            into["date"] = max(into["date"], str(data.get("date") or ""))
            for n, fix in (row.get("fixes") or {}).items():
                if _counts(fix, ("offered", "worked")):
                    have = into["fixes"].setdefault(str(n), {"offered": 0, "worked": 0})
                    have["offered"] += fix["offered"]
                    have["worked"] += fix["worked"]
    out: dict[str, list[dict]] = {}
    for (platform, device, jax, libtpu), entries in sorted(runs.items()):
        for code, row in entries.items():
            record = {"platform": platform, "device": device, "jax": jax, "libtpu": libtpu or None, "date": row["date"],
                      "calls": row["calls"], "offered": row["offered"], "worked": row["worked"],
                      "fixes": dict(sorted(row["fixes"].items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0))}
            record["said"] = said(record)
            out.setdefault(code, []).append(record)
    _READ[str(folder)] = (stamp, out)
    return out


def _load(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict) or data.get("platform") not in PLATFORM_NAMES:
        return None
    return data


def _counts(row, names=("calls", "offered", "worked")) -> bool:
    return isinstance(row, dict) and all(isinstance(row.get(n), int) and not isinstance(row.get(n), bool)
                                         and row[n] >= 0 for n in names)


def said(record: dict) -> str:
    """`verified on TPU v5 lite with jax 0.10.2 (libtpu 0.0.x), 2026-01-05: 41 of 41 offered values and
    snippet changes worked (12 generated calls)`."""
    where = record["device"] if record["platform"] == "tpu" else "the CPU (TPU interpret mode, lowering for TPU and CUDA)"
    versions = f"jax {record['jax']}" + (f", libtpu {record['libtpu']}" if record.get("libtpu") else "")
    calls = f"{record['calls']} generated call{'s' if record['calls'] != 1 else ''}"
    return (f"verified on {where} with {versions}, {record['date']}: {record['worked']} of {record['offered']} offered values "
            f"and snippet changes worked ({calls})")


def fix_verified(records: list[dict], fix_number: int, platform: str = "tpu") -> bool:
    """Whether a fix's every offered value and change worked on `platform`, and some were offered."""
    found = [r["fixes"].get(str(fix_number)) for r in records if r["platform"] == platform]
    found = [f for f in found if f and f["offered"]]
    return bool(found) and all(f["worked"] == f["offered"] for f in found)


def shown_unverified(unverified: str | None, records: list[dict], fix_number: int) -> str | None:
    """A fix's `unverified` reason as shown: none once the fix ran on a TPU and every value worked."""
    if unverified and fix_verified(records, fix_number, "tpu"):
        return None
    return unverified

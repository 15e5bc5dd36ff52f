"""Run many generated bad calls of every kernel family on the real kernels and hold errkit's advice to
what they then do (tests/verify/calls): per entry, the calls explained as it, the values and snippet
changes offered and those that worked; every failure with the call and what the kernel said.

    python scripts/verify_advice.py --calls 2400 --seed 47 --out build/advice     # CPU, resumable
    python scripts/verify_advice.py --report build/advice                         # the table again

The calls are drawn per family in chunks (each chunk its own seed, derived from --seed), and each
attempt is appended to OUT/attempts.jsonl as it finishes: run it again with the same arguments and
it goes on where it stopped. At the end it prints the per-entry table and writes OUT/ledger.json
(what catalog/ledger/ holds, read by `errkit generate`: see --ledger) and OUT/errors.json (the full
text of every error the kernels raised, for the real-world corpus).

scripts/verify_advice_tpu.py runs the TPU families the same way on a TPU.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

CHUNK = 25  # calls drawn per seed: a chunk is the unit a resumed run skips


def chunks(families: list[str], calls: int, seed: int) -> list[tuple[str, int, int]]:
    """(family, chunk seed, calls) to run, families in turn so a run cut short covers them all."""
    per = max(1, -(-calls // len(families)))
    plan: list[list[tuple[str, int, int]]] = []
    for f, name in enumerate(families):
        rows, left, k = [], per, 0
        while left > 0:
            rows.append((name, seed * 1000 + f * 100 + k, min(CHUNK, left)))
            left -= CHUNK
            k += 1
        plan.append(rows)
    out = []
    for k in range(max(len(rows) for rows in plan)):
        out += [rows[k] for rows in plan if k < len(rows)]
    return out


def run(families: list[str], calls: int, seed: int, out: Path, platform: str = "cpu", budget: float | None = None,
        probes=(), echo=print) -> list[dict]:
    """Attempt the planned chunks not already in OUT/attempts.jsonl (and the `probes`: (family, base,
    change)), appending each attempt; stop starting new calls after `budget` seconds. Returns every
    attempt of the file."""
    from verify import calls as C

    fams = C.load_families()
    out.mkdir(parents=True, exist_ok=True)
    log = out / "attempts.jsonl"
    done = {(r["chunk"], r["index"]) for r in _read(log)}
    start = time.monotonic()

    def over() -> bool:
        return budget is not None and time.monotonic() - start > budget

    with log.open("a", encoding="utf-8") as sink:
        def keep(chunk: str, index: int, attempt) -> None:
            row = {"chunk": chunk, "index": index, **attempt.as_dict()}
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            bad = attempt.failures()
            echo(f"  {attempt.family:11} {attempt.outcome:11} {attempt.code or '-':6} "
                 f"{sum(t.outcome == 'worked' for t in attempt.tried)}/{len(attempt.tried)} worked"
                 + (f"  FAILED: {bad[0].code} fix {bad[0].fix} {bad[0].param}={bad[0].value!r}: {bad[0].said[:120]}" if bad else ""))

        for k, (fam, base, change) in enumerate(probes):
            if ("probe", k) not in done and not over():
                keep("probe", k, C.attempt(fams[fam], base, change, platform))
        for name, chunk_seed, n in chunks(families, calls, seed):
            tag = f"{name}:{chunk_seed}"
            pending = [(i, pair) for i, pair in enumerate(C.draw(fams[name], n, chunk_seed)) if (tag, i) not in done]
            for i, (base, change) in pending:
                if over():
                    echo(f"budget of {budget:.0f} s spent: stopping (run again to go on)")
                    return _read(log)
                keep(tag, i, C.attempt(fams[name], base, change, platform))
    return _read(log)


def _read(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:  # a line cut short when a run was killed
            continue
    return rows


def tally(rows: list[dict]) -> dict:
    """Per entry and in all: calls, values and snippets offered, those that worked, the failures."""
    per: dict[str, dict] = {}
    totals = {"calls": len(rows), "ran": 0, "unexplained": 0, "explained": 0, "offered": 0, "worked": 0, "failed": 0,
              "declined": 0, "not_applicable": 0, "base_refused": 0, "nothing_offered": 0}
    for r in rows:
        totals[r["outcome"]] += 1
        if r["outcome"] != "explained":
            continue
        row = per.setdefault(r["code"], {"calls": 0, "offered": 0, "worked": 0, "failed": 0, "declined": 0,
                                         "not_applicable": 0, "base_refused": 0, "nothing_offered": 0,
                                         "families": [], "fixes": {}})
        row["calls"] += 1
        if r["family"] not in row["families"]:
            row["families"].append(r["family"])
        if not r["tried"]:
            row["nothing_offered"] += 1
            totals["nothing_offered"] += 1
        for t in r["tried"]:
            key = t["outcome"].replace("-", "_")
            row[key] += 1
            totals[key] += 1
            fix = row["fixes"].setdefault(str(t["fix"]), {"offered": 0, "worked": 0})
            if key in ("worked", "failed"):
                row["offered"] += 1
                totals["offered"] += 1
                fix["offered"] += 1
                fix["worked"] += key == "worked"
    return {"entries": dict(sorted(per.items())), "totals": totals}


def table(summary: dict) -> str:
    lines = [f"{'entry':7} {'calls':>5} {'offered':>7} {'worked':>6} {'failed':>6} {'declined':>8} {'n/a':>4} {'none':>4}  families"]
    for code, row in summary["entries"].items():
        lines.append(f"{code:7} {row['calls']:5} {row['offered']:7} {row['worked']:6} {row['failed']:6} {row['declined']:8} "
                     f"{row['not_applicable']:4} {row['nothing_offered']:4}  {', '.join(row['families'])}")
    t = summary["totals"]
    lines.append(f"calls {t['calls']}: {t['explained']} explained, {t['unexplained']} unexplained, {t['ran']} ran (no error); "
                 f"{t['offered']} values and snippet changes applied, {t['worked']} worked, {t['failed']} failed; "
                 f"{t['declined']} declined by their stated condition, {t['not_applicable']} not applicable to the call, "
                 f"{t['base_refused']} with a base the kernel refused, {t['nothing_offered']} calls offered nothing to apply")
    return "\n".join(lines)


def versions(platform: str) -> dict:
    import jax
    import jaxlib

    out = {"jax": jax.__version__, "jaxlib": jaxlib.__version__}
    if platform == "tpu":
        from importlib.metadata import PackageNotFoundError, version

        out["libtpu"] = "unknown"
        for name in ("libtpu", "libtpu-nightly"):
            try:
                out["libtpu"] = version(name)
                break
            except PackageNotFoundError:
                continue
        out["device"] = jax.devices()[0].device_kind
    else:
        out["device"] = "CPU: TPU interpret mode and lowering, CUDA lowering, XLA"
    return out


def _flags(argv: list[str]) -> list[str]:
    """The command's flags without the paths it was given (a ledger names no folder of a machine)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("--out", "--ledger"):
            skip = True
            continue
        if not arg.startswith(("--out=", "--ledger=")):
            out.append(arg)
    return out


def ledger(summary: dict, platform: str, seed: int, rows: list[dict], argv: list[str]) -> dict:
    """What catalog/ledger/<platform>.json holds: how the advice of each entry did on the real kernels."""
    argv = _flags(argv)
    return {
        "$comment": f"Written by scripts/{'verify_advice_tpu.py' if platform == 'tpu' else 'verify_advice.py'} "
                    f"({' '.join(argv)}); run it again rather than editing. Read by errkit generate.",
        "platform": platform, **versions(platform), "date": datetime.date.today().isoformat(), "seed": seed,
        "calls": len(rows),
        "entries": {code: {"calls": r["calls"], "offered": r["offered"], "worked": r["worked"],
                           "fixes": {n: f for n, f in r["fixes"].items() if f["offered"]}}
                    for code, r in summary["entries"].items()},
    }


def errors(rows: list[dict]) -> list[dict]:
    """Every error text the kernels raised: the bad call's, and each failed value's, whole."""
    out = []
    for r in rows:
        if r["outcome"] in ("explained", "unexplained"):
            out.append({"family": r["family"], "call": r["call"], "code": r["code"], "error": r["error"], "traceback": r["trace"]})
        for t in r["tried"]:
            if t["outcome"] == "failed":
                out.append({"family": r["family"], "call": r["call"], "after": f"{t['param']}={t['value']!r} ({t['code']} fix {t['fix']})",
                            "code": t["explained"], "error": t["said"], "traceback": t.get("trace", "")})
    return out


def finish(out: Path, rows: list[dict], platform: str, seed: int, argv: list[str], ledger_path: Path | None = None) -> dict:
    summary = tally(rows)
    print(table(summary))
    record = ledger(summary, platform, seed, rows, argv)
    (out / "ledger.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    (out / "errors.json").write_text(json.dumps(errors(rows), indent=1) + "\n", encoding="utf-8")
    (out / "summary.txt").write_text(table(summary) + "\n", encoding="utf-8")
    if ledger_path is not None:
        ledger_path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return summary


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=2400, help="bad calls in all, shared by the families")
    p.add_argument("--seed", type=int, default=47)
    p.add_argument("--families", default="", help="comma-separated (default: every family that runs on the CPU)")
    p.add_argument("--out", type=Path, default=ROOT / "build" / "advice")
    p.add_argument("--budget", type=float, default=None, help="seconds after which no new call starts")
    p.add_argument("--ledger", type=Path, default=None, help="also write the ledger here (catalog/ledger/cpu.json)")
    p.add_argument("--report", action="store_true", help="print the table of what OUT holds, run nothing")
    args = p.parse_args(argv)
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    from verify import calls as C

    names = [n for n in args.families.split(",") if n] or sorted(n for n, f in C.load_families().items() if "cpu" in f.platforms)
    if args.report:
        rows = _read(args.out / "attempts.jsonl")
    else:
        rows = run(names, args.calls, args.seed, args.out, budget=args.budget)
    summary = finish(args.out, rows, "cpu", args.seed, ["scripts/verify_advice.py", *argv], args.ledger)
    return 1 if summary["totals"]["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())

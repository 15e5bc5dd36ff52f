"""The TPU families' generated bad calls on a real TPU, in one process (one program at a time holds the
chip): JAX's splash attention, TPU flash attention, paged and ragged paged attention, and this
project's kernel, each bad call compiled and run on the chip, its error explained, every offered value
applied and the call run again (tests/verify/calls, scripts/verify_advice.py). First the calls issue 47
names (ragged attention with 14 query heads and 4 kv heads; splash attention with q_seq_len=1000 and
blocks of 512, forward, under jax.grad and with segment_ids), then generated ones, the families in turn,
until --calls are done or --budget seconds are spent; then direct probes of the rules the chip
taught (whole-length query blocks of 1000, 14 combined kv heads), each call's outcome as the chip
gave it.

    PYTHONPATH=$PYTHONPATH:. python3 scripts/verify_advice_tpu.py --out $OUT --calls 150 --seed 47
    python scripts/verify_advice_tpu.py --cpu-smoke --out /tmp/tpu-smoke --calls 10   # the same paths on a CPU

It needs jax, libtpu, numpy, hypothesis; not ruamel.yaml, jinja2 or re2 (explain reads the committed
errkit/_index.json with Python's re). Writes under --out: ledger.json (for catalog/ledger/tpu.json),
errors.json (every error text the chip printed: str and traceback), probes.json, attempts.jsonl,
summary.txt, env.json. Writing them is the last step of a run cut short by --budget too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT), str(ROOT / "scripts")]

FAMILIES = ("ragged", "splash", "tpu-flash", "tpu-paged", "ours")

RAGGED = {"num_q_heads": 14, "num_kv_heads": 2, "kv_dtype": "bfloat16", "head_dim": 128, "page_size": 16,
          "pages_per_seq": 4, "num_kv_pages_per_block": 2, "num_queries_per_block": 8}
SPLASH = {"num_q_heads": 1, "num_kv_heads": 1, "q_seq_len": 1024, "kv_seq_len": 1024, "head_dim": 128, "block_q": 512,
          "block_kv": 512, "block_kv_compute": None, "segment_ids": False, "q_seq_shards": 1, "grad": False,
          "block_q_dkv": None, "block_kv_dkv": None, "block_q_dq": None, "block_kv_dq": None}
SPLASH_GRAD = {**SPLASH, "grad": True, "block_q_dkv": 512, "block_kv_dkv": 512, "block_q_dq": 512, "block_kv_dq": 512}


def issue_calls() -> list[tuple[str, dict, dict]]:
    """The bad calls issue 47 names, as (family, base, change)."""
    return [
        ("ragged", RAGGED, {"num_kv_heads": 4}),  # num_q_heads=14 must be divisible by num_kv_heads=4
        ("ragged", {**RAGGED, "kv_dtype": "float32"}, {"num_kv_heads": 4}),
        ("splash", SPLASH, {"q_seq_len": 1000}),  # q_block_size=512 should divide q_seq_len=1000
        ("splash", SPLASH_GRAD, {"q_seq_len": 1000}),
        ("splash", {**SPLASH, "segment_ids": True}, {"q_seq_len": 1000}),
        ("splash", {**SPLASH, "q_seq_shards": 2}, {"q_seq_len": 1000}),
    ]


def probes() -> list[tuple[str, str, dict]]:
    """Calls whose outcome on the chip says whether a rule holds: (rule, family, call)."""
    whole = {**SPLASH, "q_seq_len": 1000, "block_q": 1000}
    return [
        ("ragged combined-kv-heads-tileable: 7 kv heads (14 combined), bfloat16", "ragged", {**RAGGED, "num_kv_heads": 7}),
        ("ragged combined-kv-heads-tileable: 7 kv heads (14 combined), float32", "ragged", {**RAGGED, "num_kv_heads": 7, "kv_dtype": "float32"}),
        ("ragged combined-kv-heads-tileable: 2 kv heads (4 combined), bfloat16", "ragged", {**RAGGED, "num_kv_heads": 2}),
        ("ragged: 1 kv head (2 combined), bfloat16", "ragged", {**RAGGED, "num_kv_heads": 1}),
        ("splash query block of the whole length 1000, forward", "splash", whole),
        ("splash query block 1000, forward, segment_ids (query-block-lanes-with-segment-ids)", "splash", {**whole, "segment_ids": True}),
        ("splash query blocks 1000 under jax.grad (dkv-query-block-lanes)", "splash",
         {**whole, "grad": True, "block_q_dkv": 1000, "block_kv_dkv": 512, "block_q_dq": 1000, "block_kv_dq": 512}),
        ("splash key block of the whole length 1000 (key-block-lanes)", "splash", {**whole, "kv_seq_len": 1000, "block_kv": 1000}),
        ("splash q_seq_len padded to 1024, blocks 512, under jax.grad with segment_ids", "splash",
         {**SPLASH_GRAD, "segment_ids": True}),
    ]


def run_probes(platform: str) -> list[dict]:
    from verify import calls as C

    fams = C.load_families()
    out = []
    for rule, fam, call in probes():
        t = time.monotonic()
        err = C.raised(fams[fam], call, platform)
        out.append({"rule": rule, "family": fam, "call": C._plain(call), "ran": err is None, "seconds": round(time.monotonic() - t, 2),
                    "error": f"{type(err).__name__}: {err}"[:4000] if err else None,
                    "traceback": "".join(traceback.format_exception(err))[-20000:] if err else None})
        print(f"probe {'ran   ' if err is None else 'FAILED'} {rule}" + (f": {str(err)[:160]}" if err else ""))
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ROOT / "build" / "advice-tpu")))
    p.add_argument("--calls", type=int, default=150, help="generated bad calls, shared by the families")
    p.add_argument("--seed", type=int, default=47)
    p.add_argument("--budget", type=float, default=390.0, help="seconds after which no new call starts")
    p.add_argument("--stall", type=float, default=120.0, help="seconds without a finished call after which it stops")
    p.add_argument("--wall", type=float, default=470.0, help="seconds after which it stops, whatever it is doing")
    p.add_argument("--cpu-smoke", action="store_true",
                   help="run the TPU code paths on a CPU, in TPU interpret mode (ragged: traced only), to try the script")
    args = p.parse_args(argv)
    started = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    import contextlib

    import jax

    platform = "tpu"
    scope = contextlib.nullcontext()
    if args.cpu_smoke:
        from jax.experimental.pallas import tpu as pltpu

        os.environ["ERRKIT_TPU_SMOKE"] = "1"
        scope = pltpu.force_tpu_interpret_mode()
    elif jax.default_backend() != "tpu":
        print(f"no TPU here (jax.default_backend() is {jax.default_backend()!r}); --cpu-smoke tries the script on a CPU")
        return 2
    import verify_advice as V

    env = {**V.versions("cpu" if args.cpu_smoke else "tpu"), "devices": [str(d) for d in jax.devices()],
           "smoke": args.cpu_smoke, "argv": V._flags(argv)}
    (args.out / "env.json").write_text(json.dumps(env, indent=1) + "\n", encoding="utf-8")
    print(f"jax {env['jax']}, {env.get('libtpu', 'no libtpu')}, {env['device']}")
    rows, probed = [], []

    def write(rows: list[dict], probed: list[dict]) -> dict:
        (args.out / "probes.json").write_text(json.dumps(probed, indent=1) + "\n", encoding="utf-8")
        rows = rows or V._read(args.out / "attempts.jsonl")
        summary = V.tally(rows)
        record = V.ledger(summary, "cpu-smoke" if args.cpu_smoke else "tpu", args.seed, rows,
                          ["scripts/verify_advice_tpu.py", *argv])
        (args.out / "ledger.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        (args.out / "errors.json").write_text(json.dumps(V.errors(rows), indent=1) + "\n", encoding="utf-8")
        (args.out / "summary.txt").write_text(V.table(summary) + "\n", encoding="utf-8")
        return summary

    # A call that hangs on the chip cannot be interrupted from Python: a watchdog writes what is done
    # and ends the process when nothing finishes for --stall seconds, or past the wall limit.
    import threading

    progress = {"at": time.monotonic()}
    log = args.out / "attempts.jsonl"

    def watch() -> None:
        seen = -1
        while True:
            time.sleep(5)
            size = log.stat().st_size if log.exists() else 0
            if size != seen:
                seen, progress["at"] = size, time.monotonic()
            stalled = time.monotonic() - progress["at"] > args.stall
            if stalled or time.monotonic() - started > args.wall:
                print(f"watchdog: {'no call finished for %d s' % args.stall if stalled else 'wall limit reached'}; "
                      "writing what is done and stopping", flush=True)
                write([], probed)
                os._exit(3)

    threading.Thread(target=watch, daemon=True).start()
    try:
        with scope:
            rows = V.run(list(FAMILIES), args.calls, args.seed, args.out, platform=platform,
                         budget=max(30.0, args.budget - (time.monotonic() - started)), probes=issue_calls())
            probed = run_probes(platform)
    finally:
        summary = write(rows, probed)
        print(V.table(summary))
        print(f"{time.monotonic() - started:.0f} s")
    return 1 if summary["totals"]["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""The kernel accepts exactly what runs: a seeded generator of ranker_attention calls (batch, query
and key lengths from 1 to 32k, odd ones included; head counts of every group size; head_dim from
32 to 256, odd multiples of 8 included, and a few outside; every dtype; causal, bound, both caps;
explicit tiles; the layout, "bshd" or "bhsd", and now and then one it does not know), and a check
of each: a call the validators refuse must raise a catalogued error
(an exception with a ``code``); a call they accept must compile, run and match the xla path in
float32 (output and the three gradients).

    python benchmarks/kernel_property.py --tpu --out DIR [--count 160] [--seed 0]
    python benchmarks/kernel_property.py --interpret [--count 400] [--seed 0]

``--tpu`` runs each accepted call as a user would (``implementation="pallas"``: the Mosaic kernels)
on the TPU, compiled on a pool of threads first (benchmarks/tpu_batch.py), and writes
DIR/property.jsonl; ``--interpret`` runs the TPU kernels in Pallas' interpret mode on the CPU
(smaller shapes) and lowers each for TPU (Mosaic), as tests/kernel/test_accepts_what_runs.py does
for a few with hypothesis. A line per call; the summary counts accepted, refused and violations
(a crash of an accepted call, an error over the tolerance, a refusal without a code).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.tpu_batch import OUT_OF_TIME  # noqa: E402
from errkit_attention import BlockSizes  # noqa: E402

# max |ours - xla(float32)| / max(1, max |xla|), per output: Mosaic's float32 dots at default
# precision are not float32's (benchmarks/kernel_tpu.py CHECK_TOLERANCE), bfloat16 rounds q, k, v
TOLERANCE = 2e-2
INTERPRET_TOLERANCE = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 3e-2}
ROUND_LENGTHS = (128, 256, 512, 1000, 1024, 2048, 4096, 8192, 16384, 32768)
HEAD_DIMS = tuple(range(32, 257, 8))
ODD_HEAD_DIMS = (8, 16, 24, 33, 100, 264, 320, 512)  # outside 32..256 or not a multiple of 8


@dataclasses.dataclass(frozen=True)
class Case:
    dtype: str
    batch: int
    q_len: int
    kv_len: int
    num_q_heads: int
    num_kv_heads: int
    head_dim: int
    causal: bool
    bound: tuple | None  # the bound's values, one per example
    cap: float | None
    cap_method: str
    config: BlockSizes | None
    seed: int
    # q, k, v's axes (ranker_attention's `layout`): drawn from the case's own seed (_layout), so
    # that a seed's other draws are what they were before the layout was drawn
    layout: str = "bshd"

    def __str__(self) -> str:
        parts = [self.dtype, f"B={self.batch}", f"Sq={self.q_len}", f"Skv={self.kv_len}",
                 f"Hq={self.num_q_heads}", f"Hk={self.num_kv_heads}", f"D={self.head_dim}"]
        if self.causal:
            parts.append("causal")
        if self.bound is not None:
            parts.append(f"bound={list(self.bound)}")
        if self.cap is not None:
            parts.append(f"cap={self.cap} {self.cap_method}")
        if self.layout != "bshd":
            parts.append(f"layout={self.layout!r}")
        if self.config is not None:
            c = self.config
            parts.append(f"tiles={c.block_q}x{c.block_kv}"
                         + (f"/{c.block_q_dkv}x{c.block_kv_dkv}/{c.block_q_dq}x{c.block_kv_dq}"
                            if c.block_q_dkv is not None else ""))
        return " ".join(parts)

    def record(self) -> dict:
        out = dataclasses.asdict(self)
        out["config"] = None if self.config is None else dataclasses.asdict(self.config)
        return out


def _length(rnd: random.Random, most: int) -> int:
    if rnd.random() < 0.4:
        choices = [n for n in ROUND_LENGTHS if n <= most]
        return rnd.choice(choices)
    return max(1, min(most, int(2 ** rnd.uniform(0, math.log2(most)))))


def _block(rnd: random.Random) -> int:
    return 2 ** rnd.randint(4, 10)


def _layout(seed: int) -> str:
    """The case's layout, from its seed alone: half "bhsd", now and then an unknown one (RA207)."""
    rnd = random.Random(seed)
    return rnd.choice(("bsdh", "BHSD")) if rnd.random() < 0.02 else rnd.choice(("bshd", "bhsd"))


def draw(rnd: random.Random, *, most: int = 32768, budget: int = 2 ** 27) -> Case:
    """One call. most: the longest sequence; budget: the most batch * Hq * Sq * Skv (the float32
    reference's logits)."""
    dtype = rnd.choices(["bfloat16", "float32", "float16", "float64", "int8"],
                        [45, 25, 25, 3, 2])[0]
    head_dim = rnd.choice(ODD_HEAD_DIMS) if rnd.random() < 0.06 else (
        rnd.choice((64, 128, 256)) if rnd.random() < 0.3 else rnd.choice(HEAD_DIMS))
    kv_heads = rnd.choice((1, 1, 2, 3, 4, 8))
    group = rnd.choice((1, 1, 2, 3, 4, 6, 8))
    q_heads = kv_heads * group
    while q_heads > 32 and group > 1:
        group //= 2
        q_heads = kv_heads * group
    if kv_heads > 1 and rnd.random() < 0.03:
        q_heads += 1  # not a multiple of the kv heads: refused (RA105)
    mode = rnd.choices(["plain", "causal", "bound", "causal+bound"], [35, 35, 20, 10])[0]
    causal, has_bound = "causal" in mode, "bound" in mode
    q_len = _length(rnd, most)
    kv_len = q_len if (causal or has_bound or rnd.random() < 0.6) else _length(rnd, most)
    if causal and rnd.random() < 0.02:
        kv_len = q_len + 1  # refused (RA304)
    batch = rnd.choice((1, 1, 2, 3, 4))
    while batch * q_heads * q_len * kv_len > budget:  # within the reference's memory
        if batch > 1:
            batch -= 1
        elif q_heads > kv_heads:
            q_heads = kv_heads * max(1, (q_heads // kv_heads) // 2)
        elif kv_heads > 1:
            kv_heads = q_heads = max(1, kv_heads // 2)
        elif kv_len >= q_len and kv_len > 1:
            kv_len = q_len if (causal or has_bound) else max(1, kv_len // 2)
            if causal or has_bound:
                q_len = kv_len = max(1, q_len // 2)
        else:
            q_len = max(1, q_len // 2)
    bound = None
    if has_bound:
        bound = tuple(rnd.choice((0, kv_len, rnd.randint(0, kv_len), rnd.randint(0, kv_len)))
                      for _ in range(batch))
        if rnd.random() < 0.02:
            bound = (-1,) + bound[1:]  # refused (RA305)
    cap, cap_method = None, "tanh"
    if rnd.random() < 0.3:
        cap = rnd.choice((5.0, 20.0, 30.0, 50.0))
        cap_method = rnd.choices(["tanh", "soft_sign", "none"], [45, 45, 10])[0]
        if rnd.random() < 0.03:
            cap = rnd.choice((0.0, -1.0))  # refused (RA203)
    config = None
    if rnd.random() < 0.33:
        backward = rnd.random() < 0.5
        sizes = [_block(rnd) for _ in range(6 if backward else 2)]
        if rnd.random() < 0.1:
            sizes[rnd.randrange(len(sizes))] = rnd.choice((48, 2048, 8))  # refused (RA211/212)
        if backward and rnd.random() < 0.05:
            sizes[-1] = None  # refused (RA213)
        config = BlockSizes(*sizes)
    seed = rnd.randrange(2 ** 31)
    return Case(dtype, batch, q_len, kv_len, q_heads, kv_heads, head_dim, causal, bound, cap,
                cap_method, config, seed, _layout(seed))


def cases(count: int, seed: int, **limits) -> list[Case]:
    rnd = random.Random(seed)
    return [draw(rnd, **limits) for _ in range(count)]


def inputs(case: Case):
    """q, k, v, do (standard normal, in the case's dtype and layout: [b, s, h, d], or [b, h, s, d]
    for "bhsd") and the bound (or None)."""
    rng = np.random.default_rng(case.seed)
    shapes = ((case.batch, case.q_len, case.num_q_heads, case.head_dim),
              (case.batch, case.kv_len, case.num_kv_heads, case.head_dim))
    if case.layout == "bhsd":
        shapes = tuple((b, h, s, d) for b, s, h, d in shapes)
    if case.dtype == "float64":
        with jax.enable_x64(True):
            arrays = [jnp.asarray(rng.standard_normal(shapes[i]), jnp.float64)
                      for i in (0, 1, 1, 0)]
    elif case.dtype == "int8":
        arrays = [jnp.asarray(rng.integers(-5, 5, shapes[i]), jnp.int8) for i in (0, 1, 1, 0)]
    else:
        arrays = [jnp.asarray(rng.standard_normal(shapes[i]), case.dtype) for i in (0, 1, 1, 0)]
    bound = None if case.bound is None else jnp.asarray(case.bound, jnp.int32)
    return (*arrays, bound)


def options(case: Case) -> dict:
    return dict(causal=case.causal, cap=case.cap, cap_method=case.cap_method, layout=case.layout)


def refusal(case: Case, q, k, v, bound) -> dict | None:
    """None when the validators accept the call (implementation="pallas"), else what they raised:
    {"refused": code} for a catalogued error, {"violation": ...} for anything else."""
    from errkit_attention import attention

    try:
        attention.validate(q, k, v, bound=bound, sm_scale=None, config=case.config,
                           implementation="pallas", **options(case))
    except Exception as exc:  # noqa: BLE001 - which exception is the finding
        code = getattr(exc, "code", None)
        if code:
            return {"refused": code, "message": str(exc)[:200]}
        return {"violation": f"refused without a code: {type(exc).__name__}: {str(exc)[:200]}"}
    return None


def _errors(got, want) -> dict:
    out = {}
    for name, g, w in zip(("out", "dq", "dk", "dv"), got, want):
        g, w = np.asarray(g, np.float32), np.asarray(w, np.float32)
        if not np.all(np.isfinite(g)):
            out[name] = float("inf")
            continue
        out[name] = float(np.max(np.abs(g - w))) / max(1.0, float(np.max(np.abs(w))))
    return out


def _both(f):
    """q, k, v, do, bound -> (out, dq, dk, dv) of f."""
    def run(q, k, v, do, bound):
        out, pullback = jax.vjp(lambda q, k, v: f(q, k, v, bound), q, k, v)
        return (out, *pullback(do.astype(out.dtype)))
    return run


def reference(case: Case):
    """The xla path in float32 at precision 'highest', as a function of q, k, v, do, bound (in the
    case's layout, which the xla path follows)."""
    from errkit_attention import ranker_attention

    def f(q, k, v, bound):
        return ranker_attention(q, k, v, bound=bound, implementation="xla", **options(case))

    run = _both(f)

    def call(q, k, v, do, bound):
        with jax.default_matmul_precision("highest"):
            return run(*(x.astype(jnp.float32) for x in (q, k, v, do)), bound)
    return call


# --------------------------------------------------------------------------
# On a TPU.
# --------------------------------------------------------------------------


def tpu_jobs(items: list[Case], sink, only=frozenset()):
    """Refusals are recorded at once; each accepted call becomes a Job (ours and the reference
    in one jitted function, compared on the device: only 8 numbers come back)."""
    from benchmarks.tpu_batch import Job
    from errkit_attention import ranker_attention

    jobs = []
    for n, case in enumerate(items):
        if only and n not in only:
            continue
        q, k, v, do, bound = inputs(case)
        refused = refusal(case, q, k, v, bound)
        if refused is not None:
            sink({"part": "property", "n": n, "case": str(case), **refused})
            continue

        def ours(q, k, v, bound, case=case):
            return ranker_attention(q, k, v, bound=bound, config=case.config,
                                    implementation="pallas", **options(case))

        def compared(q, k, v, do, bound, case=case, ours=ours):
            got = _both(ours)(q, k, v, do, bound)
            want = reference(case)(q, k, v, do, bound)
            out = []
            for g, w in zip(got, want):
                g = g.astype(jnp.float32)
                finite = jnp.all(jnp.isfinite(g))
                err = jnp.max(jnp.abs(g - w)) / jnp.maximum(1.0, jnp.max(jnp.abs(w)))
                out.append(jnp.where(finite, err, jnp.inf))
            return jnp.stack(out)

        def check(errs, case=case):
            errs = dict(zip(("out", "dq", "dk", "dv"), map(float, np.asarray(errs))))
            ok = all(e <= TOLERANCE for e in errs.values())
            return {"errors": errs, "ok": ok,
                    **({} if ok else {"violation": "error over the tolerance"})}

        jobs.append(Job(f"property {n}", compared, (q, k, v, do, bound),
                        {"part": "property", "n": n, "case": str(case), "accepted": True},
                        check=check, time_it=False))
    return jobs


# --------------------------------------------------------------------------
# On the CPU: the TPU kernels in interpret mode, and their Mosaic lowering.
# --------------------------------------------------------------------------


def interpret_check(case: Case) -> dict:
    """One call on the CPU: refused (with its code), or the TPU kernels run in interpret mode
    against the reference, and lowered for TPU (forward and gradients)."""
    from errkit_attention import pallas_attention as pa, tuning

    q, k, v, do, bound = inputs(case)
    refused = refusal(case, q, k, v, bound)
    if refused is not None:
        return refused
    scale = case.head_dim ** -0.5

    def kernel(interpret):
        def f(q, k, v, bound):
            b = None if bound is None else jnp.clip(bound, 0, case.kv_len)
            return pa.pallas_attention(q, k, v, bound=b, sm_scale=scale, config=case.config,
                                       interpret=interpret, arch=tuning.TPU, **options(case))
        return f

    result: dict = {}
    try:
        got = jax.jit(_both(kernel("tpu")))(q, k, v, do, bound)
        want = jax.jit(reference(case))(q, k, v, do, bound)
        errs = _errors(got, want)
        result["errors"] = errs
        if max(errs.values()) > INTERPRET_TOLERANCE[case.dtype]:
            result["violation"] = "error over the tolerance"
        text = jax.jit(_both(kernel(None))).trace(q, k, v, do, bound).lower(
            lowering_platforms=("tpu",)).as_text()
        result["mosaic_calls"] = text.count("tpu_custom_call")
        if result["mosaic_calls"] != 3:
            result["violation"] = f"{result['mosaic_calls']} Mosaic calls lowered, not 3"
    except Exception as exc:  # noqa: BLE001 - an accepted call that fails is the finding
        result["violation"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    return result


CPU_LIMITS = dict(most=1100, budget=2 ** 19)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--tpu", action="store_true")
    where.add_argument("--interpret", action="store_true")
    parser.add_argument("--out", default="")
    parser.add_argument("--count", type=int, default=160)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=float, default=420.0, help="seconds")
    parser.add_argument("--workers", type=int, default=12)
    parser.add_argument("--only", default="",
                        help="comma-separated indices of the seeded cases to run (a re-run)")
    args = parser.parse_args(argv)
    only = {int(n) for n in args.only.split(",") if n.strip()}
    from benchmarks.tpu_batch import Sink, run_jobs

    sink = Sink(os.path.join(args.out, "property.jsonl") if args.out else None)
    sink({"part": "header", "jax": jax.__version__, "backend": jax.default_backend(),
          "device": jax.devices()[0].device_kind, "seed": args.seed, "count": args.count,
          "date": time.strftime("%Y-%m-%d %H:%M:%S")})
    if args.tpu:
        if jax.default_backend() != "tpu":
            print("--tpu needs a TPU", file=sys.stderr)
            return 2
        records = []

        def keep(record):
            records.append(record)
            sink(record)

        jobs = tpu_jobs(cases(args.count, args.seed), keep, only=only)
        run_jobs(jobs, keep, workers=args.workers, deadline=time.monotonic() + args.budget,
                 stream=True)
    else:
        records = []
        for n, case in enumerate(cases(args.count, args.seed, **CPU_LIMITS)):
            if only and n not in only:
                continue
            record = {"part": "property", "n": n, "case": str(case), **interpret_check(case)}
            records.append(record)
            sink(record)
    return summary(records, sink)


def summary(records: list[dict], sink) -> int:
    calls = [r for r in records if r.get("part") == "property"]
    unreached = [r for r in calls if OUT_OF_TIME in str(r.get("error", ""))]
    violations = [r for r in calls
                  if r.get("violation") or (r.get("error") and r not in unreached)]
    refused = [r for r in calls if r.get("refused")]
    codes: dict = {}
    for r in refused:
        codes[r["refused"]] = codes.get(r["refused"], 0) + 1
    ran = [r for r in calls if r.get("errors")]
    worst = max((max(r["errors"].values()) for r in ran), default=None)
    sink({"part": "summary", "calls": len(calls), "accepted_and_ran": len(ran),
          "refused": len(refused), "refused_codes": codes, "violations": len(violations),
          "not_reached": len(unreached), "worst_error": worst})
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())

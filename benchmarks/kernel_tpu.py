"""TPU mode of benchmarks/bench_kernel.py: TFLOP/s of ranker_attention's Pallas (Mosaic) kernel,
forward and forward+backward, side by side in the same process with JAX's own TPU kernels
(``pallas.ops.tpu.splash_attention``, ``pallas.ops.tpu.flash_attention``) and
``jax.nn.dot_product_attention(implementation="xla")``; the kernel's error against the float32
xla path; and the grid-step count of every pallas_call.

FLOPs are counted as kernel_gpu.py counts them (FlashAttention's convention): forward
4 * B * Hq * S * S * D, halved when causal; forward + backward 3.5 times that.

Like with like: ours, splash and flash_attention all take [B, H, S, D] (ours with
layout="bhsd", which hands the arrays to its Mosaic kernels as they are; splash per example,
vmapped over the batch; q pre-scaled, since splash applies no scale), so q, k, v are transposed
for each of them before the timed call and no figure holds a transpose of its inputs or output.
(Until issue 49 ours took [B, S, H, D] and paid for its transposes inside its figure: 0.6 ms of a
2.7 ms forward at D=256.) flash_attention has no grouped heads: its k and v are repeated to Hq
heads before the timed call. Splash runs with 512 blocks (clamped to S; MaxText's default for
TPU v5e) and with its own defaults (128). The float32 reference (error) runs on a slice, batch 0
and the first query heads with their kv heads, at matmul precision "highest": at the full shape
its logits alone would take 8.6 GB.

``tpu_rows`` compiles every function of the grid first, on a pool of threads, then times each
alone (benchmarks/tpu_batch.py: a compile running beside a timing inflated it by milliseconds),
with each shape's inputs made when its first function runs (the grid's together would not fit
the chip's memory); ``summary`` gives the figures as data (the JSON of ``bench_kernel.py --tpu
--out``) with the fraction of the measured matmul rate (``matmul_rate``) and the geometric mean
of ours / splash.

``sweep_rows`` times each of our three pallas_calls alone (forward with the log-sum-exp, dQ,
dK/dV) over candidate (block_q, block_kv) tiles: how errkit_attention/tuning.py's TPU rows are chosen.

``smoke=True`` runs one small shape on whatever backend jax has (on the CPU: interpret mode, and
splash in its interpreter; flash_attention has none and is skipped), so that the code paths are
exercised without a TPU; its figures mean nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np

from benchmarks._timing import Result, Target
from benchmarks.kernel_gpu import BF16_TOLERANCE, Shape, median_seconds
from errkit_attention import BlockSizes, ranker_attention

# The grid: head_dim 64 / 128 / 256, causal and not, MHA / GQA / MQA, 1k to 32k.
TPU_SHAPES = [
    Shape(4, 4096, 32, 8, 128, False),
    Shape(4, 4096, 32, 8, 128, True),
    Shape(4, 4096, 16, 16, 64, True),
    Shape(4, 4096, 16, 16, 64, False),
    Shape(16, 1024, 16, 16, 64, True),
    Shape(8, 1024, 32, 8, 128, False),
    Shape(4, 2048, 16, 16, 256, True),
    Shape(4, 2048, 16, 16, 256, False),
    Shape(2, 4096, 16, 2, 256, True),
    Shape(2, 8192, 32, 1, 128, True),
    Shape(1, 16384, 32, 8, 128, True),
    Shape(1, 32768, 16, 4, 128, True),
    Shape(1, 32768, 8, 1, 64, False),
]
# The float32 reference of the error slice is computed where its logits stay within this many
# elements (batch 0, the slice's query heads, S x S); longer shapes have no error figure.
ERROR_ELEMENTS = 2 ** 29
SMOKE_SHAPES = [Shape(1, 256, 4, 2, 64, True)]
SPLASH_BLOCK = 512


# --------------------------------------------------------------------------
# Timing, grid steps.
# --------------------------------------------------------------------------


def _subjaxprs(value):
    if isinstance(value, jax.extend.core.ClosedJaxpr):
        yield value.jaxpr
    elif isinstance(value, jax.extend.core.Jaxpr):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _subjaxprs(item)


def pallas_grids(fn, *args, keep=lambda name: True) -> list[tuple[str, tuple[int, ...]]]:
    """(name, grid) of every pallas_call in fn's jaxpr whose name `keep` accepts (every branch
    of a platform choice is in the jaxpr: ours keeps the names ending in "_tpu")."""
    found = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "pallas_call":
                name = eqn.params["name"]
                name = str(getattr(name, "name", name))
                if keep(name):
                    found.append((name, tuple(int(n) for n in eqn.params["grid_mapping"].grid)))
            for value in eqn.params.values():
                for sub in _subjaxprs(value):
                    walk(sub)

    walk(jax.make_jaxpr(fn)(*args).jaxpr)
    return found


def grid_steps(grids) -> int:
    return sum(math.prod(grid) for _, grid in grids)


def _forward_and_backward(attention):
    """q, k, v, do -> (out, dq, dk, dv) of sum(out * do)."""
    def run(q, k, v, do):
        out, pullback = jax.vjp(attention, q, k, v)
        return (out, *pullback(do.astype(out.dtype)))
    return run


def _tflops(flops: float, seconds: float) -> float:
    return flops / seconds / 1e12


# --------------------------------------------------------------------------
# The implementations: each a forward fn on its own layout, and how to build its inputs.
# --------------------------------------------------------------------------


def _bhsd(x):
    return jnp.transpose(x, (0, 2, 1, 3))


def _splash(shape: Shape, block: int | None, interpret: bool):
    from jax.experimental.pallas.ops.tpu.splash_attention import (
        splash_attention_kernel as sk, splash_attention_mask as sm)

    s = shape.seq_len
    one = sm.CausalMask((s, s)) if shape.causal else sm.FullMask((s, s))
    mask = sm.MultiHeadMask([one] * shape.num_q_heads)
    sizes = None
    if block is not None:
        b = min(block, s)
        sizes = sk.BlockSizes(block_q=b, block_kv=b, block_kv_compute=b, block_q_dkv=b,
                              block_kv_dkv=b, block_kv_dkv_compute=b, block_q_dq=b, block_kv_dq=b)
    kernel = sk.make_splash_mha(mask, block_sizes=sizes, head_shards=1, q_seq_shards=1,
                                interpret=interpret)
    return jax.vmap(kernel)


def implementations(shape: Shape, smoke: bool, configs: dict) -> dict:
    """name -> (forward fn, layout of its inputs: "bshd" (xla) / "bhsd" (ours, layout="bhsd") /
    "bhsd-mha" (k, v repeated to Hq heads) / "bhsd-scaled" (q scaled by 1/sqrt(D))), or a string:
    why it is absent."""
    causal, scale = shape.causal, shape.head_dim ** -0.5
    on_tpu = jax.default_backend() == "tpu"
    impls = {}
    for label, config in configs.items():
        impls[f"ours {label}"] = (functools.partial(
            lambda q, k, v, config: ranker_attention(q, k, v, causal=causal, config=config,
                                                     implementation="pallas", layout="bhsd"),
            config=config), "bhsd")
    for block in (SPLASH_BLOCK, None):
        name = f"splash {block or 128}"
        try:
            impls[name] = (_splash(shape, block, interpret=not on_tpu), "bhsd-scaled")
        except Exception as exc:  # noqa: BLE001 - a baseline that cannot be built is reported
            impls[name] = f"{type(exc).__name__}: {str(exc)[:200]}"
    if on_tpu:
        from jax.experimental.pallas.ops.tpu import flash_attention as fa

        b = min(512, shape.seq_len)
        sizes = fa.BlockSizes(block_q=b, block_k_major=b, block_k=b, block_b=1,
                              block_q_major_dkv=b, block_k_major_dkv=b, block_k_dkv=b,
                              block_q_dkv=b, block_k_major_dq=b, block_k_dq=b, block_q_dq=b)
        impls["flash_attention 512"] = (lambda q, k, v: fa.flash_attention(
            q, k, v, causal=causal, sm_scale=scale, block_sizes=sizes), "bhsd-mha")
    else:
        impls["flash_attention 512"] = "pallas.ops.tpu.flash_attention has no interpret mode"
    impls["xla"] = (lambda q, k, v: jax.nn.dot_product_attention(
        q, k, v, is_causal=causal, implementation="xla"), "bshd")
    return impls


def _inputs(layout: str, shape: Shape, q, k, v, do):
    if layout == "bshd":
        return q, k, v, do
    group = shape.num_q_heads // shape.num_kv_heads
    if layout == "bhsd-mha":
        k, v = jnp.repeat(k, group, axis=2), jnp.repeat(v, group, axis=2)
    if layout == "bhsd-scaled":
        q = (q.astype(jnp.float32) * shape.head_dim ** -0.5).astype(q.dtype)
    return tuple(_bhsd(x) for x in (q, k, v, do))


def _as_bshd(layout, shape: Shape, outs):
    """outs (out, dq, dk, dv) in [B, S, H, D], dq w.r.t. the unscaled q."""
    if layout == "bshd":
        return outs
    out, dq, dk, dv = (_bhsd(x) for x in outs)
    if layout == "bhsd-scaled":
        dq = (dq.astype(jnp.float32) * shape.head_dim ** -0.5).astype(dq.dtype)
    if layout == "bhsd-mha":  # the gradients of k, v repeated to Hq heads, summed per kv head
        b, s, _, d = dk.shape
        group = shape.num_q_heads // shape.num_kv_heads
        dk, dv = (x.astype(jnp.float32).reshape(b, s, shape.num_kv_heads, group, d).sum(3)
                  for x in (dk, dv))
    return out, dq, dk, dv


# --------------------------------------------------------------------------
# The error slice: batch 0, the first kv heads and their query heads.
# --------------------------------------------------------------------------


def _slice_heads(shape: Shape) -> tuple[int, int]:
    n_kv = max(1, shape.num_kv_heads // 4)
    return n_kv * (shape.num_q_heads // shape.num_kv_heads), n_kv


def _errors(shape: Shape, got, want) -> dict:
    hq, hk = _slice_heads(shape)
    out = {}
    for name, g, w, heads in zip(("out", "dq", "dk", "dv"), got, want, (hq, hq, hk, hk)):
        g = np.asarray(g[:1, :, :heads], np.float32)
        w = np.asarray(w, np.float32)
        err = float(np.max(np.abs(g - w)))
        out[name] = (err, err / max(1.0, float(np.max(np.abs(w)))))
    return out


# --------------------------------------------------------------------------
# The table.
# --------------------------------------------------------------------------


@dataclasses.dataclass
class Measured:
    shape: Shape
    name: str
    fwd_s: float | None = None
    both_s: float | None = None
    fwd_steps: int | None = None
    both_steps: int | None = None
    grids: list = dataclasses.field(default_factory=list)
    errors: dict | None = None
    note: str = ""

    def line(self, splash: "Measured | None") -> str:
        flops = self.shape.forward_flops()

        def fig(seconds, mult, theirs):
            if seconds is None:
                return "-", "-", "-"
            ratio = "-" if theirs is None else f"{theirs / seconds:.2f}"
            return f"{seconds * 1e3:.2f}", f"{_tflops(mult * flops, seconds):.1f}", ratio

        f = fig(self.fwd_s, 1.0, splash and splash.fwd_s)
        b = fig(self.both_s, 3.5, splash and splash.both_s)
        err = "-" if not self.errors else " ".join(
            f"{k} {a:.1e}" for k, (a, _) in self.errors.items())
        return (f"| {self.shape} | {self.name} | {f[0]} | {f[1]} | {f[2]} | {b[0]} | {b[1]} | "
                f"{b[2]} | {self.fwd_steps or '-'} / {self.both_steps or '-'} | {err} |"
                + (f" {self.note}" if self.note else ""))


TABLE_HEADER = ("| shape | implementation | fwd ms | fwd TFLOP/s | fwd vs splash 512 | fwd+bwd ms | "
                "fwd+bwd TFLOP/s | fwd+bwd vs splash 512 | grid steps fwd / fwd+bwd | "
                "max abs error vs float32 xla (slice) |\n|---|---|---|---|---|---|---|---|---|---|")


def _slice_elements(shape: Shape) -> int:
    return _slice_heads(shape)[0] * shape.seq_len ** 2


def tpu_rows(*, smoke: bool = False, repeats: int = 10, dtype=jnp.bfloat16, configs=None,
             shapes=None, baselines: bool = True, log=print, sink=None, deadline=None,
             workers: int = 12) -> tuple[list[Result], list[str], list[Measured]]:
    """(benchmark rows, notes, every measurement). configs: label -> BlockSizes or None (the
    kernel's defaults) for ours; by default {"default": None}. baselines=False: ours alone.
    Every function is compiled first (benchmarks/tpu_batch.py), then each is timed; sink: where
    each measurement's record goes as it is made (tpu_batch.Sink), None: nowhere."""
    from benchmarks.tpu_batch import Job, Sink, run_jobs

    configs = configs or {"default": None}
    sink = sink or Sink(None, log=lambda *a, **k: None)
    notes, measured, jobs = [], [], []
    by_shape: dict = {}
    held: dict = {}  # the arrays of the shape being run: (shape, layout) -> args

    def arrays(shape, layout):
        """The shape's inputs in a layout, made when its first job runs (the previous shape's
        are dropped: the grid's inputs together would not fit the chip's memory)."""
        if (shape, layout) not in held:
            if not any(key[0] == shape for key in held):
                held.clear()
            if (shape, "bshd") not in held:
                rng = np.random.default_rng(abs(hash(str(shape))) % 2 ** 32)
                held[(shape, "bshd")] = shape.inputs(rng, dtype)
            held[(shape, layout)] = jax.block_until_ready(
                _inputs(layout, shape, *held[(shape, "bshd")]))
        return held[(shape, layout)]

    def f32_slice(shape):
        hq, hk = _slice_heads(shape)
        q, k, v, do = arrays(shape, "bshd")
        return tuple(x.astype(jnp.float32) for x in (q[:1, :, :hq], k[:1, :, :hk],
                                                     v[:1, :, :hk], do[:1, :, :hq]))

    def abstract(xs):
        return tuple(jax.ShapeDtypeStruct(x.shape, x.dtype) for x in xs)

    for shape in shapes or (SMOKE_SHAPES if smoke else TPU_SHAPES):
        b, s, hq_, hk_, d = (shape.batch, shape.seq_len, shape.num_q_heads, shape.num_kv_heads,
                             shape.head_dim)
        dt = jnp.dtype(dtype)
        bshd = (jax.ShapeDtypeStruct((b, s, hq_, d), dt), jax.ShapeDtypeStruct((b, s, hk_, d), dt),
                jax.ShapeDtypeStruct((b, s, hk_, d), dt), jax.ShapeDtypeStruct((b, s, hq_, d), dt))
        with_errors = _slice_elements(shape) <= ERROR_ELEMENTS
        want: dict = {}
        if with_errors:
            hq, hk = _slice_heads(shape)
            f32 = (jax.ShapeDtypeStruct((1, s, hq, d), jnp.float32),
                   jax.ShapeDtypeStruct((1, s, hk, d), jnp.float32),
                   jax.ShapeDtypeStruct((1, s, hk, d), jnp.float32),
                   jax.ShapeDtypeStruct((1, s, hq, d), jnp.float32))

            def reference(q, k, v, do, causal=shape.causal):
                def attention(q, k, v):
                    return ranker_attention(q, k, v, causal=causal, implementation="xla")
                with jax.default_matmul_precision("highest"):
                    return _forward_and_backward(attention)(q, k, v, do)

            def keep(outs, want=want):
                want["outs"] = outs
                return {}

            jobs.append(Job(f"{shape} reference", reference, f32,
                            {"shape": str(shape), "impl": "reference"}, check=keep,
                            time_it=False, materialize=functools.partial(f32_slice, shape)))
        else:
            notes.append(f"{shape}: no error figure (the float32 reference's logits would hold "
                         f"{_slice_elements(shape):,} elements)")
        by_name = by_shape.setdefault(shape, {})
        for name, impl in implementations(shape, smoke, configs).items():
            if not baselines and not name.startswith("ours"):
                continue
            if isinstance(impl, str):
                notes.append(f"{shape}: {name} skipped: {impl}")
                continue
            fn, layout = impl
            m = Measured(shape, name)
            by_name[name] = m
            measured.append(m)
            args = abstract(jax.eval_shape(functools.partial(_inputs, layout, shape), *bshd))
            materialize = functools.partial(arrays, shape, layout)
            if name.startswith("ours") or name == f"splash {SPLASH_BLOCK}":
                keep_name = ((lambda n: n.endswith("_tpu")) if name.startswith("ours")
                             else (lambda n: True))
                try:
                    m.fwd_steps = grid_steps(pallas_grids(fn, *args[:3], keep=keep_name)) or None
                    m.grids = pallas_grids(_forward_and_backward(fn), *args, keep=keep_name)
                    m.both_steps = grid_steps(m.grids) or None
                except Exception as exc:  # noqa: BLE001
                    m.note += f"grids: {type(exc).__name__} "
            check = None
            if with_errors and not name.startswith("xla"):
                def check(outs, m=m, layout=layout, shape=shape, want=want):
                    if "outs" not in want:
                        return {"errors": None}
                    m.errors = _errors(shape, _as_bshd(layout, shape, outs), want["outs"])
                    return {"errors": m.errors}
            fields = {"shape": str(shape), "impl": name}
            jobs.append(Job(f"{shape} {name} fwd", fn, args[:3], {**fields, "pass": "fwd"},
                            materialize=lambda materialize=materialize: materialize()[:3]))
            jobs.append(Job(f"{shape} {name} fwd+bwd", _forward_and_backward(fn), args,
                            {**fields, "pass": "fwd+bwd"}, check=check, materialize=materialize))
    records = run_jobs(jobs, sink, repeats=repeats, workers=workers, deadline=deadline)
    for record in records:
        shape = next((s for s in by_shape if str(s) == record["shape"]), None)
        m = by_shape.get(shape, {}).get(record.get("impl"))
        if m is None:
            continue
        if "error" in record:
            m.note += f"{record['pass']} failed: {record['error'][:160]} "
        elif record.get("seconds") is not None:
            setattr(m, "fwd_s" if record["pass"] == "fwd" else "both_s", record["seconds"])
    rows = []
    for shape, by_name in by_shape.items():
        splash = by_name.get(f"splash {SPLASH_BLOCK}")
        flops = shape.forward_flops()
        for name, m in by_name.items():
            if not name.startswith("ours"):
                continue
            if m.errors:
                err = max(rel for _, rel in m.errors.values())
                rows.append(Result(f"kernel {name} {shape}, {jnp.dtype(dtype)}: max error (of out, "
                                   "dq, dk, dv, over max(1, |ref|)) vs the xla path in float32",
                                   f"{err:.2e}", f"{BF16_TOLERANCE:g}", err / BF16_TOLERANCE,
                                   Target("<=", 1.0)))
            if splash is None:
                continue
            for what, mult, ours_s, theirs_s in (("forward", 1.0, m.fwd_s, splash.fwd_s),
                                                 ("forward+backward", 3.5, m.both_s, splash.both_s)):
                if ours_s is None or theirs_s is None:
                    continue
                rows.append(Result(
                    f"kernel {what} {name} {shape}, {jnp.dtype(dtype)}: ours vs splash "
                    f"({SPLASH_BLOCK} blocks)", f"{_tflops(mult * flops, ours_s):.1f} TFLOP/s",
                    f"{_tflops(mult * flops, theirs_s):.1f} TFLOP/s", theirs_s / ours_s,
                    SPLASH_TARGET))
    return rows, notes, measured


SPLASH_TARGET = Target(">=", 1.0)  # ours / splash, each shape, forward and forward+backward


def matmul_rate(size: int = 8192, repeats: int = 10) -> float:
    """TFLOP/s of one size^3 bfloat16 matrix product on this device (random data)."""
    from benchmarks.tpu_batch import median_seconds as median

    keys = jax.random.split(jax.random.PRNGKey(0))
    a, b = (jax.random.normal(key, (size, size), jnp.bfloat16) for key in keys)
    product = jax.jit(lambda a, b: a @ b)
    return 2.0 * size ** 3 / median(lambda: product(a, b), repeats) / 1e12


def summary(measured: list[Measured], peak: float | None = None) -> dict:
    """The run's figures as data: per shape, each implementation's ms and TFLOP/s (and the
    fraction of `peak`, the measured matmul rate), ours / splash, and the geometric means."""
    out: dict = {"shapes": {}, "peak_tflops": peak}
    ratios: dict = {"fwd": [], "fwd+bwd": []}
    for m in measured:
        per = out["shapes"].setdefault(str(m.shape), {})
        flops = m.shape.forward_flops()
        entry = {"note": m.note.strip() or None, "errors": m.errors,
                 "grid_steps": [m.fwd_steps, m.both_steps]}
        for what, mult, seconds in (("fwd", 1.0, m.fwd_s), ("fwd+bwd", 3.5, m.both_s)):
            if seconds is not None:
                tflops = _tflops(mult * flops, seconds)
                entry[what] = {"ms": seconds * 1e3, "tflops": tflops,
                               "of_peak": None if not peak else tflops / peak}
        per[m.name] = entry
    for shape, per in out["shapes"].items():
        ours = per.get("ours default") or {}
        splash = per.get(f"splash {SPLASH_BLOCK}") or {}
        for what in ratios:
            if what in ours and what in splash:
                ratio = splash[what]["ms"] / ours[what]["ms"]
                per.setdefault("ours/splash", {})[what] = ratio
                ratios[what].append(ratio)
    out["geomean_ours_over_splash"] = {
        what: (float(np.exp(np.mean(np.log(r)))) if r else None) for what, r in ratios.items()}
    out["min_ours_over_splash"] = {what: (min(r) if r else None) for what, r in ratios.items()}
    return out


def chart_data(summary_: dict) -> dict:
    """{shape: {implementation: (fwd TFLOP/s, fwd+bwd TFLOP/s)}} for kernel_gpu.chart."""
    return {shape: {name: ((e.get("fwd") or {}).get("tflops"), (e.get("fwd+bwd") or {}).get("tflops"))
                    for name, e in per.items() if name != "ours/splash"}
            for shape, per in summary_["shapes"].items()}


def print_table(measured: list[Measured], log=print):
    log(TABLE_HEADER)
    for m in measured:
        splash = next((s for s in measured if s.shape == m.shape
                       and s.name == f"splash {SPLASH_BLOCK}"), None)
        log(m.line(splash))
    log("grids (fwd+bwd):")
    for m in measured:
        log(f"  {m.shape} {m.name}: {m.grids}")


# --------------------------------------------------------------------------
# Each of our pallas_calls alone, over candidate tiles.
# --------------------------------------------------------------------------


def sweep_rows(shape: Shape, candidates, *, repeats: int = 5, dtype=jnp.bfloat16, log=print):
    """[(pass, block_q, block_kv, seconds or error, grid steps)]: our forward (with lse), dQ and
    dK/dV kernels each timed alone at (block_q, block_kv) (for dK/dV: the query tile it loops
    over, its own key tile), the XLA transposes around each included."""
    from errkit_attention import pallas_attention as pa, pallas_tpu

    rng = np.random.default_rng(1)
    b, s, hq, hk, d = (shape.batch, shape.seq_len, shape.num_q_heads, shape.num_kv_heads,
                       shape.head_dim)
    q = jnp.asarray(rng.standard_normal((b, s, hq, d)), dtype)
    k, v = (jnp.asarray(rng.standard_normal((b, s, hk, d)), dtype) for _ in range(2))
    do = jnp.asarray(rng.standard_normal((b, s, hq, d)), dtype)
    lse = jnp.asarray(rng.standard_normal((b, hq, s)) + 10.0, jnp.float32)
    delta = jnp.asarray(rng.standard_normal((b, hq, s)), jnp.float32)
    out = []
    for bq, bkv in candidates:
        st = pa._Static(q_len=s, kv_len=s, head_dim=d, group=hq // hk, block_q=bq, block_kv=bkv,
                        block_q_dkv=bq, block_kv_dkv=bkv, block_q_dq=bq, block_kv_dq=bkv,
                        sm_scale=d ** -0.5, cap=None, cap_method="none", causal=shape.causal,
                        has_bound=False, interpret=None)
        calls = {
            "fwd": (functools.partial(pallas_tpu.forward, st=st, with_lse=True), (q, k, v)),
            "dq": (functools.partial(pallas_tpu.backward_dq, st=st), (q, k, v, do, lse, delta)),
            "dkdv": (functools.partial(pallas_tpu.backward_dkdv, st=st),
                     (q, k, v, do, lse, delta)),
        }
        for pass_, (fn, args) in calls.items():
            steps = grid_steps(pallas_grids(fn, *args))
            try:
                seconds = median_seconds(jax.jit(fn), args, repeats)
            except Exception as exc:  # noqa: BLE001 - e.g. over VMEM
                seconds = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
            out.append((pass_, bq, bkv, seconds, steps))
            shown = (f"{seconds * 1e3:.2f} ms" if isinstance(seconds, float) else seconds)
            log(f"sweep {shape} {pass_} {bq}x{bkv}: {shown}, {steps} grid steps", flush=True)
    return out


# --------------------------------------------------------------------------
# Correctness on the device over the kernel's options (small shapes).
# --------------------------------------------------------------------------

# (dtype, batch, seq, (hq, hkv), head_dim, causal, bound, cap, cap_method, config, layout): ours
# takes its arrays in the layout (the reference [B, S, H, D], ours' results transposed back)
_SMALL = BlockSizes(block_q=128, block_kv=256, block_q_dkv=256, block_kv_dkv=128,
                    block_q_dq=128, block_kv_dq=128)
CHECK_CASES = [
    ("bfloat16", 2, 1000, (4, 2), 80, True, True, 5.0, "tanh", None, "bhsd"),
    ("bfloat16", 2, 1000, (4, 1), 128, False, False, None, "tanh", None, "bshd"),
    ("bfloat16", 2, 1000, (4, 4), 64, True, False, None, "tanh", _SMALL, "bhsd"),
    ("bfloat16", 1, 2048, (8, 2), 128, True, False, None, "tanh", None, "bshd"),
    ("bfloat16", 1, 2048, (4, 2), 256, False, True, 5.0, "soft_sign", None, "bhsd"),
    ("bfloat16", 2, 200, (4, 2), 96, False, True, None, "tanh", None, "bshd"),
    ("bfloat16", 1, 72, (2, 1), 64, True, True, 5.0, "tanh", None, "bhsd"),
    ("float32", 2, 1000, (4, 2), 64, True, True, 5.0, "tanh", None, "bshd"),
    ("float32", 1, 1024, (4, 2), 128, False, False, 5.0, "soft_sign", _SMALL, "bhsd"),
    ("float32", 1, 1000, (4, 2), 128, True, True, 5.0, "tanh", None, "bshd"),
    ("float32", 1, 512, (2, 2), 256, True, False, None, "tanh", None, "bhsd"),
    ("float32", 1, 1000, (4, 2), 256, True, True, 5.0, "tanh", None, "bshd"),
]
# max |err| / max(1, max |ref|). float32 is held to bfloat16's: Mosaic's float32 dot at default
# precision is not float32's (on a TPU v5e, 2.6e-3 to 6.7e-3 in these cases with 128 x 128 tiles).
CHECK_TOLERANCE = {"bfloat16": 2e-2, "float32": 2e-2}


def check_rows(cases=None, log=print) -> tuple[list[Result], bool]:
    """Ours (implementation="pallas", on this backend) against the xla path in float32 at
    precision "highest", out and the three gradients, per case: (rows, all within tolerance)."""
    rows, ok = [], True
    for case in cases or CHECK_CASES:
        dtype, b, s, (hq, hk), d, causal, has_bound, cap, cap_method, config, layout = case
        dt = jnp.dtype(dtype)
        keys = jax.random.split(jax.random.PRNGKey(s + d), 5)
        q = jax.random.normal(keys[0], (b, s, hq, d), dt)
        k = jax.random.normal(keys[1], (b, s, hk, d), dt)
        v = jax.random.normal(keys[2], (b, s, hk, d), dt)
        do = jax.random.normal(keys[3], (b, s, hq, d), dt)
        bound = (jax.random.randint(keys[4], (b,), 0, s + 1).astype(jnp.int32)
                 if has_bound else None)
        options = dict(causal=causal, cap=cap, cap_method=cap_method)

        def ours(q, k, v, bound):
            if layout == "bshd":
                return ranker_attention(q, k, v, bound=bound, config=config,
                                        implementation="pallas", **options)
            return _bhsd(ranker_attention(*map(_bhsd, (q, k, v)), bound=bound, config=config,
                                          implementation="pallas", layout="bhsd", **options))

        def ref(q, k, v, bound):
            return ranker_attention(q, k, v, bound=bound, implementation="xla", **options)

        def both(f):
            def run(q, k, v, do, bound):
                out, pullback = jax.vjp(lambda q, k, v: f(q, k, v, bound), q, k, v)
                return (out, *pullback(do.astype(out.dtype)))
            return jax.jit(run)

        label = (f"{dtype} B={b} S={s} Hq={hq} Hk={hk} D={d}{' causal' if causal else ''}"
                 f"{' bound' if has_bound else ''}{f' cap {cap_method}' if cap else ''}"
                 f"{' small tiles' if config else ''}{f' {layout}' if layout != 'bshd' else ''}")
        try:
            got = both(ours)(q, k, v, do, bound)
            with jax.default_matmul_precision("highest"):
                want = both(ref)(*(x.astype(jnp.float32) for x in (q, k, v, do)), bound)
            errs = {}
            for name, g, w in zip(("out", "dq", "dk", "dv"), got, want):
                g, w = np.asarray(g, np.float32), np.asarray(w, np.float32)
                errs[name] = float(np.max(np.abs(g - w))) / max(1.0, float(np.max(np.abs(w))))
            worst = max(errs.values())
            finite = all(np.isfinite(v) for v in errs.values())
        except Exception as exc:  # noqa: BLE001 - a case that does not compile is a failure
            log(f"check {label}: FAILED {type(exc).__name__}: {str(exc)[:400]}", flush=True)
            ok = False
            continue
        tol = CHECK_TOLERANCE[dtype]
        ok &= finite and worst <= tol
        log(f"check {label}: " + " ".join(f"{n} {e:.1e}" for n, e in errs.items())
            + ("" if finite and worst <= tol else "  OVER TOLERANCE"), flush=True)
        rows.append(Result(f"kernel on {jax.default_backend()} {label}: max error vs the xla path "
                           "in float32", f"{worst:.2e}", f"{tol:g}", worst / tol,
                           Target("<=", 1.0)))
    return rows, ok

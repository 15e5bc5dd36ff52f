"""GPU mode of benchmarks/bench_kernel.py: TFLOP/s of ranker_attention's Pallas
kernels, forward and forward+backward, at LLM shapes, side by side with
``jax.nn.dot_product_attention(implementation="cudnn")`` and JAX's ``pallas.ops.gpu.attention.mha``
in the same process, and the kernel's error against the xla path (float32) in the same run.

"ours" is ranker_attention as a caller gets it: on Hopper (sm_90a) its forward is the Mosaic GPU
kernel (kernel/mosaic_gpu.py; bfloat16 at these head dims), elsewhere Triton's; the backward is
Triton's. "ours, Triton forward" is the same call with ``tuning.forward_kernel("triton")``: the
column that compares the two forwards (on another GPU, or the CPU, the two are the same kernel).

FLOPs counted as FlashAttention does: forward 4 * B * Hq * Sq * Skv * D (two products), halved when
causal; forward + backward 3.5 times that (the backward has five products to the forward's two).
JAX's mha takes as many kv heads as query heads: its k and v are repeated to Hq heads before the
timed call (the repeat is not timed), so it runs the same attention as MHA.

``smoke=True`` runs one small shape on whatever backend jax has (the CPU here: interpret mode,
no cuDNN) so that the code paths are exercised without a GPU; its figures mean nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas.ops.gpu import attention as jax_gpu_attention

from benchmarks._timing import Result, Target
from kernel import ranker_attention, tuning


@dataclasses.dataclass(frozen=True)
class Shape:
    batch: int
    seq_len: int
    num_q_heads: int
    num_kv_heads: int
    head_dim: int
    causal: bool

    def __str__(self) -> str:
        return (f"B={self.batch} S={self.seq_len} Hq={self.num_q_heads} Hk={self.num_kv_heads} "
                f"D={self.head_dim}{' causal' if self.causal else ''}")

    def forward_flops(self) -> float:
        flops = 4.0 * self.batch * self.num_q_heads * self.seq_len * self.seq_len * self.head_dim
        return flops / 2 if self.causal else flops


GPU_SHAPES = [
    Shape(4, 4096, 32, 8, 128, False),
    Shape(4, 4096, 32, 8, 128, True),
    Shape(2, 8192, 32, 8, 128, True),
    Shape(4, 4096, 16, 16, 64, True),
]
SMOKE_SHAPES = [Shape(1, 128, 4, 2, 64, True)]

FORWARD_TARGET = Target(">=", 0.8)  # our TFLOP/s over cuDNN's, forward (the target)
BF16_TOLERANCE = 2e-2  # max |ours - xla(float32)|, outputs of unit scale


def _median_seconds(fn, args, repeats: int) -> float:
    jax.block_until_ready(fn(*args))  # compile
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _forward_and_backward(attention):
    """q, k, v -> (out, dq, dk, dv) of sum(out * do) with a fixed cotangent."""
    def run(q, k, v, do):
        out, pullback = jax.vjp(attention, q, k, v)
        return (out, *pullback(do.astype(out.dtype)))
    return run


def _ours(causal: bool, forward: str | None = None):
    """ranker_attention's Pallas path; forward: the forward kernel forced (tuning.forward_kernel),
    None for the call's own choice. The context is entered when the function is traced."""
    def run(q, k, v):
        with tuning.forward_kernel(forward) if forward else contextlib.nullcontext():
            return ranker_attention(q, k, v, causal=causal, implementation="pallas")
    return run


def our_forward(shape: Shape, dtype) -> str:
    """Which forward kernel "ours" runs on this backend."""
    if jax.default_backend() != "gpu":
        return f"interpret mode ({jax.default_backend()})"
    lengths = (shape.seq_len, shape.seq_len)
    return tuning.gpu_forward(tuning.current_arch(), shape.head_dim, jnp.dtype(dtype), lengths)


def _implementations(shape: Shape, smoke: bool) -> dict:
    """name -> (forward fn of q, k, v; needs k/v repeated to Hq heads), or a reason it is absent."""
    causal = shape.causal
    impls = {
        "ours": (_ours(causal), False),
        "ours_triton": (_ours(causal, "triton"), False),
        "xla": (lambda q, k, v: ranker_attention(
            q.astype(jnp.float32), k.astype(jnp.float32), v.astype(jnp.float32), causal=causal,
            implementation="xla"), False),
        "mha": (lambda q, k, v: jax_gpu_attention.mha(
            q, k, v, segment_ids=None, causal=causal, sm_scale=shape.head_dim ** -0.5,
            interpret=smoke), True),
    }
    if jax.default_backend() == "gpu":
        impls["cudnn"] = (lambda q, k, v: jax.nn.dot_product_attention(
            q, k, v, is_causal=causal, implementation="cudnn"), False)
    else:
        impls["cudnn"] = f"cuDNN needs a GPU; jax's backend is {jax.default_backend()}"
    return impls


def _tflops(flops: float, seconds: float) -> str:
    return f"{flops / seconds / 1e12:.3g} TFLOP/s"


def gpu_rows(*, smoke: bool = False, repeats: int = 10, dtype=jnp.bfloat16) -> tuple[list[Result], list[str]]:
    """(benchmark rows, lines of correctness and availability notes)."""
    rows, notes = [], []
    rng = np.random.default_rng(0)
    for shape in SMOKE_SHAPES if smoke else GPU_SHAPES:
        q_shape = (shape.batch, shape.seq_len, shape.num_q_heads, shape.head_dim)
        kv_shape = (shape.batch, shape.seq_len, shape.num_kv_heads, shape.head_dim)
        q = jnp.asarray(rng.standard_normal(q_shape), dtype)
        k, v = (jnp.asarray(rng.standard_normal(kv_shape), dtype) for _ in range(2))
        do = jnp.asarray(rng.standard_normal(q_shape), dtype)
        group = shape.num_q_heads // shape.num_kv_heads
        k_mha, v_mha = jnp.repeat(k, group, axis=2), jnp.repeat(v, group, axis=2)

        results = {}
        for name, impl in _implementations(shape, smoke).items():
            if isinstance(impl, str):
                notes.append(f"{shape}: {name} skipped: {impl}")
                continue
            fn, needs_mha_kv = impl
            args = (q, k_mha, v_mha) if needs_mha_kv else (q, k, v)
            fwd = jax.jit(fn)
            both = jax.jit(_forward_and_backward(fn))
            try:
                results[name] = (_median_seconds(fwd, args, repeats),
                                 _median_seconds(both, (*args, do), repeats),
                                 both(*args, do))
            except Exception as exc:  # a baseline that cannot run this shape is reported, not fatal
                notes.append(f"{shape}: {name} failed: {type(exc).__name__}: {str(exc)[:200]}")
        if "ours" not in results:
            continue
        if "xla" in results:
            want = results["xla"][2]
            got = results["ours"][2]
            errors = {what: float(jnp.max(jnp.abs(g.astype(jnp.float32) - w.astype(jnp.float32))))
                      for what, g, w in zip(("out", "dq", "dk", "dv"), got, want)}
            notes.append(f"{shape}: ours vs xla (float32) max |error| "
                         + ", ".join(f"{w} {e:.2e}" for w, e in errors.items()))
            rows.append(Result(f"kernel output {shape}, {jnp.dtype(dtype)}: max error vs the xla path "
                               f"in float32, over the tolerance {BF16_TOLERANCE:g}",
                               f"{errors['out']:.2e}", f"{BF16_TOLERANCE:g}",
                               errors["out"] / BF16_TOLERANCE, Target("<=", 1.0)))
        flops = shape.forward_flops()
        ours_fwd, ours_both, _ = results["ours"]
        notes.append(f"{shape}: ours' forward: {our_forward(shape, dtype)}")
        if "ours_triton" in results:  # the Mosaic GPU column: our forward against our Triton one
            triton_fwd, triton_both, _ = results["ours_triton"]
            label = f"ours ({our_forward(shape, dtype)} forward) vs ours, Triton forward"
            rows.append(Result(f"kernel forward {shape}, {jnp.dtype(dtype)}: {label}",
                               _tflops(flops, ours_fwd), _tflops(flops, triton_fwd),
                               triton_fwd / ours_fwd))
            rows.append(Result(f"kernel forward+backward {shape}, {jnp.dtype(dtype)}: {label}",
                               _tflops(3.5 * flops, ours_both), _tflops(3.5 * flops, triton_both),
                               triton_both / ours_both))
        for name in ("cudnn", "mha"):
            if name not in results:
                continue
            their_fwd, their_both, _ = results[name]
            label = {"cudnn": "`dot_product_attention(implementation='cudnn')`",
                     "mha": "`pallas.ops.gpu.attention.mha`"}[name]
            rows.append(Result(f"kernel forward {shape}, {jnp.dtype(dtype)}: ours vs {label}",
                               _tflops(flops, ours_fwd), _tflops(flops, their_fwd),
                               their_fwd / ours_fwd,
                               FORWARD_TARGET if name == "cudnn" else None))
            rows.append(Result(f"kernel forward+backward {shape}, {jnp.dtype(dtype)}: ours vs {label}",
                               _tflops(3.5 * flops, ours_both), _tflops(3.5 * flops, their_both),
                               their_both / ours_both))
    return rows, notes

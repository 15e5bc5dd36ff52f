"""GPU mode of benchmarks/bench_kernel.py: TFLOP/s of ranker_attention's Pallas
kernels, forward and forward+backward, at LLM shapes, side by side with
``jax.nn.dot_product_attention(implementation="cudnn")`` and JAX's ``pallas.ops.gpu.attention.mha``
in the same process, and the kernel's error against the xla path (float32) in the same run.

"ours" is ranker_attention as a caller gets it: on Hopper (sm_90a) its forward is the Mosaic GPU
kernel (errkit_attention/mosaic_gpu.py; bfloat16 at these head dims), elsewhere Triton's; the backward is
Triton's. "ours, Triton forward" is the same call with ``tuning.forward_kernel("triton")``: the
column that compares the two forwards (on another GPU, or the CPU, the two are the same kernel).
"ours, split backward" is the same call with ``tuning.backward_kernel("split")``: the backward as a
dQ and a dK/dV kernel (7 matmuls a tile) where the table fuses it (5, dQ added with float32
atomics); its launches are not in the table (errkit_attention/tuning.py launch: unproven, the forward's for
dQ), so it compares the two designs, not two proven configurations.

FLOPs counted as FlashAttention does: forward 4 * B * Hq * Sq * Skv * D (two products), halved when
causal; forward + backward 3.5 times that (the backward has five products to the forward's two).
JAX's mha takes as many kv heads as query heads: its k and v are repeated to Hq heads before the
timed call (the repeat is not timed), so it runs the same attention as MHA.

JAX's Mosaic GPU kernel ``pallas.ops.gpu.attention_mgpu`` (the FA3 design ours follows) is a column
too, on a Hopper GPU only: block_q 64, block_kv 128, two concurrent steps (its own benchmark's
choice at these head dims); its backward takes no causal mask (jax 0.10), so it has no
forward+backward figure for causal shapes. `chart` draws every implementation's TFLOP/s per shape
(PNG, matplotlib); `sweep_rows` times our kernel over a dozen Triton BlockSizes per shape (a
config passed by the caller runs the Triton kernels: the Mosaic GPU forward takes none).

``smoke=True`` runs one small shape on whatever backend jax has (the CPU here: interpret mode,
no cuDNN, no Mosaic GPU) so that the code paths are exercised without a GPU; its figures mean
nothing.
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
from errkit_attention import BlockSizes, ranker_attention, tuning


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

    def inputs(self, rng, dtype) -> tuple:
        """q, k, v and an output cotangent do of this shape, standard normal from `rng`."""
        q_shape = (self.batch, self.seq_len, self.num_q_heads, self.head_dim)
        kv_shape = (self.batch, self.seq_len, self.num_kv_heads, self.head_dim)
        q = jnp.asarray(rng.standard_normal(q_shape), dtype)
        k, v = (jnp.asarray(rng.standard_normal(kv_shape), dtype) for _ in range(2))
        do = jnp.asarray(rng.standard_normal(q_shape), dtype)
        return q, k, v, do


GPU_SHAPES = [
    Shape(4, 4096, 32, 8, 128, False),
    Shape(4, 4096, 32, 8, 128, True),
    Shape(2, 8192, 32, 8, 128, True),
    Shape(4, 4096, 16, 16, 64, True),
]
SMOKE_SHAPES = [Shape(1, 128, 4, 2, 64, True)]

FORWARD_TARGET = Target(">=", 0.8)  # our TFLOP/s over cuDNN's, forward (the target)
BOTH_TARGET = Target(">=", 0.7)  # the same, forward+backward
BF16_TOLERANCE = 2e-2  # max |ours - xla(float32)|, outputs of unit scale


def median_seconds(fn, args, repeats: int) -> float:
    """Median seconds of fn(*args), each call waited for, after a compiling and a warming call."""
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


def _ours(causal: bool, forward: str | None = None, backward: str | None = None):
    """ranker_attention's Pallas path; forward / backward: the kernels forced
    (tuning.forward_kernel, tuning.backward_kernel), None for the call's own choice. The contexts
    are entered when the function is traced."""
    def run(q, k, v):
        with contextlib.ExitStack() as stack:
            if forward:
                stack.enter_context(tuning.forward_kernel(forward))
            if backward:
                stack.enter_context(tuning.backward_kernel(backward))
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
        "ours_split": (_ours(causal, backward="split"), False),
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
    if jax.default_backend() == "gpu" and tuning.current_arch() == "sm_90a":
        from jax.experimental.pallas.ops.gpu import attention_mgpu

        blocks = dict(block_q_dkv=64, block_kv_dkv=64, block_q_dq=64, block_kv_dq=64)
        config = attention_mgpu.TuningConfig(block_q=64, block_kv=128, max_concurrent_steps=2, causal=causal,
                                             **({} if causal else blocks))
        impls["attention_mgpu"] = (lambda q, k, v: attention_mgpu.attention(q, k, v, config), False)
    else:
        impls["attention_mgpu"] = "JAX's Mosaic GPU kernel needs a Hopper GPU (it has no CPU interpreter path in jax 0.10)"
    return impls


def _tflops(flops: float, seconds: float) -> str:
    return f"{flops / seconds / 1e12:.3g} TFLOP/s"


def gpu_rows(*, smoke: bool = False, repeats: int = 10, dtype=jnp.bfloat16,
             measured: dict | None = None) -> tuple[list[Result], list[str]]:
    """(benchmark rows, lines of correctness and availability notes); `measured`, when given, gets
    shape -> implementation -> (forward TFLOP/s, forward+backward TFLOP/s or None), for `chart`."""
    rows, notes = [], []
    rng = np.random.default_rng(0)
    for shape in SMOKE_SHAPES if smoke else GPU_SHAPES:
        q, k, v, do = shape.inputs(rng, dtype)
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
                forward_seconds = median_seconds(fwd, args, repeats)
            except Exception as exc:  # a baseline that cannot run this shape is reported, not fatal
                notes.append(f"{shape}: {name} failed: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            try:
                results[name] = (forward_seconds, median_seconds(both, (*args, do), repeats), both(*args, do))
            except Exception as exc:  # (attention_mgpu's backward refuses a causal mask)
                notes.append(f"{shape}: {name} forward+backward failed: {type(exc).__name__}: {str(exc)[:200]}")
                results[name] = (forward_seconds, None, None)
        if measured is not None:
            flops = shape.forward_flops()
            measured[str(shape)] = {name: (flops / f / 1e12, None if b is None else 3.5 * flops / b / 1e12)
                                    for name, (f, b, _) in results.items()}
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
        if "ours_split" in results and results["ours_split"][1] is not None:
            split_both = results["ours_split"][1]
            fused = tuning.fused(tuning.current_arch(), shape.head_dim, jnp.dtype(dtype))
            label = f"ours ({'fused' if fused else 'split'} backward) vs ours, split backward"
            rows.append(Result(f"kernel forward+backward {shape}, {jnp.dtype(dtype)}: {label}",
                               _tflops(3.5 * flops, ours_both), _tflops(3.5 * flops, split_both),
                               split_both / ours_both))
        for name in ("cudnn", "mha", "attention_mgpu"):
            if name not in results:
                continue
            their_fwd, their_both, _ = results[name]
            label = {"cudnn": "`dot_product_attention(implementation='cudnn')`",
                     "mha": "`pallas.ops.gpu.attention.mha`",
                     "attention_mgpu": "`pallas.ops.gpu.attention_mgpu`"}[name]
            rows.append(Result(f"kernel forward {shape}, {jnp.dtype(dtype)}: ours vs {label}",
                               _tflops(flops, ours_fwd), _tflops(flops, their_fwd),
                               their_fwd / ours_fwd,
                               FORWARD_TARGET if name == "cudnn" else None))
            if their_both is not None:
                rows.append(Result(f"kernel forward+backward {shape}, {jnp.dtype(dtype)}: ours vs {label}",
                                   _tflops(3.5 * flops, ours_both), _tflops(3.5 * flops, their_both),
                                   their_both / ours_both, BOTH_TARGET if name == "cudnn" else None))
    return rows, notes


# -- a short sweep of our Triton configurations ------------------------------------------------------

SWEEP_SHAPES = GPU_SHAPES[:3]
SWEEP_CONFIGS = [  # BlockSizes(block_q, block_kv, block_q_dkv, block_kv_dkv, block_q_dq, block_kv_dq) around
    (128, 64, 32, 64, 128, 64),  # sm_90a's head_dim 128 rows of errkit_attention/tuning.py
    (64, 64, 32, 64, 128, 64), (128, 128, 32, 64, 128, 64), (64, 128, 32, 64, 128, 64), (128, 32, 32, 64, 128, 64),
    (128, 64, 16, 64, 128, 64), (128, 64, 32, 128, 128, 64), (128, 64, 64, 64, 128, 64), (128, 64, 32, 64, 64, 64),
    (128, 64, 32, 64, 128, 32), (64, 64, 16, 32, 64, 32), (128, 64, 64, 128, 64, 128),
]


def sweep_rows(*, smoke: bool = False, repeats: int = 10, dtype=jnp.bfloat16) -> tuple[list[Result], list[str]]:
    """Our kernel (forward+backward) at each of SWEEP_CONFIGS against its default, per shape.
    A config the kernel's own checks refuse (one that does not fit the GPU's shared memory, say) is
    noted with its code, as a caller would meet it."""
    rows, notes = [], []
    rng = np.random.default_rng(1)
    for shape in SMOKE_SHAPES if smoke else SWEEP_SHAPES:
        q, k, v, do = shape.inputs(rng, dtype)
        default = jax.jit(_forward_and_backward(_ours(shape.causal)))
        base = median_seconds(default, (q, k, v, do), repeats)
        flops = 3.5 * shape.forward_flops()
        for sizes in SWEEP_CONFIGS[:2] if smoke else SWEEP_CONFIGS:
            config = BlockSizes(*sizes)

            def run(q, k, v, config=config):
                return ranker_attention(q, k, v, causal=shape.causal, config=config, implementation="pallas")
            try:
                seconds = median_seconds(jax.jit(_forward_and_backward(run)), (q, k, v, do), repeats)
            except Exception as exc:  # refused by a validator (RA2xx) or by the compiler: reported
                notes.append(f"{shape}: {config} refused: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
                continue
            rows.append(Result(f"sweep {shape}, forward+backward, {config} vs the default", _tflops(flops, seconds),
                               _tflops(flops, base), base / seconds))
    return rows, notes


def chart(measured: dict, path, title: str | None = None) -> None:
    """TFLOP/s per shape and implementation, forward and forward+backward (one above the other
    beyond 6 shapes), as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    shapes = list(measured)
    names = sorted({name for per in measured.values() for name in per},
                   key=lambda n: (not n.startswith("ours"), n))
    if len(shapes) > 6:
        figure, axes = pyplot.subplots(2, 1, figsize=(max(13, 1.25 * len(shapes)), 9.5))
    else:
        figure, axes = pyplot.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    width = 0.8 / max(1, len(names))
    for axis, which, label in ((axes[0], 0, "forward"), (axes[1], 1, "forward + backward")):
        for i, name in enumerate(names):
            heights = [(measured[s].get(name) or (0.0, 0.0))[which] or 0.0 for s in shapes]
            axis.bar([x + i * width for x in range(len(shapes))], heights, width, label=name)
        axis.set_xticks([x + width * (len(names) - 1) / 2 for x in range(len(shapes))])
        axis.set_xticklabels([s.replace(" Hq=", "\nHq=").replace(" D=", "\nD=") for s in shapes],
                             fontsize=8)
        axis.set_title(label)
        axis.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("TFLOP/s")
    axes[1].set_ylabel("TFLOP/s")
    axes[1].legend(fontsize=8)
    figure.suptitle(title or f"ranker_attention vs cuDNN and JAX's Pallas kernels "
                    f"({jax.devices()[0].device_kind}, bfloat16)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)

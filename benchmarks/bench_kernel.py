"""Side-by-side forward timings of ranker_attention on this machine.

(a) our Pallas path (interpret mode on CPU) vs JAX's reference Pallas GPU kernel
    ``jax.experimental.pallas.ops.gpu.attention.mha(..., interpret=True)``;
(b) our XLA path vs ``jax.nn.dot_product_attention(implementation="xla")``.

Forward only, jitted, after warm-up; the median of --repeats runs. A ratio
below 1 means ours is faster; targets: (a) <= 1.0, (b) <= 1.2, for every shape. Usage:

    python benchmarks/bench_kernel.py [--repeats N] [--dtype float32|bfloat16]

On a GPU, ``--gpu`` instead measures TFLOP/s of the kernel forward and forward+backward against
cuDNN and JAX's Pallas mha at LLM shapes, and on Hopper the Mosaic GPU forward against our Triton
one (benchmarks/kernel_gpu.py; a few minutes); ``--gpu --smoke`` runs its code paths on one small
shape on any backend.

On a TPU, ``--tpu`` measures TFLOP/s of the Mosaic kernels forward and forward+backward against
JAX's splash attention, its TPU flash_attention and the xla path, with the grid-step count of every
pallas_call over a grid of 13 shapes (benchmarks/kernel_tpu.py; about four minutes), like with
like: ours called with layout="bhsd", taking [B, H, S, D] arrays as splash and flash do;
``--out DIR`` writes DIR/kernel_tpu.json and the TFLOP/s chart (PNG, where matplotlib is installed;
``--tpu --chart-from DIR/kernel_tpu.json`` draws it anywhere), ``--property N`` then checks N
generated calls on the chip (benchmarks/kernel_property.py; ``--tpu-property N`` alone);
``--blocks 128x128,512x1024`` adds our kernel at those tiles beside its defaults, ``--sweep`` times
each of our three kernels alone over candidate tiles instead, ``--check`` runs the device check's
cases, and ``--tpu --smoke`` runs the code paths on one small shape on any backend.

``--compile`` needs no GPU: it lowers every kernel for CUDA (the heaviest variant: bound + causal,
tanh cap, GQA, S=1000) per head_dim and dtype, compiles it for sm_90a and sm_80 with Triton's own
compiler (errkit_attention/triton_compile.py; `pip install -e ".[gpu-compile]"`) and prints what ptxas
reports, with errkit_attention/tuning.py's table; ``--compile --before`` does the same with the defaults
the kernel had before that table (128 x 128 tiles everywhere, 8 warps, 3 stages, 2 at
head_dim 256). It then lowers the Mosaic GPU forward (errkit_attention/mosaic_gpu.py) per head_dim and
dtype and prints its launch as lowered (warpgroups, shared memory); that kernel's own compile to
PTX runs in jax's CUDA plugin, on a GPU host only, so its registers are not reported.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental.pallas.ops.gpu import attention as jax_gpu_attention  # noqa: E402

from benchmarks._timing import Result, Target, fmt_time, report  # noqa: E402
from errkit_attention import BlockSizes, ranker_attention  # noqa: E402

# (batch, seq_len, heads, head_dim, causal)
SHAPES = [
    (1, 512, 4, 64, False),
    (1, 512, 4, 64, True),
    (2, 1024, 4, 64, False),
    (2, 1024, 4, 64, True),
    (1, 2048, 2, 128, True),
]


def _median_seconds(fns, args, repeats: int) -> list[float]:
    """Median wall time of each fn. The fns run round-robin, so load from other
    processes on the machine hits all of them alike."""
    for fn in fns:  # compile + warm-up
        jax.block_until_ready(fn(*args))
        jax.block_until_ready(fn(*args))
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, acc in zip(fns, times):
            start = time.perf_counter()
            jax.block_until_ready(fn(*args))
            acc.append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--gpu", action="store_true",
                        help="TFLOP/s of the Triton kernel vs cuDNN and JAX's mha (on a GPU)")
    parser.add_argument("--smoke", action="store_true",
                        help="with --gpu: one small shape, on any backend (checks the script runs)")
    parser.add_argument("--tpu", action="store_true",
                        help="TFLOP/s of the Mosaic kernels vs splash attention and xla (on a TPU)")
    parser.add_argument("--blocks", default="",
                        help="with --tpu: extra tiles for ours, 'QxKV' (every pass) comma-separated")
    parser.add_argument("--check", action="store_true",
                        help="with --tpu: only the correctness cases (every option, small shapes)")
    parser.add_argument("--sweep", action="store_true",
                        help="with --tpu: each of our kernels alone over candidate tiles; with --gpu: our "
                             "forward+backward at a dozen Triton BlockSizes per shape")
    parser.add_argument("--chart", default="kernel_gpu_tflops.png",
                        help="with --gpu: where the TFLOP/s chart (PNG) goes; '' for none")
    parser.add_argument("--compile", action="store_true",
                        help="resource use of every kernel on sm_90a and sm_80 (no GPU needed)")
    parser.add_argument("--before", action="store_true",
                        help="with --compile: the defaults before errkit_attention/tuning.py's table")
    parser.add_argument("--out", default="",
                        help="with --tpu: a folder for kernel_tpu.json(l), the PNG chart and "
                             "property.jsonl")
    parser.add_argument("--property", type=int, default=0,
                        help="with --tpu: then the accepts-what-runs property over this many "
                             "generated calls (benchmarks/kernel_property.py)")
    parser.add_argument("--tpu-property", type=int, default=0, metavar="N",
                        help="only the property on the TPU, over N generated calls")
    parser.add_argument("--seed", type=int, default=0, help="the property's seed")
    parser.add_argument("--budget", type=float, default=540.0,
                        help="with --tpu: seconds for the whole run; later jobs are skipped")
    parser.add_argument("--chart-from", default="",
                        help="with --tpu: draw the chart from a kernel_tpu.json (no TPU needed)")
    parser.add_argument("--head-dims", default="64,80,96,128,256")
    parser.add_argument("--dtypes", default="bfloat16,float16,float32")
    args = parser.parse_args()
    if args.gpu:
        return _gpu(args)
    if args.tpu_property:
        from benchmarks import kernel_property

        return kernel_property.main(["--tpu", "--out", args.out, "--count",
                                     str(args.tpu_property), "--seed", str(args.seed),
                                     "--budget", str(args.budget)])
    if args.tpu:
        return _tpu(args)
    if args.compile:
        return _compile(args)
    dtype = jnp.dtype(args.dtype)
    rng = np.random.default_rng(0)
    print(f"jax {jax.__version__}, backend {jax.default_backend()}, dtype {dtype}, "
          f"median of {args.repeats}; block_q = block_kv = 128 for both Pallas kernels")
    rows = []
    for batch, seq, heads, head_dim, causal in SHAPES:
        shape = (batch, seq, heads, head_dim)
        q, k, v = (jnp.asarray(rng.standard_normal(shape), dtype) for _ in range(3))
        scale = 1.0 / math.sqrt(head_dim)

        ours_pallas = jax.jit(lambda q, k, v, causal=causal: ranker_attention(
            q, k, v, causal=causal, sm_scale=scale, implementation="pallas",
            config=BlockSizes(block_q=128, block_kv=128)))
        theirs_pallas = jax.jit(lambda q, k, v, causal=causal: jax_gpu_attention.mha(
            q, k, v, segment_ids=None, sm_scale=scale, causal=causal, interpret=True,
            block_sizes=jax_gpu_attention.BlockSizes(block_q=128, block_k=128)))
        ours_xla = jax.jit(lambda q, k, v, causal=causal: ranker_attention(
            q, k, v, causal=causal, sm_scale=scale, implementation="xla"))
        theirs_xla = jax.jit(lambda q, k, v, causal=causal: jax.nn.dot_product_attention(
            q, k, v, scale=scale, is_causal=causal, implementation="xla"))

        t_op, t_tp = _median_seconds([ours_pallas, theirs_pallas], (q, k, v), args.repeats)
        t_ox, t_tx = _median_seconds([ours_xla, theirs_xla], (q, k, v), args.repeats)
        what = f"{shape}{' causal' if causal else ''}, {dtype}"
        rows.append(Result(f"kernel forward {what}: our Pallas vs `pallas.ops.gpu.attention.mha` (both interpret mode, CPU)",
                           fmt_time(t_op), fmt_time(t_tp), t_op / t_tp, Target("<=", 1.0)))
        rows.append(Result(f"kernel forward {what}: our xla path vs `jax.nn.dot_product_attention(implementation='xla')`",
                           fmt_time(t_ox), fmt_time(t_tx), t_ox / t_tx, Target("<=", 1.2)))
    return report(rows)


def _legacy_launch(rows: int, cols: int, dp: int) -> tuple[int, int]:
    """num_warps, num_stages as the kernel chose them before errkit_attention/tuning.py."""
    return (4 if rows * max(cols, dp) <= 64 * 64 else 8), (2 if dp > 128 else 3)


def _compile(args) -> int:
    from errkit_attention import triton_compile, tuning

    seq, fits = 1000, True
    print(f"triton {triton_compile.triton_version()} (pinned {triton_compile.TRITON_VERSION}); "
          f"bound + causal, tanh cap, GQA (4 q heads, 2 kv heads), S={seq}; "
          + ("defaults before the table" if args.before else "errkit_attention/tuning.py's table"))
    print("| kernel | head_dim | dtype | target | tiles (q x kv) | warps | stages | shared B "
          "| limit B | registers | spills B |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for arch in triton_compile.TARGETS:
        for head_dim in map(int, args.head_dims.split(",")):
            for dtype in args.dtypes.split(","):
                dt = jnp.dtype(dtype)
                q = jax.ShapeDtypeStruct((1, seq, 4, head_dim), dt)
                k = jax.ShapeDtypeStruct((1, seq, 2, head_dim), dt)
                bound = jax.ShapeDtypeStruct((1,), jnp.int32)
                config = BlockSizes() if args.before else None

                def loss(q, k, v, bound):
                    return ranker_attention(q, k, v, bound=bound, causal=True, cap=5.0,
                                            config=config, implementation="pallas").astype(
                        jnp.float32).sum()

                with tuning.target(arch), tuning.forward_kernel("triton"):
                    calls = triton_compile.triton_calls(triton_compile.lower_for_cuda(
                        jax.grad(loss, argnums=(0, 1, 2)), q, k, k, bound))
                dp = tuning.padded_head_dim(head_dim)
                # the forward, then the fused backward (bwd) or dq and dkdv, as the table picks
                for call, pass_ in zip(calls, tuning.passes(arch, head_dim, dtype)):
                    row = tuning.launch(arch, head_dim, dtype, pass_, masked=True)  # S=1000: a partial last block
                    tiles = (128, 128) if args.before else (row.block_q, row.block_kv)
                    launch = (_legacy_launch(128, 128, dp) if args.before
                              else (row.num_warps, row.num_stages))
                    used = triton_compile.compile_call(call, arch, num_warps=launch[0],
                                                       num_stages=launch[1])
                    limit = triton_compile.TARGETS[arch].shared_per_cta
                    fits &= not used.problems()
                    print(f"| {pass_} | {head_dim} | {dtype} | {arch} | {tiles[0]} x {tiles[1]} "
                          f"| {launch[0]} | {launch[1]} | {used.shared:,} | {limit:,} "
                          f"| {used.registers} | {used.spills:,} |", flush=True)
    return 0 if _mosaic_gpu_launches(args, seq) and fits else 1


def _mosaic_gpu_launches(args, seq: int) -> bool:
    """The Mosaic GPU forward (with the lse, the heaviest variant) as lowered for sm_90a: whether
    every launch's shared memory fits."""
    from errkit_attention import mosaic_gpu, tuning

    print("\nMosaic GPU forward (sm_90a), as lowered; bound + causal, tanh cap, GQA, S=1000")
    print("| head_dim | dtype | block_q x 2 | block_kv | stages | threads | shared B | limit B |")
    print("|---|---|---|---|---|---|---|---|")
    fits = True
    for head_dim in map(int, args.head_dims.split(",")):
        for dtype in args.dtypes.split(","):
            dt = jnp.dtype(dtype)
            if tuning.gpu_forward("sm_90a", head_dim, dt, (seq, seq)) != "mosaic_gpu":
                continue
            q = jax.ShapeDtypeStruct((1, seq, 4, head_dim), dt)
            k = jax.ShapeDtypeStruct((1, seq, 2, head_dim), dt)
            bound = jax.ShapeDtypeStruct((1,), jnp.int32)

            def loss(q, k, v, bound):
                return ranker_attention(q, k, v, bound=bound, causal=True, cap=5.0,
                                        implementation="pallas").astype(jnp.float32).sum()

            with tuning.target("sm_90a"):
                lowered = jax.jit(jax.grad(loss, argnums=(0, 1, 2))).trace(
                    q, k, k, bound).lower(lowering_platforms=("cuda",))
            (launch,) = mosaic_gpu.launches(lowered)
            cfg = mosaic_gpu.CONFIGS[head_dim]
            fits &= launch.smem <= mosaic_gpu.SMEM_PER_CTA
            print(f"| {head_dim} | {dtype} | {cfg.block_q} x 2 | {cfg.block_kv} | {cfg.num_stages} "
                  f"| {launch.threads} | {launch.smem:,} | {mosaic_gpu.SMEM_PER_CTA:,} |", flush=True)
    return fits


def _on_backend(backend: str, args) -> bool:
    """Whether --gpu / --tpu can run here (on that backend, or --smoke anywhere): says why not on
    standard error, else prints the run's header."""
    if jax.default_backend() != backend and not args.smoke:
        print(f"--{backend} needs a {backend.upper()}; jax's backend is {jax.default_backend()} (add "
              "--smoke to check the script on this backend)", file=sys.stderr)
        return False
    print(f"jax {jax.__version__}, backend {jax.default_backend()} "
          f"({jax.devices()[0].device_kind}), bfloat16, median of {args.repeats}")
    return True


def _gpu(args) -> int:
    from benchmarks.kernel_gpu import chart, gpu_rows, sweep_rows  # imported here: the CPU run does not need them

    if not _on_backend("gpu", args):
        return 2
    measured: dict = {}
    rows, notes = gpu_rows(smoke=args.smoke, repeats=args.repeats, measured=measured)
    if args.sweep:
        sweep, sweep_notes = sweep_rows(smoke=args.smoke, repeats=args.repeats)
        rows, notes = rows + sweep, notes + sweep_notes
    for line in notes:
        print(line)
    if args.chart:
        chart(measured, args.chart)
        print(f"chart: {args.chart}")
    return report(rows)


def _tpu(args) -> int:
    from benchmarks import kernel_tpu  # imported here: the CPU run does not need it

    if args.chart_from:
        return _tpu_chart(args)
    if not _on_backend("tpu", args):
        return 2
    deadline = time.monotonic() + args.budget
    if args.sweep:
        tiles = [(128, 128), (256, 256), (256, 512), (512, 256), (512, 512), (512, 1024),
                 (1024, 512), (1024, 1024)]
        for shape in kernel_tpu.TPU_SHAPES[:1] + kernel_tpu.TPU_SHAPES[2:]:
            kernel_tpu.sweep_rows(shape, tiles, repeats=args.repeats)
        return 0
    # the device check's cases (--check; two of them in smoke mode): the grid's own run leaves
    # correctness to its error figures and to the property (--property)
    check = []
    if args.check or args.smoke:
        check, _ = kernel_tpu.check_rows(kernel_tpu.CHECK_CASES[:2] if args.smoke else None)
    if args.check:
        return report(check)
    from benchmarks.tpu_batch import Sink

    sink = Sink(os.path.join(args.out, "kernel_tpu.jsonl") if args.out else None,
                log=lambda *a, **k: None)
    header = _tpu_header()
    header["peak_tflops"] = kernel_tpu.matmul_rate(1024 if args.smoke else 8192)
    sink({"part": "header", **header})
    configs = {"default": None}
    for spec in filter(None, args.blocks.split(",")):
        bq, bkv = map(int, spec.split("x"))
        configs[spec] = BlockSizes(block_q=bq, block_kv=bkv)
    rows, notes, measured = kernel_tpu.tpu_rows(smoke=args.smoke, repeats=args.repeats,
                                                configs=configs, sink=sink, deadline=deadline)
    kernel_tpu.print_table(measured)
    for line in notes:
        print(line)
    figures = kernel_tpu.summary(measured, header["peak_tflops"])
    print(f"measured bfloat16 matmul rate: {header['peak_tflops']:.1f} TFLOP/s; ours / splash "
          f"{kernel_tpu.SPLASH_BLOCK}: geometric mean {figures['geomean_ours_over_splash']}, "
          f"least {figures['min_ours_over_splash']}")
    if args.out:
        _write_json(os.path.join(args.out, "kernel_tpu.json"), {**header, **figures,
                                                               "notes": notes})
        _tpu_chart_png(figures, header, os.path.join(args.out, "kernel_tpu_tflops.png"))
    status = report(check + rows)
    if args.property:
        from benchmarks import kernel_property

        status |= kernel_property.main(
            ["--tpu", "--out", args.out, "--count", str(args.property), "--seed", str(args.seed),
             "--budget", str(max(0.0, deadline - time.monotonic()))])
    return status


def _tpu_header() -> dict:
    import importlib.metadata

    try:
        libtpu = importlib.metadata.version("libtpu")
    except importlib.metadata.PackageNotFoundError:
        libtpu = None
    return {"date": time.strftime("%Y-%m-%d"), "jax": jax.__version__, "libtpu": libtpu,
            "device": jax.devices()[0].device_kind, "backend": jax.default_backend()}


def _write_json(path: str, data) -> None:
    import json

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1, default=str)
    print(f"results: {path}")


def _tpu_chart_png(figures: dict, header: dict, path: str) -> None:
    """The TFLOP/s chart; where matplotlib is missing (the TPU host's image), a note: draw it
    later from the JSON with --chart-from."""
    from benchmarks import kernel_gpu, kernel_tpu

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(f"no chart: matplotlib is not installed (--tpu --chart-from {os.path.dirname(path)}"
              "/kernel_tpu.json draws it)")
        return
    title = (f"ranker_attention vs splash attention, TPU flash attention and xla "
             f"({header['device']}, jax {header['jax']}, libtpu {header['libtpu']}, "
             f"{header['date']}, bfloat16)")
    kernel_gpu.chart(kernel_tpu.chart_data(figures), path, title=title)
    print(f"chart: {path}")


def _tpu_chart(args) -> int:
    import json

    with open(args.chart_from, encoding="utf-8") as handle:
        figures = json.load(handle)
    path = args.chart if args.chart != "kernel_gpu_tflops.png" else os.path.join(
        os.path.dirname(args.chart_from), "kernel_tpu_tflops.png")
    _tpu_chart_png(figures, figures, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

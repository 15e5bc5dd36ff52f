"""Where the time of the TPU kernels goes, on the chip: each pallas_call alone (forward with the
log-sum-exp, dQ, dK/dV; the XLA transposes around each included, timed apart too), for each
structure of errkit_attention/pallas_tpu.py (``Options``: every one of its choices turned off in turn) and
for the kernel before them where given (``--before MODULE``), beside splash attention's forward and
forward+backward; then each kernel over candidate tiles (the TPU table's rows, float32 included).

    python benchmarks/kernel_tpu_profile.py --out DIR [--before kernel.pallas_tpu_before]
        [--parts profile,sweep,float16,property] [--budget SECONDS]

Writes DIR/profile.jsonl (one JSON object per measurement); ``--smoke`` runs tiny shapes on any
backend (interpret mode on the CPU), to check the script.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.kernel_gpu import Shape  # noqa: E402
from benchmarks.tpu_batch import Job, Sink, run_jobs  # noqa: E402
from errkit_attention import pallas_attention as pa, pallas_tpu  # noqa: E402

O = pallas_tpu.Options
VARIANTS = {
    "default": O(),
    "none": O(prescale_from=1 << 30, mask_partial=False, compact=False, kv_chunk=0,
              transposed_dkdv=False, stats_rows=False, lse_rows_out=False, k_columns_below=0),
    "no prescale": O(prescale_from=1 << 30),
    "prescale": O(prescale_from=0),
    "mask every tile": O(mask_partial=False),
    "rectangular grid": O(compact=False),
    "no chunks": O(kv_chunk=0),
    "chunks 128": O(kv_chunk=128),
    "chunks 256": O(kv_chunk=256),
    "row-major dkdv": O(transposed_dkdv=False),
    "stats in lanes": O(stats_rows=False, lse_rows_out=False),
    "k rows": O(k_columns_below=0),
    "k columns": O(k_columns_below=1 << 30),
}
PROFILE_SHAPES = [
    (Shape(4, 4096, 32, 8, 128, True), (512, 1024)),
    (Shape(4, 4096, 32, 8, 128, False), (512, 1024)),
    (Shape(4, 2048, 16, 16, 256, True), (512, 512)),
    (Shape(4, 4096, 16, 16, 64, True), (512, 1024)),
    (Shape(4, 2048, 16, 16, 256, False), (512, 512)),
    (Shape(16, 1024, 16, 16, 64, True), (512, 1024)),
]
SMOKE_SHAPES = [(Shape(1, 256, 2, 1, 64, True), (128, 128)), (Shape(1, 256, 2, 1, 128, True), (128, 128))]
# (shape, dtype, tiles): each candidate for every pass
SWEEPS = [
    (Shape(4, 2048, 16, 16, 256, True), "bfloat16",
     [(256, 512), (512, 512), (512, 1024), (1024, 512), (1024, 1024), (256, 1024), (128, 1024)]),
    (Shape(4, 4096, 32, 8, 128, True), "bfloat16",
     [(512, 1024), (1024, 1024), (256, 1024), (512, 512), (1024, 512)]),
    (Shape(4, 4096, 32, 8, 128, False), "bfloat16",
     [(512, 1024), (1024, 1024), (256, 1024), (512, 512), (1024, 512)]),
    (Shape(4, 4096, 16, 16, 64, True), "bfloat16",
     [(512, 1024), (1024, 1024), (256, 1024), (512, 512), (1024, 512)]),
] + [
    (Shape(2, 2048, 16, 4, d, False), "float32",
     [(256, 512), (512, 512), (256, 1024), (512, 1024), (128, 512), (1024, 512)])
    for d in (64, 128, 256)
]


def static(shape: Shape, tiles, *, opts=None, dtype=jnp.bfloat16, before: bool = False):
    bq, bkv = tiles
    s = shape.seq_len
    bq, bkv = min(bq, max(16, 1 << (s - 1).bit_length())), min(bkv, max(16, 1 << (s - 1).bit_length()))
    fields = dict(q_len=s, kv_len=s, head_dim=shape.head_dim,
                  group=shape.num_q_heads // shape.num_kv_heads, block_q=bq, block_kv=bkv,
                  block_q_dkv=bq, block_kv_dkv=bkv, block_q_dq=bq, block_kv_dq=bkv,
                  sm_scale=shape.head_dim ** -0.5, cap=None, cap_method="none",
                  causal=shape.causal, has_bound=False, interpret=None)
    st = pa._Static(**fields)
    return st if before else dataclasses.replace(st, tpu=opts or O())


def _operands(shape: Shape, dtype, seed=1):
    rng = np.random.default_rng(seed)
    b, s, hq, hk, d = (shape.batch, shape.seq_len, shape.num_q_heads, shape.num_kv_heads,
                       shape.head_dim)
    q = jnp.asarray(rng.standard_normal((b, s, hq, d)), dtype)
    k, v = (jnp.asarray(rng.standard_normal((b, s, hk, d)), dtype) for _ in range(2))
    do = jnp.asarray(rng.standard_normal((b, s, hq, d)), dtype)
    lse = jnp.asarray(rng.standard_normal((b, hq, s)) + 10.0, jnp.float32)
    delta = jnp.asarray(rng.standard_normal((b, hq, s)), jnp.float32)
    return q, k, v, do, lse, delta


def kernel_jobs(module, st, operands, fields, interpret=False) -> list[Job]:
    q, k, v, do, lse, delta = operands
    kw = {"interpret": True} if interpret else {}
    return [
        Job(f"{fields['variant']} fwd", functools.partial(module.forward, st=st, with_lse=True, **kw),
            (q, k, v), {**fields, "pass": "fwd"}),
        Job(f"{fields['variant']} dq", functools.partial(module.backward_dq, st=st, **kw),
            (q, k, v, do, lse, delta), {**fields, "pass": "dq"}),
        Job(f"{fields['variant']} dkdv", functools.partial(module.backward_dkdv, st=st, **kw),
            (q, k, v, do, lse, delta), {**fields, "pass": "dkdv"}),
    ]


def _splash_jobs(shape: Shape, operands, fields, interpret) -> list[Job]:
    from benchmarks.kernel_tpu import _bhsd, _forward_and_backward, _splash

    q, k, v, do = operands[:4]
    fn = _splash(shape, 512, interpret=interpret)
    qs = _bhsd((q.astype(jnp.float32) * shape.head_dim ** -0.5).astype(q.dtype))
    args = (qs, _bhsd(k), _bhsd(v), _bhsd(do))
    return [Job("splash 512 fwd", fn, args[:3], {**fields, "pass": "splash fwd"}),
            Job("splash 512 fwd+bwd", _forward_and_backward(fn), args,
                {**fields, "pass": "splash fwd+bwd"})]


def _bhsd_jobs(shape: Shape, tiles, operands, fields, interpret) -> list[Job]:
    """Our forward and forward+backward handed [b, h, s, d] arrays, as splash is: the kernels'
    own transposes then meet the caller's and XLA folds each pair away (what is left is the
    kernels and q's scaling)."""
    from benchmarks.kernel_tpu import _bhsd

    st = static(shape, tiles)
    kw = {"interpret": True} if interpret else {}

    def fwd(qh, kh, vh):
        return _bhsd(pallas_tpu.flash_attention(_bhsd(qh), _bhsd(kh), _bhsd(vh), None, st, **kw))

    def fwd_bwd(qh, kh, vh, doh):
        out, vjp = jax.vjp(fwd, qh, kh, vh)
        return (out, *vjp(doh))

    q, k, v, do = (_bhsd(x) for x in operands[:4])
    return [Job("ours bhsd fwd", fwd, (q, k, v), {**fields, "pass": "bhsd fwd"}),
            Job("ours bhsd fwd+bwd", fwd_bwd, (q, k, v, do), {**fields, "pass": "bhsd fwd+bwd"})]


def _transpose_jobs(shape: Shape, operands, fields) -> list[Job]:
    q, k, v, do = operands[:4]

    def inputs(q, k, v):  # what every kernel call does to its operands
        return tuple(jnp.transpose(x, (0, 2, 1, 3)) for x in (q * 0.1, k, v))

    def output(q):
        return jnp.transpose(q, (0, 2, 1, 3))

    return [Job("transposes in (q scaled, k, v)", inputs, (q, k, v), {**fields, "pass": "xla in"}),
            Job("transpose out (o)", output, (q,), {**fields, "pass": "xla out"})]


def _ours_jobs(shape: Shape, operands, fields) -> list[Job]:
    """The public API as a caller runs it: [b, s, h, d] arrays (the default layout), and
    [b, h, s, d] ones with layout="bhsd" (no transpose around the kernels: issue 49)."""
    from benchmarks.kernel_tpu import _bhsd, _forward_and_backward
    from errkit_attention import ranker_attention

    jobs = []
    for layout, suffix in (("bshd", ""), ("bhsd", " layout=bhsd")):
        def fn(q, k, v, layout=layout):
            return ranker_attention(q, k, v, causal=shape.causal, implementation="pallas",
                                    layout=layout)

        q, k, v, do = (x if layout == "bshd" else _bhsd(x) for x in operands[:4])
        jobs += [Job(f"ours{suffix} fwd", fn, (q, k, v), {**fields, "pass": f"ours{suffix} fwd"}),
                 Job(f"ours{suffix} fwd+bwd", _forward_and_backward(fn), (q, k, v, do),
                     {**fields, "pass": f"ours{suffix} fwd+bwd"})]
    return jobs


def profile_jobs(before, smoke: bool, variants=None, shapes=None) -> list[Job]:
    """variants: names of VARIANTS (None: all); shapes: indices into PROFILE_SHAPES."""
    jobs = []
    interpret = jax.default_backend() != "tpu"
    chosen = SMOKE_SHAPES if smoke else PROFILE_SHAPES
    if shapes is not None and not smoke:
        chosen = [PROFILE_SHAPES[i] for i in shapes]
    for shape, tiles in chosen:
        operands = _operands(shape, jnp.bfloat16)
        base = {"part": "profile", "shape": str(shape), "tiles": list(tiles)}
        jobs += _splash_jobs(shape, operands, {**base, "variant": "splash"}, interpret)
        if not interpret:
            jobs += _ours_jobs(shape, operands, {**base, "variant": "ours (public API)"})
        jobs += _transpose_jobs(shape, operands, {**base, "variant": "xla"})
        jobs += _bhsd_jobs(shape, tiles, operands, {**base, "variant": "ours, [b, h, s, d] in and out"},
                           interpret)
        if before is not None:
            jobs += kernel_jobs(before, static(shape, tiles, before=True), operands,
                                {**base, "variant": "before"}, interpret)
        named = list(VARIANTS.items())
        if variants is not None:
            named = [(name, VARIANTS[name]) for name in variants]
        for name, opts in (named[:2] if smoke else named):
            jobs += kernel_jobs(pallas_tpu, static(shape, tiles, opts=opts), operands,
                                {**base, "variant": name}, interpret)
    return jobs


def sweep_jobs(smoke: bool, which=None) -> list[Job]:
    """which: indices into SWEEPS (None: all)."""
    jobs = []
    interpret = jax.default_backend() != "tpu"
    sweeps = [(SMOKE_SHAPES[0][0], "float32", [(128, 128), (64, 128)])] if smoke else SWEEPS
    if which is not None and not smoke:
        sweeps = [SWEEPS[i] for i in which]
    for shape, dtype, candidates in sweeps:
        operands = _operands(shape, jnp.dtype(dtype))
        for tiles in candidates:
            fields = {"part": "sweep", "shape": str(shape), "dtype": dtype, "tiles": list(tiles),
                      "variant": f"{tiles[0]}x{tiles[1]}"}
            jobs += kernel_jobs(pallas_tpu, static(shape, tiles), operands, fields, interpret)
    return jobs


def float16_jobs(smoke: bool) -> list[Job]:
    """ranker_attention's output and gradients for float16, bfloat16 and float32 inputs holding
    the same (float16) values, each against float64 on the host's CPU: max |error| / max(1,
    max |reference|)."""
    from benchmarks.kernel_tpu import _forward_and_backward
    from errkit_attention import ranker_attention

    cases = [(1, 1024, 4, 4, 128, True, None, "tanh"), (1, 777, 4, 2, 64, False, 5.0, "tanh"),
             (2, 1000, 12, 4, 80, True, 30.0, "soft_sign")]
    if smoke:
        cases = [(1, 72, 2, 1, 64, True, None, "tanh")]
    jobs = []
    cpu = jax.devices("cpu")[0]
    for b, s, hq, hk, d, causal, cap, method in cases:
        rng = np.random.default_rng(s)
        arrays = [rng.standard_normal(shape).astype(np.float16).astype(np.float64)
                  for shape in ((b, s, hq, d), (b, s, hk, d), (b, s, hk, d), (b, s, hq, d))]
        with jax.enable_x64(True), jax.default_device(cpu):
            def ref(q, k, v):
                return ranker_attention(q, k, v, causal=causal, cap=cap, cap_method=method,
                                        implementation="xla")
            want = [np.asarray(x) for x in jax.jit(_forward_and_backward(ref))(
                *(jnp.asarray(a, jnp.float64) for a in arrays))]

        def check(outputs, want=want):
            errs = {}
            for name, g, w in zip(("out", "dq", "dk", "dv"), outputs, want):
                g = np.asarray(g, np.float64)
                errs[name] = float(np.max(np.abs(g - w)) / max(1.0, np.max(np.abs(w))))
            return {"errors": errs}

        def ours(q, k, v, causal=causal, cap=cap, method=method):
            return ranker_attention(q, k, v, causal=causal, cap=cap, cap_method=method,
                                    implementation="pallas")

        for dtype in ("float16", "bfloat16", "float32"):
            args = tuple(jnp.asarray(a, dtype) for a in arrays)
            jobs.append(Job(f"float16 check {dtype}", _forward_and_backward(ours), args,
                            {"part": "float16", "dtype": dtype, "case": [b, s, hq, hk, d, causal,
                                                                          cap, method]},
                            check=check))
    return jobs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--before", default="")
    parser.add_argument("--parts", default="profile,sweep,float16")
    parser.add_argument("--budget", type=float, default=400.0, help="seconds; later jobs skipped")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--workers", type=int, default=12)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--property", type=int, default=40, help="calls of the property part")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", default="",
                        help="profile: the Options variants to time, ';'-separated (all when empty)")
    parser.add_argument("--sweeps", default="",
                        help="sweep: indices into SWEEPS, comma-separated (all when empty)")
    parser.add_argument("--shapes", default="",
                        help="profile: indices into PROFILE_SHAPES, comma-separated (all when empty)")
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants.split(";") if v and v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(map(repr, unknown))}; known: {', '.join(VARIANTS)}")
    for flag, count in (("--shapes", len(PROFILE_SHAPES)), ("--sweeps", len(SWEEPS))):
        given = getattr(args, flag[2:])
        if given and not all(i.strip().isdigit() and int(i) < count for i in given.split(",")):
            parser.error(f"{flag}: comma-separated indices below {count}, got {given!r}")
    deadline = time.monotonic() + args.budget
    sink = Sink(os.path.join(args.out, "profile.jsonl"))
    sink({"part": "header", "jax": jax.__version__, "backend": jax.default_backend(),
          "device": jax.devices()[0].device_kind, "date": time.strftime("%Y-%m-%d %H:%M:%S")})
    before = importlib.import_module(args.before) if args.before else None
    parts = args.parts.split(",")
    for part in parts:
        if part == "profile":
            jobs = profile_jobs(
                before, args.smoke,
                variants=args.variants.split(";") if args.variants else None,
                shapes=[int(i) for i in args.shapes.split(",")] if args.shapes else None)
        elif part == "sweep":
            jobs = sweep_jobs(args.smoke, [int(i) for i in args.sweeps.split(",")]
                              if args.sweeps else None)
        elif part == "float16":
            jobs = float16_jobs(args.smoke)
        elif part == "property":  # a first pass of benchmarks/kernel_property.py
            from benchmarks import kernel_property

            items = kernel_property.cases(args.property, args.seed, **(
                kernel_property.CPU_LIMITS if args.smoke else {}))
            jobs = kernel_property.tpu_jobs(items, sink)
        else:
            raise SystemExit(f"unknown part {part!r}")
        run_jobs(jobs, sink, repeats=2 if args.smoke else args.repeats, workers=args.workers,
                 deadline=deadline, stream=part == "property")
    return 0


if __name__ == "__main__":
    sys.exit(main())

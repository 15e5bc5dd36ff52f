"""Make each TPU family's typical compile-stage and memory failures happen on a real TPU, and keep
the full texts they print (issue 51), with the run of the fix errkit offers for the XLA path's HBM
exhaustion (RA815).

    PYTHONPATH=$PYTHONPATH:. python3 scripts/capture_tpu_texts.py --out OUT_DIR        # on a TPU (v5e: about 2-3 minutes)
    python scripts/capture_tpu_texts.py --cpu-smoke --out /tmp/smoke                # this script's code paths on a CPU
    python scripts/capture_tpu_texts.py --corpus OUT_DIR/captures.json               # the captures as corpus cases (YAML), with explain's answers

On the chip it needs jax, jaxlib, libtpu and numpy only (not errkit's own dependencies), holds the
chip in this one process, runs the cases in order (the XLA path's HBM exhaustion and its fixes first)
and stops starting new ones past --budget seconds. It writes two files under --out, rewritten after
every case (a run cut short keeps what it captured): `captures.json` (the versions, the device and
one record per case: what was called, the entry it should give, how it ended, the exception's class,
str(exc) and the whole traceback as Python prints it, the seconds it took, and for a fix its
measurements) and `captures.txt` (a summary).

The cases, by family (the Python checks of each kernel's bad calls are scripts/verify_advice_tpu.py's):
- the XLA path (jax.nn.dot_product_attention, implementation='xla') at B=16, S=16384, H=32, D=128 in
  bfloat16, compiled under jit and called eagerly: HBM exhausted by the S x S logits (RA815); then
  RA815's fixes at that shape: splash attention and this project's kernel, run, timed, checked
  against XLA's attention on the first query rows, with the chip's peak memory;
- Mosaic (a pallas_call of one's own): a bfloat16 block of 8 rows (E2002, RA805), a dynamic lane
  offset Mosaic cannot prove aligned (E2003, RA816), blocks too large for scoped VMEM (RA810), a
  scalar-prefetch array too large for SMEM (RA811), float16 and int8 x bfloat16 matmuls, a bfloat16
  comparison, a reshape across sublanes, a strided lane load (RA800-RA807);
- splash, TPU flash, paged, ragged paged attention and this project's kernel: blocks too large for
  VMEM, and float16 inputs.

--cpu-smoke runs the same cases at small shapes, lowering the kernels for TPU on this CPU (the
fixes in interpret mode): it checks this script, not the chip (tests/scan/test_capture_tpu_texts.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent.parent))  # this project's kernel (errkit_attention/), whatever PYTHONPATH says


@dataclasses.dataclass
class Case:
    id: str
    family: str
    kind: str  # the corpus's family of failure (mosaic-compile, vmem-oom, smem-oom, hbm-oom, fix)
    expect: str | None  # the entry the text should be answered with (None: not known before the run; a fix: the entry it fixes)
    what: str
    run: object


CASES: list[Case] = []


def case(id, family, kind, expect, what):
    def register(fn):
        CASES.append(Case(id, family, kind, expect, what, fn))
        return fn
    return register


class Ctx:
    """What a case needs: jax, the mode (chip or smoke), shapes, compiling and running."""

    def __init__(self, smoke: bool):
        import jax
        import jax.numpy as jnp

        self.jax, self.jnp, self.smoke = jax, jnp, smoke
        self.cache: dict = {}

    def pick(self, chip, smoke):
        return smoke if self.smoke else chip

    def compile(self, f, *args):
        """Compile for the TPU (on the chip), or lower for it (smoke)."""
        if self.smoke:
            return self.jax.jit(f).trace(*args).lower(lowering_platforms=("tpu",))
        return self.jax.jit(f).lower(*args).compile()

    def spec(self, shape, dtype):
        return self.jax.ShapeDtypeStruct(shape, dtype)

    def random(self, shape, dtype, seed):
        key = self.jax.random.key(seed)
        return self.jax.random.normal(key, shape, self.jnp.float32).astype(dtype)


# -- the XLA path's HBM exhaustion, and its fixes ---------------------------------------------------


def _attention_shape(ctx):
    return ctx.pick((16, 16384, 32, 128), (1, 256, 2, 128))  # B, S, H, D


def _qkv(ctx):
    if "qkv" not in ctx.cache:
        shape = _attention_shape(ctx)
        ctx.cache["qkv"] = tuple(ctx.random(shape, ctx.jnp.bfloat16, seed) for seed in (1, 2, 3))
    return ctx.cache["qkv"]


@case("xla-hbm-jit", "dot-product-attention", "hbm-oom", "RA815",
      "jax.jit(jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation='xla')) compiled for [16, 16384, 32, 128] bfloat16")
def xla_hbm_jit(ctx):
    spec = ctx.spec(_attention_shape(ctx), ctx.jnp.bfloat16)
    ctx.compile(lambda q, k, v: ctx.jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="xla"), spec, spec, spec)


@case("xla-hbm-eager", "dot-product-attention", "hbm-oom", "RA815",
      "jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation='xla') called eagerly on [16, 16384, 32, 128] bfloat16 arrays")
def xla_hbm_eager(ctx):
    q, k, v = _qkv(ctx)
    out = ctx.jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="xla")
    ctx.jax.block_until_ready(out)


def _reference_rows(ctx, rows: int):
    """XLA's causal attention of the first `rows` queries of example 0, heads 0 and 1 (it needs only
    the first `rows` keys): what a fix's output must equal there."""
    q, k, v = _qkv(ctx)
    cut = lambda x: x[:1, :rows, :2]  # noqa: E731
    return ctx.jax.nn.dot_product_attention(cut(q), cut(k), cut(v), is_causal=True, implementation="xla").astype(ctx.jnp.float32)


def _measure(ctx, name, attention):
    """Run a fix on the case's arrays: seconds of the first call (compile included) and of a second,
    the error against XLA on the first rows, the chip's peak memory."""
    jax, jnp = ctx.jax, ctx.jnp
    q, k, v = _qkv(ctx)
    fn = jax.jit(attention)
    before = _in_use(jax)
    start = time.perf_counter()
    out = jax.block_until_ready(fn(q, k, v))
    first = time.perf_counter() - start
    start = time.perf_counter()
    out = jax.block_until_ready(fn(q, k, v))
    second = time.perf_counter() - start
    after = _in_use(jax)
    rows = min(1024, q.shape[1])
    want = _reference_rows(ctx, rows)
    got = out[:1, :rows, :2].astype(jnp.float32)
    try:
        stats = jax.devices()[0].memory_stats() or {}
    except Exception:  # noqa: BLE001 - not every backend reports memory
        stats = {}
    return {"fix": name, "shape_bshd": list(q.shape), "dtype": str(q.dtype), "first_call_s": round(first, 3), "second_call_s": round(second, 3),
            "max_abs_error_first_rows": float(jnp.max(jnp.abs(got - want))), "finite": bool(jnp.isfinite(out).all()),
            "bytes_in_use_before": before, "bytes_in_use_after": after,
            "peak_bytes_in_use": stats.get("peak_bytes_in_use"), "bytes_limit": stats.get("bytes_limit")}


def _in_use(jax):
    try:
        return (jax.devices()[0].memory_stats() or {}).get("bytes_in_use")
    except Exception:  # noqa: BLE001 - not every backend reports memory
        return None


@case("fix-splash-hbm", "splash", "fix", "RA815", "RA815's fix: splash attention (causal) at the same shape, vmapped over the batch")
def fix_splash(ctx):
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as splash
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as mask_lib

    _, seq, heads, head_dim = _attention_shape(ctx)
    mask = mask_lib.MultiHeadMask([mask_lib.CausalMask((seq, seq))] * heads)
    kernel = splash.make_splash_mha(mask, head_shards=1, q_seq_shards=1, interpret=ctx.smoke)
    bhsd = lambda x: x.transpose(0, 2, 1, 3)  # noqa: E731
    return _measure(ctx, "splash", lambda q, k, v: bhsd(ctx.jax.vmap(kernel)(bhsd(q) * head_dim ** -0.5, bhsd(k), bhsd(v))))


@case("fix-ours-hbm", "ranker", "fix", "RA815", "RA815's alternative fix: this project's kernel (ranker_attention, implementation='pallas', causal) at the same shape")
def fix_ours(ctx):
    from errkit_attention import ranker_attention

    return _measure(ctx, "ranker_attention", lambda q, k, v: ranker_attention(q, k, v, causal=True, implementation="pallas"))


def _drop_arrays(ctx):
    ctx.cache.pop("qkv", None)


# -- Mosaic: a pallas_call of one's own ------------------------------------------------------------


def _pallas(ctx, kernel, out_shape, **kw):
    from jax.experimental import pallas as pl

    return lambda *xs: pl.pallas_call(kernel, out_shape=out_shape, **kw)(*xs)


@case("mosaic-bf16-block-8-rows", "pallas-call", "mosaic-compile", "RA805",
      "a bfloat16 (256, 512) array in blocks of (8, 512): bfloat16 tiles are 16 rows")
def mosaic_block(ctx):
    from jax.experimental import pallas as pl

    jnp = ctx.jnp

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2

    spec = ctx.spec((256, 512), jnp.bfloat16)
    f = _pallas(ctx, kernel, spec, grid=(32,), in_specs=[pl.BlockSpec((8, 512), lambda i: (i, 0))],
                out_specs=pl.BlockSpec((8, 512), lambda i: (i, 0)))
    ctx.compile(f, spec)


@case("mosaic-unaligned-lane-offset", "pallas-call", "mosaic-compile", "RA816",
      "a load of 128 lanes at an offset read from a scalar-prefetch array (not provably a multiple of 128)")
def mosaic_offset(ctx):
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    jnp = ctx.jnp

    def kernel(off_ref, x_ref, o_ref):
        o_ref[...] = x_ref[:, pl.ds(off_ref[0], 128)]

    grid_spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=(1,),
                                             in_specs=[pl.BlockSpec((8, 1024), lambda i, off: (0, 0))],
                                             out_specs=pl.BlockSpec((8, 128), lambda i, off: (0, 0)))
    f = _pallas(ctx, kernel, ctx.spec((8, 128), jnp.float32), grid_spec=grid_spec)
    ctx.compile(f, ctx.spec((1,), jnp.int32), ctx.spec((8, 1024), jnp.float32))


@case("mosaic-vmem-blocks", "pallas-call", "vmem-oom", "RA810",
      "a float32 (4096, 8192) array in blocks of (2048, 4096): 32 MiB a block, double-buffered, over the 16 MiB scoped VMEM")
def mosaic_vmem(ctx):
    from jax.experimental import pallas as pl

    jnp = ctx.jnp

    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]

    spec = ctx.spec((4096, 8192), jnp.float32)
    block = pl.BlockSpec((2048, 4096), lambda i, j: (i, j))
    f = _pallas(ctx, kernel, spec, grid=(2, 2), in_specs=[block, block], out_specs=block)
    ctx.compile(f, spec, spec)


@case("mosaic-smem-prefetch", "pallas-call", "smem-oom", "RA811",
      "a scalar-prefetch int32 array of 2**19 entries (2 MiB) for 1 MiB of SMEM")
def mosaic_smem(ctx):
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    jnp = ctx.jnp

    def kernel(idx_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...] + idx_ref[pl.program_id(0)].astype(jnp.float32)

    grid_spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=(8,),
                                             in_specs=[pl.BlockSpec((8, 128), lambda i, idx: (i, 0))],
                                             out_specs=pl.BlockSpec((8, 128), lambda i, idx: (i, 0)))
    f = _pallas(ctx, kernel, ctx.spec((64, 128), jnp.float32), grid_spec=grid_spec)
    ctx.compile(f, ctx.spec((1 << 19,), jnp.int32), ctx.spec((64, 128), jnp.float32))


def _matmul_case(ctx, lhs_dtype, rhs_dtype, out_dtype):
    jnp = ctx.jnp

    def kernel(a_ref, b_ref, o_ref):
        o_ref[...] = jnp.dot(a_ref[...], b_ref[...], preferred_element_type=out_dtype)

    f = _pallas(ctx, kernel, ctx.spec((128, 128), out_dtype))
    ctx.compile(f, ctx.spec((128, 128), lhs_dtype), ctx.spec((128, 128), rhs_dtype))


@case("mosaic-float16-matmul", "pallas-call", "mosaic-compile", None, "a float16 x float16 matmul into float32 inside a kernel")
def mosaic_f16(ctx):
    _matmul_case(ctx, ctx.jnp.float16, ctx.jnp.float16, ctx.jnp.float32)


@case("mosaic-int8-bf16-matmul", "pallas-call", "mosaic-compile", None, "an int8 x bfloat16 matmul into float32 inside a kernel")
def mosaic_int8(ctx):
    _matmul_case(ctx, ctx.jnp.int8, ctx.jnp.bfloat16, ctx.jnp.float32)


@case("mosaic-bf16-compare", "pallas-call", "mosaic-compile", None, "a bfloat16 comparison inside a kernel")
def mosaic_compare(ctx):
    jnp = ctx.jnp

    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.where(x_ref[...] > 0, x_ref[...], 0)

    spec = ctx.spec((16, 128), jnp.bfloat16)
    ctx.compile(_pallas(ctx, kernel, spec), spec)


@case("mosaic-reshape-sublanes", "pallas-call", "mosaic-compile", None, "a bfloat16 reshape (8, 16, 128) -> (128, 128) inside a kernel")
def mosaic_reshape(ctx):
    jnp = ctx.jnp

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...].reshape(128, 128)

    ctx.compile(_pallas(ctx, kernel, ctx.spec((128, 128), jnp.bfloat16)), ctx.spec((8, 16, 128), jnp.bfloat16))


@case("mosaic-strided-lanes", "pallas-call", "mosaic-compile", None, "a strided load of every second lane (64 of 128) inside a kernel")
def mosaic_strided(ctx):
    from jax.experimental import pallas as pl

    jnp = ctx.jnp

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[:, pl.ds(0, 64, stride=2)]

    ctx.compile(_pallas(ctx, kernel, ctx.spec((8, 64), jnp.float32)), ctx.spec((8, 128), jnp.float32))


# -- the attention kernels: blocks too large for VMEM, float16 --------------------------------------


def _splash(ctx, dtype, block):
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as splash
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as mask_lib

    heads, seq, head_dim = 2, ctx.pick(8192, 512), 256
    mask = mask_lib.MultiHeadMask([mask_lib.CausalMask((seq, seq))] * heads)
    sizes = splash.BlockSizes(block_q=block, block_kv=block, block_kv_compute=block) if block else None
    kernel = splash.make_splash_mha(mask, head_shards=1, q_seq_shards=1, block_sizes=sizes)
    spec = ctx.spec((heads, seq, head_dim), dtype)
    ctx.compile(kernel, spec, spec, spec)


@case("splash-vmem-blocks", "splash", "vmem-oom", "RA810", "splash attention, head_dim 256, BlockSizes(block_q=block_kv=block_kv_compute=4096) at seq 8192")
def splash_vmem(ctx):
    _splash(ctx, ctx.jnp.bfloat16, ctx.pick(4096, 512))


@case("splash-float16", "splash", "mosaic-compile", None, "splash attention on float16 q, k, v (head_dim 256, default blocks)")
def splash_f16(ctx):
    _splash(ctx, ctx.jnp.float16, None)


def _flash(ctx, dtype, block):
    from jax.experimental.pallas.ops.tpu import flash_attention as fa

    seq = ctx.pick(8192, 512)
    sizes = fa.BlockSizes(block_q=block, block_k_major=block, block_k=block, block_b=1) if block else None
    spec = ctx.spec((1, 2, seq, 256), dtype)
    ctx.compile(lambda q, k, v: fa.flash_attention(q, k, v, causal=True, block_sizes=sizes), spec, spec, spec)


@case("flash-vmem-blocks", "tpu-flash", "vmem-oom", "RA810", "TPU flash attention, head_dim 256, BlockSizes(block_q=block_k_major=block_k=4096) at seq 8192")
def flash_vmem(ctx):
    _flash(ctx, ctx.jnp.bfloat16, ctx.pick(4096, 512))


@case("flash-float16", "tpu-flash", "mosaic-compile", None, "TPU flash attention on float16 q, k, v")
def flash_f16(ctx):
    _flash(ctx, ctx.jnp.float16, None)


@case("paged-vmem-pages", "tpu-paged", "vmem-oom", "RA810", "paged attention with pages_per_compute_block=256 of 256-token pages, head_dim 256")
def paged_vmem(ctx):
    from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention

    jnp = ctx.jnp
    batch, heads, kv_heads, head_dim, page = 4, 8, 8, 256, ctx.pick(256, 16)
    per_seq = ctx.pick(256, 8)
    pages = batch * per_seq
    q = ctx.spec((batch, heads, head_dim), jnp.bfloat16)
    kv = ctx.spec((kv_heads, pages, page, head_dim), jnp.bfloat16)
    f = lambda q, k, v, lengths, idx: paged_attention(q, k, v, lengths, idx, pages_per_compute_block=per_seq)  # noqa: E731
    ctx.compile(f, q, kv, kv, ctx.spec((batch,), jnp.int32), ctx.spec((batch, per_seq), jnp.int32))


@case("ragged-vmem-limit", "tpu-ragged", "vmem-oom", "RA810", "ragged paged attention with vmem_limit_bytes=1 MiB")
def ragged_vmem(ctx):
    from jax.experimental.pallas.ops.tpu.ragged_paged_attention import ragged_paged_attention

    jnp = ctx.jnp
    tokens, heads, kv_heads, head_dim, page, seqs, per_seq = 256, 8, 2, 128, 16, 4, 16
    q = ctx.spec((tokens, heads, head_dim), jnp.bfloat16)
    kv = ctx.spec((seqs * per_seq, page, 2 * kv_heads, head_dim), jnp.bfloat16)
    f = lambda q, kv, lens, idx, cu, n: ragged_paged_attention(q, kv, lens, idx, cu, n, vmem_limit_bytes=1 << 20)  # noqa: E731
    ctx.compile(f, q, kv, ctx.spec((seqs,), jnp.int32), ctx.spec((seqs, per_seq), jnp.int32), ctx.spec((seqs + 1,), jnp.int32),
                ctx.spec((1,), jnp.int32))


@case("ours-vmem-blocks", "ranker", "vmem-oom", "RA810", "this project's kernel with BlockSizes(4096, 4096) at head_dim 256, seq 8192")
def ours_vmem(ctx):
    from errkit_attention import BlockSizes, ranker_attention

    spec = ctx.spec((1, ctx.pick(8192, 512), 2, 256), ctx.jnp.bfloat16)
    block = ctx.pick(4096, 256)
    ctx.compile(lambda q, k, v: ranker_attention(q, k, v, causal=True, implementation="pallas", config=BlockSizes(block, block)),
                spec, spec, spec)


@case("ours-float16", "ranker", "mosaic-compile", None, "this project's kernel on float16 q, k, v")
def ours_f16(ctx):
    from errkit_attention import ranker_attention

    spec = ctx.spec((1, 1024, 2, 128), ctx.jnp.float16)
    ctx.compile(lambda q, k, v: ranker_attention(q, k, v, causal=True, implementation="pallas"), spec, spec, spec)


# -- running ----------------------------------------------------------------------------------------


def versions(ctx) -> dict:
    from importlib import metadata

    def version(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    device = ctx.jax.devices()[0]
    return {"jax": ctx.jax.__version__, "jaxlib": version("jaxlib"), "libtpu": version("libtpu") or version("libtpu-nightly"),
            "python": platform.python_version(), "platform": device.platform, "device_kind": device.device_kind,
            "devices": len(ctx.jax.devices()), "smoke": ctx.smoke}


def innermost_file(exc: BaseException) -> str:
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last or ""


def run_case(ctx, c: Case) -> dict:
    record = {"id": c.id, "family": c.family, "kind": c.kind, "expect": c.expect, "what": c.what}
    start = time.perf_counter()
    try:
        result = c.run(ctx)
    except Exception as exc:  # noqa: BLE001 - the failure is what is captured
        record.update(outcome="raised", exception=f"{type(exc).__module__}.{type(exc).__qualname__}", message=str(exc),
                      traceback="".join(traceback.format_exception(exc)),
                      raised_here=os.path.abspath(innermost_file(exc)) == str(HERE))
    else:
        record.update(outcome="ran", result=result)
    record["seconds"] = round(time.perf_counter() - start, 3)
    return record


def write(out: Path, data: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "captures.json.tmp"
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, out / "captures.json")
    lines = [f"{data['versions']}", ""]
    for r in data["records"]:
        said = (r.get("message") or "").strip().splitlines()
        lines.append(f"{r['id']:<30} {r['outcome']:<7} {r['seconds']:>7.1f}s  expect {r['expect'] or '-':<6} "
                     f"{r.get('exception', '')}: {said[0][:160] if said else r.get('result', '')}")
    lines += [f"{s}: skipped ({why})" for s, why in data["skipped"]]
    (out / "captures.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def capture(out: Path, smoke: bool, budget: float, only: list[str] | None = None) -> dict:
    if smoke:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    ctx = Ctx(smoke)
    data = {"command": "python3 scripts/capture_tpu_texts.py" + (" --cpu-smoke" if smoke else ""), "versions": versions(ctx),
            "records": [], "skipped": []}
    if not smoke and data["versions"]["platform"] != "tpu":
        raise SystemExit(f"capture_tpu_texts: the default device is {data['versions']['platform']}, not a TPU (--cpu-smoke to try this script on a CPU)")
    start = time.perf_counter()
    for c in CASES:
        if only and c.id not in only:
            continue
        if time.perf_counter() - start > budget:
            data["skipped"].append((c.id, f"past the {budget:.0f} s budget"))
            continue
        data["records"].append(run_case(ctx, c))
        if c.id == "fix-ours-hbm":
            _drop_arrays(ctx)  # the 6 GiB of the attention cases are not needed further
        write(out, data)
        print(f"capture_tpu_texts: {c.id}: {data['records'][-1]['outcome']} in {data['records'][-1]['seconds']} s", file=sys.stderr)
    data["seconds"] = round(time.perf_counter() - start, 1)
    write(out, data)
    return data


def corpus(path: Path) -> str:
    """The captured failures as corpus cases (tests/realworld/cases/*.yaml), each with explain's
    answer in its note: the code and values to keep once checked (run on a machine with errkit's
    dependencies)."""
    import io

    from ruamel.yaml import YAML
    from ruamel.yaml.scalarstring import LiteralScalarString

    sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent.parent / "tests" / "realworld")]
    import report

    data = json.loads(path.read_text(encoding="utf-8"))
    v = data["versions"]
    where = f"captured on {v['device_kind']}, jax {v['jax']}, jaxlib {v['jaxlib']}, libtpu {v['libtpu']} (scripts/capture_tpu_texts.py"
    cases = []
    for r in data["records"]:
        if r["outcome"] != "raised" or r.get("raised_here"):
            continue
        rc, results = report.explain(r["traceback"])
        first = results[0] if results else {}
        got = first.get("code") if rc == 0 and first.get("confidence") == "exact" else None
        cases.append({"id": f"tpu-v5e-{r['id']}", "source": f"{where}, case {r['id']})", "source_type": "run", "class": "plain",
                      "kind": r["kind"], "text": LiteralScalarString(r["traceback"].rstrip("\n")), "code": got or r["expect"],
                      "values": first.get("params") or {} if got else {},
                      "note": f"{r['what']}; expected {r['expect'] or 'unknown'}, explain gave {first.get('code')} {first.get('confidence')}"})
    y = YAML()
    y.width = 4096
    buf = io.StringIO()
    y.dump(cases, buf)
    return buf.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="the folder to write captures.json and captures.txt into")
    ap.add_argument("--cpu-smoke", action="store_true", help="small shapes, lowered for TPU on this CPU: checks the script")
    ap.add_argument("--budget", type=float, default=200.0, help="start no case after this many seconds (default 200)")
    ap.add_argument("--only", action="append", help="run only this case (repeatable)")
    ap.add_argument("--corpus", type=Path, help="print the captures of this captures.json as corpus cases, and stop")
    args = ap.parse_args(argv)
    if args.corpus:
        print(corpus(args.corpus), end="")
        return 0
    if not args.out:
        ap.error("--out is needed")
    data = capture(args.out, args.cpu_smoke, args.budget, args.only)
    print(f"capture_tpu_texts: {len(data['records'])} cases in {data['seconds']} s, {len(data['skipped'])} skipped; wrote {args.out / 'captures.json'}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Mosaic GPU forward of ranker attention for Hopper (sm_90a): FlashAttention-3's design in Pallas.

The "cuda" branch of the forward's platform choice in errkit_attention/pallas_attention.py, taken on
sm_90a for bfloat16 / float16 inputs at head_dim 64, 128 or 256 with the default tiles
(errkit_attention/tuning.py ``gpu_forward``); the backward stays Triton's. ``forward`` takes the arguments
of the Triton forward there (q [b, sq, hq, d]; k, v [b, skv, hkv, d]; the bound last when there
is one, already clipped to [0, kv_len]) and returns its results: o, and with ``with_lse`` the
log-sum-exp in base 2, [b, hq, sq] float32, which the Triton backward reads.

One CTA per (batch, query head, tile of 2 * block_q query rows), three warpgroups:

- warpgroup 2, the producer (40 registers): TMA loads of the K and V blocks [block_kv, d] of
  the query head's kv head (GQA: h // group) into a ring of ``num_stages`` shared-memory
  buffers, each completing a "loaded" barrier; before refilling a buffer it waits on the
  buffer's "consumed" barrier, on which both consumers arrive;
- warpgroups 0 and 1, the consumers (232 registers): each owns block_q = 64 query rows (one
  TMA load into shared memory), computes S = Q K^T and O += P V with warpgroup MMAs (wgmma:
  16-bit operands from shared memory, P from registers, float32 accumulators) and the online
  softmax in base 2 between them (log2(e) folded into the scale, exp2). A "schedule" barrier
  staggers the two consumers (ping-pong: one's softmax runs under the other's matmuls);
- the epilogue writes O (and the lse) through shared memory with TMA stores.

The key blocks visited are one list for the producer and both consumers, so that every phase
of every barrier is waited by each of its waiters: the blocks the CTA's rows may attend, i.e.
the context [0, ctx) (causal: up to the CTA's last row) and, with a bound, the diagonal blocks
after it. Blocks past them are never loaded (causal block skipping). A consumer masks
(errkit_attention/tiles.py ``allowed``, the mask of errkit_attention/reference.py) only the blocks not wholly
visible to its own rows. A block wholly masked for a consumer's rows (at most one per list,
where the two consumers' diagonals differ) is computed anyway and changes nothing: MASK_VALUE is
finite, so after a visible key its probabilities are exp2(MASK_VALUE - m) = 0, and before one
what it summed is rescaled by that same 0 (every real row sees a key: itself, or key 0).

Sequence lengths are multiples of 8 (TMA copies into shared memory tiled in 8-row tiles refuse
others; errkit_attention/tuning.py sends those calls to Triton), not necessarily of the tiles: TMA loads
zero-fill the rows past the end of q, k and v, TMA stores drop them, keys past kv_len are
masked. Nothing is padded or sliced in XLA.

Grid (batch, head, q tile): Mosaic GPU launches the last axis as CUDA's x, so the q tile is
the fastest axis and the CTAs running together share their K/V in L2; a causal grid runs its
heaviest (last) tiles first.

``interpret=True`` runs this same kernel (warpgroups, barriers, TMA copies, pipeline, masks,
softmax, epilogue) in Mosaic GPU's interpreter on the CPU (``InterpretGPUParams``), with four
leaf operations swapped (``_Ops``) for what jax 0.10.2's interpreter can run: the two wgmmas
become jnp dots of the same shared-memory tiles (its wgmma takes no ``transpose_ref`` operand
and no register operand, and it has no ``run_state``), ``layout_cast`` and
``broadcasted_iota(layout=...)`` (no CPU rule) their layout-free forms. The interpreter also
refuses TMA reads past the end of an array (the GPU zero-fills them): it runs whole tiles only.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from errkit_attention.reference import MASK_VALUE, soft_cap
from errkit_attention.tanh_exp2 import tanh_exp2
from errkit_attention.tiles import allowed, div

# --------------------------------------------------------------------------
# Configuration.
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Config:
    block_q: int  # query rows per consumer warpgroup, wgmma's M (a CTA takes 2 * block_q)
    block_kv: int  # keys per pipeline stage
    num_stages: int  # K/V buffers in flight


# Per head_dim, with the shared memory per CTA the lowering allocates (16-bit, with the lse;
# tests/kernel/test_mosaic_gpu.py reads it back), of the 232,448 B a Hopper CTA may take:
#   64:  q / o 16 KiB + 3 stages of K and V 96 KiB:  117,880 B
#   128: q / o 32 KiB + 2 stages of K and V 128 KiB: 167,000 B  (3 stages: 232,536 B, over)
#   256: q / o 64 KiB + 2 stages of K and V 128 KiB: 199,768 B  (block_kv 64: S [64, 64] and the
#        [64, 256] accumulator, 32 + 128 float32 per thread, within the consumers' 232 registers)
CONFIGS = {64: Config(64, 128, 3), 128: Config(64, 128, 2), 256: Config(64, 64, 2)}
COMPUTE_WGS = 2  # consumer warpgroups; one producer warpgroup besides
SMEM_PER_CTA = 232_448
_CONSUMER_REGISTERS, _PRODUCER_REGISTERS = 232, 40  # 2 * 232 + 40 per thread: 64,512 of 65,536
_LOG2E = 1.4426950408889634
_WGMMA = plgpu.Layout.WGMMA
_ROW = plgpu.Layout.WGMMA.reduce(1)  # a per-row vector of a wgmma result


def smem_bytes(head_dim: int, itemsize: int = 2, with_lse: bool = True) -> int:
    """Shared memory of one CTA's scratch (buffers and barriers; Mosaic's own reserve not counted)."""
    c = CONFIGS[head_dim]
    tiles = (COMPUTE_WGS * c.block_q + 2 * c.num_stages * c.block_kv) * head_dim * itemsize
    lse = COMPUTE_WGS * c.block_q * 4 if with_lse else 0
    barriers = 8 * (COMPUTE_WGS + 4 * c.num_stages + 1)
    return tiles + lse + barriers


# --------------------------------------------------------------------------
# The leaf operations the interpreter runs differently (module docstring).
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Ops:
    interpret: bool
    s_shape: tuple[int, int]  # [block_q, block_kv]

    def cast(self, x, layout):
        """x in `layout` (a loop carry's layout must not change between iterations)."""
        return x if self.interpret else plgpu.layout_cast(x, layout)

    def iota(self, shape, dimension):
        """int32 iota of a [block_q, block_kv] tile, in the layout of S."""
        if self.interpret:
            return lax.broadcasted_iota(jnp.int32, shape, dimension)
        return plgpu.broadcasted_iota(jnp.int32, shape, dimension, layout=_WGMMA)

    def qk(self, q_smem, k_smem, while_running):
        """S = Q K^T, float32 [block_q, block_kv]; `while_running()` runs between the wgmma's
        issue and its wait."""
        if self.interpret:
            while_running()
            return lax.dot_general(q_smem[...], k_smem[...], (((1,), (1,)), ((), ())),
                                   preferred_element_type=jnp.float32)

        def compute(acc_ref):
            plgpu.wgmma(acc_ref, q_smem, plgpu.transpose_ref(k_smem, (1, 0)))
            while_running()
            return acc_ref[...]

        return pl.run_scoped(compute, plgpu.ACC(self.s_shape, jnp.float32))

    def pv(self, acc, p, v_smem):
        """acc + P V, float32 [block_q, head_dim]; P (16-bit) from registers."""
        if self.interpret:
            return acc + jnp.dot(p, v_smem[...], preferred_element_type=jnp.float32)

        def compute(acc_ref):
            plgpu.wgmma(acc_ref, p, v_smem)

        return pl.run_state(compute)(plgpu.ACC.init(acc))


# --------------------------------------------------------------------------
# Index arithmetic (Python ints where static, int32 scalars where traced).
# --------------------------------------------------------------------------


def _cdiv(a, b: int):
    return -(-a // b) if isinstance(a, int) else div(a + (b - 1), b)


def _min(a, b):
    return min(a, b) if isinstance(a, int) and isinstance(b, int) else jnp.minimum(a, b)


def _max(a, b):
    return max(a, b) if isinstance(a, int) and isinstance(b, int) else jnp.maximum(a, b)


def _sections(st, r0, rows: int, bkv: int, ctx):
    """The key blocks a CTA whose query rows are [r0, r0 + rows) visits, in order, as ranges
    (lo, hi, step of lo): the context blocks [0, n_ctx), keys j < ctx (causal: j < r0 + rows);
    then, with a bound, the blocks holding the diagonal j == i of its rows not among them. The
    step, the block's place in the list, picks its buffer: step % num_stages."""
    ctx_len = ctx if st.has_bound else st.kv_len
    n_ctx = _cdiv(_min(ctx_len, r0 + rows) if st.causal else ctx_len, bkv)
    sections = [(0, n_ctx, 0)]
    if st.has_bound:
        lo = _max(n_ctx, div(r0, bkv))
        sections.append((lo, _min(_cdiv(r0 + rows, bkv), _cdiv(st.kv_len, bkv)), n_ctx))
    return sections


def _whole_blocks(st, i0, bkv: int, ctx):
    """How many leading key blocks every query row from i0 on sees whole (no mask): keys of the
    context below ctx (causal: at or below i0)."""
    n = div(ctx if st.has_bound else st.kv_len, bkv)
    return _min(n, div(i0 + 1, bkv)) if st.causal else n


def _capped(s, st):
    """The capped logits in base 2 of raw scores s = q k^T: soft_cap(s * sm_scale) * log2(e),
    the cap's tanh being errkit_attention/tanh_exp2.py's (as the Triton kernels'), without
    a cap log2(e) folded into the scale."""
    if st.cap is None or st.cap_method == "none":
        return s * (st.sm_scale * _LOG2E)
    s = s * st.sm_scale
    if st.cap_method == "tanh":
        return tanh_exp2(s * (1.0 / st.cap)) * (st.cap * _LOG2E)
    return soft_cap(s, st.cap, st.cap_method) * _LOG2E


def _interpret_params(st, q_len: int, bkv: int):
    """Mosaic GPU's interpreter, strict (reads past an array raise, memory not yet written
    reads NaN) unless the call reads past the end of q or k / v: then such reads give zeros, as
    a TMA load does on the GPU. (It drops a TMA store that runs past the end whole, where the
    GPU writes the rows inside: with q_len no multiple of 2 * block_q, the last tile's o and lse
    are lost there.)"""
    from jax._src.pallas.mosaic_gpu.interpret.params import InterpretGPUParams

    if q_len % (COMPUTE_WGS * CONFIGS[st.head_dim].block_q) or st.kv_len % bkv:
        return InterpretGPUParams(out_of_bounds_reads="uninitialized", uninitialized_memory="zero")
    return InterpretGPUParams()


# --------------------------------------------------------------------------
# The kernel.
# --------------------------------------------------------------------------


def forward(*args, st, with_lse: bool, interpret: bool = False):
    """[q, k, v, (bound)] -> (o,) or (o, lse), as errkit_attention/pallas_attention.py's ``_forward``.

    st: that module's ``_Static`` (lengths, group, scale, cap, mask; its tiles are Triton's and
    unused here); interpret: run in Mosaic GPU's interpreter (module docstring)."""
    q, k, v, *rest = args
    batch, q_len, num_q_heads, head_dim = q.shape
    dtype = q.dtype
    cfg = CONFIGS[head_dim]
    bq, bkv, stages = cfg.block_q, cfg.block_kv, cfg.num_stages
    n_tiles = _cdiv(q_len, COMPUTE_WGS * bq)
    kv_partial = st.kv_len % bkv != 0
    ops = _Ops(interpret, (bq, bkv))

    def body(*refs, qo_smem, k_smem, v_smem, lse_smem, q_loaded, k_loaded, v_loaded,
             k_consumed, v_consumed, schedule):
        q_ref, k_ref, v_ref, *refs = refs
        bound_ref = refs.pop(0) if st.has_bound else None
        o_ref, *lse_ref = refs
        b, h, wg = lax.axis_index("batch"), lax.axis_index("head"), lax.axis_index("wg")
        hk = h if st.group == 1 else div(h, st.group)
        tile = lax.axis_index("q_tile")
        if st.causal:  # the heaviest tiles first
            tile = (n_tiles - 1) - tile
        r0 = tile * (COMPUTE_WGS * bq)  # the CTA's first query row
        ctx = bound_ref[b] if st.has_bound else None
        sections = _sections(st, r0, COMPUTE_WGS * bq, bkv, ctx)

        def slot(step):
            return lax.rem(step, jnp.asarray(stages, step.dtype))

        def schedule_round():
            plgpu.barrier_arrive(schedule)
            plgpu.barrier_wait(schedule)

        @pl.when(wg == COMPUTE_WGS)
        def _producer():
            plgpu.set_max_registers(_PRODUCER_REGISTERS, action="decrease")

            def load(j, step0, lo):
                step = j - lo + step0
                s = slot(step)
                keys = (b, pl.ds(j * bkv, bkv), hk)

                @pl.when(step >= stages)  # the buffer's previous block is consumed
                def _():
                    plgpu.barrier_wait(k_consumed.at[s])

                plgpu.copy_gmem_to_smem(k_ref.at[keys], k_smem.at[s], k_loaded.at[s])

                @pl.when(step >= stages)
                def _():
                    plgpu.barrier_wait(v_consumed.at[s])

                plgpu.copy_gmem_to_smem(v_ref.at[keys], v_smem.at[s], v_loaded.at[s])

            for lo, hi, step0 in sections:
                pl.loop(lo, hi)(functools.partial(load, step0=step0, lo=lo))

            # Then the last blocks' consumption: each thread waiting on a barrier observes
            # every phase of it (Mosaic GPU's interpreter checks it; here, at the end, the
            # producer has nothing else to do).
            lo, hi, step0 = sections[-1]
            n_steps = step0 + _max(hi - lo, 0)

            @pl.loop(_max(n_steps - stages, 0), n_steps)
            def _drain(step):
                @pl.when(step >= stages)  # the buffer was waited on before
                def _():
                    plgpu.barrier_wait(k_consumed.at[slot(step)])
                    plgpu.barrier_wait(v_consumed.at[slot(step)])

        @pl.when(wg < COMPUTE_WGS)
        def _consumer():
            plgpu.set_max_registers(_CONSUMER_REGISTERS, action="increase")
            i0 = r0 + wg * bq  # this warpgroup's first query row
            q_smem = qo_smem.at[wg]
            plgpu.copy_gmem_to_smem(q_ref.at[b, pl.ds(i0, bq), h], q_smem, q_loaded.at[wg])
            plgpu.barrier_wait(q_loaded.at[wg])

            def step(j, carry, *, step0, lo, masked):
                acc, m, l = carry
                s = slot(j - lo + step0)  # block j is the section's (j - lo)-th
                plgpu.barrier_wait(k_loaded.at[s])
                c = _capped(ops.qk(q_smem, k_smem.at[s], schedule_round), st)
                plgpu.barrier_arrive(k_consumed.at[s])
                if masked:
                    mask = allowed(st, i0, j * bkv, bq, bkv, ctx, kv_partial=kv_partial,
                                   iota=ops.iota)
                    if mask is not None:
                        c = jnp.where(mask, c, MASK_VALUE)
                m_new = jnp.maximum(m, c.max(axis=1))
                correction = jnp.exp2(m - m_new)
                p = jnp.exp2(c - lax.broadcast_in_dim(m_new, c.shape, [0]))
                acc = acc * lax.broadcast_in_dim(correction, acc.shape, [0])
                l = l * correction
                p16 = p.astype(dtype)
                if head_dim <= 128:  # the row sum before the barriers (JAX's attention_mgpu order)
                    l = l + p.sum(axis=1)
                    acc, l, m_new, p16 = lax.optimization_barrier((acc, l, m_new, p16))
                plgpu.barrier_arrive(schedule)  # softmax done
                plgpu.barrier_wait(v_loaded.at[s])
                plgpu.barrier_wait(schedule)  # the other consumer's matmuls are issued
                if head_dim > 128:
                    l = l + p.sum(axis=1)
                acc = ops.pv(acc, p16, v_smem.at[s])
                plgpu.barrier_arrive(v_consumed.at[s])
                return acc, m_new, l

            # The context section in two loops, the blocks this warpgroup's rows see whole
            # (no mask) and the others; then the diagonal section (masked).
            (ctx_lo, ctx_hi, _), *diagonal = sections
            whole = _min(_whole_blocks(st, i0, bkv, ctx), ctx_hi)
            loops = [(ctx_lo, whole, 0, False, ctx_lo), (whole, ctx_hi, 0, True, ctx_lo)]
            loops += [(lo, hi, step0, True, lo) for lo, hi, step0 in diagonal]
            carry = (ops.cast(jnp.zeros((bq, head_dim), jnp.float32), _WGMMA),
                     ops.cast(jnp.full((bq,), -jnp.inf, jnp.float32), _ROW),
                     ops.cast(jnp.zeros((bq,), jnp.float32), _ROW))
            pl.when(wg == 1)(schedule_round)  # consumer 1 starts one round behind
            for start, stop, step0, masked, lo in loops:
                carry = lax.fori_loop(start, stop, functools.partial(
                    step, step0=step0, lo=lo, masked=masked), carry)
            pl.when(wg == 0)(schedule_round)  # and consumer 0 ends one behind
            acc, m, l = carry

            # Rows that visited no key (none of the real rows: each sees itself or key 0) get
            # o = 0, lse = 0, as from the Triton kernel.
            visited = l > 0.0
            l = jnp.where(visited, l, 1.0)
            q_smem[...] = (acc / lax.broadcast_in_dim(l, acc.shape, [0])).astype(dtype)
            if with_lse:
                lse_smem.at[wg][...] = jnp.where(visited, m + jnp.log(l) * _LOG2E, 0.0)
            plgpu.commit_smem()
            plgpu.copy_smem_to_gmem(q_smem, o_ref.at[b, pl.ds(i0, bq), h])
            if with_lse:
                plgpu.copy_smem_to_gmem(lse_smem.at[wg], lse_ref[0].at[b, h, pl.ds(i0, bq)])
            plgpu.wait_smem_to_gmem(0)

    swizzled = dict(transforms=(plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128)))
    scratch = dict(
        qo_smem=plgpu.SMEM((COMPUTE_WGS, bq, head_dim), dtype, **swizzled),
        k_smem=plgpu.SMEM((stages, bkv, head_dim), dtype, **swizzled),
        v_smem=plgpu.SMEM((stages, bkv, head_dim), dtype, **swizzled),
        lse_smem=plgpu.SMEM((COMPUTE_WGS, bq), jnp.float32) if with_lse else None,
        q_loaded=plgpu.Barrier(num_barriers=COMPUTE_WGS),
        k_loaded=plgpu.Barrier(num_barriers=stages),
        v_loaded=plgpu.Barrier(num_barriers=stages),
        k_consumed=plgpu.Barrier(num_arrivals=COMPUTE_WGS, num_barriers=stages),
        v_consumed=plgpu.Barrier(num_arrivals=COMPUTE_WGS, num_barriers=stages),
        schedule=plgpu.Barrier(num_arrivals=COMPUTE_WGS),
    )
    out_type = [jax.ShapeDtypeStruct(q.shape, dtype)]
    if with_lse:
        out_type.append(jax.ShapeDtypeStruct((batch, num_q_heads, q_len), jnp.float32))
    outs = plgpu.kernel(
        body, out_type=out_type, scratch_types=scratch,
        grid=(batch, num_q_heads, n_tiles), grid_names=("batch", "head", "q_tile"),
        num_threads=COMPUTE_WGS + 1, thread_name="wg",
        compiler_params=plgpu.CompilerParams(approx_math=True),
        kernel_name="ranker_attention_fwd_mgpu",
        interpret=_interpret_params(st, q_len, bkv) if interpret else None,
    )(q, k, v, *rest[:1])
    return tuple(outs)


# --------------------------------------------------------------------------
# Reading a lowered module back (tests, benchmarks/bench_kernel.py --compile).
# --------------------------------------------------------------------------

MOSAIC_GPU_CALL = "mosaic_gpu_v2"  # the custom call of a Mosaic GPU kernel in jax 0.10's StableHLO


@dataclasses.dataclass(frozen=True)
class Launch:
    """What a lowered Mosaic GPU kernel launches with: its gpu.launch operands."""

    grid: tuple[int, int, int]  # CUDA's (x, y, z): the Pallas grid reversed
    threads: int  # per CTA: 128 per warpgroup
    smem: int  # dynamic shared memory per CTA, bytes (every scratch buffer, barriers included)


def launches(lowered) -> list[Launch]:
    """The launches of the Mosaic GPU kernels of a ``jax.stages.Lowered`` (lowered for CUDA), in
    module order, read from their serialized modules (the ``gpu.launch`` op's operands)."""
    from jax._src.interpreters import mlir
    from jax._src.lib import mosaic_gpu_dialect
    from jax._src.lib.mlir import ir

    def ops(op):  # nested ops, not those inside a gpu.launch (the kernel's body: thousands)
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    yield inner.operation
                    if not inner.operation.name.endswith("gpu.launch"):
                        yield from ops(inner.operation)

    found = []
    for op in ops(lowered.compiler_ir("stablehlo").operation):
        if (op.name != "stablehlo.custom_call"
                or ir.StringAttr(op.attributes["call_target_name"]).value != MOSAIC_GPU_CALL):
            continue
        context = mlir.make_ir_context()
        mosaic_gpu_dialect.register_dialect(context)
        context.allow_unregistered_dialects = True  # its ops are serialized as stable_mosaic_gpu.*
        with context:
            config = ir.DictAttr(op.attributes["mhlo.backend_config"])
            kernel = ir.Module.parse(ir.StringAttr(config["module"]).value_bytes)
            (launch,) = [o for o in ops(kernel.operation) if o.name.endswith("gpu.launch")]
            values = [ir.IntegerAttr(v.owner.attributes["value"]).value
                      for v in launch.operands[1:8]]
        found.append(Launch(tuple(values[:3]), values[3] * values[4] * values[5], values[6]))
    return found

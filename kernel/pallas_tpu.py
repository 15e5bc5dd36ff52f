"""TPU (Mosaic) pallas_calls of ranker attention: forward, dQ, dK/dV.

The "tpu" branch of the platform choice in kernel/pallas_attention.py (``_call``): ``forward``,
``backward_dq`` and ``backward_dkdv`` take the arguments of the Triton / interpret calls there
(q, o [b, s, h, d]; lse, delta [b, h, s]; the bound last, when there is one) and return their
results, so the branches are interchangeable under ``lax.platform_dependent``.
``flash_attention`` composes them (custom_vjp) like ``_flash_attention`` there. In here:

- operands are transposed to [b, h, s, d] in XLA, so that every block's two minor dims are
  [rows, d] (rows a multiple of 8 and 16, d the whole head_dim: a block dim equal to the
  array's is legal whatever its size, so head_dim 80 needs no padding to 128);
- nothing is padded: the grids are cdiv(length, block), and the last block of a sequence
  may be partial. Mosaic leaves the rows of such a block past the end unspecified on a read
  (they may be NaN, and p * NaN = NaN in a dot even where p is masked to 0), so every tile
  that may hold them has them zeroed (``_zero_past``) before it is used; writes past the
  end are dropped. Keys past the end are masked (``tiles.allowed``), and queries past the
  end too in dK/dV;
- tiles: kernel/tuning.py's TPU rows (512 x 1024 for 16-bit head_dim <= 128, measured on a TPU
  v5e), with a VMEM limit of three quarters of the core's (``_params``);
- the kv (forward, dQ) or q (dK/dV) axis is the innermost, sequential ("arbitrary") grid
  axis; the running softmax state / gradients live in VMEM scratch, VMEM-sized blocks are
  DMA'd per step (no whole-sequence slab), tiles wholly masked skip their compute
  (``pl.when``); the key tiles after the last one a query tile needs (forward, dQ), and the
  query tiles before the first one a key tile needs (dK/dV), keep the previous block index
  (no new DMA);
- per-row vectors (m, l, lse, delta) are [rows, 128] lane-replicated 2-D arrays, masks come
  from 2-D iotas;
- the bound is a scalar-prefetch operand (``pltpu.PrefetchScalarGridSpec``, in SMEM), read by
  the index maps and the kernels.

``interpret=True`` runs the same kernels on the CPU (tests/kernel/test_lowering_tpu.py checks
them against kernel.reference there).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from kernel.reference import MASK_VALUE, soft_cap
from kernel.tiles import allowed
from kernel.tiles import cap_grad as _cap_grad
from kernel.tiles import div as _idiv

LANES = 128  # lane width of the replicated per-row vectors
# VMEM per core when no TPU is attached: TPU v7x's, the smallest of the generations with 64 MiB
# or more (v5e, v6e: 128 MiB).
FALLBACK_VMEM = 64 * 2**20
_LOG2E = 1.4426950408889634
_NT = (((1,), (1,)), ((), ()))  # a @ b^T


def _capped(q, k, st):
    """(scaled logits or None, capped logits in base 2), [rows, cols] float32."""
    raw = lax.dot_general(q, k, _NT, preferred_element_type=jnp.float32)
    if st.cap is None or st.cap_method == "none":
        return None, raw * (st.sm_scale * _LOG2E)
    s = raw * st.sm_scale
    return s, soft_cap(s, st.cap, st.cap_method) * _LOG2E


def _ctx_len(st, ctx):
    return ctx if st.has_bound else st.kv_len


def _tile_needed(st, i0, j0, bq, bkv, ctx):
    """Scalar bool: the (query tile at i0, key tile at j0) holds an allowed pair."""
    ctx_len = _ctx_len(st, ctx)
    in_ctx = j0 < ctx_len
    if st.causal:
        in_ctx = in_ctx & (j0 <= i0 + bq - 1)
    if st.has_bound:  # the diagonal j == i with j < kv_len
        in_ctx = in_ctx | ((j0 < i0 + bq) & (i0 < j0 + bkv) & (jnp.maximum(i0, j0) < st.kv_len))
    return in_ctx & (i0 < st.q_len)  # (a tile past the last query would be skipped)


def _last_kv(st, i0, bq, bkv, ctx):
    """Index of the last key tile the query tile at i0 needs (>= 0)."""
    hi = _ctx_len(st, ctx)
    if st.causal:
        hi = jnp.minimum(hi, i0 + bq)
    if st.has_bound:
        hi = jnp.maximum(hi, jnp.minimum(i0 + bq, st.kv_len))
    return jnp.maximum(_idiv(hi + (bkv - 1), bkv) - 1, 0)


def _first_q(st, j0, bq, bkv, ctx):
    """Index of the first query tile that needs the key tile at j0."""
    if st.causal or st.has_bound:
        first = _idiv(j0, bq)
        if st.has_bound and not st.causal:
            first = jnp.where(j0 < ctx, 0, first)
        return first
    return jnp.int32(0)


def _mask(c, allowed):
    return c if allowed is None else jnp.where(allowed, c, MASK_VALUE)


def _zero_past(x, row0, length: int, partial: bool):
    """The tile x [rows, cols] (its first row is sequence row row0) with the rows past the
    end of the sequence (row0 + r >= length) set to 0; x itself when no block of the
    sequence is partial."""
    if not partial:
        return x
    rows = row0 + lax.broadcasted_iota(jnp.int32, x.shape, 0)
    return jnp.where(rows < length, x, jnp.zeros((), x.dtype))


def vmem_capacity() -> int:
    """VMEM of the attached TPU core; FALLBACK_VMEM when there is none (lowering for TPU from
    another host)."""
    try:
        return int(pltpu.get_tpu_info().vmem_capacity_bytes)
    except Exception:  # no TPU attached: the fallback
        return FALLBACK_VMEM


def _params(n_seq_axes: int):
    """Grid semantics, and a VMEM limit of three quarters of the core's (Mosaic's default scope
    is 16 MiB, which kernel/tuning.py's larger TPU tiles, with a cap's extra [rows, cols]
    temporaries in dK/dV, can outgrow)."""
    return pltpu.CompilerParams(
        dimension_semantics=("parallel",) * (4 - n_seq_axes) + ("arbitrary",) * n_seq_axes,
        vmem_limit_bytes=vmem_capacity() * 3 // 4)


def _bhsd(x):
    return jnp.transpose(x, (0, 2, 1, 3))


def _lanes(x):  # [b, h, s] -> [b, h, s, LANES]
    return jnp.broadcast_to(x[..., None], (*x.shape, LANES))


def _bound_args(st, bound):
    return (bound,) if st.has_bound else ()


def _split(st, refs):
    """(ctx or None, remaining refs): the scalar-prefetch bound comes first."""
    if st.has_bound:
        return refs[0], refs[1:]
    return None, refs


# --------------------------------------------------------------------------
# Forward.
# --------------------------------------------------------------------------


def _fwd_kernel(*refs, st, with_lse):
    bound_ref, refs = _split(st, refs)
    q_ref, k_ref, v_ref, o_ref, *refs = refs
    lse_ref = refs.pop(0) if with_lse else None
    m_scr, l_scr, acc_scr = refs
    b, i, j = pl.program_id(0), pl.program_id(2), pl.program_id(3)
    bq, bkv = st.block_q, st.block_kv
    q_partial, kv_partial = st.q_len % bq != 0, st.kv_len % bkv != 0
    i0, j0 = i * bq, j * bkv
    ctx = bound_ref[b] if st.has_bound else None

    @pl.when(j == 0)
    def _():
        m_scr[...] = jnp.full(m_scr.shape, -jnp.inf, jnp.float32)
        l_scr[...] = jnp.zeros(l_scr.shape, jnp.float32)
        acc_scr[...] = jnp.zeros(acc_scr.shape, jnp.float32)

    @pl.when(_tile_needed(st, i0, j0, bq, bkv, ctx))
    def _():
        q = _zero_past(q_ref[...], i0, st.q_len, q_partial)
        k = _zero_past(k_ref[...], j0, st.kv_len, kv_partial)
        v = _zero_past(v_ref[...], j0, st.kv_len, kv_partial)
        _, c = _capped(q, k, st)
        c = _mask(c, allowed(st, i0, j0, bq, bkv, ctx, kv_partial=kv_partial, iota_2d=True))
        m_prev, l_prev = m_scr[...], l_scr[...]  # [bq, LANES]
        m_new = jnp.maximum(m_prev, jnp.max(c, axis=1, keepdims=True))
        correction = jnp.exp2(m_prev - m_new)
        p = jnp.exp2(c - m_new[:, :1])
        l_scr[...] = correction * l_prev + jnp.sum(p, axis=1, keepdims=True)
        m_scr[...] = m_new
        acc_scr[...] = (correction[:, :1] * acc_scr[...]
                        + jnp.dot(p.astype(v.dtype), v, preferred_element_type=jnp.float32))

    @pl.when(j == pl.num_programs(3) - 1)
    def _():
        l = l_scr[...]
        visited = l > 0.0  # rows that saw no key: o = 0, lse = 0
        l_safe = jnp.where(visited, l, 1.0)
        o_ref[...] = (acc_scr[...] / l_safe[:, :1]).astype(o_ref.dtype)
        if with_lse:
            lse_ref[...] = jnp.where(visited, m_scr[...] + jnp.log2(l_safe), 0.0)


def _row_maps(st, bq: int, bkv: int):
    """Index maps of the kernels that own a block of query rows (forward, dQ) over the grid
    (batch, q head, row block, kv block): the rows' block, and the kv head's key block, the last
    needed one repeated for skipped tiles (no new DMA)."""
    def q_map(b, h, i, j, *bref):
        return b, h, i, 0

    def kv_map(b, h, i, j, *bref):
        ctx = bref[0][b] if st.has_bound else None
        j = jnp.minimum(j, _last_kv(st, i * bq, bq, bkv, ctx))
        return b, _idiv(h, st.group) if st.group > 1 else h, j, 0

    return q_map, kv_map


def forward(*args, st, with_lse: bool, interpret=False):
    """[q, k, v, (bound)] -> [o] or [o, lse] as kernel/pallas_attention.py's ``_forward``."""
    q, k, v, *rest = args
    bound = rest[0] if st.has_bound else None
    batch, sq, hq, d = q.shape
    skv = k.shape[1]
    bq, bkv, g = st.block_q, st.block_kv, st.group

    q_map, kv_map = _row_maps(st, bq, bkv)

    out_shape = [jax.ShapeDtypeStruct((batch, hq, sq, d), q.dtype)]
    out_specs = [pl.BlockSpec((None, None, bq, d), q_map)]
    if with_lse:
        out_shape.append(jax.ShapeDtypeStruct((batch, hq, sq, LANES), jnp.float32))
        out_specs.append(pl.BlockSpec((None, None, bq, LANES), q_map))
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=int(st.has_bound),
        grid=(batch, hq, pl.cdiv(sq, bq), pl.cdiv(skv, bkv)),
        in_specs=[pl.BlockSpec((None, None, bq, d), q_map),
                  pl.BlockSpec((None, None, bkv, d), kv_map),
                  pl.BlockSpec((None, None, bkv, d), kv_map)],
        out_specs=out_specs,
        scratch_shapes=[pltpu.VMEM((bq, LANES), jnp.float32),
                        pltpu.VMEM((bq, LANES), jnp.float32),
                        pltpu.VMEM((bq, d), jnp.float32)])
    kernel = functools.partial(_fwd_kernel, st=st, with_lse=with_lse)
    outs = pl.pallas_call(kernel, grid_spec=grid_spec, out_shape=out_shape,
                          compiler_params=_params(1), interpret=interpret,
                          name="ranker_attention_fwd_tpu")(
        *_bound_args(st, bound), _bhsd(q), _bhsd(k), _bhsd(v))
    result = [_bhsd(outs[0])]
    if with_lse:
        result.append(outs[1][..., 0])
    return tuple(result)


# --------------------------------------------------------------------------
# dQ.
# --------------------------------------------------------------------------


def _dq_kernel(*refs, st):
    bound_ref, refs = _split(st, refs)
    q_ref, k_ref, v_ref, do_ref, lse_ref, delta_ref, dq_ref, dq_scr = refs
    b, i, j = pl.program_id(0), pl.program_id(2), pl.program_id(3)
    bq, bkv = st.block_q_dq, st.block_kv_dq
    q_partial, kv_partial = st.q_len % bq != 0, st.kv_len % bkv != 0
    i0, j0 = i * bq, j * bkv
    ctx = bound_ref[b] if st.has_bound else None

    @pl.when(j == 0)
    def _():
        dq_scr[...] = jnp.zeros(dq_scr.shape, jnp.float32)

    @pl.when(_tile_needed(st, i0, j0, bq, bkv, ctx))
    def _():
        q, do, lse, delta = (_zero_past(r[...], i0, st.q_len, q_partial)
                             for r in (q_ref, do_ref, lse_ref, delta_ref))
        k, v = (_zero_past(r[...], j0, st.kv_len, kv_partial) for r in (k_ref, v_ref))
        s, c = _capped(q, k, st)
        c = _mask(c, allowed(st, i0, j0, bq, bkv, ctx, kv_partial=kv_partial, iota_2d=True))
        p = jnp.exp2(c - lse[:, :1])
        dpv = lax.dot_general(do, v, _NT, preferred_element_type=jnp.float32)
        ds = p * (dpv - delta[:, :1])
        grad = _cap_grad(s, st)
        if grad is not None:
            ds = ds * grad
        dq_scr[...] += jnp.dot(ds.astype(k.dtype), k, preferred_element_type=jnp.float32)

    @pl.when(j == pl.num_programs(3) - 1)
    def _():
        dq_ref[...] = (dq_scr[...] * st.sm_scale).astype(dq_ref.dtype)


def backward_dq(*args, st, interpret=False):
    """[q, k, v, do, lse, delta, (bound)] -> [dq] as ``_backward_dq``."""
    q, k, v, do, lse, delta, *rest = args
    bound = rest[0] if st.has_bound else None
    batch, sq, hq, d = q.shape
    skv = k.shape[1]
    bq, bkv, g = st.block_q_dq, st.block_kv_dq, st.group

    q_map, kv_map = _row_maps(st, bq, bkv)

    tile = pl.BlockSpec((None, None, bq, d), q_map)
    vec = pl.BlockSpec((None, None, bq, LANES), q_map)
    kv = pl.BlockSpec((None, None, bkv, d), kv_map)
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=int(st.has_bound),
        grid=(batch, hq, pl.cdiv(sq, bq), pl.cdiv(skv, bkv)),
        in_specs=[tile, kv, kv, tile, vec, vec], out_specs=[tile],
        scratch_shapes=[pltpu.VMEM((bq, d), jnp.float32)])
    kernel = functools.partial(_dq_kernel, st=st)
    (dq,) = pl.pallas_call(kernel, grid_spec=grid_spec,
                           out_shape=[jax.ShapeDtypeStruct((batch, hq, sq, d), q.dtype)],
                           compiler_params=_params(1), interpret=interpret,
                           name="ranker_attention_dq_tpu")(
        *_bound_args(st, bound), _bhsd(q), _bhsd(k), _bhsd(v), _bhsd(do),
        _lanes(lse), _lanes(delta))
    return (_bhsd(dq),)


# --------------------------------------------------------------------------
# dK / dV: one program row per (batch, kv head, key tile); the innermost axis walks the
# query group's heads x query tiles (GQA / MQA summed in VMEM, no per-query-head partials).
# --------------------------------------------------------------------------


def _dkdv_kernel(*refs, st, n_q):
    bound_ref, refs = _split(st, refs)
    q_ref, k_ref, v_ref, do_ref, lse_ref, delta_ref, dk_ref, dv_ref, dk_scr, dv_scr = refs
    b, j, t = pl.program_id(0), pl.program_id(2), pl.program_id(3)
    bq, bkv = st.block_q_dkv, st.block_kv_dkv
    q_partial, kv_partial = st.q_len % bq != 0, st.kv_len % bkv != 0
    i0, j0 = lax.rem(t, jnp.asarray(n_q, t.dtype)) * bq, j * bkv
    ctx = bound_ref[b] if st.has_bound else None

    @pl.when(t == 0)
    def _():
        dk_scr[...] = jnp.zeros(dk_scr.shape, jnp.float32)
        dv_scr[...] = jnp.zeros(dv_scr.shape, jnp.float32)

    @pl.when(_tile_needed(st, i0, j0, bq, bkv, ctx))
    def _():
        q, do, lse, delta = (_zero_past(r[...], i0, st.q_len, q_partial)
                             for r in (q_ref, do_ref, lse_ref, delta_ref))
        k, v = (_zero_past(r[...], j0, st.kv_len, kv_partial) for r in (k_ref, v_ref))
        s, c = _capped(q, k, st)
        c = _mask(c, allowed(st, i0, j0, bq, bkv, ctx, kv_partial=kv_partial, iota_2d=True,
                              q_partial=q_partial))
        p = jnp.exp2(c - lse[:, :1])  # [bq, bkv]
        dv_scr[...] += jnp.dot(p.astype(do.dtype).T, do, preferred_element_type=jnp.float32)
        dpv = lax.dot_general(do, v, _NT, preferred_element_type=jnp.float32)
        ds = p * (dpv - delta[:, :1])
        grad = _cap_grad(s, st)
        if grad is not None:
            ds = ds * grad
        dk_scr[...] += jnp.dot(ds.astype(q.dtype).T, q, preferred_element_type=jnp.float32)

    @pl.when(t == pl.num_programs(3) - 1)
    def _():
        dk_ref[...] = (dk_scr[...] * st.sm_scale).astype(dk_ref.dtype)
        dv_ref[...] = dv_scr[...].astype(dv_ref.dtype)


def backward_dkdv(*args, st, interpret=False):
    """[q, k, v, do, lse, delta, (bound)] -> [dk, dv] as ``_backward_dkdv``."""
    q, k, v, do, lse, delta, *rest = args
    bound = rest[0] if st.has_bound else None
    batch, sq, hq, d = q.shape
    skv, hkv = k.shape[1], k.shape[2]
    bq, bkv, g = st.block_q_dkv, st.block_kv_dkv, st.group
    n_q = pl.cdiv(sq, bq)

    def kv_map(b, h, j, t, *bref):
        return b, h, j, 0

    def q_map(b, h, j, t, *bref):
        ctx = bref[0][b] if st.has_bound else None
        iq = jnp.maximum(lax.rem(t, jnp.asarray(n_q, t.dtype)), _first_q(st, j * bkv, bq, bkv, ctx))
        return b, h * g + _idiv(t, n_q), iq, 0

    tile = pl.BlockSpec((None, None, bq, d), q_map)
    vec = pl.BlockSpec((None, None, bq, LANES), q_map)
    kv = pl.BlockSpec((None, None, bkv, d), kv_map)
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=int(st.has_bound),
        grid=(batch, hkv, pl.cdiv(skv, bkv), g * n_q),
        in_specs=[tile, kv, kv, tile, vec, vec], out_specs=[kv, kv],
        scratch_shapes=[pltpu.VMEM((bkv, d), jnp.float32),
                        pltpu.VMEM((bkv, d), jnp.float32)])
    kernel = functools.partial(_dkdv_kernel, st=st, n_q=n_q)
    out = jax.ShapeDtypeStruct((batch, hkv, skv, d), k.dtype)
    dk, dv = pl.pallas_call(kernel, grid_spec=grid_spec, out_shape=[out, out],
                            compiler_params=_params(1), interpret=interpret,
                            name="ranker_attention_dkdv_tpu")(
        *_bound_args(st, bound), _bhsd(q), _bhsd(k), _bhsd(v), _bhsd(do),
        _lanes(lse), _lanes(delta))
    return _bhsd(dk), _bhsd(dv)


# --------------------------------------------------------------------------
# The three calls as one differentiable function (arrays as kernel/pallas_attention.py's
# ``pallas_attention`` passes them, unpadded): a TPU-only stand-in for its
# ``_flash_attention``, with the same arguments.
# --------------------------------------------------------------------------


def _operands(st, *arrays):
    return [a for a in arrays if a is not None]


@functools.partial(jax.custom_vjp, nondiff_argnums=(4, 5))
def flash_attention(q, k, v, bound, st, interpret=False):
    return forward(*_operands(st, q, k, v, bound), st=st, with_lse=False,
                   interpret=interpret)[0]


def _flash_attention_fwd(q, k, v, bound, st, interpret):
    out, lse = forward(*_operands(st, q, k, v, bound), st=st, with_lse=True,
                       interpret=interpret)
    return out, (q, k, v, bound, out, lse)


def _flash_attention_bwd(st, interpret, residuals, do):
    q, k, v, bound, out, lse = residuals
    delta = jnp.sum(out.astype(jnp.float32) * do.astype(jnp.float32), axis=-1)
    delta = jnp.transpose(delta, (0, 2, 1))  # [b, hq, sq], like lse
    args = _operands(st, q, k, v, do, lse, delta, bound)
    (dq,) = backward_dq(*args, st=st, interpret=interpret)
    dk, dv = backward_dkdv(*args, st=st, interpret=interpret)
    return dq, dk, dv, None


flash_attention.defvjp(_flash_attention_fwd, _flash_attention_bwd)

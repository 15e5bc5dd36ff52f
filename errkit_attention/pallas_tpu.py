"""TPU (Mosaic) pallas_calls of ranker attention: forward, dQ, dK/dV.

The "tpu" branch of the platform choice in errkit_attention/pallas_attention.py (``_call``): ``forward``,
``backward_dq`` and ``backward_dkdv`` take the arguments of the Triton / interpret calls there
(q, o [b, s, h, d], or [b, h, s, d] with the call's layout "bhsd" (``st.layout``); lse, delta
[b, h, s]; the bound last, when there is one) and return their results in the same layout, so
the branches are interchangeable under ``lax.platform_dependent``.
``flash_attention`` composes them (custom_vjp) like ``_flash_attention`` there. In here:

- operands are transposed to [b, h, s, d] in XLA (layout "bshd"; a "bhsd" call's are read as
  they are, and its results written as they are: no transpose at all), so that every block's two minor dims are
  [rows, d] (a block dim equal to the array's is legal whatever its size, so head_dim 80 needs
  no padding to 128). The transpose of q also scales it (``Options.prescale_from``): by
  sm_scale * log2(e) without a cap, so a tile's logits in base 2 are q k^T as the MXU returns
  them, with no multiply per logit; by sm_scale with one. float16 operands are widened to
  float32 there too (``compute_dtype``): a TPU v5e's Mosaic has no float16 vector load ("Invalid
  vector type for load"), and float16 -> float32 is exact, so float16 gets float32's kernels,
  tiles and accuracy; results are rounded back to float16 by the transposes back;
- v and do are rounded to bfloat16 in XLA where a TPU's MXU would round them anyway (float32 and
  float16 at the default matmul precision: ``rounded``), and delta is computed from the same
  rounded do, so that the backward's dp - delta cancels where it should;
- below head_dim 128 (``Options.k_columns_below``) the forward reads k transposed, as
  [b, h, d, s]: q k^T is then a plain product, with no key tile transposed in the kernel;
- nothing is padded: the grids are cdiv(length, block), and the last block of a sequence
  may be partial. Mosaic leaves the rows of such a block past the end unspecified on a read
  (they may be NaN, and p * NaN = NaN in a dot even where p is masked to 0), so the tiles that
  may hold them have the rows that reach a sum over the sequence zeroed (``_zero_past``); writes
  past the end are dropped. Keys past the end are masked (``tiles.allowed``), and queries past
  the end too in dK/dV;
- each tile is classified by scalar tests before any vector work: not needed (skipped), whole
  (every pair allowed: computed without a mask) or partial (masked; with ``Options.kv_chunk``
  computed in chunks of the streamed axis, the chunks that hold no allowed pair skipped: a
  causal diagonal tile of 512 x 1024 does half its work);
- causal attention without a bound walks a compacted grid (``Options.compact``): one step per
  needed tile, read from a scalar-prefetched table of packed (tile, tile, first, last) indices,
  instead of a rectangle whose upper half is skipped steps;
- tiles: errkit_attention/tuning.py's TPU rows (measured on a TPU v5e), with a VMEM limit of three
  quarters of the core's (``_params``);
- the forward and dQ kernels own a query tile and stream key tiles (the last, sequential grid
  axis); the dK/dV kernel owns a key tile and streams its kv head's query group x query tiles,
  and computes its tiles transposed (``Options.transposed_dkdv``: keys along the rows, so
  P^T dO and dS^T Q are plain products and no [rows, cols] tile is transposed), with lse and
  delta as rows [b, h, 1, s] (``Options.stats_rows``; [b, h, s, 128] lane-replicated where the
  query block is not a multiple of 128 lanes, then with the row-major kernel of before);
  running softmax state and gradients live in VMEM scratch;
- the bound is a scalar-prefetch operand (``pltpu.PrefetchScalarGridSpec``, in SMEM), read by
  the index maps and the kernels.

``interpret=True`` runs the same kernels on the CPU (tests/kernel/test_lowering_tpu.py checks
them against errkit_attention.reference there).
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from errkit_attention.reference import MASK_VALUE, bshd_shape, soft_cap
from errkit_attention.tiles import allowed
from errkit_attention.tiles import cap_grad as _cap_grad
from errkit_attention.tiles import div as _idiv

LANES = 128  # lane width of the replicated per-row vectors
# VMEM per core when no TPU is attached: TPU v7x's, the smallest of the generations with 64 MiB
# or more (v5e, v6e: 128 MiB).
FALLBACK_VMEM = 64 * 2**20
_LOG2E = 1.4426950408889634
_NT = (((1,), (1,)), ((), ()))  # a @ b^T
# A compacted grid's steps are packed into one int32 each: two tile indices of _BITS bits, and
# a first / last flag; beyond _MAX_STEPS steps (SMEM), the rectangular grid.
_BITS = 14
_MASK = (1 << _BITS) - 1
_FIRST, _LAST = 1 << (2 * _BITS), 1 << (2 * _BITS + 1)
_MAX_STEPS = 1 << 14


@dataclasses.dataclass(frozen=True)
class Options:
    """The structure of the TPU kernels (module docstring); the defaults are what runs.
    benchmarks/kernel_tpu.py times each against the others on the chip."""

    # q scaled in XLA, with its transpose, from this head_dim up (0: always; a huge value:
    # never). On a TPU v5e it saved 5 % of the forward at D=128 (the multiply per logit), was
    # even at D=256 and cost 7 % at D=64 (the transpose's fusion with a multiply and two casts
    # is slower than the plain transpose, and at D=64 the transposes weigh most)
    prescale_from: int = 128
    mask_partial: bool = True  # only partial tiles masked (False: every tile)
    compact: bool = True  # causal without a bound: one grid step per needed tile
    # partial tiles in chunks of this many streamed rows (0: whole tiles); on a TPU v5e at D=64,
    # causal, 512 x 1024 tiles: 512 4.40 ms, whole 4.58, 256 4.70, 128 5.40 (the forward)
    kv_chunk: int = 512
    transposed_dkdv: bool = True  # dK/dV on [keys, queries] tiles, lse / delta as rows
    stats_rows: bool = True  # lse / delta as [b, h, 1, s] where the query block allows
    lse_rows_out: bool = True  # the forward writes lse as rows [b, h, 1, s] (else 128 lanes)
    # below this head_dim the forward reads k as [b, h, d, s] (transposed in XLA; where the key
    # block is a multiple of 128 or the whole length), so q k^T is a plain product and no key
    # tile is transposed in the kernel. On a TPU v5e, causal, bfloat16, D=64: 6-8 % off the
    # forward (B=16 S=1024 2.43 -> 2.30 ms, B=4 S=4096 3.99 -> 3.84); even at D=128 and 256
    # (0 (never) / 1 << 30 (always) in benchmarks/kernel_tpu_profile.py)
    k_columns_below: int = 128


DEFAULT = Options()


def options(st) -> Options:
    return getattr(st, "tpu", None) or DEFAULT


def compute_dtype(dtype):
    """The dtype the kernels compute a call's operands in: float16 as float32 (module doc)."""
    return jnp.dtype(jnp.float32) if jnp.dtype(dtype) == jnp.float16 else jnp.dtype(dtype)


# jax_default_matmul_precision values under which a float32 dot on the MXU reads its operands
# rounded to bfloat16 (Mosaic's default: one pass)
_ONE_PASS = (None, "default", "bfloat16", "fastest")


def mxu_rounds(dtype, interpret=False) -> bool:
    """Whether the chip's dots read operands of this dtype (float32, or float16 widened to it)
    rounded to bfloat16: on a TPU at the default matmul precision, not in interpret mode (the
    CPU's float32 dots are float32's)."""
    return (not interpret and compute_dtype(dtype) == jnp.float32
            and jax.config.jax_default_matmul_precision in _ONE_PASS)


def rounded(x, interpret=False):
    """x rounded to bfloat16 and kept in its compute dtype where ``mxu_rounds``, else x as it is.

    v and do are read so by every kernel, and delta = sum(do * o) is computed from the same
    rounded do: then the backward's dp = do v^T and delta hold the same products, and
    ds = p (dp - delta) cancels where it should. With do rounded by the MXU alone, a query that
    attends to itself only (a bound of 0: p = 1, o = v, ds = 0) got |dq|, |dk| up to 3e-2 in
    float32 on a TPU v5e (benchmarks/kernel_property.py, seed 1); bfloat16 inputs, already
    rounded, got 2e-6."""
    if not mxu_rounds(x.dtype, interpret):
        return x
    return x.astype(jnp.bfloat16).astype(compute_dtype(x.dtype))


def softmax_delta(out, do, interpret=False):
    """delta_i = sum_d o_id * do_id (the softmax backward term, [.., s]) from do as the kernels'
    dots read it (``rounded``)."""
    return jnp.sum(out.astype(jnp.float32) * rounded(do, interpret).astype(jnp.float32), axis=-1)


def _prescaled(st) -> bool:
    return st.head_dim >= options(st).prescale_from


def _q_scale(st) -> float:
    """What q is multiplied by in XLA (``_prescaled``): the logits' whole scale, in base 2,
    without a cap; sm_scale with one (the cap takes s = sm_scale q k^T)."""
    return st.sm_scale * _LOG2E if st.cap is None or st.cap_method == "none" else st.sm_scale


def _logits(a, b, st, prescaled: bool, b_transposed: bool = False):
    """(scaled logits or None, capped logits in base 2) of a @ b^T (b_transposed: of a @ b),
    float32."""
    if b_transposed:
        raw = jnp.dot(a, b, preferred_element_type=jnp.float32)
    else:
        raw = lax.dot_general(a, b, _NT, preferred_element_type=jnp.float32)
    if st.cap is None or st.cap_method == "none":
        return None, raw if prescaled else raw * (st.sm_scale * _LOG2E)
    s = raw if prescaled else raw * st.sm_scale
    return s, soft_cap(s, st.cap, st.cap_method) * _LOG2E


def _pdot(p, x):
    """p @ x in float32, p a float32 [rows, n] tile narrowed to x's dtype. (Widening x
    instead, as splash attention's forward does, timed the same on a TPU v5e.)"""
    return jnp.dot(p.astype(x.dtype), x, preferred_element_type=jnp.float32)


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


def _tile_whole(st, i0, j0, bq, bkv, ctx, *, q_rows: bool = False):
    """Scalar bool: every pair of the tile is allowed and every key real (no mask needed);
    q_rows: every query row real too (dK/dV masks the queries past the end)."""
    whole = j0 + bkv <= _ctx_len(st, ctx)
    if st.causal:
        whole = whole & (j0 + bkv - 1 <= i0)
    if q_rows:
        whole = whole & (i0 + bq <= st.q_len)
    return whole


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


def _zero_past(x, row0, length: int, partial: bool, axis: int = 0):
    """The tile x with the entries past the end of the sequence along `axis` (row0 + r >=
    length) set to 0; x itself when no block of the sequence is partial."""
    if not partial:
        return x
    rows = row0 + lax.broadcasted_iota(jnp.int32, x.shape, axis)
    return jnp.where(rows < length, x, jnp.zeros((), x.dtype))


def _lanes_to(x, width: int):
    """A lane-replicated [rows, 128] vector as [rows, width] (width its columns)."""
    if width == x.shape[1]:
        return x
    if width < x.shape[1]:
        return x[:, :width]
    reps = -(-width // x.shape[1])
    return jnp.tile(x, (1, reps))[:, :width]


def _when(cond, body):
    """body() under pl.when(cond), or unconditionally when cond is None."""
    if cond is None:
        body()
    else:
        pl.when(cond)(body)


def _chunks(opts: Options, width: int) -> list[tuple[int, int]]:
    """(start, size) of the chunks a partial tile of `width` streamed rows is computed in."""
    size = opts.kv_chunk
    if not size or width <= size or width % size or size % LANES:
        return [(0, width)]
    return [(c, size) for c in range(0, width, size)]


def vmem_capacity() -> int:
    """VMEM of the attached TPU core; FALLBACK_VMEM when there is none (lowering for TPU from
    another host)."""
    try:
        return int(pltpu.get_tpu_info().vmem_capacity_bytes)
    except Exception:  # no TPU attached: the fallback
        return FALLBACK_VMEM


def _params(n_axes: int, n_seq_axes: int):
    """Grid semantics, and a VMEM limit of three quarters of the core's (Mosaic's default scope
    is 16 MiB, which errkit_attention/tuning.py's larger TPU tiles, with a cap's extra [rows, cols]
    temporaries in dK/dV, can outgrow)."""
    return pltpu.CompilerParams(
        dimension_semantics=("parallel",) * (n_axes - n_seq_axes) + ("arbitrary",) * n_seq_axes,
        vmem_limit_bytes=vmem_capacity() * 3 // 4)


def _bhsd(x, st):
    """A [b, s, h, d] operand as [b, h, s, d], or a result back (self-inverse); a "bhsd" call's
    arrays as they are."""
    return jnp.transpose(x, (0, 2, 1, 3)) if st.layout == "bshd" else x


def _dims(x, st) -> tuple:
    """(batch, seq_len, heads, head_dim) of q, k, v or do in the call's layout."""
    return bshd_shape(x, st.layout)


def _q_in(q, st):
    """q as the kernels read it: [b, h, s, d], in the compute dtype, scaled (``_prescaled``)."""
    dtype = compute_dtype(q.dtype)
    if _prescaled(st):
        q = (q.astype(jnp.float32) * _q_scale(st)).astype(dtype)
    return _bhsd(q.astype(dtype), st)


def _in(x, st):
    return _bhsd(x.astype(compute_dtype(x.dtype)), st)


def _out(x, dtype, st):
    return _bhsd(x, st).astype(dtype)


def _lanes(x):  # [b, h, s] -> [b, h, s, LANES]
    return jnp.broadcast_to(x[..., None], (*x.shape, LANES))


def _rows(x):  # [b, h, s] -> [b, h, 1, s]
    return x[:, :, None, :]


def _cols(index):
    """A [b, h, s, d] block index as the [b, h, d, s] array's."""
    b, h, i, _ = index
    return b, h, 0, i


def _row_map(q_map):
    """The index map of a [b, h, 1, s] per-query vector's block, from its queries' q_map."""
    def index(*args):
        b, h, i, _ = q_map(*args)
        return b, h, 0, i
    return index


def _rows_ok(st, bq: int) -> bool:
    """Whether per-query vectors can be blocks of a [b, h, 1, s] array at query block bq: the
    block's last dim a multiple of 128 lanes, or the whole sequence."""
    return options(st).stats_rows and (bq % LANES == 0 or bq == st.q_len)


def _bound_args(st, bound):
    return (bound,) if st.has_bound else ()


def _split(st, n_tables: int, refs):
    """(ctx ref or None, table refs, remaining refs): the scalar-prefetch operands come first."""
    refs = list(refs)
    bound_ref = refs.pop(0) if st.has_bound else None
    return bound_ref, refs[:n_tables], refs[n_tables:]


def _unpack(x):
    """(outer tile, inner tile, first, last) of a packed compacted-grid step."""
    return (x & _MASK, (x >> _BITS) & _MASK, (x & _FIRST) != 0, (x & _LAST) != 0)


def _pack(outer: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """Packed steps of (outer, inner) tile pairs in order, the outer tile constant over each
    run: first / last flag the run's first and last step."""
    n = len(outer)
    first = np.r_[True, outer[1:] != outer[:-1]]
    last = np.r_[outer[1:] != outer[:-1], True]
    return (outer | (inner << _BITS) | np.where(first, _FIRST, 0)
            | np.where(last, _LAST, 0)).astype(np.int32)[:n]


def _compact(st) -> bool:
    return options(st).compact and st.causal and not st.has_bound


def _row_steps(st, bq: int, bkv: int) -> np.ndarray | None:
    """The forward's and dQ's compacted grid (causal, no bound): for each query tile, the key
    tiles from 0 to the last it needs; None for the rectangular grid."""
    if not _compact(st):
        return None
    outer, inner = [], []
    for i in range(pl.cdiv(st.q_len, bq)):
        n = max(pl.cdiv(min(st.kv_len, i * bq + bq), bkv), 1)
        outer += [i] * n
        inner += range(n)
    if len(outer) > _MAX_STEPS:
        return None
    return _pack(np.array(outer), np.array(inner))


def _col_steps(st, bq: int, bkv: int) -> np.ndarray | None:
    """dK/dV's compacted grid (causal, no bound): for each key tile, the query tiles from the
    first that needs it to the last; None for the rectangular grid."""
    if not _compact(st):
        return None
    outer, inner = [], []
    n_q = pl.cdiv(st.q_len, bq)
    for j in range(pl.cdiv(st.kv_len, bkv)):
        first = min((j * bkv) // bq, n_q - 1)
        outer += [j] * (n_q - first)
        inner += range(first, n_q)
    if len(outer) > _MAX_STEPS:
        return None
    return _pack(np.array(outer), np.array(inner))


# --------------------------------------------------------------------------
# The kernels that own a query tile: forward and dQ. Grid (batch, q head, query tile, key
# tile), or compacted (batch, q head, step).
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _RowTile:
    i: object  # query tile index
    j: object  # key tile index
    first: object  # the first key tile of this query tile's walk
    last: object  # its last
    needed: object  # None (compacted: every step is needed) or a traced bool


def _row_tile(st, tables, bq: int, bkv: int, ctx) -> _RowTile:
    if tables:
        i, j, first, last = _unpack(tables[0][pl.program_id(2)])
        return _RowTile(i, j, first, last, None)
    i, j = pl.program_id(2), pl.program_id(3)
    return _RowTile(i, j, j == 0, j == pl.num_programs(3) - 1,
                    _tile_needed(st, i * bq, j * bkv, bq, bkv, ctx))


def _row_maps(st, bq: int, bkv: int, compact: bool):
    """Index maps of a query-tile kernel: the query rows' block, and the kv head's key block
    (rectangular grid: the last needed one repeated for skipped tiles, no new DMA)."""
    n_pre = int(st.has_bound)

    def kv_head(h):
        return _idiv(h, st.group) if st.group > 1 else h

    if compact:
        def q_map(b, h, t, *refs):
            return b, h, _unpack(refs[n_pre][t])[0], 0

        def kv_map(b, h, t, *refs):
            return b, kv_head(h), _unpack(refs[n_pre][t])[1], 0
        return q_map, kv_map

    def q_map(b, h, i, j, *refs):
        return b, h, i, 0

    def kv_map(b, h, i, j, *refs):
        ctx = refs[0][b] if st.has_bound else None
        j = jnp.minimum(j, _last_kv(st, i * bq, bq, bkv, ctx))
        return b, kv_head(h), j, 0

    return q_map, kv_map


def _row_grid(st, batch: int, heads: int, bq: int, bkv: int, steps):
    if steps is not None:
        return (batch, heads, len(steps)), 1
    return (batch, heads, pl.cdiv(st.q_len, bq), pl.cdiv(st.kv_len, bkv)), 1


def _stream(tile: _RowTile, st, opts, i0, bq: int, bkv: int, ctx, update, *, q_rows=False):
    """Runs update(start, size, masked) over the tile: whole (no mask), or partial in chunks
    (each needed chunk masked), as the tile's scalar tests say."""
    j0 = tile.j * bkv
    if not opts.mask_partial:
        whole = None
        partial = tile.needed
    else:
        whole = _tile_whole(st, i0, j0, bq, bkv, ctx, q_rows=q_rows)
        partial = jnp.logical_not(whole)
        if tile.needed is not None:
            whole = whole & tile.needed
            partial = partial & tile.needed
        _when(whole, lambda: update(0, bkv, False))

    def masked():
        chunks = _chunks(opts, bkv)
        for start, size in chunks:
            cond = None if len(chunks) == 1 else _tile_needed(st, i0, j0 + start, bq, size, ctx)
            _when(cond, functools.partial(update, start, size, True))

    _when(partial, masked)


def _fwd_kernel(*refs, st, with_lse, n_tables, lse_rows, k_cols):
    bound_ref, tables, refs = _split(st, n_tables, refs)
    q_ref, k_ref, v_ref, o_ref, *refs = refs
    lse_ref = refs.pop(0) if with_lse else None
    m_scr, l_scr, acc_scr = refs
    opts = options(st)
    b = pl.program_id(0)
    bq, bkv = st.block_q, st.block_kv
    kv_partial = st.kv_len % bkv != 0
    ctx = bound_ref[b] if st.has_bound else None
    tile = _row_tile(st, tables, bq, bkv, ctx)
    i0, j0 = tile.i * bq, tile.j * bkv
    d = acc_scr.shape[1]

    @pl.when(tile.first)
    def _():
        m_scr[...] = jnp.full(m_scr.shape, -jnp.inf, jnp.float32)
        l_scr[...] = jnp.zeros(l_scr.shape, jnp.float32)
        acc_scr[...] = jnp.zeros(acc_scr.shape, jnp.float32)

    def update(start, size, masked):
        if k_cols:
            k = k_ref[:, start:start + size] if size != bkv else k_ref[...]
        else:
            k = k_ref[start:start + size, :] if size != bkv else k_ref[...]
        v = v_ref[start:start + size, :] if size != bkv else v_ref[...]
        jc = j0 + start
        if masked:  # v's rows past the end would reach o through p @ v (0 * NaN)
            v = _zero_past(v, jc, st.kv_len, kv_partial)
        _, c = _logits(q_ref[...], k, st, _prescaled(st), b_transposed=k_cols)
        if masked:
            c = _mask(c, allowed(st, i0, jc, bq, size, ctx, kv_partial=kv_partial, iota_2d=True))
        m_prev, l_prev = m_scr[...], l_scr[...]  # [bq, LANES]
        m_new = jnp.maximum(m_prev, jnp.max(c, axis=1, keepdims=True))
        correction = jnp.exp2(m_prev - m_new)
        p = jnp.exp2(c - _lanes_to(m_new, size))
        l_scr[...] = correction * l_prev + jnp.sum(p, axis=1, keepdims=True)
        m_scr[...] = m_new
        acc_scr[...] = (_lanes_to(correction, d) * acc_scr[...]
                        + _pdot(p, v))

    _stream(tile, st, opts, i0, bq, bkv, ctx, update)

    @pl.when(tile.last)
    def _():
        l = l_scr[...]
        visited = l > 0.0  # rows that saw no key: o = 0, lse = 0
        l_safe = jnp.where(visited, l, 1.0)
        o_ref[...] = (acc_scr[...] / _lanes_to(l_safe, d)).astype(o_ref.dtype)
        if with_lse:
            lse = jnp.where(visited, m_scr[...] + jnp.log2(l_safe), 0.0)
            lse_ref[...] = lse.T[:1, :] if lse_rows else lse


def _prefetch_spec(st, steps, grid, in_specs, out_specs, scratch):
    return pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=int(st.has_bound) + int(steps is not None), grid=grid,
        in_specs=in_specs, out_specs=out_specs, scratch_shapes=scratch)


def _prefetch_args(st, bound, steps):
    return (*_bound_args(st, bound), *(() if steps is None else (jnp.asarray(steps),)))


def forward(*args, st, with_lse: bool, interpret=False):
    """[q, k, v, (bound)] -> [o] or [o, lse] as errkit_attention/pallas_attention.py's ``_forward``."""
    q, k, v, *rest = args
    bound = rest[0] if st.has_bound else None
    batch, sq, hq, d = _dims(q, st)
    bq, bkv = st.block_q, st.block_kv
    steps = _row_steps(st, bq, bkv)
    grid, n_seq = _row_grid(st, batch, hq, bq, bkv, steps)
    q_map, kv_map = _row_maps(st, bq, bkv, steps is not None)
    dtype = compute_dtype(q.dtype)
    lse_rows = with_lse and options(st).lse_rows_out and bq % LANES == 0
    k_cols = (st.head_dim < options(st).k_columns_below
              and (bkv % LANES == 0 or bkv == st.kv_len))
    if k_cols:
        k_spec = pl.BlockSpec((None, None, d, bkv), lambda *a: _cols(kv_map(*a)))
        to_cols = (0, 2, 3, 1) if st.layout == "bshd" else (0, 1, 3, 2)  # -> [b, h, d, s]
        k_in = jnp.transpose(k.astype(compute_dtype(k.dtype)), to_cols)
    else:
        k_spec, k_in = pl.BlockSpec((None, None, bkv, d), kv_map), _in(k, st)

    out_shape = [jax.ShapeDtypeStruct((batch, hq, sq, d), dtype)]
    out_specs = [pl.BlockSpec((None, None, bq, d), q_map)]
    if with_lse and lse_rows:
        out_shape.append(jax.ShapeDtypeStruct((batch, hq, 1, sq), jnp.float32))
        out_specs.append(pl.BlockSpec((None, None, 1, bq), _row_map(q_map)))
    elif with_lse:
        out_shape.append(jax.ShapeDtypeStruct((batch, hq, sq, LANES), jnp.float32))
        out_specs.append(pl.BlockSpec((None, None, bq, LANES), q_map))
    grid_spec = _prefetch_spec(
        st, steps, grid,
        [pl.BlockSpec((None, None, bq, d), q_map), k_spec,
         pl.BlockSpec((None, None, bkv, d), kv_map)], out_specs,
        [pltpu.VMEM((bq, LANES), jnp.float32), pltpu.VMEM((bq, LANES), jnp.float32),
         pltpu.VMEM((bq, d), jnp.float32)])
    kernel = functools.partial(_fwd_kernel, st=st, with_lse=with_lse,
                               n_tables=int(steps is not None), lse_rows=lse_rows, k_cols=k_cols)
    outs = pl.pallas_call(kernel, grid_spec=grid_spec, out_shape=out_shape,
                          compiler_params=_params(len(grid), n_seq), interpret=interpret,
                          name="ranker_attention_fwd_tpu")(
        *_prefetch_args(st, bound, steps), _q_in(q, st), k_in, _in(rounded(v, interpret), st))
    result = [_out(outs[0], q.dtype, st)]
    if with_lse:
        result.append(outs[1][:, :, 0, :] if lse_rows else outs[1][..., 0])
    return tuple(result)


# --------------------------------------------------------------------------
# dQ.
# --------------------------------------------------------------------------


def _col(ref, rows: bool):
    """A per-query vector's block as a column [bq, 1] (rows: a [1, bq] block) or [bq, LANES]."""
    return jnp.expand_dims(ref[0], -1) if rows else ref[...]


def _dq_kernel(*refs, st, n_tables, stats_rows):
    bound_ref, tables, refs = _split(st, n_tables, refs)
    q_ref, k_ref, v_ref, do_ref, lse_ref, delta_ref, dq_ref, dq_scr = refs
    opts = options(st)
    b = pl.program_id(0)
    bq, bkv = st.block_q_dq, st.block_kv_dq
    kv_partial = st.kv_len % bkv != 0
    ctx = bound_ref[b] if st.has_bound else None
    tile = _row_tile(st, tables, bq, bkv, ctx)
    i0, j0 = tile.i * bq, tile.j * bkv

    @pl.when(tile.first)
    def _():
        dq_scr[...] = jnp.zeros(dq_scr.shape, jnp.float32)

    def update(start, size, masked):
        k = k_ref[start:start + size, :] if size != bkv else k_ref[...]
        v = v_ref[start:start + size, :] if size != bkv else v_ref[...]
        jc = j0 + start
        if masked:  # keys past the end would reach dq through ds @ k and do v^T (0 * NaN)
            k, v = (_zero_past(x, jc, st.kv_len, kv_partial) for x in (k, v))
        lse, delta = _col(lse_ref, stats_rows), _col(delta_ref, stats_rows)
        if not stats_rows:
            lse, delta = lse[:, :1], delta[:, :1]
        s, c = _logits(q_ref[...], k, st, _prescaled(st))
        if masked:
            c = _mask(c, allowed(st, i0, jc, bq, size, ctx, kv_partial=kv_partial, iota_2d=True))
        p = jnp.exp2(c - lse)
        dpv = lax.dot_general(do_ref[...], v, _NT, preferred_element_type=jnp.float32)
        ds = p * (dpv - delta)
        grad = _cap_grad(s, st)
        if grad is not None:
            ds = ds * grad
        dq_scr[...] += _pdot(ds, k)

    _stream(tile, st, opts, i0, bq, bkv, ctx, update)

    @pl.when(tile.last)
    def _():
        dq_ref[...] = (dq_scr[...] * st.sm_scale).astype(dq_ref.dtype)


def _stats(st, bq: int, lse, delta):
    """lse and delta [b, h, s] as a kernel with query block bq reads them: rows [b, h, 1, s]
    where they can be (``_rows_ok``), else [b, h, s, 128]; and their block shape."""
    if _rows_ok(st, bq):
        return _rows(lse), _rows(delta), (None, None, 1, bq), True
    return _lanes(lse), _lanes(delta), (None, None, bq, LANES), False


def backward_dq(*args, st, interpret=False):
    """[q, k, v, do, lse, delta, (bound)] -> [dq] as ``_backward_dq``."""
    q, k, v, do, lse, delta, *rest = args
    bound = rest[0] if st.has_bound else None
    batch, sq, hq, d = _dims(q, st)
    bq, bkv = st.block_q_dq, st.block_kv_dq
    steps = _row_steps(st, bq, bkv)
    grid, n_seq = _row_grid(st, batch, hq, bq, bkv, steps)
    q_map, kv_map = _row_maps(st, bq, bkv, steps is not None)
    lse, delta, vec_block, stats_rows = _stats(st, bq, lse, delta)

    tile = pl.BlockSpec((None, None, bq, d), q_map)
    vec = pl.BlockSpec(vec_block, _row_map(q_map) if stats_rows else q_map)
    kv = pl.BlockSpec((None, None, bkv, d), kv_map)
    grid_spec = _prefetch_spec(st, steps, grid, [tile, kv, kv, tile, vec, vec], [tile],
                               [pltpu.VMEM((bq, d), jnp.float32)])
    kernel = functools.partial(_dq_kernel, st=st, n_tables=int(steps is not None),
                               stats_rows=stats_rows)
    dtype = compute_dtype(q.dtype)
    (dq,) = pl.pallas_call(kernel, grid_spec=grid_spec,
                           out_shape=[jax.ShapeDtypeStruct((batch, hq, sq, d), dtype)],
                           compiler_params=_params(len(grid), n_seq), interpret=interpret,
                           name="ranker_attention_dq_tpu")(
        *_prefetch_args(st, bound, steps), _q_in(q, st), _in(k, st),
        *(_in(rounded(x, interpret), st) for x in (v, do)), lse, delta)
    return (_out(dq, q.dtype, st),)


# --------------------------------------------------------------------------
# dK / dV: one program row per (batch, kv head, key tile); the sequential axes walk the query
# group's heads x query tiles (GQA / MQA summed in VMEM, no per-query-head partials).
# Rectangular grid (batch, kv head, key tile, head x query tile); compacted (batch, kv head,
# step, head), the step a (key tile, query tile) pair.
# --------------------------------------------------------------------------


def _dkdv_kernel(*refs, st, n_q, n_tables, transposed):
    bound_ref, tables, refs = _split(st, n_tables, refs)
    q_ref, k_ref, v_ref, do_ref, lse_ref, delta_ref, dk_ref, dv_ref, dk_scr, dv_scr = refs
    opts = options(st)
    b = pl.program_id(0)
    bq, bkv = st.block_q_dkv, st.block_kv_dkv
    q_partial, kv_partial = st.q_len % bq != 0, st.kv_len % bkv != 0
    ctx = bound_ref[b] if st.has_bound else None
    if tables:
        j, i, first, last = _unpack(tables[0][pl.program_id(2)])
        r, g = pl.program_id(3), st.group
        first, last = first & (r == 0), last & (r == g - 1)
        needed = None
    else:
        j, t = pl.program_id(2), pl.program_id(3)
        i = lax.rem(t, jnp.asarray(n_q, t.dtype))
        first, last = t == 0, t == pl.num_programs(3) - 1
    i0, j0 = i * bq, j * bkv
    if not tables:
        needed = _tile_needed(st, i0, j0, bq, bkv, ctx)

    @pl.when(first)
    def _():
        dk_scr[...] = jnp.zeros(dk_scr.shape, jnp.float32)
        dv_scr[...] = jnp.zeros(dv_scr.shape, jnp.float32)

    def update_t(start, size, masked):
        """[keys, queries] tiles; start / size: the queries' chunk of the query tile."""
        def rows(ref):
            return ref[start:start + size, :] if size != bq else ref[...]

        def lanes(ref):
            return ref[:, start:start + size] if size != bq else ref[...]

        q, do = rows(q_ref), rows(do_ref)
        lse, delta = lanes(lse_ref), lanes(delta_ref)  # [1, size]
        ic = i0 + start
        if masked:  # queries past the end would reach dk, dv through the sums over queries
            q, do = (_zero_past(x, ic, st.q_len, q_partial) for x in (q, do))
            lse, delta = (_zero_past(x, ic, st.q_len, q_partial, axis=1) for x in (lse, delta))
        s, c = _logits(k_ref[...], q, st, _prescaled(st))  # [bkv, size]
        if masked:
            c = _mask(c, allowed(st, ic, j0, size, bkv, ctx, kv_partial=kv_partial,
                                 q_partial=q_partial, transposed=True))
        p = jnp.exp2(c - lse)
        dv_scr[...] += _pdot(p, do)
        dpv = lax.dot_general(v_ref[...], do, _NT, preferred_element_type=jnp.float32)
        ds = p * (dpv - delta)
        grad = _cap_grad(s, st)
        if grad is not None:
            ds = ds * grad
        dk_scr[...] += _pdot(ds, q)

    def update(start, size, masked):
        """[queries, keys] tiles (per-query vectors [bq, 128]); the whole query tile."""
        q, do, lse, delta = q_ref[...], do_ref[...], lse_ref[...], delta_ref[...]
        k, v = k_ref[...], v_ref[...]
        if masked:
            q, do, lse, delta = (_zero_past(x, i0, st.q_len, q_partial)
                                 for x in (q, do, lse, delta))
            k, v = (_zero_past(x, j0, st.kv_len, kv_partial) for x in (k, v))
        s, c = _logits(q, k, st, _prescaled(st))
        if masked:
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

    # The streamed axis is the queries': the tile's classification as in the forward, its
    # chunks (transposed tiles only) along the query tile.
    body = update_t if transposed else update
    whole = _tile_whole(st, i0, j0, bq, bkv, ctx, q_rows=True) if opts.mask_partial else None
    if whole is None:
        partial = needed
    else:
        partial = jnp.logical_not(whole)
        if needed is not None:
            whole, partial = whole & needed, partial & needed
        _when(whole, lambda: body(0, bq, False))

    def masked():
        chunks = _chunks(opts, bq) if transposed else [(0, bq)]
        for start, size in chunks:
            cond = (None if len(chunks) == 1
                    else _tile_needed(st, i0 + start, j0, size, bkv, ctx))
            _when(cond, functools.partial(body, start, size, True))

    _when(partial, masked)

    @pl.when(last)
    def _():
        scale = st.sm_scale / _q_scale(st) if _prescaled(st) else st.sm_scale
        dk_ref[...] = (dk_scr[...] * scale).astype(dk_ref.dtype)
        dv_ref[...] = dv_scr[...].astype(dv_ref.dtype)


def backward_dkdv(*args, st, interpret=False):
    """[q, k, v, do, lse, delta, (bound)] -> [dk, dv] as ``_backward_dkdv``."""
    q, k, v, do, lse, delta, *rest = args
    bound = rest[0] if st.has_bound else None
    batch, sq, hq, d = _dims(q, st)
    _, skv, hkv, _ = _dims(k, st)
    bq, bkv, g = st.block_q_dkv, st.block_kv_dkv, st.group
    n_q = pl.cdiv(sq, bq)
    transposed = options(st).transposed_dkdv and _rows_ok(st, bq)
    if transposed:
        lse, delta, vec_block = _rows(lse), _rows(delta), (None, None, 1, bq)
    else:
        lse, delta, vec_block = _lanes(lse), _lanes(delta), (None, None, bq, LANES)
    steps = _col_steps(st, bq, bkv)
    n_pre = int(st.has_bound)

    if steps is not None:
        grid = (batch, hkv, len(steps), g)

        def kv_map(b, h, t, r, *refs):
            return b, h, _unpack(refs[n_pre][t])[0], 0

        def q_map(b, h, t, r, *refs):
            return b, h * g + r, _unpack(refs[n_pre][t])[1], 0
    else:
        grid = (batch, hkv, pl.cdiv(skv, bkv), g * n_q)

        def kv_map(b, h, j, t, *refs):
            return b, h, j, 0

        def q_map(b, h, j, t, *refs):
            ctx = refs[0][b] if st.has_bound else None
            iq = jnp.maximum(lax.rem(t, jnp.asarray(n_q, t.dtype)),
                             _first_q(st, j * bkv, bq, bkv, ctx))
            return b, h * g + _idiv(t, n_q), iq, 0

    tile = pl.BlockSpec((None, None, bq, d), q_map)
    vec = pl.BlockSpec(vec_block, _row_map(q_map) if transposed else q_map)
    kv = pl.BlockSpec((None, None, bkv, d), kv_map)
    grid_spec = _prefetch_spec(st, steps, grid, [tile, kv, kv, tile, vec, vec], [kv, kv],
                               [pltpu.VMEM((bkv, d), jnp.float32),
                                pltpu.VMEM((bkv, d), jnp.float32)])
    kernel = functools.partial(_dkdv_kernel, st=st, n_q=n_q, n_tables=int(steps is not None),
                               transposed=transposed)
    out = jax.ShapeDtypeStruct((batch, hkv, skv, d), compute_dtype(k.dtype))
    dk, dv = pl.pallas_call(kernel, grid_spec=grid_spec, out_shape=[out, out],
                            compiler_params=_params(len(grid), 2 if steps is not None else 1),
                            interpret=interpret, name="ranker_attention_dkdv_tpu")(
        *_prefetch_args(st, bound, steps), _q_in(q, st), _in(k, st),
        *(_in(rounded(x, interpret), st) for x in (v, do)), lse, delta)
    return _out(dk, k.dtype, st), _out(dv, v.dtype, st)


# --------------------------------------------------------------------------
# The three calls as one differentiable function (arrays as errkit_attention/pallas_attention.py's
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
    delta = softmax_delta(out, do, interpret)
    if st.layout == "bshd":
        delta = jnp.transpose(delta, (0, 2, 1))  # [b, hq, sq], like lse
    args = _operands(st, q, k, v, do, lse, delta, bound)
    (dq,) = backward_dq(*args, st=st, interpret=interpret)
    dk, dv = backward_dkdv(*args, st=st, interpret=interpret)
    return dq, dk, dv, None


flash_attention.defvjp(_flash_attention_fwd, _flash_attention_bwd)

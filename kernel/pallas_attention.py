"""Pallas implementation of ranker attention (flash attention, forward + backward).

Pallas with a grid and BlockSpecs (``pl.pallas_call``, ``lax.fori_loop``); ref loads and
stores are plain, except the masked ones of the Triton layout (``plgpu.load`` /
``plgpu.store``, below). Each call is lowered as Triton on GPU (explicit Triton compiler
parameters, blocked BlockSpecs), as Mosaic on TPU (kernel/pallas_tpu.py, its own layout and
blocks) and runs with ``interpret=True`` on CPU; the choice is made when the call is
lowered (``lax.platform_dependent``), so a function traced on a CPU host and lowered for
CUDA holds the Triton kernels.

Layout: q, o [b, sq, hq, d]; k, v [b, skv, hkv, d]. Grid (batch, head, tile);
each program reads 2-D [rows, d] tiles (Triton: [rows, dp], see below) and runs an online
softmax (base 2) over the kv tiles, dots on the input dtype accumulating in float32 (see
"Kernels" below).

Mask (see kernel/reference.py): query i may attend key j iff
  j < ctx and (not causal or j <= i),  or  (bound given and j == i),
where ctx = bound[b] (clipped to [0, kv_len]) with a bound and kv_len without.
Keys j >= kv_len (the rows past the end of a partial last block) are always masked out.

Everything in here assumes validated inputs (kernel/_validators.py). Nothing is padded
for the GPU or the TPU: the kernels take q, k, v (and do, lse, delta) as they are and
return o (dq, dk, dv) at their true shapes, so the HLO lowered for CUDA or TPU holds no
pad or slice of them (tests/kernel/test_no_padding.py):

- Triton: grids are cdiv(length, block), so the last block of a sequence may be partial;
  BlockSpecs take the true head_dim as the block's last dim. Triton wants power-of-two
  tensors, so a kernel reads [rows, dp] tiles, dp = head_dim rounded up to a power of two
  (>= 16), with masked loads (``plgpu.load(..., mask, other=0)``) of the columns >= head_dim
  and the rows past the end of the sequence, and writes with masked stores: nothing past
  the end is read unmasked or written. Such rows and columns read as 0; the probabilities
  of keys past the end are masked (``tiles.allowed``), and so are those of queries past the
  end in dK/dV. Loops over blocks wholly inside the sequence load without a row mask.
- TPU (Mosaic, kernel/pallas_tpu.py): the block's last dim is the whole head_dim, rows past
  the end of a partial block are zeroed (``jnp.where``) before they enter a dot.
- Interpret mode (CPU) pads the sequences to a whole number of blocks (with zeros) and
  slices the results back, inside its own branch of ``_call``: the other platforms' HLO
  holds none of it.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

from kernel import pallas_tpu, tuning
from kernel.config import BlockSizes
from kernel.tiles import allowed as _allowed
from kernel.tiles import cap_grad as _tiles_cap_grad
from kernel.tiles import div as _div
from kernel.reference import MASK_VALUE, soft_cap

_MIN_BLOCK = 16  # smallest tile side Triton's dot accepts


@dataclasses.dataclass(frozen=True)
class _Static:
    """Everything static about one call (hashable: a jit / custom_vjp key)."""

    q_len: int  # the sequence lengths
    kv_len: int
    head_dim: int
    group: int  # query heads per kv head
    block_q: int
    block_kv: int
    block_q_dkv: int
    block_kv_dkv: int
    block_q_dq: int
    block_kv_dq: int
    sm_scale: float
    cap: float | None  # None: no capping
    cap_method: str
    causal: bool
    has_bound: bool
    # None: chosen at lowering (interpret on CPU, Mosaic on TPU, Triton otherwise); True:
    # interpret mode; False: Triton; "blocked": the Triton kernels (blocked layout, masked
    # loads / stores) run by Pallas' interpreter (tests/kernel/test_blocked_interpret.py)
    interpret: bool | str | None
    # Triton's (num_warps, num_stages) of the fwd, dq and dkdv kernels (kernel/tuning.py)
    launch: tuple[tuple[int, int], tuple[int, int], tuple[int, int]] = ((4, 3),) * 3
    # The forward's kernel on CUDA (kernel/tuning.py gpu_forward): "triton", or "mosaic_gpu"
    # (kernel/mosaic_gpu.py; with interpret="mosaic_gpu" run by Mosaic GPU's interpreter)
    gpu_forward: str = "triton"

    @property
    def dp(self) -> int:
        """Width of a Triton tile: head_dim rounded up to a power of two (>= 16)."""
        return max(_MIN_BLOCK, _next_pow2(self.head_dim))

    def padded_len(self, role: str) -> int:
        """The length interpret mode pads a sequence to ("q" or "kv"): a whole number of
        every block of that sequence (powers of two: the largest is a multiple of all)."""
        if role == "q":
            return _round_up(self.q_len, max(self.block_q, self.block_q_dkv, self.block_q_dq))
        return _round_up(self.kv_len, max(self.block_kv, self.block_kv_dkv, self.block_kv_dq))


# --------------------------------------------------------------------------
# Small helpers usable inside kernels.
# --------------------------------------------------------------------------


def _cdiv(a, b: int):
    """Ceiling division for non-negative ints, Python or traced."""
    if isinstance(a, int):
        return -(-a // b)
    return _div(a + (b - 1), b)


def _dot_nt(a, b):
    """a [m, k] @ b[n, k]^T -> [m, n] in float32."""
    return lax.dot_general(a, b, (((1,), (1,)), ((), ())),
                           preferred_element_type=jnp.float32)


def _dot_tn(a, b):
    """a [k, m]^T @ b[k, n] -> [m, n] in float32."""
    return lax.dot_general(a, b, (((0,), (0,)), ((), ())),
                           preferred_element_type=jnp.float32)


# Every dot takes its operands in the input dtype (bf16/fp16 operands feed tensor cores) and
# accumulates in float32; probabilities and logit gradients are cast down to it first.


def _dot(a, b):
    return jnp.dot(a, b, preferred_element_type=jnp.float32)


_LOG2E = 1.4426950408889634  # log2(e): softmax in base 2, exp2(x * log2(e)) == exp(x)


# The cap's tanh (limits: tests/kernel/test_tanh_exp2.py). jnp.tanh lowers for CUDA to libdevice's
# __nv_tanhf, a range-split polynomial + exp per element; one exp2 (__nv_exp2f, ex2.approx) and a
# division serve instead. Pallas' plgpu.approx_tanh (PTX tanh.approx.f32) would be cheaper still,
# but its documented error is 2^-11 relative (cap * 5e-4 on a capped logit, ~1000x this one's),
# and inline PTX has no interpret-mode rule: the CPU tests could not run the kernels.
TANH_EXP2_MAX_ABS_ERROR = 3e-7  # vs float64, ex2 and division at 2 ulp: tests/kernel/test_tanh_exp2.py


def tanh_exp2(x):
    """tanh(x), float32, from one exp2: sign(x) * (1 - t) / (1 + t), t = 2^(-2 |x| log2 e).

    t lies in [0, 1]: no overflow for any x (|x| > 44.4 gives t = 0, tanh = +-1 exactly, as
    float32's tanh is from |x| > 9.01); near 0, 1 - t cancels, the error stays absolute (a
    few 1e-8, well under TANH_EXP2_MAX_ABS_ERROR), which is what a capped logit
    (cap * tanh(s / cap)) needs.
    """
    t = jnp.exp2(jnp.abs(x) * (-2.0 * _LOG2E))
    y = (1.0 - t) / (1.0 + t)
    return jnp.where(x < 0, -y, y)


def _exp2_tanh(dtype) -> bool:
    """Whether a kernel on inputs of this dtype takes tanh_exp2 for a "tanh" cap: 16-bit inputs
    only. float32 tiles keep jnp.tanh (__nv_tanhf): with tanh_exp2, test_compile found spills
    in their kernels at 255 registers (float32, head_dim 64, sm_90a: dK/dV 96 B; sm_80 dQ 68 B;
    head_dim 256 sm_90a forward 8 B), which __nv_tanhf's branches do not cause."""
    return dtype != jnp.float32


def _soft_cap(s, st: _Static, dtype):
    """soft_cap (kernel/reference.py), with tanh_exp2 for "tanh" on 16-bit inputs."""
    if st.cap_method == "tanh" and _exp2_tanh(dtype):
        return st.cap * tanh_exp2(s * (1.0 / st.cap))
    return soft_cap(s, st.cap, st.cap_method)


def _cap_grad(s, st: _Static, dtype):
    return _tiles_cap_grad(s, st, tanh=tanh_exp2 if _exp2_tanh(dtype) else None)


def _capped_logits(q, k, st: _Static):
    """(scaled logits s, capped logits in base 2: soft_cap(s) * log2(e)), [bq, bkv] float32.

    Without capping, log2(e) is folded into the scale (one multiply) and s is None (its
    only use, ``_cap_grad``, needs none). Probabilities are then ``exp2(c - m)``, and the
    saved log-sum-exp is in base 2 as well.
    """
    raw = _dot_nt(q, k)
    if st.cap is None or st.cap_method == "none":
        return None, raw * (st.sm_scale * _LOG2E)
    s = raw * st.sm_scale
    return s, _soft_cap(s, st, q.dtype) * _LOG2E


def _min(a, b):
    return min(a, b) if isinstance(a, int) and isinstance(b, int) else jnp.minimum(a, b)


def _max(a, b):
    return max(a, b) if isinstance(a, int) and isinstance(b, int) else jnp.maximum(a, b)


def _visit(body, carry, lo, hi, full_lo, full_hi, n_whole=None):
    """Runs ``carry = body(idx, carry, masked, partial)`` for idx in [lo, hi).

    Blocks in [full_lo, full_hi) are known to be entirely visible and skip the
    mask (masked=False); the others are masked. Bounds are ints or traced ints.

    n_whole: None, or (the streamed sequence ends inside its last block) the number of whole
    blocks. The block past them, the partial one, is then visited in a loop of its own
    (after its range's) with partial=True (its loads masked past the end of the sequence),
    every other block with partial=False: their loops carry no row masks (registers). Only
    masked ranges can hold it (a full block is whole).
    """
    full_lo = _min(_max(full_lo, lo), hi)
    full_hi = _min(_max(full_hi, full_lo), hi)
    for a, b, masked in ((lo, full_lo, True), (full_lo, full_hi, False),
                         (full_hi, hi, True)):
        if isinstance(a, int) and isinstance(b, int) and a >= b:
            continue
        if not (masked and n_whole is not None):
            carry = lax.fori_loop(a, b, functools.partial(body, masked=masked, partial=False),
                                  carry)
            continue
        # ranges end at or before the last block (n_whole): [a, b) holds it iff b > n_whole
        mid = _max(_min(b, n_whole), a)
        carry = lax.fori_loop(a, mid, functools.partial(body, masked=True, partial=False),
                              carry)
        carry = lax.fori_loop(mid, b, functools.partial(body, masked=True, partial=True),
                              carry)  # at most one block (a loop: its index stays dynamic)
    return carry


def _kv_ranges(st: _Static, i0, bq: int, bkv: int, ctx):
    """kv-block ranges a query tile starting at row i0 must visit, as
    (lo, hi, full_lo, full_hi) for ``_visit``.

    The context range first, then (with a bound) the diagonal blocks not
    already covered. Blocks wholly masked for the tile are skipped.
    """
    n_kv = _cdiv(st.kv_len, bkv)  # blocks holding real keys
    ctx_len = ctx if st.has_bound else st.kv_len  # keys j < ctx_len are context
    n_full = _div(ctx_len, bkv)  # blocks entirely inside the context
    if st.causal:
        n_ctx = _cdiv(_min(ctx_len, i0 + bq), bkv)
        n_full = _min(n_full, _div(i0 + 1, bkv))  # blocks entirely at or below i0
    else:
        n_ctx = _cdiv(ctx_len, bkv)
    ranges = [(0, n_ctx, 0, n_full)]
    if st.has_bound:
        diag_lo = _max(n_ctx, _div(i0, bkv))
        diag_hi = _min(_cdiv(i0 + bq, bkv), n_kv)
        ranges.append((diag_lo, diag_hi, diag_hi, diag_hi))
    return ranges


def _select(pred, a, b):
    """``a if pred else b`` for int32 scalars (Python ints or traced) and a traced bool.

    Written as arithmetic: ``jnp.where`` on a traced bool and two Python ints lowers
    for Triton to a select whose operands are ('i1', 'i32'), an AssertionError in
    jax 0.10's Triton lowering when the result is a loop bound.
    """
    a = jnp.asarray(a, jnp.int32)
    b = jnp.asarray(b, jnp.int32)
    return b + (a - b) * pred.astype(jnp.int32)


def _q_range(st: _Static, j0, bq: int, bkv: int, ctx):
    """q-block range that can attend a kv tile starting at key j0, as
    (lo, hi, full_lo, full_hi) for ``_visit``."""
    n_q = _cdiv(st.q_len, bq)  # blocks holding real queries
    ctx_len = ctx if st.has_bound else st.kv_len
    in_ctx = j0 < ctx_len  # some key of the tile is context
    lo = _div(j0, bq) if st.causal else 0
    # Tiles seeing every key of this kv tile: all keys are context, all rows real,
    # and (causal) the first row is at or after the last key.
    full_lo = _cdiv(j0 + bkv - 1, bq) if st.causal else 0
    full_hi = _select(j0 + bkv <= ctx_len, st.q_len // bq, full_lo)
    if not st.has_bound:
        return lo, _select(in_ctx, n_q, lo), full_lo, full_hi
    diag_lo = _div(j0, bq)
    diag_hi = _min(_cdiv(j0 + bkv, bq), n_q)
    return (_select(in_ctx, lo, diag_lo), _select(in_ctx, n_q, diag_hi),
            full_lo, full_hi)


# --------------------------------------------------------------------------
# Kernels.
#
# Every kernel is written once and launched in one of two layouts (``blocked``):
#
# - blocked (Triton, on GPU): BlockSpecs hand each program its own tile (a block
#   of query rows, or of keys for dK/dV) and the (batch, head) slab of the
#   operands it streams through (keys/values, or queries for dK/dV), read block
#   by block with ``pl.ds`` inside a ``fori_loop``.
# - whole (interpret mode, on CPU): every operand is passed whole and each
#   program indexes its own tiles, ref[b, rows, head, :]. This avoids copying
#   every blocked operand once per grid step, which dominated the interpret
#   run time (see benchmarks/bench_kernel.py).
#
# ``_ix4`` / ``_ix3`` build the index of a tile in either layout, ``_mask`` the mask of a
# blocked read or write (rows past the end of the sequence, columns >= head_dim), ``_load``
# / ``_store`` read and write with it. The whole layout needs no mask: interpret mode pads.
# --------------------------------------------------------------------------


def _cols(st: _Static, blocked: bool):
    """The columns of a tile: [0, dp) in the blocked layout (masked past head_dim), all of
    the operand's in the whole one."""
    return pl.ds(0, st.dp) if blocked and st.dp != st.head_dim else slice(None)


def _ix4(blocked: bool, b, rows, h, cols=slice(None)):
    """Index of a [rows, d] tile of a [b, s, h, d] operand."""
    return (rows, cols) if blocked else (b, rows, h, cols)


def _ix3(blocked: bool, b, h, rows):
    """Index of a [rows] slice of a [b, h, s] operand (lse, delta)."""
    return (rows,) if blocked else (b, h, rows)


def _mask(st: _Static, blocked: bool, row0, rows: int, length: int, partial: bool, *,
          vector: bool = False, store: bool = False):
    """Mask of a blocked read or write of `rows` rows starting at sequence row `row0` of a
    sequence of `length`: rows < length (when `partial`: the block may run past the end)
    and, for a [rows, dp] tile (not `vector`), columns < head_dim. None when nothing is
    masked, and always in the whole layout (interpret mode pads its operands).

    store: the rows' test written as r < length - row0, for the store after a kernel's loop:
    the same test as its load's before the loop would be merged with it by the compiler and
    kept live through the loop (registers: spills on sm_80)."""
    if not blocked:
        return None
    if not partial:
        valid = None
    elif store:
        valid = jnp.arange(rows, dtype=jnp.int32) < length - row0
    else:
        valid = row0 + jnp.arange(rows, dtype=jnp.int32) < length
    if vector:
        return valid
    cols = ((jnp.arange(st.dp, dtype=jnp.int32) < st.head_dim)[None, :]
            if st.dp != st.head_dim else None)
    if valid is None:
        return cols
    return valid[:, None] if cols is None else valid[:, None] & cols


def _load(ref, ix, mask):
    """ref[ix]; with a mask, the masked-out elements read as 0 and are never accessed."""
    if mask is None:
        return ref[ix]
    return plgpu.load(ref.at[ix], mask=mask, other=jnp.zeros((), ref.dtype))


def _store(ref, ix, value, mask):
    """ref[ix] = value; with a mask, only where the mask holds."""
    if mask is None:
        ref[ix] = value
    else:
        plgpu.store(ref.at[ix], value, mask=mask)


def _kv_head(h, group: int):
    """The kv head read by query head h (GQA)."""
    return h if group == 1 else _div(h, group)


def _program(refs: list, st: _Static):
    """The common start of every kernel: pops the bound ref (when there is one) off `refs`, and
    returns the batch and query-head program ids, the kv head they read, and the example's
    context bound (None without bound)."""
    bound_ref = refs.pop(0) if st.has_bound else None
    b, h = pl.program_id(0), pl.program_id(1)
    return b, h, _kv_head(h, st.group), (bound_ref[b] if st.has_bound else None)


def _fwd_kernel(*refs, st: _Static, with_lse: bool, blocked: bool):
    q_ref, k_ref, v_ref, *refs = refs
    b, h, hk, ctx = _program(refs, st)
    o_ref, *lse_ref = refs
    bq, bkv = st.block_q, st.block_kv
    q_partial, kv_partial = st.q_len % bq != 0, st.kv_len % bkv != 0
    i0 = pl.program_id(2) * bq
    own = pl.ds(0 if blocked else i0, bq)  # this program's query rows
    cols = _cols(st, blocked)
    own_mask = _mask(st, blocked, i0, bq, st.q_len, q_partial)
    n_whole = st.kv_len // bkv if blocked and kv_partial else None  # see _visit

    q = _load(q_ref, _ix4(blocked, b, own, h, cols), own_mask)

    def body(jk, carry, masked, partial):
        acc, m, l = carry
        j0 = jk * bkv
        ix = _ix4(blocked, b, pl.ds(j0, bkv), hk, cols)
        mask = _mask(st, blocked, j0, bkv, st.kv_len, partial)
        k = _load(k_ref, ix, mask)
        v = _load(v_ref, ix, mask)
        _, c = _capped_logits(q, k, st)
        allowed = (_allowed(st, i0, j0, bq, bkv, ctx, kv_partial=kv_partial)
                   if masked else None)
        if allowed is not None:
            c = jnp.where(allowed, c, MASK_VALUE)
        m_new = jnp.maximum(m, jnp.max(c, axis=1))
        correction = jnp.exp2(m - m_new)
        p = jnp.exp2(c - m_new[:, None])
        l = correction * l + jnp.sum(p, axis=1)
        acc = correction[:, None] * acc + _dot(p.astype(v.dtype), v)
        return acc, m_new, l

    carry = (jnp.zeros((bq, q.shape[-1]), jnp.float32),
             jnp.full((bq,), -jnp.inf, jnp.float32),
             jnp.zeros((bq,), jnp.float32))
    for bounds in _kv_ranges(st, i0, bq, bkv, ctx):
        carry = _visit(body, carry, *bounds, n_whole=n_whole)
    acc, m, l = carry

    # Rows that visited no block get o = 0, lse = 0.
    visited = l > 0.0
    l = jnp.where(visited, l, 1.0)
    _store(o_ref, _ix4(blocked, b, own, h, cols), (acc / l[:, None]).astype(o_ref.dtype),
           _mask(st, blocked, i0, bq, st.q_len, q_partial, store=True))
    if with_lse:
        _store(lse_ref[0], _ix3(blocked, b, h, own), jnp.where(visited, m + jnp.log2(l), 0.0),
               _mask(st, blocked, i0, bq, st.q_len, q_partial, vector=True, store=True))


def _dq_kernel(*refs, st: _Static, blocked: bool):
    q_ref, k_ref, v_ref, do_ref, lse_ref, delta_ref, *refs = refs
    b, h, hk, ctx = _program(refs, st)
    (dq_ref,) = refs
    bq, bkv = st.block_q_dq, st.block_kv_dq
    q_partial, kv_partial = st.q_len % bq != 0, st.kv_len % bkv != 0
    i0 = pl.program_id(2) * bq
    own = pl.ds(0 if blocked else i0, bq)
    cols = _cols(st, blocked)
    own_mask = _mask(st, blocked, i0, bq, st.q_len, q_partial)
    own_rows = _mask(st, blocked, i0, bq, st.q_len, q_partial, vector=True)
    n_whole = st.kv_len // bkv if blocked and kv_partial else None  # see _visit

    q = _load(q_ref, _ix4(blocked, b, own, h, cols), own_mask)
    do = _load(do_ref, _ix4(blocked, b, own, h, cols), own_mask)
    lse = _load(lse_ref, _ix3(blocked, b, h, own), own_rows)[:, None]
    delta = _load(delta_ref, _ix3(blocked, b, h, own), own_rows)[:, None]

    def body(jk, dq, masked, partial):
        j0 = jk * bkv
        ix = _ix4(blocked, b, pl.ds(j0, bkv), hk, cols)
        mask = _mask(st, blocked, j0, bkv, st.kv_len, partial)
        k = _load(k_ref, ix, mask)
        v = _load(v_ref, ix, mask)
        s, c = _capped_logits(q, k, st)
        allowed = (_allowed(st, i0, j0, bq, bkv, ctx, kv_partial=kv_partial)
                   if masked else None)
        if allowed is not None:
            c = jnp.where(allowed, c, MASK_VALUE)
        p = jnp.exp2(c - lse)
        ds = p * (_dot_nt(do, v) - delta)
        grad = _cap_grad(s, st, q.dtype)
        if grad is not None:
            ds = ds * grad
        return dq + _dot(ds.astype(k.dtype), k)

    dq = jnp.zeros((bq, q.shape[-1]), jnp.float32)
    for bounds in _kv_ranges(st, i0, bq, bkv, ctx):
        dq = _visit(body, dq, *bounds, n_whole=n_whole)
    _store(dq_ref, _ix4(blocked, b, own, h, cols), (dq * st.sm_scale).astype(dq_ref.dtype),
           _mask(st, blocked, i0, bq, st.q_len, q_partial, store=True))


def _dkdv_kernel(*refs, st: _Static, blocked: bool):
    """dk, dv of one kv head's key tile, accumulated over the query heads of its group
    (GQA / MQA) in the kernel: no per-query-head partials."""
    q_ref, k_ref, v_ref, do_ref, lse_ref, delta_ref, *refs = refs
    b, hk, _, ctx = _program(refs, st)  # grid axis 1: the kv head
    dk_ref, dv_ref = refs
    g = st.group
    bq, bkv = st.block_q_dkv, st.block_kv_dkv
    q_partial, kv_partial = st.q_len % bq != 0, st.kv_len % bkv != 0
    j0 = pl.program_id(2) * bkv
    own = pl.ds(0 if blocked else j0, bkv)  # this program's keys
    cols = _cols(st, blocked)
    own_mask = _mask(st, blocked, j0, bkv, st.kv_len, kv_partial)

    k = _load(k_ref, _ix4(blocked, b, own, hk, cols), own_mask)
    v = _load(v_ref, _ix4(blocked, b, own, hk, cols), own_mask)

    def body(iq, carry, masked, partial, gi):
        dk, dv = carry
        i0 = iq * bq
        rows = pl.ds(i0, bq)
        # blocked: the group's g heads are the operand's head axis; whole: head hk * g + gi
        qix = (rows, gi, cols) if blocked else (b, rows, hk * g + gi, cols)
        vix = (gi, rows) if blocked else (b, hk * g + gi, rows)
        mask = _mask(st, blocked, i0, bq, st.q_len, partial)
        vmask = _mask(st, blocked, i0, bq, st.q_len, partial, vector=True)
        q = _load(q_ref, qix, mask)
        do = _load(do_ref, qix, mask)
        lse = _load(lse_ref, vix, vmask)[:, None]
        delta = _load(delta_ref, vix, vmask)[:, None]
        s, c = _capped_logits(q, k, st)
        allowed = (_allowed(st, i0, j0, bq, bkv, ctx, kv_partial=kv_partial,
                            q_partial=q_partial) if masked else None)
        if allowed is not None:
            c = jnp.where(allowed, c, MASK_VALUE)
        p = jnp.exp2(c - lse)
        dv = dv + _dot_tn(p.astype(do.dtype), do)
        ds = p * (_dot_nt(do, v) - delta)
        grad = _cap_grad(s, st, q.dtype)
        if grad is not None:
            ds = ds * grad
        dk = dk + _dot_tn(ds.astype(q.dtype), q)
        return dk, dv

    ranges = _q_range(st, j0, bq, bkv, ctx)

    def head(gi, carry):
        return _visit(functools.partial(body, gi=gi), carry, *ranges,
                      n_whole=st.q_len // bq if blocked and q_partial else None)

    zeros = jnp.zeros((bkv, k.shape[-1]), jnp.float32)
    carry = (zeros, zeros)
    dk, dv = head(0, carry) if g == 1 else lax.fori_loop(0, g, head, carry)
    out_mask = _mask(st, blocked, j0, bkv, st.kv_len, kv_partial, store=True)
    _store(dk_ref, _ix4(blocked, b, own, hk, cols), (dk * st.sm_scale).astype(dk_ref.dtype),
           out_mask)
    _store(dv_ref, _ix4(blocked, b, own, hk, cols), dv.astype(dv_ref.dtype), out_mask)


# --------------------------------------------------------------------------
# pallas_call wrappers (arrays at their true shapes).
# --------------------------------------------------------------------------


def _compiler_params(st: _Static, pass_: str):
    """Triton launch parameters of one pass's kernel (kernel/tuning.py's table)."""
    num_warps, num_stages = st.launch[tuning.PASSES.index(pass_)]
    return plgpu.CompilerParams(num_warps=num_warps, num_stages=num_stages)


def _tile_spec(rows: int, d: int, head_of=None, *, slab: bool = False):
    """BlockSpec of a [b, s, h, d] operand: a block of `rows` rows per program along grid
    axis 2 (slab=False; the last one partial when s is not a multiple), or the whole
    (batch, head) slab of `rows` rows (slab=True). The last dim is the whole head_dim."""
    head_of = head_of or (lambda h: h)
    if slab:
        return pl.BlockSpec((None, rows, None, d), lambda b, h, i: (b, 0, head_of(h), 0))
    return pl.BlockSpec((None, rows, None, d), lambda b, h, i: (b, i, head_of(h), 0))


def _vec_spec(rows: int, *, slab: bool = False):
    """BlockSpec of a [b, h, s] operand (lse, delta)."""
    if slab:
        return pl.BlockSpec((None, None, rows), lambda b, h, i: (b, h, 0))
    return pl.BlockSpec((None, None, rows), lambda b, h, i: (b, h, i))


def _pad_seq(x, role, st: _Static):
    """Interpret mode only: x ([b, s, h, d], or [b, h, s]: lse, delta) with its sequence
    padded with zeros to ``st.padded_len(role)``; x itself for role None (the bound)."""
    if role is None:
        return x
    axis = 1 if x.ndim == 4 else 2
    pads = [(0, 0)] * x.ndim
    pads[axis] = (0, st.padded_len(role) - x.shape[axis])
    return jnp.pad(x, pads)


def _padded_shape(shape: jax.ShapeDtypeStruct, role, st: _Static):
    dims = list(shape.shape)
    dims[1 if len(dims) == 4 else 2] = st.padded_len(role)
    return jax.ShapeDtypeStruct(tuple(dims), shape.dtype)


def _call(kernel, grid, args, roles, out_shape, out_roles, st: _Static, name: str, *,
          in_specs, out_specs, compiler_params, tpu, cuda=None):
    """pallas_call on `args` (None entries dropped): whole operands in interpret mode,
    the given blocked specs with Triton. With ``st.interpret`` None the choice is made
    when lowering (``lax.platform_dependent``): interpret on CPU, Mosaic on TPU (`tpu`, a
    function of kernel/pallas_tpu.py), Triton elsewhere.

    roles / out_roles: which sequence ("q", "kv", None for the bound) each argument /
    result runs along: interpret mode pads those with zeros to a whole number of blocks
    and slices its results back (whole operands are indexed without masks); the Triton and
    Mosaic calls take and return the arrays as they are."""
    keep = [a is not None for a in args]
    args = [a for a in args if a is not None]
    roles = [r for r, k in zip(roles, keep) if k]
    in_specs = [s for s, k in zip(in_specs, keep) if k]

    def interpret(*args):
        outs = pl.pallas_call(
            functools.partial(kernel, blocked=False), grid=grid,
            in_specs=[pl.BlockSpec() for _ in args],
            out_specs=[pl.BlockSpec() for _ in out_shape],
            out_shape=[_padded_shape(s, r, st) for s, r in zip(out_shape, out_roles)],
            interpret=True, name=name)(
                *(_pad_seq(a, r, st) for a, r in zip(args, roles)))
        return tuple(lax.slice(o, (0,) * o.ndim, s.shape) for o, s in zip(outs, out_shape))

    def triton(*args, interpret=False):
        return pl.pallas_call(
            functools.partial(kernel, blocked=True), grid=grid,
            in_specs=in_specs, out_specs=out_specs, out_shape=out_shape,
            compiler_params=compiler_params, interpret=interpret, name=name)(*args)

    if st.interpret is True or (st.interpret == "mosaic_gpu" and cuda is None):
        return interpret(*args)
    if st.interpret == "mosaic_gpu":  # `cuda`, the Mosaic GPU kernel, in its interpreter
        return cuda(*args, interpret=True)
    if st.interpret is False:
        return triton(*args)
    if st.interpret == "blocked":
        return triton(*args, interpret=True)
    # tpu: the Mosaic calls of kernel/pallas_tpu.py; cuda: kernel/mosaic_gpu.py's forward, or
    # None (Triton). Same arguments and results.
    return lax.platform_dependent(*args, cpu=interpret, tpu=functools.partial(tpu, st=st),
                                  default=triton, **({} if cuda is None else {"cuda": cuda}))


def _forward(q, k, v, bound, st: _Static, *, with_lse: bool):
    batch, sq, hq, d = q.shape
    skv = k.shape[1]
    out_shape = [jax.ShapeDtypeStruct(q.shape, q.dtype)]
    out_specs = [_tile_spec(st.block_q, d)]
    if with_lse:
        out_shape.append(jax.ShapeDtypeStruct((batch, hq, sq), jnp.float32))
        out_specs.append(_vec_spec(st.block_q))
    kv_head = functools.partial(_kv_head, group=st.group)
    in_specs = [_tile_spec(st.block_q, d), _tile_spec(skv, d, kv_head, slab=True),
                _tile_spec(skv, d, kv_head, slab=True), pl.BlockSpec()]
    kernel = functools.partial(_fwd_kernel, st=st, with_lse=with_lse)
    cuda = None
    if st.gpu_forward == "mosaic_gpu":  # Hopper (kernel/tuning.py gpu_forward)
        from kernel import mosaic_gpu

        cuda = functools.partial(mosaic_gpu.forward, st=st, with_lse=with_lse)
    return _call(kernel, (batch, hq, _cdiv(sq, st.block_q)), [q, k, v, bound],
                 ["q", "kv", "kv", None], out_shape, ["q", "q"][:len(out_shape)], st,
                 "ranker_attention_fwd", in_specs=in_specs, out_specs=out_specs,
                 compiler_params=_compiler_params(st, "fwd"),
                 tpu=functools.partial(pallas_tpu.forward, with_lse=with_lse), cuda=cuda)


_BWD_ROLES = ["q", "kv", "kv", "q", "q", "q", None]  # q, k, v, do, lse, delta, bound


def _backward_dq(q, k, v, do, lse, delta, bound, st: _Static):
    batch, sq, hq, d = q.shape
    skv = k.shape[1]
    bq = st.block_q_dq
    kv_head = functools.partial(_kv_head, group=st.group)
    in_specs = [_tile_spec(bq, d), _tile_spec(skv, d, kv_head, slab=True),
                _tile_spec(skv, d, kv_head, slab=True), _tile_spec(bq, d),
                _vec_spec(bq), _vec_spec(bq), pl.BlockSpec()]
    kernel = functools.partial(_dq_kernel, st=st)
    (dq,) = _call(kernel, (batch, hq, _cdiv(sq, bq)),
                  [q, k, v, do, lse, delta, bound], _BWD_ROLES,
                  [jax.ShapeDtypeStruct(q.shape, q.dtype)], ["q"], st, "ranker_attention_dq",
                  in_specs=in_specs, out_specs=[_tile_spec(bq, d)],
                  compiler_params=_compiler_params(st, "dq"),
                  tpu=pallas_tpu.backward_dq)
    return dq


def _backward_dkdv(q, k, v, do, lse, delta, bound, st: _Static):
    """dk, dv: one program per (batch, kv head, key tile), summing its query group in the
    kernel, so no two programs share an output and nothing grows with the group size."""
    batch, sq, hq, d = q.shape
    skv, hkv = k.shape[1], k.shape[2]
    g = st.group
    bkv = st.block_kv_dkv
    out_shape = jax.ShapeDtypeStruct(k.shape, k.dtype)
    group_spec = pl.BlockSpec((None, sq, g, d), lambda b, h, i: (b, 0, h, 0))
    group_vec = pl.BlockSpec((None, g, sq), lambda b, h, i: (b, h, 0))
    in_specs = [group_spec, _tile_spec(bkv, d), _tile_spec(bkv, d), group_spec,
                group_vec, group_vec, pl.BlockSpec()]
    kernel = functools.partial(_dkdv_kernel, st=st)
    dk, dv = _call(kernel, (batch, hkv, _cdiv(skv, bkv)),
                   [q, k, v, do, lse, delta, bound], _BWD_ROLES, [out_shape, out_shape],
                   ["kv", "kv"], st, "ranker_attention_dkdv", in_specs=in_specs,
                   out_specs=[_tile_spec(bkv, d), _tile_spec(bkv, d)],
                   compiler_params=_compiler_params(st, "dkdv"),
                   tpu=pallas_tpu.backward_dkdv)
    return dk, dv


@functools.partial(jax.custom_vjp, nondiff_argnums=(4,))
def _flash_attention(q, k, v, bound, st: _Static):
    return _forward(q, k, v, bound, st, with_lse=False)[0]


def _flash_attention_fwd(q, k, v, bound, st: _Static):
    out, lse = _forward(q, k, v, bound, st, with_lse=True)
    return out, (q, k, v, bound, out, lse)


def _flash_attention_bwd(st: _Static, residuals, do):
    q, k, v, bound, out, lse = residuals
    # delta_i = sum_d o_id * do_id = sum_j p_ij dp_ij  (softmax backward term)
    delta = jnp.sum(out.astype(jnp.float32) * do.astype(jnp.float32), axis=-1)
    delta = jnp.transpose(delta, (0, 2, 1))  # [b, hq, sq], like lse
    dq = _backward_dq(q, k, v, do, lse, delta, bound, st)
    dk, dv = _backward_dkdv(q, k, v, do, lse, delta, bound, st)
    return dq, dk, dv, None


_flash_attention.defvjp(_flash_attention_fwd, _flash_attention_bwd)


# --------------------------------------------------------------------------
# Public entry point of this module: block clamping (no padding: see the module doc).
# --------------------------------------------------------------------------


def _next_pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def _clamp_block(block: int, seq_len: int) -> int:
    """A block never exceeds the sequence rounded up to a power of two (>= 16)."""
    return min(block, max(_MIN_BLOCK, _next_pow2(seq_len)))


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def pallas_attention(q, k, v, *, bound, causal: bool, sm_scale: float,
                     cap: float | None, cap_method: str, config: BlockSizes | None = None,
                     interpret: bool | str | None = None, arch: str | None = None,
                     forward: str | None = None):
    """Ranker attention with the Pallas kernels. Inputs are assumed validated.

    config: the tiles, None for kernel/tuning.py's table row of `arch` (None: the
    architecture ``tuning.current_arch()`` picks); the Triton num_warps / num_stages come
    from that table either way.
    interpret: True (interpret mode), False (Triton), or None: chosen when the call is
    lowered, interpret mode for CPU, Mosaic for TPU and Triton for any other platform;
    "blocked" (a check): the Triton kernels, as lowered for a GPU, run by Pallas'
    interpreter on the CPU; "mosaic_gpu" (a check): the forward's Mosaic GPU kernel, where the
    call takes it, run by Mosaic GPU's interpreter, the rest in interpret mode.
    forward: the forward kernel forced on CUDA, "triton" or "mosaic_gpu", None for the call's
    own choice (kernel/tuning.py gpu_forward, forward_kernel).
    """
    batch, q_len, num_q_heads, head_dim = q.shape
    kv_len, num_kv_heads = k.shape[1], k.shape[2]
    arch = tuning.current_arch() if arch is None else arch

    def pick(size, default):
        return default if size is None else size

    def blocks(masked: bool):
        """(block_q, block_kv, block_q_dkv, block_kv_dkv, block_q_dq, block_kv_dq), clamped."""
        tiles = config or tuning.block_sizes(arch, head_dim, q.dtype, masked)
        return (_clamp_block(tiles.block_q, q_len), _clamp_block(tiles.block_kv, kv_len),
                _clamp_block(pick(tiles.block_q_dkv, tiles.block_q), q_len),
                _clamp_block(pick(tiles.block_kv_dkv, tiles.block_kv), kv_len),
                _clamp_block(pick(tiles.block_q_dq, tiles.block_q), q_len),
                _clamp_block(pick(tiles.block_kv_dq, tiles.block_kv), kv_len))

    # Masked tiles (kernel/tuning.py's "masked" launches): head_dim short of the tiles' width, or
    # a sequence that is not a whole number of blocks.
    masked = head_dim != tuning.padded_head_dim(head_dim)
    sizes = blocks(masked)
    if not masked and any(length % block for length, block in zip((q_len, kv_len) * 3, sizes)):
        masked = True
        sizes = blocks(masked)
    rows = [tuning.launch(arch, head_dim, q.dtype, p, masked) for p in tuning.PASSES]
    block_q, block_kv, block_q_dkv, block_kv_dkv, block_q_dq, block_kv_dq = sizes

    if bound is not None:
        bound = jnp.clip(bound.astype(jnp.int32), 0, kv_len)

    no_cap = cap is None or cap_method == "none"
    st = _Static(
        q_len=q_len, kv_len=kv_len, head_dim=head_dim, group=num_q_heads // num_kv_heads,
        block_q=block_q, block_kv=block_kv,
        block_q_dkv=block_q_dkv, block_kv_dkv=block_kv_dkv,
        block_q_dq=block_q_dq, block_kv_dq=block_kv_dq,
        sm_scale=float(sm_scale),
        cap=None if no_cap else float(cap),
        cap_method="none" if no_cap else cap_method,
        causal=bool(causal), has_bound=bound is not None,
        interpret=interpret if interpret in (None, "blocked", "mosaic_gpu") else bool(interpret),
        launch=tuple((row.num_warps, row.num_stages) for row in rows),
        gpu_forward=tuning.gpu_forward(arch, head_dim, q.dtype, (q_len, kv_len),
                                       default_tiles=config is None, forced=forward),
    )
    return _flash_attention(q, k, v, bound, st)

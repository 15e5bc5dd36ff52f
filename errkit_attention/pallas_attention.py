"""Pallas implementation of ranker attention (flash attention, forward + backward).

Pallas with a grid and BlockSpecs (``pl.pallas_call``, ``lax.fori_loop``); ref loads and
stores are plain, except the masked ones of the Triton layout (``plgpu.load`` /
``plgpu.store``, below). Each call is lowered as Triton on GPU (explicit Triton compiler
parameters, blocked BlockSpecs), as Mosaic on TPU (errkit_attention/pallas_tpu.py, its own layout and
blocks) and runs with ``interpret=True`` on CPU; the choice is made when the call is
lowered (``lax.platform_dependent``), so a function traced on a CPU host and lowered for
CUDA holds the Triton kernels.

Layout: q, o [b, sq, hq, d]; k, v [b, skv, hkv, d] (the call's arrays are [b, h, s, d] with
layout="bhsd": the TPU branch of ``_call`` reads them as they are, the others see them
transposed, ``_in_bshd``). Grid (tile, batch x heads): the tile is
the fastest-varying axis (CUDA's x), so consecutive programs read the same keys and values
(or, in dK/dV, queries) and find them in L2; causal forward and dQ programs take their query
tiles from the last, the longest rows first (``_order``). Each program reads 2-D [rows, d]
tiles (Triton: [rows, dp], see below) and runs an online softmax (base 2) over the kv tiles,
dots on the input dtype accumulating in float32 (see "Kernels" below).

Grouped queries (GQA / MQA): a forward or dQ program serves ``pack`` query heads of one kv
head, stacked into one tile (``_QTile``), so each key / value tile is loaded once for all of
them; a dK/dV program sums its kv head's whole group. The backward is two kernels (dQ, and
dK/dV), or one (``fused``, FlashAttention-2's): the dK/dV kernel also adds each tile's dS K
into a float32 dq with atomic adds, 5 matmuls per tile where the two kernels do 3 + 4.
errkit_attention/tuning.py's table picks it where it fits the GPU (per architecture, head_dim, dtype).

Mask (see errkit_attention/reference.py): query i may attend key j iff
  j < ctx and (not causal or j <= i),  or  (bound given and j == i),
where ctx = bound[b] (clipped to [0, kv_len]) with a bound and kv_len without.
Keys j >= kv_len (the rows past the end of a partial last block) are always masked out.

Everything in here assumes validated inputs (errkit_attention/_validators.py). Nothing is padded
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
- TPU (Mosaic, errkit_attention/pallas_tpu.py): the block's last dim is the whole head_dim, rows past
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

from errkit_attention import _validators, pallas_tpu, shared_memory, tuning
from errkit_attention.config import BlockSizes
from errkit_attention.tiles import allowed as _allowed
from errkit_attention.tiles import cap_grad as _tiles_cap_grad
from errkit_attention.tiles import div as _div
from errkit_attention.reference import MASK_VALUE, bshd_shape, soft_cap, swap_seq_heads
from errkit_attention.tanh_exp2 import tanh_exp2

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
    # loads / stores) run by Pallas' interpreter (tests/kernel/test_blocked_interpret.py); "tpu":
    # the Mosaic TPU kernels (errkit_attention/pallas_tpu.py) run by Pallas' interpreter
    interpret: bool | str | None
    # Triton's (num_warps, num_stages) of the fwd, dq and dkdv kernels (errkit_attention/tuning.py); with
    # `fused`, the dkdv entry is the fused backward's (tuning.py's "bwd" row)
    launch: tuple[tuple[int, int], tuple[int, int], tuple[int, int]] = ((4, 3),) * 3
    # The backward as one kernel (FlashAttention-2): the dK/dV pass also adds each tile's dQ
    # into a float32 buffer with atomic adds (5 matmuls per tile instead of 3 + 4 in two).
    fused: bool = False
    # Query heads of one kv head stacked into one tile of the forward and dQ kernels (GQA): a
    # program serves `pack` heads of a group, block_q // pack query rows of each, and reads each
    # key / value tile once for all of them. 1: one query head per program.
    pack: int = 1
    batch: int = 1  # the batch size and kv heads: grid axis 1 runs over batch x heads
    kv_heads: int = 1
    # The forward's kernel on CUDA (errkit_attention/tuning.py gpu_forward): "triton", or "mosaic_gpu"
    # (errkit_attention/mosaic_gpu.py; with interpret="mosaic_gpu" run by Mosaic GPU's interpreter)
    gpu_forward: str = "triton"
    # RA214's checks of an explicit config's tiles on the GPU the call targets (_launch_checks):
    # (kernel, its validate_launch params as sorted items), run when that kernel is traced
    checks: tuple = ()
    # The layout of the call's q, k, v, do and of its results (ranker_attention's `layout`):
    # "bshd" or "bhsd", which the TPU kernels read as it is (_call, _in_bshd)
    layout: str = "bshd"
    # The TPU kernels' structure (errkit_attention/pallas_tpu.py Options; None: its defaults): the
    # benchmark's comparisons of one structure with another
    tpu: object = None

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


def _exp2_tanh(dtype) -> bool:
    """Whether a kernel on inputs of this dtype takes tanh_exp2 for a "tanh" cap: 16-bit inputs
    only. float32 tiles keep jnp.tanh (__nv_tanhf): with tanh_exp2, test_compile found spills
    in their kernels at 255 registers (float32, head_dim 64, sm_90a: dK/dV 96 B; sm_80 dQ 68 B;
    head_dim 256 sm_90a forward 8 B), which __nv_tanhf's branches do not cause."""
    return dtype != jnp.float32


def _soft_cap(s, st: _Static, dtype):
    """soft_cap (errkit_attention/reference.py), with tanh_exp2 for "tanh" on 16-bit inputs."""
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
          vector: bool = False, store: bool = False, heads: int = 1):
    """Mask of a blocked read or write of `rows` rows starting at sequence row `row0` of a
    sequence of `length`: rows < length (when `partial`: the block may run past the end)
    and, for a [rows, dp] tile (not `vector`), columns < head_dim. None when nothing is
    masked, and always in the whole layout (interpret mode pads its operands).

    heads > 1: the mask of a [rows, heads, dp] tile (a pack of query heads, ``_QTile``), or of
    a [heads, rows] vector.

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
        return valid if valid is None or heads == 1 else valid[None, :]
    cols = ((jnp.arange(st.dp, dtype=jnp.int32) < st.head_dim)
            if st.dp != st.head_dim else None)
    lead = (None,) * (1 if heads == 1 else 2)  # the axes before the columns'
    cols = None if cols is None else cols[lead + (slice(None),)]
    valid = None if valid is None else valid[(slice(None),) + lead]
    if valid is None:
        return cols
    return valid if cols is None else valid & cols


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


def _add(ref, ix, value, mask, st: _Static):
    """ref[ix] += value atomically (Triton's atomic_rmw fadd), only where the mask holds: the
    fused backward's dQ, which the programs of every key tile add into.

    Pallas' interpreter has no masked atomic (jax 0.10's discharge rule of atomic_rmw raises
    NotImplementedError on a mask); it runs the programs one after the other, so the blocked
    check (``interpret="blocked"``) reads, adds and writes back under the same mask instead,
    and runs the atomic itself where nothing is masked."""
    # A whole dimension as an int32 slice: the interpreter's atomic takes the slices' starts as
    # they are (jax 0.10), and a Python 0 would be int64 beside int32 ones under jax_enable_x64.
    ix = tuple(pl.ds(jnp.zeros((), jnp.int32), n) if isinstance(i, slice) else i
               for i, n in zip(ix, ref.shape))
    if mask is not None and st.interpret == "blocked":
        _store(ref, ix, _load(ref, ix, mask) + value, mask)
    elif mask is None:
        plgpu.atomic_add(ref, ix, value)
    else:  # the lowering takes the mask as it is: it must have the value's shape
        plgpu.atomic_add(ref, ix, value, mask=jnp.broadcast_to(mask, value.shape))


def _kv_head(h, group: int):
    """The kv head read by query head h (GQA), `group` query heads per kv head; or by pack h
    of query heads (``_QTile``), `group` then the packs per kv head."""
    return h if group == 1 else _div(h, group)


def _heads(st: _Static, kv: bool) -> int:
    """The heads grid axis 1 runs over (for each example): the kv heads (dK/dV), or the packs
    of query heads (forward, dQ: ``st.pack`` query heads each)."""
    return st.kv_heads if kv else st.kv_heads * (st.group // st.pack)


def _head_batch(st: _Static, hb, heads: int):
    """Grid axis 1's index -> (head, example): the axis runs over batch x heads, heads fastest.

    The grid is 2-D, (tile, batch x heads), because jax 0.10's Triton lowering folds every axis
    but the last two into CUDA's x with a division and a remainder of the program id: on a 3-D
    (tile, head, batch) grid the tile index took them, and kernels at the edge of their register
    budget spilled (the forward on sm_80, float32, head_dim 80: 12 B). Here the division is
    the batch's, and there is none with one example."""
    if st.batch == 1:  # an int32 0 (a Python 0 would be int64 under jax_enable_x64)
        return hb, jnp.zeros((), jnp.int32)
    return lax.rem(hb, jnp.asarray(heads, hb.dtype)), _div(hb, heads)


def _program(refs: list, st: _Static, *, kv: bool = False):
    """The common start of every kernel: pops the bound ref (when there is one) off `refs`, and
    returns the example and head of the program (grid axis 1: the tile, axis 0, is CUDA's x,
    the fastest, so that consecutive programs read the same keys and values, or queries, while
    they are in L2), the kv head read (forward, dQ: by the pack of query heads, ``st.pack``;
    kv: the dK/dV kernel's, whose head is a kv head), and the example's context bound (None
    without bound)."""
    bound_ref = refs.pop(0) if st.has_bound else None
    h, b = _head_batch(st, pl.program_id(1), _heads(st, kv))
    return b, h, _kv_head(h, st.group // st.pack), (bound_ref[b] if st.has_bound else None)


def _order(st: _Static, n: int):
    """Grid axis 0's index -> the query tile of a forward or dQ program, of n tiles: causal
    attention takes them from the last, whose rows attend the most keys, so that the longest
    programs start first and the short ones fill the last wave."""
    return (lambda i: n - 1 - i) if st.causal else (lambda i: i)


class _QTile:
    """The query tile a forward or dQ program owns: `bq` query rows of st.pack query heads (one
    kv head's), stacked into one [bq * pack, dp] tile whose row r is query i0 + r // pack of the
    program's head r % pack: the order of q's [b, s, h, d] layout, read as a [bq, pack, dp] block
    and merged. Every key and value tile is then loaded once for the pack's heads. lse and delta
    ([b, h, s]) are read as [pack, bq] and transposed."""

    def __init__(self, st: _Static, blocked: bool, b, h, bq: int):
        self.st, self.blocked, self.bq, self.pack = st, blocked, bq, st.pack
        self.rows = bq * st.pack
        self.i0 = _order(st, _cdiv(st.q_len, bq))(pl.program_id(0)) * bq
        self.partial = st.q_len % bq != 0
        rows = pl.ds(0 if blocked else self.i0, bq)
        cols = _cols(st, blocked)
        if self.pack == 1:
            self.ix, self.vix = _ix4(blocked, b, rows, h, cols), _ix3(blocked, b, h, rows)
        else:
            heads = slice(None) if blocked else pl.ds(h * self.pack, self.pack)
            self.ix = (rows, heads, cols) if blocked else (b, rows, heads, cols)
            self.vix = (heads, rows) if blocked else (b, heads, rows)

    def _mask(self, **kw):
        return _mask(self.st, self.blocked, self.i0, self.bq, self.st.q_len, self.partial,
                     heads=self.pack, **kw)

    def load(self, ref):
        """[rows, dp] (q, do)."""
        x = _load(ref, self.ix, self._mask())
        return x if self.pack == 1 else x.reshape(self.rows, x.shape[-1])

    def load_vec(self, ref):
        """[rows, 1] (lse, delta)."""
        x = _load(ref, self.vix, self._mask(vector=True))
        return (x if self.pack == 1 else x.T.reshape(self.rows))[:, None]

    def store(self, ref, value):
        if self.pack > 1:
            value = value.reshape(self.bq, self.pack, value.shape[-1])
        _store(ref, self.ix, value.astype(ref.dtype), self._mask(store=True))

    def store_vec(self, ref, value):
        if self.pack > 1:
            value = value.reshape(self.bq, self.pack).T
        _store(ref, self.vix, value, self._mask(vector=True, store=True))

    def allowed(self, j0, bkv: int, ctx, kv_partial: bool):
        """The tile's mask against keys [j0, j0 + bkv) (``tiles.allowed``): stacked rows give
        allowed() their queries as a [rows, 1] column, with one row per "block"."""
        if self.pack == 1:
            return _allowed(self.st, self.i0, j0, self.bq, bkv, ctx, kv_partial=kv_partial)
        query = self.i0 + _div(jnp.arange(self.rows, dtype=jnp.int32), self.pack)[:, None]
        return _allowed(self.st, query, j0, 1, bkv, ctx, kv_partial=kv_partial)


def _fwd_kernel(*refs, st: _Static, with_lse: bool, blocked: bool):
    q_ref, k_ref, v_ref, *refs = refs
    b, h, hk, ctx = _program(refs, st)
    o_ref, *lse_ref = refs
    bq, bkv = st.block_q // st.pack, st.block_kv
    kv_partial = st.kv_len % bkv != 0
    own = _QTile(st, blocked, b, h, bq)  # this program's query rows
    cols = _cols(st, blocked)
    n_whole = st.kv_len // bkv if blocked and kv_partial else None  # see _visit

    q = own.load(q_ref)

    def body(jk, carry, masked, partial):
        acc, m, l = carry
        j0 = jk * bkv
        ix = _ix4(blocked, b, pl.ds(j0, bkv), hk, cols)
        mask = _mask(st, blocked, j0, bkv, st.kv_len, partial)
        k = _load(k_ref, ix, mask)
        v = _load(v_ref, ix, mask)
        _, c = _capped_logits(q, k, st)
        allowed = own.allowed(j0, bkv, ctx, kv_partial) if masked else None
        if allowed is not None:
            c = jnp.where(allowed, c, MASK_VALUE)
        m_new = jnp.maximum(m, jnp.max(c, axis=1))
        correction = jnp.exp2(m - m_new)
        p = jnp.exp2(c - m_new[:, None])
        l = correction * l + jnp.sum(p, axis=1)
        acc = correction[:, None] * acc + _dot(p.astype(v.dtype), v)
        return acc, m_new, l

    carry = (jnp.zeros((own.rows, q.shape[-1]), jnp.float32),
             jnp.full((own.rows,), -jnp.inf, jnp.float32),
             jnp.zeros((own.rows,), jnp.float32))
    for bounds in _kv_ranges(st, own.i0, bq, bkv, ctx):
        carry = _visit(body, carry, *bounds, n_whole=n_whole)
    acc, m, l = carry

    # Rows that visited no block get o = 0, lse = 0.
    visited = l > 0.0
    l = jnp.where(visited, l, 1.0)
    own.store(o_ref, acc / l[:, None])
    if with_lse:
        own.store_vec(lse_ref[0], jnp.where(visited, m + jnp.log2(l), 0.0))


def _dq_kernel(*refs, st: _Static, blocked: bool):
    q_ref, k_ref, v_ref, do_ref, lse_ref, delta_ref, *refs = refs
    b, h, hk, ctx = _program(refs, st)
    (dq_ref,) = refs
    bq, bkv = st.block_q_dq // st.pack, st.block_kv_dq
    kv_partial = st.kv_len % bkv != 0
    own = _QTile(st, blocked, b, h, bq)
    cols = _cols(st, blocked)
    n_whole = st.kv_len // bkv if blocked and kv_partial else None  # see _visit

    q = own.load(q_ref)
    do = own.load(do_ref)
    lse = own.load_vec(lse_ref)
    delta = own.load_vec(delta_ref)

    def body(jk, dq, masked, partial):
        j0 = jk * bkv
        ix = _ix4(blocked, b, pl.ds(j0, bkv), hk, cols)
        mask = _mask(st, blocked, j0, bkv, st.kv_len, partial)
        k = _load(k_ref, ix, mask)
        v = _load(v_ref, ix, mask)
        s, c = _capped_logits(q, k, st)
        allowed = own.allowed(j0, bkv, ctx, kv_partial) if masked else None
        if allowed is not None:
            c = jnp.where(allowed, c, MASK_VALUE)
        p = jnp.exp2(c - lse)
        ds = p * (_dot_nt(do, v) - delta)
        grad = _cap_grad(s, st, q.dtype)
        if grad is not None:
            ds = ds * grad
        return dq + _dot(ds.astype(k.dtype), k)

    dq = jnp.zeros((own.rows, q.shape[-1]), jnp.float32)
    for bounds in _kv_ranges(st, own.i0, bq, bkv, ctx):
        dq = _visit(body, dq, *bounds, n_whole=n_whole)
    own.store(dq_ref, dq * st.sm_scale)


def _dkdv_kernel(*refs, st: _Static, blocked: bool):
    """dk, dv of one kv head's key tile, accumulated over the query heads of its group
    (GQA / MQA) in the kernel: no per-query-head partials. Fused (``st.fused``): each
    (query tile, key tile) also adds its dS K into dq (float32, atomic: the programs of
    every key tile add into the same rows), from the dS its dK takes."""
    q_ref, k_ref, v_ref, do_ref, lse_ref, delta_ref, *refs = refs
    if st.fused:
        refs.pop(0)  # dq's zeros: the buffer the dq output aliases
    b, hk, _, ctx = _program(refs, st, kv=True)  # grid axis 1: the kv head
    dq_ref, dk_ref, dv_ref = refs if st.fused else (None, *refs)
    g = st.group
    bq, bkv = st.block_q_dkv, st.block_kv_dkv
    q_partial, kv_partial = st.q_len % bq != 0, st.kv_len % bkv != 0
    j0 = pl.program_id(0) * bkv
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
        if st.fused:  # scaled here, once for dk and dq (unfused: dk at the end)
            ds = (ds * st.sm_scale).astype(q.dtype)
            _add(dq_ref, qix, _dot(ds, k), mask, st)
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
    dk_scale = 1.0 if st.fused else st.sm_scale
    _store(dk_ref, _ix4(blocked, b, own, hk, cols), (dk * dk_scale).astype(dk_ref.dtype),
           out_mask)
    _store(dv_ref, _ix4(blocked, b, own, hk, cols), dv.astype(dv_ref.dtype), out_mask)


# --------------------------------------------------------------------------
# pallas_call wrappers (arrays at their true shapes).
# --------------------------------------------------------------------------


def _compiler_params(st: _Static, pass_: str):
    """Triton launch parameters of one pass's kernel (errkit_attention/tuning.py's table)."""
    num_warps, num_stages = st.launch[tuning.PASSES.index(pass_)]
    return plgpu.CompilerParams(num_warps=num_warps, num_stages=num_stages)


# Grids are (tile, batch x heads): the tile, axis 0, is the fastest-varying one (CUDA's x), so the
# programs of one wave read one head's keys and values (or queries) and find them in L2
# (``_head_batch``).


def _index_map(st: _Static, kv: bool, index):
    """A BlockSpec's index map over the grid (tile, batch x heads), from index(tile, head, b)."""
    heads = _heads(st, kv)

    def index_map(i, hb):
        h, b = _head_batch(st, hb, heads)
        return index(i, h, b)
    return index_map


def _q_spec(st: _Static, bq: int, d: int):
    """BlockSpec of a forward or dQ program's own query tile of a [b, s, hq, d] operand (q, o,
    do, dq): bq rows of st.pack heads (see _QTile), tiles in ``_order``."""
    order = _order(st, _cdiv(st.q_len, bq))
    index = _index_map(st, False, lambda i, h, b: (b, order(i), h, 0))
    return pl.BlockSpec((None, bq, None if st.pack == 1 else st.pack, d), index)


def _q_vec_spec(st: _Static, bq: int):
    """BlockSpec of the same tile's [b, hq, s] rows (lse, delta)."""
    order = _order(st, _cdiv(st.q_len, bq))
    heads = None if st.pack == 1 else st.pack
    return pl.BlockSpec((None, heads, bq), _index_map(st, False, lambda i, h, b: (b, h, order(i))))


def _kv_slab_spec(st: _Static, rows: int, d: int):
    """BlockSpec of the whole [rows, d] sequence of the kv head a forward or dQ program reads."""
    return pl.BlockSpec((None, rows, None, d), _index_map(
        st, False, lambda i, h, b: (b, 0, _kv_head(h, st.group // st.pack), 0)))


def _tile_spec(st: _Static, rows: int, d: int):
    """BlockSpec of a dK/dV program's own key tile of a [b, s, hkv, d] operand."""
    return pl.BlockSpec((None, rows, None, d), _index_map(st, True, lambda j, h, b: (b, j, h, 0)))


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
          in_specs, out_specs, compiler_params, tpu, cuda=None, input_output_aliases=None):
    """pallas_call on `args` (None entries dropped): whole operands in interpret mode,
    the given blocked specs with Triton. With ``st.interpret`` None the choice is made
    when lowering (``lax.platform_dependent``): interpret on CPU, Mosaic on TPU (`tpu`, a
    function of errkit_attention/pallas_tpu.py), Triton elsewhere.

    roles / out_roles: which sequence ("q", "kv", None for the bound) each argument /
    result runs along: interpret mode pads those with zeros to a whole number of blocks
    and slices its results back (whole operands are indexed without masks); the Triton and
    Mosaic calls take and return the arrays as they are. input_output_aliases: pallas_call's
    (argument indices before the None entries are dropped: only trailing ones may be None).
    `args` are in the call's layout (st.layout), and so are the results; `out_shape` and the
    specs are [b, s, h, d]'s, which every branch but the TPU's works on (``_in_bshd``)."""
    keep = [a is not None for a in args]
    args = [a for a in args if a is not None]
    roles = [r for r, k in zip(roles, keep) if k]
    in_specs = [s for s, k in zip(in_specs, keep) if k]
    aliases = dict(input_output_aliases or {})

    def interpret(*args):
        outs = pl.pallas_call(
            functools.partial(kernel, blocked=False), grid=grid,
            in_specs=[pl.BlockSpec() for _ in args],
            out_specs=[pl.BlockSpec() for _ in out_shape],
            out_shape=[_padded_shape(s, r, st) for s, r in zip(out_shape, out_roles)],
            input_output_aliases=aliases, interpret=True, name=name)(
                *(_pad_seq(a, r, st) for a, r in zip(args, roles)))
        return tuple(lax.slice(o, (0,) * o.ndim, s.shape) for o, s in zip(outs, out_shape))

    def triton(*args, interpret=False):
        return pl.pallas_call(
            functools.partial(kernel, blocked=True), grid=grid,
            in_specs=in_specs, out_specs=out_specs, out_shape=out_shape,
            input_output_aliases=aliases, compiler_params=compiler_params,
            interpret=interpret, name=name)(*args)

    interpret, triton = _in_bshd(interpret, st), _in_bshd(triton, st)
    cuda = None if cuda is None else _in_bshd(cuda, st)
    if st.interpret is True or (st.interpret == "mosaic_gpu" and cuda is None):
        return interpret(*args)
    if st.interpret == "mosaic_gpu":  # `cuda`, the Mosaic GPU kernel, in its interpreter
        return cuda(*args, interpret=True)
    if st.interpret is False:
        return triton(*args)
    if st.interpret == "blocked":
        return triton(*args, interpret=True)
    if st.interpret == "tpu":  # the Mosaic TPU kernels, run by Pallas' interpreter (a check)
        return tpu(*args, st=st, interpret=True)
    # tpu: the Mosaic calls of errkit_attention/pallas_tpu.py; cuda: errkit_attention/mosaic_gpu.py's forward, or
    # None (Triton). Same arguments and results.
    return lax.platform_dependent(*args, cpu=interpret, tpu=functools.partial(tpu, st=st),
                                  default=triton, **({} if cuda is None else {"cuda": cuda}))


def _in_bshd(branch, st: _Static):
    """A branch of ``_call`` that takes and returns [b, s, h, d] arrays (interpret mode, Triton,
    Mosaic GPU) as one taking and returning the call's layout: with "bhsd", its 4-D arguments
    (q, k, v, do, dq's zeros) and results (o, dq, dk, dv) transposed; lse, delta [b, h, s] and
    the bound as they are. The TPU kernels read "bhsd" arrays as they are (pallas_tpu.py)."""
    if st.layout == "bshd":
        return branch

    def swapped(*args, **kwargs):
        outs = branch(*(swap_seq_heads(a) if a.ndim == 4 else a for a in args), **kwargs)
        return type(outs)(swap_seq_heads(o) if o.ndim == 4 else o for o in outs)
    return swapped


def _forward(q, k, v, bound, st: _Static, *, with_lse: bool):
    _check_launches(st, forward=True)
    batch, sq, hq, d = bshd_shape(q, st.layout)
    skv = bshd_shape(k, st.layout)[1]
    bq = st.block_q // st.pack  # query rows per tile (of each of the pack's heads)
    out_shape = [jax.ShapeDtypeStruct((batch, sq, hq, d), q.dtype)]
    out_specs = [_q_spec(st, bq, d)]
    if with_lse:
        out_shape.append(jax.ShapeDtypeStruct((batch, hq, sq), jnp.float32))
        out_specs.append(_q_vec_spec(st, bq))
    in_specs = [_q_spec(st, bq, d), _kv_slab_spec(st, skv, d), _kv_slab_spec(st, skv, d),
                pl.BlockSpec()]
    kernel = functools.partial(_fwd_kernel, st=st, with_lse=with_lse)
    cuda = None
    if st.gpu_forward == "mosaic_gpu":  # Hopper (errkit_attention/tuning.py gpu_forward)
        from errkit_attention import mosaic_gpu

        cuda = functools.partial(mosaic_gpu.forward, st=st, with_lse=with_lse)
    return _call(kernel, (_cdiv(sq, bq), batch * _heads(st, False)), [q, k, v, bound],
                 ["q", "kv", "kv", None], out_shape, ["q", "q"][:len(out_shape)], st,
                 "ranker_attention_fwd", in_specs=in_specs, out_specs=out_specs,
                 compiler_params=_compiler_params(st, "fwd"),
                 tpu=functools.partial(pallas_tpu.forward, with_lse=with_lse), cuda=cuda)


_BWD_ROLES = ["q", "kv", "kv", "q", "q", "q", None]  # q, k, v, do, lse, delta, bound


def _backward_dq(q, k, v, do, lse, delta, bound, st: _Static):
    batch, sq, hq, d = bshd_shape(q, st.layout)
    skv = bshd_shape(k, st.layout)[1]
    bq = st.block_q_dq // st.pack
    in_specs = [_q_spec(st, bq, d), _kv_slab_spec(st, skv, d), _kv_slab_spec(st, skv, d),
                _q_spec(st, bq, d), _q_vec_spec(st, bq), _q_vec_spec(st, bq), pl.BlockSpec()]
    kernel = functools.partial(_dq_kernel, st=st)
    (dq,) = _call(kernel, (_cdiv(sq, bq), batch * _heads(st, False)),
                  [q, k, v, do, lse, delta, bound], _BWD_ROLES,
                  [jax.ShapeDtypeStruct((batch, sq, hq, d), q.dtype)], ["q"], st,
                  "ranker_attention_dq",
                  in_specs=in_specs, out_specs=[_q_spec(st, bq, d)],
                  compiler_params=_compiler_params(st, "dq"),
                  tpu=pallas_tpu.backward_dq)
    return dq


def _tpu_backward(*args, st: _Static, interpret=False):
    """The fused call's TPU branch: errkit_attention/pallas_tpu.py's dQ and dK/dV calls, dq in float32 as
    the fused kernel returns it (args: q, k, v, do, lse, delta, dq's zeros, the bound);
    interpret: run by Pallas' interpreter (``_call``'s interpret="tpu")."""
    operands = [*args[:6], *args[7:]]
    (dq,) = pallas_tpu.backward_dq(*operands, st=st, interpret=interpret)
    dk, dv = pallas_tpu.backward_dkdv(*operands, st=st, interpret=interpret)
    return dq.astype(jnp.float32), dk, dv


def _backward_dkdv(q, k, v, do, lse, delta, bound, st: _Static):
    """dk, dv: one program per (key tile, kv head, batch), summing its query group in the
    kernel, so no two programs share a dk / dv tile and nothing grows with the group size.
    Fused (st.fused): (dq, dk, dv), dq in float32, which every key tile's program adds into."""
    batch, sq, hq, d = bshd_shape(q, st.layout)
    _, skv, hkv, _ = bshd_shape(k, st.layout)
    g = st.group
    bkv = st.block_kv_dkv
    kv_shape = jax.ShapeDtypeStruct((batch, skv, hkv, d), k.dtype)
    group_spec = pl.BlockSpec((None, sq, g, d), _index_map(st, True, lambda j, h, b: (b, 0, h, 0)))
    group_vec = pl.BlockSpec((None, g, sq), _index_map(st, True, lambda j, h, b: (b, h, 0)))
    args, roles = [q, k, v, do, lse, delta], _BWD_ROLES[:6]
    in_specs = [group_spec, _tile_spec(st, bkv, d), _tile_spec(st, bkv, d), group_spec,
                group_vec, group_vec]
    out_shape, out_roles = [kv_shape, kv_shape], ["kv", "kv"]
    out_specs = [_tile_spec(st, bkv, d), _tile_spec(st, bkv, d)]
    aliases = None
    if st.fused:  # dq: zeros in (argument 6), the sums out (result 0), the same buffer
        args, roles = args + [jnp.zeros(q.shape, jnp.float32)], roles + ["q"]
        in_specs = in_specs + [group_spec]
        out_shape = [jax.ShapeDtypeStruct((batch, sq, hq, d), jnp.float32)] + out_shape
        out_roles, out_specs = ["q"] + out_roles, [group_spec] + out_specs
        aliases = {6: 0}
    kernel = functools.partial(_dkdv_kernel, st=st)
    return _call(kernel, (_cdiv(skv, bkv), batch * hkv), args + [bound], roles + [None],
                 out_shape, out_roles, st,
                 "ranker_attention_bwd" if st.fused else "ranker_attention_dkdv",
                 in_specs=in_specs + [pl.BlockSpec()], out_specs=out_specs,
                 compiler_params=_compiler_params(st, "dkdv"),
                 tpu=_tpu_backward if st.fused else pallas_tpu.backward_dkdv,
                 input_output_aliases=aliases)


def _delta(out, do, st: _Static):
    """delta_i = sum_d o_id * do_id = sum_j p_ij dp_ij (the softmax backward term), from do as
    the kernels' dots read it: on a TPU where its MXU rounds float32, rounded to bfloat16
    (pallas_tpu.softmax_delta: dp and delta then cancel where they should)."""
    plain = functools.partial(pallas_tpu.softmax_delta, interpret=True)  # as interpret mode reads do: as it is
    if st.interpret is not None or not pallas_tpu.mxu_rounds(do.dtype):
        return plain(out, do)
    return lax.platform_dependent(out, do, tpu=pallas_tpu.softmax_delta, default=plain)


@functools.partial(jax.custom_vjp, nondiff_argnums=(4,))
def _flash_attention(q, k, v, bound, st: _Static):
    return _forward(q, k, v, bound, st, with_lse=False)[0]


def _flash_attention_fwd(q, k, v, bound, st: _Static):
    out, lse = _forward(q, k, v, bound, st, with_lse=True)
    return out, (q, k, v, bound, out, lse)


def _flash_attention_bwd(st: _Static, residuals, do):
    q, k, v, bound, out, lse = residuals
    _check_launches(st, forward=False)
    delta = _delta(out, do, st)
    if st.layout == "bshd":
        delta = jnp.transpose(delta, (0, 2, 1))  # [b, hq, sq], like lse
    if st.fused:
        dq, dk, dv = _backward_dkdv(q, k, v, do, lse, delta, bound, st)
        return dq.astype(q.dtype), dk, dv, None
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


def _pack(group: int, block_q: int, most: int | None = None) -> int:
    """The query heads a forward / dQ tile stacks (``_QTile``): the largest power of two that
    divides the group size and leaves at least 16 query rows of each head in a tile (so 1
    without GQA, and with an odd group size), and at most `most` (errkit_attention/tuning.py max_pack)."""
    pack = 1
    while (group % (2 * pack) == 0 and block_q // (2 * pack) >= _MIN_BLOCK
           and (most is None or 2 * pack <= most)):
        pack *= 2
    return pack


def pallas_attention(q, k, v, *, bound, causal: bool, sm_scale: float,
                     cap: float | None, cap_method: str, config: BlockSizes | None = None,
                     interpret: bool | str | None = None, arch: str | None = None,
                     forward: str | None = None, backward: str | None = None,
                     pack: int | None = None, fits_on: str | None = None,
                     layout: str = "bshd"):
    """Ranker attention with the Pallas kernels. Inputs are assumed validated.

    config: the tiles, None for errkit_attention/tuning.py's table row of `arch` (None: the
    architecture ``tuning.current_arch()`` picks); the Triton num_warps / num_stages come
    from that table either way. With a fused backward, block_q_dkv / block_kv_dkv tile it
    (block_q_dq / block_kv_dq are unused).
    interpret: True (interpret mode), False (Triton), or None: chosen when the call is
    lowered, interpret mode for CPU, Mosaic for TPU and Triton for any other platform;
    "blocked" (a check): the Triton kernels, as lowered for a GPU, run by Pallas'
    interpreter on the CPU; "mosaic_gpu" (a check): the forward's Mosaic GPU kernel, where the
    call takes it, run by Mosaic GPU's interpreter, the rest in interpret mode; "tpu" (a
    check): the Mosaic TPU kernels run by Pallas' interpreter.
    forward: the forward kernel forced on CUDA, "triton" or "mosaic_gpu", None for the call's
    own choice (errkit_attention/tuning.py gpu_forward, forward_kernel).
    backward: "fused" (one kernel, dQ by atomic adds), "split" (a dQ and a dK/dV kernel), or
    None: the table's choice (tuning.fused; tuning.backward_kernel forces one through the public
    API). A choice the table does not make takes the launches of the rows it has (tuning.launch:
    unproven on a GPU; for the checks and the GPU benchmark's comparison).
    fits_on: the GPU architecture the call targets (errkit_attention/attention.py, tuning.gpu_targeted), on
    which an explicit config's tiles are checked (RA214); None: not checked.
    pack: the query heads stacked per forward / dQ tile (a power of two dividing the group
    size, block_q // pack >= 16), None for the largest such within the table's limit
    (``_pack``, tuning.max_pack).
    layout: "bshd" (q, k, v and the results [b, s, h, d]) or "bhsd" ([b, h, s, d]).
    """
    batch, q_len, num_q_heads, head_dim = bshd_shape(q, layout)
    _, kv_len, num_kv_heads, _ = bshd_shape(k, layout)
    arch = tuning.current_arch() if arch is None else arch
    fused = tuning.fused(arch, head_dim, q.dtype) if backward is None else backward == "fused"

    def pick(size, default):
        return default if size is None else size

    def blocks(masked: bool):
        """(block_q, block_kv, block_q_dkv, block_kv_dkv, block_q_dq, block_kv_dq), clamped."""
        tiles = config or tuning.block_sizes(arch, head_dim, q.dtype, masked, fused=fused)
        return (_clamp_block(tiles.block_q, q_len), _clamp_block(tiles.block_kv, kv_len),
                _clamp_block(pick(tiles.block_q_dkv, tiles.block_q), q_len),
                _clamp_block(pick(tiles.block_kv_dkv, tiles.block_kv), kv_len),
                _clamp_block(pick(tiles.block_q_dq, tiles.block_q), q_len),
                _clamp_block(pick(tiles.block_kv_dq, tiles.block_kv), kv_len))

    # Masked tiles (errkit_attention/tuning.py's "masked" launches): head_dim short of the tiles' width, or
    # a sequence that is not a whole number of blocks.
    masked = head_dim != tuning.padded_head_dim(head_dim)
    sizes = blocks(masked)
    if not masked and any(length % block for length, block in zip((q_len, kv_len) * 3, sizes)):
        masked = True
        sizes = blocks(masked)
    rows = [tuning.launch(arch, head_dim, q.dtype, p, masked, fused=fused) for p in tuning.PASSES]
    block_q, block_kv, block_q_dkv, block_kv_dkv, block_q_dq, block_kv_dq = sizes
    group = num_q_heads // num_kv_heads
    if pack is None:  # one pack for the forward and the dQ kernel (when there is one)
        pack = _pack(group, block_q if fused else min(block_q, block_q_dq),
                     tuning.max_pack(arch, head_dim, q.dtype))

    if bound is not None:
        bound = jnp.clip(bound.astype(jnp.int32), 0, kv_len)

    no_cap = cap is None or cap_method == "none"
    st = _Static(
        q_len=q_len, kv_len=kv_len, head_dim=head_dim, group=group,
        block_q=block_q, block_kv=block_kv,
        block_q_dkv=block_q_dkv, block_kv_dkv=block_kv_dkv,
        block_q_dq=block_q_dq, block_kv_dq=block_kv_dq,
        sm_scale=float(sm_scale),
        cap=None if no_cap else float(cap),
        cap_method="none" if no_cap else cap_method,
        causal=bool(causal), has_bound=bound is not None,
        interpret=(interpret if interpret in (None, "blocked", "mosaic_gpu", "tpu")
                   else bool(interpret)),
        launch=tuple((row.num_warps, row.num_stages) for row in rows),
        fused=fused, pack=pack, batch=batch, kv_heads=num_kv_heads,
        gpu_forward=tuning.gpu_forward(arch, head_dim, q.dtype, (q_len, kv_len),
                                       default_tiles=config is None, forced=forward),
        layout=layout,
    )
    if config is not None and fits_on is not None:
        st = dataclasses.replace(st, checks=_launch_checks(st, fits_on, q.dtype, masked))
    return _flash_attention(q, k, v, bound, st)


def _launch_checks(st: _Static, arch: str, dtype, masked: bool) -> tuple:
    """RA214's params of each Triton kernel of a call with an explicit config on the GPU `arch`
    it targets, unless it runs in interpret mode: the tiles that cannot fit its shared memory
    are refused when the kernel is traced."""
    if st.interpret not in (None, False) or arch not in tuning.ARCHES:
        return ()
    dtype = jnp.dtype(dtype).name
    kernels = [("fwd", (st.block_q, st.block_kv), st.launch[0])] if st.gpu_forward == "triton" else []
    if st.fused:
        kernels.append((tuning.FUSED, (st.block_q_dkv, st.block_kv_dkv), st.launch[2]))
    else:
        kernels += [("dq", (st.block_q_dq, st.block_kv_dq), st.launch[1]),
                    ("dkdv", (st.block_q_dkv, st.block_kv_dkv), st.launch[2])]
    checks = []
    for pass_, tiles, (_, num_stages) in kernels:
        row = tuning.launch(arch, st.head_dim, dtype, "dkdv" if pass_ == tuning.FUSED else pass_,
                            masked, fused=st.fused)
        params = shared_memory.launch_params(arch, pass_, st.head_dim, dtype, tiles, num_stages,
                                             (row.block_q, row.block_kv))
        if params is not None:
            checks.append((pass_, tuple(sorted(params.items()))))
    return tuple(checks)


def _check_launches(st: _Static, forward: bool) -> None:
    """Raise RA214 for the forward's kernel (`forward`) or the backward's, as _launch_checks found."""
    for pass_, params in st.checks:
        if (pass_ == "fwd") == forward:
            _validators.validate_launch(**dict(params))

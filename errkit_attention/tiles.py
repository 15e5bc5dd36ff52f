"""What the Triton / interpret kernels (errkit_attention/pallas_attention.py) and the Mosaic TPU kernels
(errkit_attention/pallas_tpu.py) compute alike on a tile: the mask, the soft-cap derivative, int32 division."""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax


def div(a, b: int):
    """a // b for a Python or traced int (a traced one keeps its dtype: int32 index arithmetic
    even under jax_enable_x64, where a bare Python int would be int64)."""
    return a // b if isinstance(a, int) else lax.div(a, jnp.asarray(b, a.dtype))


def cap_grad(s, st, tanh=None):
    """d soft_cap(s) / d s, or None when there is no capping. tanh: None (jnp.tanh(s / cap)), or
    the tanh the forward's cap took, of s * (1 / cap) (errkit_attention/tanh_exp2.py)."""
    if st.cap is None or st.cap_method == "none":
        return None
    if st.cap_method == "tanh":
        t = jnp.tanh(s / st.cap) if tanh is None else tanh(s * (1.0 / st.cap))
        return 1.0 - t * t
    r = 1.0 / (1.0 + jnp.abs(s) / st.cap)  # soft_sign
    return r * r


def allowed(st, i0, j0, bq: int, bkv: int, ctx, *, kv_partial: bool, q_partial: bool = False,
            iota_2d: bool = False, iota=None, transposed: bool = False):
    """Boolean [bq, bkv] (or broadcastable) mask of a tile, None if all-True; [bkv, bq] with
    transposed (keys along the rows, queries along the columns: the TPU dK/dV kernel's tiles).

    i0 / j0: first query row / key column of the tile; ctx: the context end (bound[b] with a
    bound, unused otherwise). kv_partial / q_partial: the key / query sequence ends inside
    its last block (its length is not a multiple of the block: the grids are cdiv), whose
    rows past the end are masked out: keys j >= kv_len, queries i >= q_len. iota_2d: rows
    and columns from 2-D iotas (Mosaic TPU wants them), else from 1-D aranges broadcast
    (Triton). iota: None, or the 2-D iota to take, ``iota(shape, dimension)`` (Mosaic GPU's,
    in the layout of its wgmma results: errkit_attention/mosaic_gpu.py).
    """
    if transposed:
        rows = i0 + lax.broadcasted_iota(jnp.int32, (bkv, bq), 1)
        cols = j0 + lax.broadcasted_iota(jnp.int32, (bkv, bq), 0)
    elif iota is not None:
        rows = i0 + iota((bq, bkv), 0)
        cols = j0 + iota((bq, bkv), 1)
    elif iota_2d:
        rows = i0 + lax.broadcasted_iota(jnp.int32, (bq, bkv), 0)
        cols = j0 + lax.broadcasted_iota(jnp.int32, (bq, bkv), 1)
    else:
        rows = i0 + jnp.arange(bq, dtype=jnp.int32)[:, None]
        cols = j0 + jnp.arange(bkv, dtype=jnp.int32)[None, :]
    mask = None

    def both(a, b):
        return b if a is None else a & b

    if st.has_bound:
        mask = cols < ctx
    elif kv_partial:
        mask = cols < st.kv_len
    if st.causal:
        mask = both(mask, cols <= rows)
    if st.has_bound:
        diag = cols == rows
        if kv_partial:
            diag = diag & (cols < st.kv_len)
        mask = mask | diag
    if q_partial:
        mask = both(mask, rows < st.q_len)
    return mask

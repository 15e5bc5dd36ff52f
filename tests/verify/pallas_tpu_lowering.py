"""Runners of the Pallas TPU lowering's block rule (RA812), lowered for TPU from the CPU
(`jax.jit(f).trace(...).lower(lowering_platforms=("tpu",))`): Mosaic itself never runs, only the
lowering's own checks.

The params are the ones the message prints: the pallas_call's name says which kernel raised it, and
the runner calls that kernel again with the block the params give (a suggested value replaces
`block_shape` with the block's last two dims; the bad example's are `block_rows`, `block_cols`):

- a copy kernel `o_ref[...] = x_ref[...] * 2` (any other name): the block over the array's last two
  dims, a grid that covers it;
- TPU flash attention (`_flash_attention_kernel`): the q block's rows are block_q, q_seq_len the
  array's second-last dim;
- splash attention's forward kernel (`splash_mha_fwd...`): the q block's rows are block_q;
- its backward kernels (`splash_mha_dkv...`, `splash_mha_dq...`): the query block is block_q_dkv /
  block_q_dq, the rows of the q block, or the last dim of the logsumexp / di blocks, whose arrays are
  (heads, 8, q_seq_len) in dK/dV and (heads, 1, q_seq_len) in dQ.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas.ops.tpu import flash_attention as flash
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as splash
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as mask_lib

from verify import register

KV_SEQ_LEN = 1024  # splash's keys: blocks of 128


def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


def _lower(f, *args):
    return jax.jit(f).trace(*args).lower(lowering_platforms=("tpu",))


def _block(p: dict) -> tuple:
    """The block's last two dims: a suggested block_shape (a pair), else the ones the message printed
    (None for a squeezed dim)."""
    if isinstance(p["block_shape"], (list, tuple)):
        return tuple(p["block_shape"][-2:])
    return p.get("block_rows"), p["block_cols"]


def lower_copy(rows, cols, array: tuple):
    """The copy kernel with a (rows, cols) block (rows None: squeezed) over an `array`-shaped array."""
    grid = (array[0] // (rows or 1), -(-array[1] // cols))
    spec = pl.BlockSpec((rows, cols), lambda i, j: (i, j))
    f = pl.pallas_call(_copy, grid=grid, in_specs=[spec], out_specs=spec,
                       out_shape=jax.ShapeDtypeStruct(array, jnp.float32))
    return _lower(f, jnp.zeros(array, jnp.float32))


def lower_flash(block_q: int, q_seq_len: int, head_dim: int):
    q = jnp.zeros((1, 2, q_seq_len, head_dim), jnp.float32)
    sizes = flash.BlockSizes(block_q=block_q, block_k_major=128, block_k=128, block_b=1)
    return _lower(lambda q: flash.flash_attention(q, q, q, block_sizes=sizes), q)


def lower_splash(q_seq_len: int, head_dim: int, backward: bool = False, **blocks):
    q = jnp.zeros((2, q_seq_len, head_dim), jnp.float32)
    k = jnp.zeros((2, KV_SEQ_LEN, head_dim), jnp.float32)
    mask = mask_lib.MultiHeadMask([mask_lib.FullMask((q_seq_len, KV_SEQ_LEN))] * 2)
    sizes = dict(block_q=q_seq_len, block_kv=128, block_kv_compute=128)
    if backward:  # the forward's blocks legal (the whole query length), the backward's as given
        sizes |= dict(block_q_dkv=q_seq_len, block_kv_dkv=128, block_kv_dkv_compute=128, block_q_dq=q_seq_len, block_kv_dq=128)
    attn = splash.make_splash_mha(mask, head_shards=1, q_seq_shards=1, block_sizes=splash.BlockSizes(**(sizes | blocks)))
    if backward:
        return _lower(jax.grad(lambda q, k, v: attn(q, k, v).sum()), q, k, k)
    return _lower(attn, q, k, k)


@register("RA812")
def tpu_block(p: dict):
    rows, cols = _block(p)
    shape = tuple(p["array_shape"])
    name = (p.get("pallas_call") or "").split(" ")[0]
    if name.startswith("_flash_attention_kernel"):
        return lower_flash(rows, shape[-2], shape[-1])
    if name.startswith("splash_m") and "_fwd" in name:
        return lower_splash(shape[-2], shape[-1], block_q=rows)
    for phase in ("dkv", "dq"):
        if name.startswith("splash_m") and f"_{phase}" in name:
            stats = shape[-2] in (1, 8)  # the logsumexp / di block: (1 or 8, block) over (1 or 8, q_seq_len)
            q_seq_len, block = (shape[-1], cols) if stats else (shape[-2], rows)
            return lower_splash(q_seq_len, 128, backward=True, **{f"block_q_{phase}": block})
    return lower_copy(rows, cols, shape[-2:])


BIT_DTYPES = {32: jnp.float32, 16: jnp.bfloat16, 8: jnp.int8}


@register("RA814")
def tpu_rank1_block(p: dict):
    """A copy kernel with a 1-D block over the 1-D array, its dtype from the bit width, lowered under an
    abstract mesh naming a TPU v5e (from jax 0.9.2 the check asks for the chip's sublanes and lanes)."""
    n, block = p["array_shape"][0], p["block_size"]
    dtype = BIT_DTYPES[p["bitwidth"]]
    spec = pl.BlockSpec((block,), lambda i: (i,))
    f = pl.pallas_call(_copy, grid=(-(-n // block),), in_specs=[spec], out_specs=spec,
                       out_shape=jax.ShapeDtypeStruct((n,), dtype))
    tpu = jax.sharding.AbstractDevice(device_kind="TPU v5 lite", num_cores=1, platform="tpu")
    with jax.sharding.use_abstract_mesh(jax.sharding.AbstractMesh((1,), ("x",), abstract_device=tpu)):
        return _lower(f, jnp.zeros((n,), dtype))

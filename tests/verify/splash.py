"""Runners of JAX's Pallas TPU splash attention (jax/experimental/pallas/ops/tpu/splash_attention/).

Each runner turns an entry's params into one splash call and `splash()` makes it twice: under
`pltpu.force_tpu_interpret_mode()` on the CPU (the forward pass, and `jax.grad` when backward
blocks are set, traced with jax.eval_shape as tests/advice/test_upstream_tpu.py does: every check of the
kernels and of their mask processing runs, nothing is compiled; SPLASH_VERIFY_EXECUTE=1 also
executes the forward pass, about a second per configuration), and lowered for TPU from the CPU (`jax.jit(f).trace(...).lower(lowering_platforms=("tpu",))`),
which runs the Pallas TPU lowering's block-shape rules. It passes only when all of them pass.

A value the message prints for several blocks (`q_block_size` is block_q, block_q_dq or
block_q_dkv as mask processing reaches them) is given to all of them, with backward blocks: a
suggestion must then hold for the forward and for both backward kernels. Shapes are tiny: one
head, head_dim 8 unless the entry is about it, and results are cached per configuration.
"""

from __future__ import annotations

import functools
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as SK
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as SM
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask_info as MI

from verify import register

T = 256  # default query and key length
D = 8  # default head dim (any head dim lowers in jax 0.10.2)
EXECUTE = os.environ.get("SPLASH_VERIFY_EXECUTE") == "1"
BLOCKS = ("block_q", "block_kv", "block_kv_compute", "block_q_dkv", "block_kv_dkv", "block_kv_dkv_compute",
          "block_q_dq", "block_kv_dq")


def _none_if_unset(value):
    return None if value is None else int(value)


@functools.lru_cache(maxsize=None)
def _splash(cfg: tuple) -> None:
    c = dict(cfg)
    heads, kv_heads = c.get("num_q_heads", 1), c.get("num_kv_heads", 1)
    tq, tk = c.get("q_seq_len", T), c.get("kv_seq_len", T)
    dq, dk, dv = c.get("head_dim", D), c.get("head_dim_k", c.get("head_dim", D)), c.get("head_dim_v", c.get("head_dim", D))
    mqa = c.get("mqa", False)
    head_shards, q_seq_shards = c.get("head_shards", 1), c.get("q_seq_shards", 1)
    mask_heads = c.get("mask_heads", heads)
    sizes = {name: c[name] for name in BLOCKS if c.get(name) is not None}
    sizes.setdefault("block_q", 128)
    sizes.setdefault("block_kv", 128)
    bs = SK.BlockSizes(**sizes, use_fused_bwd_kernel=c.get("fused", False))
    mask = _mask(c, mask_heads, tq, tk)
    make = SK.make_splash_mqa if mqa else SK.make_splash_mha
    kernel = make(mask, block_sizes=bs, head_shards=head_shards, q_seq_shards=q_seq_shards)
    if head_shards > 1 or q_seq_shards > 1:
        # Each shard's kernel sees its part of the heads and of the query sequence (shard_map): run
        # that one on this single device.
        heads, mask_heads, tq = heads // head_shards, mask_heads // head_shards, tq // q_seq_shards
        kv_heads = max(1, kv_heads // head_shards)
        mask = _mask(c, mask_heads, tq, tk)
        kernel = make(mask, block_sizes=bs, head_shards=1, q_seq_shards=1)
    key = jax.random.PRNGKey(0)
    q = jax.random.normal(key, (heads, tq, dq), jnp.float32)
    kshape = (tk, dk) if mqa else (kv_heads, tk, dk)
    vshape = c.get("v_shape") or ((tk, dv) if mqa else (kv_heads, tk, dv))
    k = jax.random.normal(key, kshape if not c.get("k_shape") else c["k_shape"], jnp.float32)
    v = jax.random.normal(key, tuple(vshape), jnp.float32)
    seg = None
    if c.get("segment_ids") or c.get("q_segment_ids_shape") or c.get("kv_segment_ids_shape"):
        seg = SK.SegmentIds(jnp.zeros(c.get("q_segment_ids_shape") or (tq,), jnp.int32),
                            jnp.zeros(c.get("kv_segment_ids_shape") or (tk,), jnp.int32))

    def fwd(q, k, v):
        return kernel(q, k, v, segment_ids=seg)

    def loss(q, k, v):
        return fwd(q, k, v).sum()

    backward = bs.has_backward_blocks
    grad = jax.grad(loss, argnums=(0, 1, 2))
    if c.get("lower", True):
        jax.jit(fwd).trace(q, k, v).lower(lowering_platforms=("tpu",))
    if backward and c.get("lower", True):
        jax.jit(grad).trace(q, k, v).lower(lowering_platforms=("tpu",))
    with pltpu.force_tpu_interpret_mode():
        if EXECUTE:
            jax.block_until_ready(fwd(q, k, v))
        else:
            jax.eval_shape(fwd, q, k, v)
        if backward:
            jax.eval_shape(grad, q, k, v)


def _mask(c: dict, heads: int, tq: int, tk: int):
    """The mask of a configuration: causal, unless it names another (a dense jax.Array of
    mask_dtype, a ChunkedCausalMask of chunk_size, a CausalMask with shard_count)."""
    if c.get("mask_dtype"):
        return jnp.asarray(np.tril(np.ones((heads, tq, tk), bool))).astype(c["mask_dtype"])
    if c.get("chunk_size") is not None:
        return SM.MultiHeadMask([SM.ChunkedCausalMask((tq, tk), chunk_size=c["chunk_size"]) for _ in range(heads)])
    return SM.MultiHeadMask([SM.CausalMask((tq, tk), shard_count=c.get("shard_count", 1)) for _ in range(heads)])


def splash(**cfg) -> None:
    """One splash call (see the module's docstring): raises what the kernel, its mask processing
    or its lowering raises."""
    _splash(tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in cfg.items() if v is not None)))


def _backward(block_q: int = 128, block_kv: int = 128) -> dict:
    return dict(block_q_dkv=block_q, block_kv_dkv=block_kv, block_q_dq=block_q, block_kv_dq=block_kv)


# -- block sizes -----------------------------------------------------------------------------------


@register("RA700")
def fused_dq_blocks(p: dict):
    """BlockSizes with use_fused_bwd_kernel and dQ blocks; the backward pass runs."""
    return splash(block_q_dkv=128, block_kv_dkv=128, block_q_dq=p.get("block_q_dq"), block_kv_dq=p.get("block_kv_dq"),
                  fused=bool(p.get("use_fused_bwd_kernel")))


@register("RA702")
def kv_block_lanes(p: dict):
    """The forward wording (bkv_compute): block_kv (block_kv_compute defaults to it); the dQ wording
    (bkv): block_kv_dq, under jax.grad."""
    kv = p.get("kv_seq_len") or T
    if p.get("bkv_compute") is not None:
        return splash(kv_seq_len=kv, block_kv=p["bkv_compute"])
    return splash(kv_seq_len=kv, **dict(_backward(), block_kv_dq=p["bkv"]))


@register("RA703")
def dkv_query_block_segment_ids(p: dict):
    """block_q_dkv under jax.grad with segment ids; q_seq_shards (a case of its fix) for the whole
    q_seq_len, each shard's kernel run."""
    return splash(q_seq_len=p.get("q_seq_len") or T, segment_ids=True, q_seq_shards=p.get("q_seq_shards"),
                  **dict(_backward(), block_q_dkv=p["block_q_dkv"]))


@register("RA708")
def compute_block(p: dict):
    """block_kv / block_kv_compute, and the same pair as block_kv_dkv / block_kv_dkv_compute under jax.grad."""
    kv = p.get("kv_seq_len") or T
    return splash(kv_seq_len=kv, block_kv=p["bkv"], block_kv_compute=p["bkv_compute"],
                  **dict(_backward(), block_kv_dkv=p["bkv"], block_kv_dkv_compute=p["bkv_compute"]))


def _q_blocks(q_block_size: int, backward: bool = True) -> dict:
    if not backward:  # (a case assuming the forward only: no backward blocks, no jax.grad)
        return dict(block_q=q_block_size)
    return dict(block_q=q_block_size, block_q_dkv=q_block_size, block_q_dq=q_block_size, block_kv_dkv=128, block_kv_dq=128)


@register("RA710")
def query_block(p: dict):
    """q_block_size as block_q, block_q_dkv and block_q_dq (forward and backward). The per-shard
    wording: make_splash_mha with q_seq_shards (the q_seq_shards param, 2 when not given). With
    segment_ids (a case of its fix), the kernel is called with segment ids; in a case assuming the
    forward only (backward false), only the forward runs; in one assuming q_seq_shards, the call is
    sharded so."""
    qb = p["q_block_size"] if p.get("q_block_size") is not None else p["bq"]
    seg = p.get("segment_ids")
    blocks = _q_blocks(qb, p.get("backward") is not False)
    if p.get("q_seq_len_per_shard") is not None:
        shards = p.get("q_seq_shards") or 2
        tq = p["q_seq_len_per_shard"] * shards  # (no wording prints both lengths)
        return splash(q_seq_len=tq, q_seq_shards=shards, segment_ids=seg, **blocks)
    return splash(q_seq_len=p.get("q_seq_len") or T, segment_ids=seg, q_seq_shards=p.get("q_seq_shards"), **blocks)


@register("RA711")
def key_block(p: dict):
    """kv_block_size as block_kv, block_kv_dkv and block_kv_dq (forward and backward)."""
    kb = p["kv_block_size"] if p.get("kv_block_size") is not None else p["bkv"]
    return splash(kv_seq_len=p["kv_seq_len"], block_kv=kb, block_q_dkv=128, block_kv_dkv=kb, block_q_dq=128, block_kv_dq=kb)


@register("RA712")
def shards(p: dict):
    """make_splash_mha with head_shards / q_seq_shards, default 128 blocks; each shard's kernel runs."""
    heads = p.get("head_count") or 1
    return splash(num_q_heads=heads, num_kv_heads=heads, q_seq_len=p.get("q_seq_len") or T,
                  head_shards=p.get("head_shards") or 1, q_seq_shards=p.get("q_seq_shards") or 1, **_backward())


# -- shapes ----------------------------------------------------------------------------------------


def _key_shape(rank: int, kv_seq_len: int = T, head_dim: int = D) -> tuple:
    return ((1,) * (rank - 2)) + (kv_seq_len, head_dim)


@register("RA704")
def key_rank(p: dict):
    """An MHA kernel (expected_kv_rank 3) or an MQA one (2) given a key of rank k_rank."""
    shape = _key_shape(p["k_rank"])
    return splash(mqa=p["expected_kv_rank"] == 2, k_shape=shape, v_shape=shape)


@register("RA705")
def key_head_dim(p: dict):
    """q with head_dim_qk, k and v with head_dim_k."""
    return splash(head_dim=p["head_dim_qk"], head_dim_k=p["head_dim_k"], head_dim_v=p["head_dim_k"])


@register("RA706")
def gqa_heads(p: dict):
    """num_q_heads query heads (and mask heads), num_kv_heads key/value heads."""
    return splash(num_q_heads=p["num_q_heads"], num_kv_heads=p["num_kv_heads"])


@register("RA707")
def kv_shapes(p: dict):
    """k and v of the given shapes (MHA for rank 3, MQA for rank 2), q with k's heads and head dim."""
    k_shape, v_shape = tuple(p["k_shape"]), tuple(p["v_shape"])
    mqa = len(k_shape) == 2
    heads = 1 if mqa else k_shape[0]
    return splash(mqa=mqa, num_q_heads=heads, num_kv_heads=heads, kv_seq_len=k_shape[-2], head_dim=k_shape[-1],
                  k_shape=k_shape, v_shape=v_shape)


@register("RA709")
def segment_ids_shape(p: dict):
    """q segment ids of segment_ids_shape for a query length of expected_shape[0]."""
    return splash(q_seq_len=p["expected_shape"][0], q_segment_ids_shape=tuple(p["segment_ids_shape"]))


@register("RA715")
def mask_rank(p: dict):
    """make_splash_mha_single_device with a mask of mask_shape: a CausalMask (2-D), a MultiHeadMask
    of CausalMasks (3-D) or a dense numpy array (other ranks)."""
    shape = tuple(p["mask_shape"])
    if len(shape) == 3:
        return splash(num_q_heads=shape[0], num_kv_heads=shape[0], q_seq_len=shape[1], kv_seq_len=shape[2])
    mask = SM.CausalMask(shape) if len(shape) == 2 else np.ones(shape, bool)
    return SK.make_splash_mha_single_device(mask, block_sizes=SK.BlockSizes(block_q=128, block_kv=128))


# -- masks -----------------------------------------------------------------------------------------


@register("RA701")
def mask_dtype(p: dict):
    """A dense (jax.Array) mask of the given dtype."""
    return splash(mask_dtype=str(p.get("dtype") or "bool"))


@register("RA721")
def combined_mask_shapes(p: dict):
    """CausalMask(self_shape) | CausalMask(other_shape), then a kernel on the combined mask's shape."""
    mask = SM.CausalMask(tuple(p["self_shape"])) | SM.CausalMask(tuple(p["other_shape"]))
    return splash(q_seq_len=mask.shape[0], kv_seq_len=mask.shape[1])


@register("RA722")
def chunk_size(p: dict):
    """A ChunkedCausalMask of chunk_size. Run in interpret mode only: lowering its mask function
    for TPU (a `sign`) asks for the TPU generation, which a CPU cannot give."""
    return splash(chunk_size=p["chunk_size"], lower=False)


@register("RA725")
def mask_shard_count(p: dict):
    """CausalMask((q_seq_len, 256), shard_count=sqrt(shard_count_squared)); block_q 128 or the whole length."""
    count = int(round(p["shard_count_squared"] ** 0.5))
    tq = p["q_seq_len"]
    return splash(q_seq_len=tq, shard_count=count, block_q=128 if tq % 128 == 0 else tq)


@register("RA727")
def full_mask_shape_type(p: dict):
    """FullMask with its shape given as a list or a tuple."""
    shape = [T, T] if "list" in p["shape_type"] else (T, T)
    mask = SM.MultiHeadMask([SM.FullMask(shape)])
    return SK.make_splash_mha_single_device(mask, block_sizes=SK.BlockSizes(block_q=128, block_kv=128))

"""JAX's Pallas TPU splash attention (make_splash_mha, BlockSizes, segment_ids, jax.grad, q_seq_shards
and head_shards): the heads, the lengths set by the data, head_dim and the eight block sizes.

On the CPU, tests/verify/splash.py's `splash()` makes the call: traced in TPU interpret mode (forward,
and jax.grad when the backward blocks are set) and lowered for TPU from the CPU; a sharded call runs
each shard's kernel. On a TPU the kernel is compiled and run (forward, and its gradient).
"""

from __future__ import annotations

import hypothesis.strategies as st

from verify.calls import Family, family

QUERY_BLOCKS = ("block_q", "block_q_dkv", "block_q_dq")
KEY_BLOCKS = ("block_kv", "block_kv_dkv", "block_kv_dq")
BACKWARD = ("block_q_dkv", "block_kv_dkv", "block_q_dq", "block_kv_dq")


def _lanes(n: int, at_most: int = 512) -> list[int]:
    return [b for b in (128, 256, 512) if n % b == 0 and b <= min(n, at_most)]


def base(draw) -> dict:
    kv_heads = draw(st.sampled_from([1, 2]))
    q_len = draw(st.sampled_from([256, 512, 1024]))
    kv_len = draw(st.sampled_from([256, 512, 1024]))
    shards = draw(st.sampled_from([1, 1, 2]))
    block_q = draw(st.sampled_from(_lanes(q_len // shards)))
    block_kv = draw(st.sampled_from(_lanes(kv_len)))
    grad = draw(st.booleans())
    call = {"num_q_heads": kv_heads * draw(st.sampled_from([1, 2])), "num_kv_heads": kv_heads, "q_seq_len": q_len,
            "kv_seq_len": kv_len, "head_dim": draw(st.sampled_from([64, 128])), "block_q": block_q, "block_kv": block_kv,
            "block_kv_compute": draw(st.sampled_from([None, 128])), "segment_ids": draw(st.booleans()),
            "q_seq_shards": shards, "grad": grad}
    for name in BACKWARD:
        call[name] = (block_q if name.startswith("block_q") else block_kv) if grad else None
    return call


def perturb(draw, call: dict) -> dict:
    kind = draw(st.sampled_from(["q_len", "kv_len", "block_q", "block_kv", "compute", "heads", "shards"]))
    if kind == "q_len":  # a length set by the data
        return {"q_seq_len": draw(st.sampled_from([200, 384, 640, 1000, 1152]))}
    if kind == "kv_len":
        return {"kv_seq_len": draw(st.sampled_from([200, 384, 640, 1000]))}
    if kind == "block_q":  # a block tuned for another length, or a GPU kernel's
        b = draw(st.sampled_from([64, 96, 200, 512, 1000]))
        return {name: b for name in QUERY_BLOCKS if name == "block_q" or call[name] is not None}
    if kind == "block_kv":
        b = draw(st.sampled_from([64, 96, 200, 384, 1000]))
        return {name: b for name in KEY_BLOCKS if name == "block_kv" or call[name] is not None}
    if kind == "compute":
        return {"block_kv_compute": draw(st.sampled_from([64, 96, 192]))}
    if kind == "heads":
        return {"num_q_heads": draw(st.sampled_from([3, 5])), "num_kv_heads": 2}
    return {"q_seq_shards": draw(st.sampled_from([3, 4, 8]))}


def run(call: dict, platform: str = "cpu"):
    if platform == "tpu":
        return _on_tpu(call)
    from verify.splash import splash

    blocks = {name: call[name] for name in ("block_q", "block_kv", "block_kv_compute", *BACKWARD)}
    return splash(num_q_heads=call["num_q_heads"], num_kv_heads=call["num_kv_heads"], q_seq_len=call["q_seq_len"],
                  kv_seq_len=call["kv_seq_len"], head_dim=call["head_dim"], segment_ids=call["segment_ids"] or None,
                  q_seq_shards=call["q_seq_shards"], **blocks)


def _on_tpu(call: dict):
    """Compiled and run on the chip: each shard's kernel (its part of the query sequence), forward and,
    with backward blocks, its gradient."""
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as SK
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as SM

    sizes = {name: call[name] for name in ("block_q", "block_kv", "block_kv_compute", *BACKWARD) if call[name] is not None}
    bs = SK.BlockSizes(**sizes)
    heads, kv_heads, shards = call["num_q_heads"], call["num_kv_heads"], call["q_seq_shards"]
    tq, tk = call["q_seq_len"], call["kv_seq_len"]
    full = SM.MultiHeadMask([SM.CausalMask((tq, tk)) for _ in range(heads)])
    SK.make_splash_mha(full, block_sizes=bs, head_shards=1, q_seq_shards=shards)  # the whole call's checks
    local_len = tq // shards
    mask = SM.MultiHeadMask([SM.CausalMask((local_len, tk)) for _ in range(heads)])
    kernel = SK.make_splash_mha(mask, block_sizes=bs, head_shards=1, q_seq_shards=1)
    key = jax.random.PRNGKey(0)
    q = jax.random.normal(key, (heads, local_len, call["head_dim"]), jnp.float32)
    k = v = jax.random.normal(key, (kv_heads, tk, call["head_dim"]), jnp.float32)
    seg = SK.SegmentIds(jnp.zeros((local_len,), jnp.int32), jnp.zeros((tk,), jnp.int32)) if call["segment_ids"] else None

    def loss(q, k, v):
        return kernel(q, k, v, segment_ids=seg).sum()

    jax.block_until_ready(jax.jit(lambda q, k, v: kernel(q, k, v, segment_ids=seg))(q, k, v))
    if bs.has_backward_blocks:
        jax.block_until_ready(jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(q, k, v))


def apply(call: dict, code: str, param: str, value, params: dict) -> dict | None:
    if param in ("q_block_size", "bq"):  # a query block as the messages print it: the query blocks set
        return {**call, **{name: value for name in QUERY_BLOCKS if name == "block_q" or call[name] is not None}}
    if param in ("kv_block_size", "bkv"):
        return {**call, **{name: value for name in KEY_BLOCKS if name == "block_kv" or call[name] is not None}}
    if param == "bkv_compute":
        return {**call, "block_kv_compute": value}
    if param == "q_seq_len_per_shard":
        return {**call, "q_seq_len": value * call["q_seq_shards"]}
    if param == "head_count":
        return {**call, "num_q_heads": value}
    if param in call:
        return {**call, param: value}
    return None


def values(call: dict) -> dict:
    out = {**call, "raised_by": "splash", "backward": call["grad"],
           "q_seq_len_per_shard": call["q_seq_len"] // max(1, call["q_seq_shards"]), "head_shards": 1}
    if out["block_kv_compute"] is None:  # unset: it follows block_kv, whatever that becomes
        del out["block_kv_compute"]
    return out


SPLASH = family(Family("splash", base, perturb, run, apply, values, platforms=("cpu", "tpu"), kernels=("splash",)))

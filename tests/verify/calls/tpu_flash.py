"""JAX's Pallas TPU flash attention (jax/experimental/pallas/ops/tpu/flash_attention.py): batch, heads,
lengths set by the data, head_dim, BlockSizes (block_b, block_q, block_k_major, block_k) and
segment_ids.

On the CPU, tests/verify/tpu.py's `flash()` makes the call: lowered for TPU from the CPU (Mosaic's
block-shape checks) and run in TPU interpret mode. On a TPU it is compiled and run.
"""

from __future__ import annotations

import hypothesis.strategies as st

from verify.calls import Family, family

BLOCKS = ("block_b", "block_q", "block_k_major", "block_k")


def base(draw) -> dict:
    q_len = draw(st.sampled_from([128, 256]))
    kv_len = draw(st.sampled_from([128, 256]))
    major = draw(st.sampled_from([b for b in (128, 256) if kv_len % b == 0]))
    return {"batch": 1, "heads": 1, "q_seq_len": q_len,
            "kv_seq_len": kv_len, "head_dim": draw(st.sampled_from([64, 128])), "block_b": 1,
            "block_q": draw(st.sampled_from([b for b in (64, 128) if b <= q_len])), "block_k_major": major,
            "block_k": draw(st.sampled_from([b for b in (128, 256) if major % b == 0])),
            "segment_ids": draw(st.booleans())}


def perturb(draw, call: dict) -> dict:
    kind = draw(st.sampled_from(["block_k", "major", "head_dim", "kv_len", "block_q", "block_b"]))
    if kind == "block_k":  # a GPU kernel's block, or one larger than the major block
        return {"block_k": draw(st.sampled_from([64, 96, 2 * call["block_k_major"]]))}
    if kind == "major":
        return {"block_k_major": draw(st.sampled_from([192, 384, 2 * call["kv_seq_len"]]))}
    if kind == "head_dim":
        return {"head_dim": draw(st.sampled_from([160, 192, 320]))}
    if kind == "kv_len":  # a length set by the data
        return {"kv_seq_len": draw(st.sampled_from([200, 320, 1000]))}
    if kind == "block_q":
        return {"block_q": draw(st.sampled_from([2 * call["q_seq_len"], 4 * call["q_seq_len"]]))}
    return {"block_b": draw(st.sampled_from([2, 4])), "batch": 1}


def run(call: dict, platform: str = "cpu"):
    kw = {k: call[k] for k in ("batch", "heads", "q_seq_len", "kv_seq_len", "head_dim", *BLOCKS, "segment_ids")}
    if platform == "tpu":
        import jax
        import jax.numpy as jnp
        from jax.experimental.pallas.ops.tpu import flash_attention as FA

        sizes = FA.BlockSizes(**{k: call[k] for k in BLOCKS})
        b, h = call["batch"], call["heads"]
        q = jnp.ones((b, h, call["q_seq_len"], call["head_dim"]), jnp.float32)
        k = jnp.ones((b, h, call["kv_seq_len"], call["head_dim"]), jnp.float32)
        seg = (FA.SegmentIds(jnp.zeros((b, call["q_seq_len"]), jnp.int32), jnp.zeros((b, call["kv_seq_len"]), jnp.int32))
               if call["segment_ids"] else None)
        return jax.block_until_ready(jax.jit(lambda q, k, v: FA.flash_attention(q, k, v, None, seg, block_sizes=sizes))(q, k, k))
    from verify.tpu import flash

    return flash(**kw)


def apply(call: dict, code: str, param: str, value, params: dict) -> dict | None:
    if param == "minor":
        return {**call, "block_k": value}
    if param == "major":
        return {**call, "block_k_major": value}
    if param == "block":  # RA611: the block its message names
        name = params.get("block_name")
        return {**call, name: value} if name in BLOCKS else None
    if param == "dim_size":
        name = params.get("dim_name")
        field = {"q_seq_len": "q_seq_len", "kv_seq_len": "kv_seq_len", "batch": "batch"}.get(name)
        return {**call, field: value} if field else None
    if param == "batch_size":
        return {**call, "batch": value}
    if param in call:
        return {**call, param: value}
    return None


def values(call: dict) -> dict:
    return {**call, "minor": call["block_k"], "major": call["block_k_major"], "raised_by": "tpu-flash"}


FLASH = family(Family("tpu-flash", base, perturb, run, apply, values, platforms=("cpu", "tpu"), kernels=("tpu-flash",)))

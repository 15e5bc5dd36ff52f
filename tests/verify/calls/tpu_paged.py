"""JAX's Pallas TPU paged attention (jax/experimental/pallas/ops/tpu/paged_attention): the batch, query
and kv heads, head_dim, the page table, pages_per_compute_block and megacore_mode.

On the CPU, tests/verify/tpu.py's `paged()` makes the call: lowered for TPU from the CPU and run in
TPU interpret mode (only lowered with megacore_mode set: the interpreter does not finish a grid split
over two TensorCores). On a TPU it is compiled and run (a TPU v5e has one TensorCore a chip, so
megacore_mode itself may be refused there: what the chip says is recorded).
"""

from __future__ import annotations

import os

import hypothesis.strategies as st

from verify.calls import Family, family


def base(draw) -> dict:
    kv_heads = draw(st.sampled_from([1, 2, 4]))
    pages = draw(st.sampled_from([2, 4, 8]))
    return {"batch_size": draw(st.sampled_from([2, 4])), "num_q_heads": kv_heads * draw(st.sampled_from([1, 2, 4])),
            "num_kv_heads": kv_heads, "head_dim": 128, "page_size": draw(st.sampled_from([16, 32])),
            "pages_per_sequence": pages, "pages_per_compute_block": draw(st.sampled_from([p for p in (1, 2, 4) if pages % p == 0])),
            "megacore_mode": None}


def perturb(draw, call: dict) -> dict:
    kind = draw(st.sampled_from(["compute_block", "megacore_kv", "megacore_batch", "megacore_name", "heads"]))
    if kind == "compute_block":
        return {"pages_per_compute_block": draw(st.sampled_from([3, 5, 16]))}
    if kind == "megacore_kv":
        return {"megacore_mode": "kv_head", "num_kv_heads": 1, "num_q_heads": call["num_q_heads"] // call["num_kv_heads"]}
    if kind == "megacore_batch":
        return {"megacore_mode": "batch", "batch_size": draw(st.sampled_from([1, 3]))}
    if kind == "megacore_name":
        return {"megacore_mode": draw(st.sampled_from(["kv", "heads", "both"]))}
    return {"num_q_heads": draw(st.sampled_from([3, 5, 6])), "num_kv_heads": 4}


def run(call: dict, platform: str = "cpu"):
    import jax.numpy as jnp

    total = call["batch_size"] * call["pages_per_sequence"]
    kw = {k: call[k] for k in ("batch_size", "num_q_heads", "num_kv_heads", "head_dim", "page_size", "pages_per_sequence",
                               "pages_per_compute_block", "megacore_mode")}
    if platform == "tpu" and not (os.environ.get("ERRKIT_TPU_SMOKE") and call["megacore_mode"]):
        import jax
        from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention

        q = jnp.ones((call["batch_size"], call["num_q_heads"], call["head_dim"]), jnp.float32)
        pages = jnp.ones((call["num_kv_heads"], total, call["page_size"], call["head_dim"]), jnp.float32)
        lengths = jnp.full((call["batch_size"],), call["page_size"], jnp.int32)
        indices = jnp.arange(total, dtype=jnp.int32).reshape(call["batch_size"], call["pages_per_sequence"])
        f = jax.jit(lambda q, k, v, n, i: paged_attention(q, k, v, n, i, pages_per_compute_block=call["pages_per_compute_block"],
                                                          megacore_mode=call["megacore_mode"]))
        return jax.block_until_ready(f(q, pages, pages, lengths, indices))
    from verify.tpu import paged

    return paged(total_pages=total, **kw)


def apply(call: dict, code: str, param: str, value, params: dict) -> dict | None:
    if param == "num_heads":
        return {**call, "num_q_heads": value}
    if param in call:
        return {**call, param: value}
    return None


def values(call: dict) -> dict:
    return {**call, "raised_by": "tpu-paged"}


PAGED = family(Family("tpu-paged", base, perturb, run, apply, values, platforms=("cpu", "tpu"), kernels=("tpu-paged",)))

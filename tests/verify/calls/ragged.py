"""JAX's Pallas TPU ragged paged attention (jax/experimental/pallas/ops/tpu/ragged_paged_attention):
query heads, kv heads, the kv dtype, head_dim, the page table and the two block sizes.

On the CPU it is traced with jax.eval_shape (its lowering asks the device for its TPU generation, and
TPU interpret mode does not run it in jax 0.10.2): every Python check and the kernel body's tracing
run. On a TPU it is compiled and run on real pages.
"""

from __future__ import annotations

import os

import hypothesis.strategies as st

from verify.calls import Family, family

DTYPES = {"float32": 1, "bfloat16": 2, "int8": 4}
KV_HEADS = (1, 2, 4, 8)


def base(draw) -> dict:
    kv_dtype = draw(st.sampled_from(sorted(DTYPES)))
    packing = DTYPES[kv_dtype]
    # combined heads (2 * kv heads) over the packing: 1, 2, 4, 8 or a multiple of 8
    kv_heads = draw(st.sampled_from([h for h in KV_HEADS if (2 * h) % packing == 0]))
    group = draw(st.sampled_from([1, 2, 4]))
    pages_per_seq = draw(st.sampled_from([4, 8, 16]))
    return {"num_q_heads": kv_heads * group, "num_kv_heads": kv_heads, "kv_dtype": kv_dtype,
            "head_dim": draw(st.sampled_from([128, 256])), "page_size": draw(st.sampled_from([16, 32])),
            "pages_per_seq": pages_per_seq,
            "num_kv_pages_per_block": draw(st.sampled_from([p for p in (1, 2, 4, 8) if p <= pages_per_seq])),
            "num_queries_per_block": draw(st.sampled_from([8, 16, 32]))}


def perturb(draw, call: dict) -> dict:
    kind = draw(st.sampled_from(["q_heads", "kv_heads", "head_dim", "pages_per_block", "queries_per_block"]))
    pruned = [h for h in (3, 5, 6, 7, 10, 12, 14, 20, 24, 28) if h % call["num_kv_heads"]]
    if kind == "q_heads" and pruned:  # a pruned or hand-edited query head count
        return {"num_q_heads": draw(st.sampled_from(pruned))}
    if kind in ("q_heads", "kv_heads"):  # a kv head count the query heads or the tiling do not take
        q = call["num_q_heads"]
        return {"num_kv_heads": draw(st.sampled_from([h for h in (3, 4, 5, 6, 7, 12) if h != call["num_kv_heads"]])),
                "num_q_heads": draw(st.sampled_from([q, 12, 14, 24]))}
    if kind == "head_dim":
        return {"head_dim": draw(st.sampled_from([64, 80, 96, 192]))}
    if kind == "pages_per_block":
        return {"num_kv_pages_per_block": draw(st.sampled_from([0, call["pages_per_seq"] * 2, call["pages_per_seq"] + 1]))}
    return {"num_queries_per_block": draw(st.sampled_from([0, -8]))}


def run(call: dict, platform: str = "cpu"):
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas.ops.tpu import ragged_paged_attention as RPA

    max_num_seqs, tokens = 2, 16
    pages = call["pages_per_seq"]
    combined = 2 * call["num_kv_heads"]
    dtype = jnp.dtype(call["kv_dtype"])
    q = jnp.ones((tokens, call["num_q_heads"], call["head_dim"]), jnp.float32 if dtype.itemsize == 4 else jnp.bfloat16)
    kv_pages = jnp.ones((max_num_seqs * pages, call["page_size"], combined, call["head_dim"]), dtype)
    kv_lens = jnp.array([call["page_size"] * 2, call["page_size"]], jnp.int32)
    page_indices = jnp.arange(max_num_seqs * pages, dtype=jnp.int32).reshape(max_num_seqs, pages)
    cu_q_lens = jnp.array([0, 8, tokens], jnp.int32)
    num_seqs = jnp.array([max_num_seqs], jnp.int32)

    def f(q, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs):
        return RPA.ragged_paged_attention(q, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs,
                                          num_kv_pages_per_block=call["num_kv_pages_per_block"],
                                          num_queries_per_block=call["num_queries_per_block"])

    args = (q, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs)
    if platform == "tpu" and not os.environ.get("ERRKIT_TPU_SMOKE"):  # (TPU interpret mode does not run it)
        return jax.block_until_ready(jax.jit(f)(*args))
    return jax.eval_shape(f, *args)


def apply(call: dict, code: str, param: str, value, params: dict) -> dict | None:
    if param == "num_combined_kv_heads":
        return {**call, "num_kv_heads": value // 2} if value % 2 == 0 else None
    if param in call:
        return {**call, param: value}
    if param == "kv_packing":  # the kv dtype of that packing
        names = [d for d, p in DTYPES.items() if p == value]
        return {**call, "kv_dtype": names[0]} if names else None
    return None


def values(call: dict) -> dict:
    return {**call, "num_combined_kv_heads": 2 * call["num_kv_heads"], "kv_packing": DTYPES[call["kv_dtype"]],
            "raised_by": "tpu-ragged"}


RAGGED = family(Family("ragged", base, perturb, run, apply, values, platforms=("cpu", "tpu"), kernels=("tpu-ragged",)))

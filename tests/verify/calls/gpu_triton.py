"""JAX's Pallas GPU (Triton) kernels: attention.mha (lengths, head_dim, BlockSizes, the fused backward,
jax.grad), decode_attention (mqa / gqa: k_splits, block_k, block_h) and the GPU paged_attention
(pages, k_splits, pages_per_compute_block, block_h).

tests/verify/gpu_attention.py and gpu_decode.py make the calls: run in interpret mode on the CPU and
lowered for CUDA from the CPU (the Triton lowering's rule that every tile is a power of two in
size). Triton's own compiler on a GPU does not run.
"""

from __future__ import annotations

import hypothesis.strategies as st

from verify.calls import Family, family

MHA_BACKWARD = ("block_q_dkv", "block_kv_dkv", "block_q_dq", "block_kv_dq")


def mha_base(draw) -> dict:
    grad = draw(st.booleans())
    q_len = draw(st.sampled_from([32, 64, 128]))
    kv_len = q_len if grad else draw(st.sampled_from([32, 64, 128]))  # (the fused backward: as many q as kv blocks)
    call = {"q_seq_len": q_len, "kv_seq_len": kv_len, "head_dim": draw(st.sampled_from([16, 32])),
            "block_q": draw(st.sampled_from([16, 32])), "block_k": draw(st.sampled_from([16, 32])), "grad": grad}
    for name in MHA_BACKWARD:
        call[name] = 16 if grad else None
    return call


def mha_perturb(draw, call: dict) -> dict:
    kind = draw(st.sampled_from(["q_len", "kv_len", "block_q", "block_k"] + (["fused"] if call["grad"] else [])))
    if kind in ("q_len", "kv_len") and call["grad"]:
        # self-attention of a length set by the data, one block size that does not divide it (one
        # mistake: the other block still does, so the fused backward keeps as many q as kv blocks)
        small, large = sorted((call["block_q"], call["block_k"]))
        lengths = [n for n in (48, 80, 96, 112) if n % small == 0 and n % large]
        if lengths and small != large:
            n = draw(st.sampled_from(lengths))
            return {"q_seq_len": n, "kv_seq_len": n}
        kind = "block_q"
    if kind == "q_len":
        return {"q_seq_len": draw(st.sampled_from([40, 48, 100]))}
    if kind == "kv_len":
        return {"kv_seq_len": draw(st.sampled_from([40, 48, 100]))}
    if kind == "block_q":
        return {"block_q": draw(st.sampled_from([24, 48]))}
    if kind == "block_k":
        return {"block_k": draw(st.sampled_from([24, 48]))}
    return {"block_q_dq": 16, "block_kv_dkv": 32, "q_seq_len": 64, "kv_seq_len": 128}


def mha_run(call: dict, platform: str = "cpu"):
    from verify.gpu_attention import triton

    blocks = {k: call[k] for k in ("block_q", "block_k", *MHA_BACKWARD) if call[k] is not None}
    return triton(call["q_seq_len"], call["kv_seq_len"], call["head_dim"], grad=call["grad"], **blocks)


def mha_apply(call: dict, code: str, param: str, value, params: dict) -> dict | None:
    if param in call:
        return {**call, param: value}
    return None


def mha_values(call: dict) -> dict:
    return {**call, "raised_by": "gpu-mha"}


family(Family("gpu-mha", mha_base, mha_perturb, mha_run, mha_apply, mha_values, kernels=("gpu-mha",)))


def decode_base(draw) -> dict:
    splits = draw(st.sampled_from([1, 2, 4]))
    k_len = draw(st.sampled_from([n for n in (64, 128, 256) if (n // splits) >= 16]))
    return {"k_seq_len": k_len, "k_splits": splits, "block_k": draw(st.sampled_from([16, 32])),
            "block_h": 16, "num_q_heads": draw(st.sampled_from([4, 8])), "head_dim": 16,
            "num_kv_heads": draw(st.sampled_from([None, 1, 2, 4]))}


def decode_perturb(draw, call: dict) -> dict:
    kind = draw(st.sampled_from(["splits", "short", "block_k", "tile", "heads"]))
    if kind == "splits":
        return {"k_splits": draw(st.sampled_from([3, 5, 6]))}
    if kind == "short":
        return {"k_splits": call["k_seq_len"] // 8}
    if kind == "block_k":
        return {"block_k": 8}
    if kind == "tile":
        return {"block_k": 48, "k_seq_len": 192, "k_splits": 2}
    return {"num_q_heads": 6, "num_kv_heads": 4}


def decode_run(call: dict, platform: str = "cpu"):
    from verify.gpu_decode import decode

    return decode(call["k_seq_len"], call["k_splits"], call["block_k"], call["num_q_heads"], call["head_dim"],
                  call["block_h"], call["num_kv_heads"])


def decode_values(call: dict) -> dict:
    return {**call, "raised_by": "gpu-decode"}


family(Family("gpu-decode", decode_base, decode_perturb, decode_run, mha_apply, decode_values, kernels=("gpu-decode",)))


def paged_base(draw) -> dict:
    splits = draw(st.sampled_from([1, 2, 4]))
    pages = splits * draw(st.sampled_from([2, 4, 8]))
    return {"pages_per_sequence": pages, "k_splits": splits,
            "pages_per_compute_block": draw(st.sampled_from([b for b in (1, 2, 4) if (pages // splits) % b == 0])),
            "block_h": 16, "page_size": draw(st.sampled_from([4, 8])), "num_q_heads": 4,
            "num_kv_heads": draw(st.sampled_from([1, 2])), "head_dim": 16}


def paged_perturb(draw, call: dict) -> dict:
    kind = draw(st.sampled_from(["splits", "compute_block", "block_h", "heads"]))
    if kind == "splits":
        return {"k_splits": draw(st.sampled_from([3, 5]))}
    if kind == "compute_block":
        return {"pages_per_compute_block": 3, "pages_per_sequence": 12, "k_splits": 1}
    if kind == "block_h":
        return {"block_h": draw(st.sampled_from([8, 24, 48]))}
    return {"num_q_heads": 6, "num_kv_heads": 4}


def paged_run(call: dict, platform: str = "cpu"):
    from verify.gpu_decode import paged

    return paged(call["pages_per_sequence"], call["k_splits"], call["pages_per_compute_block"], call["block_h"],
                 call["page_size"], call["num_q_heads"], call["num_kv_heads"], call["head_dim"])


def paged_apply(call: dict, code: str, param: str, value, params: dict) -> dict | None:
    if param == "num_heads":
        return {**call, "num_q_heads": value}
    if param == "pages_per_partition":
        return {**call, "pages_per_sequence": value * call["k_splits"]}
    return mha_apply(call, code, param, value, params)


def paged_values(call: dict) -> dict:
    return {**call, "pages_per_partition": call["pages_per_sequence"] // call["k_splits"], "raised_by": "gpu-paged"}


family(Family("gpu-paged", paged_base, paged_perturb, paged_run, paged_apply, paged_values, kernels=("gpu-paged",)))

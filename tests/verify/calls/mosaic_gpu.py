"""JAX's Mosaic GPU (Hopper) attention (jax/experimental/pallas/ops/gpu/attention_mgpu.py): lengths set by
the data, head_dim, dtypes, TuningConfig (block_q, block_kv, max_concurrent_steps, compute_wgs_bwd and
the four backward blocks), jax.grad.

The kernel has no interpret mode: tests/verify/gpu_attention.py lowers it for CUDA from the CPU (its
Python checks and the Mosaic GPU lowering: tiling, WGMMA shapes, shared memory), the CUDA runtime
version stubbed. What a Hopper GPU would do at run time is not run.
"""

from __future__ import annotations

import hypothesis.strategies as st

from verify.calls import Family, family

BACKWARD = ("block_q_dkv", "block_kv_dkv", "block_q_dq", "block_kv_dq")


def base(draw) -> dict:
    block_q = draw(st.sampled_from([64, 128]))
    block_kv = draw(st.sampled_from([64, 128]))
    grad = draw(st.booleans())
    wgs = draw(st.sampled_from([1, 2])) if grad else 1
    q_len = draw(st.sampled_from([n for n in (256, 512, 1024) if n % (2 * block_q) == 0 and n % (64 * wgs) == 0]))
    kv_len = draw(st.sampled_from([n for n in (256, 512, 1024) if n % block_kv == 0 and n % (64 * wgs) == 0]))
    call = {"q_seq_len": q_len, "kv_seq_len": kv_len, "head_dim": draw(st.sampled_from([64, 128])),
            "q_dtype": "float16", "k_dtype": "float16", "v_dtype": "float16", "block_q": block_q, "block_kv": block_kv,
            "max_concurrent_steps": draw(st.sampled_from([2, 3])), "grad": grad, "compute_wgs_bwd": wgs}
    for name in BACKWARD:
        call[name] = 64 if grad else None
    return call


def perturb(draw, call: dict) -> dict:
    kinds = ["q_len", "kv_len", "block", "head_dim", "steps", "dtype"]
    if call["grad"]:
        kinds += ["backward", "backward_len"]
    kind = draw(st.sampled_from(kinds))
    if kind == "q_len":  # a length set by the data
        return {"q_seq_len": draw(st.sampled_from([200, 320, 1000, 1152]))}
    if kind == "kv_len":
        return {"kv_seq_len": draw(st.sampled_from([200, 320, 1000]))}
    if kind == "block":  # a Triton kernel's power of two, or a block not a multiple of 64
        name = draw(st.sampled_from(["block_q", "block_kv"]))
        return {name: draw(st.sampled_from([32, 96, 192]))}
    if kind == "head_dim":
        return {"head_dim": draw(st.sampled_from([80, 96, 100]))}
    if kind == "steps":
        return {"max_concurrent_steps": 1}
    if kind == "dtype":  # an operand cast in one place and not the other, or a float32 model
        return draw(st.sampled_from([{"k_dtype": "bfloat16", "v_dtype": "bfloat16"}, {"q_dtype": "float32"},
                                     {"q_dtype": "float32", "k_dtype": "float32", "v_dtype": "float32"},
                                     {"q_dtype": "bfloat16", "k_dtype": "bfloat16", "v_dtype": "bfloat16"}]))
    if kind == "backward":
        name = draw(st.sampled_from(BACKWARD))
        return {name: draw(st.sampled_from([96, 512]))}
    return {"compute_wgs_bwd": 2, "q_seq_len": draw(st.sampled_from([4224, 320, 192])), "block_q": 64,
            "block_q_dq": 128}


def run(call: dict, platform: str = "cpu"):
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas.ops.gpu import attention_mgpu

    from verify.gpu_attention import cuda_runtime, lower_for_cuda

    config = {k: call[k] for k in ("block_q", "block_kv", "max_concurrent_steps")}
    if call["grad"]:
        config.update({k: call[k] for k in BACKWARD}, compute_wgs_bwd=call["compute_wgs_bwd"])
    cfg = attention_mgpu.TuningConfig(**config)
    q = jnp.zeros((1, call["q_seq_len"], 1, call["head_dim"]), call["q_dtype"])
    k = jnp.zeros((1, call["kv_seq_len"], 1, call["head_dim"]), call["k_dtype"])
    v = jnp.zeros((1, call["kv_seq_len"], 1, call["head_dim"]), call["v_dtype"])
    f = lambda q, k, v: attention_mgpu.attention(q, k, v, cfg)  # noqa: E731
    if call["grad"]:
        f = jax.grad(lambda q, k, v, f=f: f(q, k, v).astype(jnp.float32).sum(), argnums=(0, 1, 2))
    with cuda_runtime():
        return lower_for_cuda(f, q, k, v)


def apply(call: dict, code: str, param: str, value, params: dict) -> dict | None:
    if param == "block":  # printed as block_q * 2
        return {**call, "block_q": value // 2} if value % 2 == 0 else None
    if param == "compute_wgs":
        return {**call, "compute_wgs_bwd": value}
    if param == "dtype":
        return {**call, "q_dtype": value, "k_dtype": value, "v_dtype": value}
    if param in ("lhs_dtype", "rhs_dtype"):
        return None  # the kernel's own operands: the caller changes q, k and v (RA104, RA106)
    if param in call:
        return {**call, param: value}
    return None


def values(call: dict) -> dict:
    return {**call, "block": 2 * call["block_q"], "compute_wgs": call["compute_wgs_bwd"], "dtype": call["q_dtype"],
            "raised_by": "mosaic-gpu", "backward": call["grad"]}


MOSAIC = family(Family("mosaic-gpu", base, perturb, run, apply, values, kernels=("mosaic-gpu",),
                      actions={("RA834", 1): lambda call: {**call, "q_dtype": "float16", "k_dtype": "float16",
                                                            "v_dtype": "float16"}}))  # call it with float16 q, k, v

"""cuDNN fused attention through jax.nn.dot_product_attention(..., implementation='cudnn'): batch, the
lengths set by the data, query and kv heads, head_dim, dtype, a bias, is_causal, the local window,
jax.grad, and the GPU generation (which sets the largest head_dim).

tests/verify/cudnn.py's `cudnn_call` makes the call: traced and lowered for CUDA from the CPU with the
cuDNN version and the GPU generation stubbed, which runs every check of jax.nn, of the cuDNN helper
and of check_is_flash_attention (the training variant under jax.grad). cuDNN itself does not run.
"""

from __future__ import annotations

import hypothesis.strategies as st

from verify.calls import Family, family


def base(draw) -> dict:
    kv = draw(st.sampled_from([1, 2]))
    return {"B": 2, "T": draw(st.sampled_from([4, 8, 16])), "S": draw(st.sampled_from([4, 8, 16])),
            "N": kv * draw(st.sampled_from([1, 2])), "K": kv, "H": draw(st.sampled_from([8, 16, 64])),
            "dtype": draw(st.sampled_from(["bfloat16", "float16"])), "bias": draw(st.booleans()),
            "bias_T": None, "is_causal": False, "grad": draw(st.booleans()), "h_max": draw(st.sampled_from([128, 256])),
            "implementation": "cudnn"}


def perturb(draw, call: dict) -> dict:
    kind = draw(st.sampled_from(["odd", "head_dim", "dtype", "heads", "bias_len"]))
    if kind == "odd":  # a CLS token added to an even length, under jax.grad
        return {"grad": True, **draw(st.sampled_from([{"T": 7}, {"S": 9}, {"T": 7, "S": 9}, {"T": 77, "S": 77}]))}
    if kind == "head_dim":
        return {"H": draw(st.sampled_from([12, 72, 100, 192, 320]))}
    if kind == "dtype":
        return {"dtype": "float32"}
    if kind == "heads":
        return {"N": 6, "K": 4}
    return {"bias": True, "bias_T": call["T"] * 2}


def run(call: dict, platform: str = "cpu"):
    import jax.numpy as jnp

    from verify.cudnn import cudnn_call, spec

    dt = jnp.dtype(call["dtype"])
    b, t, s = call["B"], call["T"], call["S"]
    q, k = spec(b, t, call["N"], call["H"], dtype=dt), spec(b, s, call["K"], call["H"], dtype=dt)
    bias = spec(b, call["N"], call["bias_T"] or t, s, dtype=dt) if call["bias"] else None
    if call["implementation"] != "cudnn":  # the XLA path, lowered for CUDA as a GPU user runs it (the CPU has no float16 dot)
        import jax

        from verify.cudnn import lower_cuda

        def f(q, k, v, *b):
            return jax.nn.dot_product_attention(q, k, v, implementation=call["implementation"], bias=b[0] if b else None)

        if call["grad"]:
            f = jax.grad(lambda q, k, v, *b, f=f: f(q, k, v, *b).astype(jnp.float32).sum())
        return lower_cuda(f, q, k, k, *([bias] if bias is not None else []))
    return cudnn_call(q, k, k, h_max=call["h_max"], grad=call["grad"], bias=bias)


def apply(call: dict, code: str, param: str, value, params: dict) -> dict | None:
    names = {"qH": "H", "q_dtype": "dtype", "q_seq_len": "T", "kv_seq_len": "S", "num_q_heads": "N", "num_kv_heads": "K"}
    if param == "bT":
        return {**call, "bias_T": value}
    field = names.get(param, param)
    if field in call:
        return {**call, field: value}
    return None


def values(call: dict) -> dict:
    return {**call, "qH": call["H"], "H_max": call["h_max"], "q_dtype": call["dtype"], "is_training": call["grad"],
            "has_bias": call["bias"], "num_q_heads": call["N"], "num_kv_heads": call["K"], "is_fp8": False,
            "raised_by": "cudnn"}


CUDNN = family(Family("cudnn", base, perturb, run, apply, values, kernels=("cudnn", "dot-product-attention"),
                      actions={("RA544", 2): lambda call: {**call, "implementation": "xla"},  # train with implementation='xla'
                               ("RA541", 1): lambda call: {**call, "dtype": "bfloat16"},  # cast q, k, v (and bias) to bfloat16
                               ("RA541", 2): lambda call: {**call, "implementation": "xla"},  # keep float32 on the XLA path
                               ("RA543", 1): lambda call: {**call, "bias": False, "bias_T": None},  # seq lengths, no mask
                               ("RA543", 2): lambda call: {**call, "bias_T": None}}))  # the bias broadcast to full T, S

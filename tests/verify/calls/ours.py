"""This project's kernel (errkit_attention.ranker_attention, errkit_attention.sharded_ranker_attention): batch, lengths,
query and kv heads, head_dim, dtype, the implementation, BlockSizes, causal, jax.grad, the layout
("bshd" or "bhsd": the arrays are made in it, so a fix that changes a head count or a length is run
on the layout's axis) and the mesh axes of a sharded call.

On the CPU the Pallas implementation runs in interpret mode (forward and, under jax.grad, the
backward kernels); a sharded call is traced and lowered over an AbstractMesh of the axis sizes (this
process may hold one device), which runs every check of the kernel and shard_map's split. On a TPU
the same calls run compiled: the XLA implementation (the Pallas one is refused there, RA206).
"""

from __future__ import annotations

import hypothesis.strategies as st

from verify.calls import Family, family

BACKWARD = ("block_q_dkv", "block_kv_dkv", "block_q_dq", "block_kv_dq")


def base(draw) -> dict:
    kv_heads = draw(st.sampled_from([1, 2, 4]))
    seq = draw(st.sampled_from([16, 32, 64]))
    sharded = draw(st.sampled_from([False, False, True]))
    call = {"batch": draw(st.sampled_from([2, 4])), "q_seq_len": seq, "kv_seq_len": seq,
            "num_q_heads": kv_heads * draw(st.sampled_from([1, 2, 3])), "num_kv_heads": kv_heads,
            "head_dim": draw(st.sampled_from([16, 32, 64])), "dtype": draw(st.sampled_from(["float32", "bfloat16"])),
            "implementation": draw(st.sampled_from(["pallas", "xla"])), "causal": draw(st.booleans()),
            "grad": draw(st.booleans()), "config": draw(st.booleans()), "block_q": 32, "block_kv": 32,
            "batch_axis_size": 2 if sharded else None, "head_axis_size": None}
    if call["config"]:
        call["block_q"] = draw(st.sampled_from([16, 32, 64]))
        call["block_kv"] = draw(st.sampled_from([16, 32, 64]))
    for name in BACKWARD:
        call[name] = None
    call["layout"] = draw(st.sampled_from(["bshd", "bhsd"]))
    return call


def perturb(draw, call: dict) -> dict:
    kind = draw(st.sampled_from(["heads", "blocks", "backward", "head_dim", "dtype", "causal", "head_axis",
                                 "batch_axis", "implementation", "layout"]))
    if kind == "heads":  # a pruned query head count
        kv = call["num_kv_heads"] if call["num_kv_heads"] > 1 else 4
        return {"num_kv_heads": kv, "num_q_heads": draw(st.sampled_from([h for h in (5, 6, 7, 10, 12, 14) if h % kv]))}
    if kind == "blocks":  # block sizes tuned for another kernel, or computed with / (one or both)
        q, kv = draw(st.sampled_from([(100, 200), (96, 128), (8, 32), (32, 2048), (192, 64), (48, 80)]))
        return {"config": True, "block_q": q, "block_kv": kv, "implementation": "pallas"}
    if kind == "backward":
        given = draw(st.sampled_from([(("block_q_dkv", 32),), (("block_q_dkv", 48), ("block_kv_dkv", 32),
                                                                 ("block_q_dq", 32), ("block_kv_dq", 32))]))
        return {"config": True, "implementation": "pallas", **dict(given)}
    if kind == "head_dim":
        return {"head_dim": draw(st.sampled_from([320, 512])), "implementation": "pallas"}
    if kind == "dtype":
        return {"dtype": "float64", "implementation": "pallas"}
    if kind == "causal":
        return {"causal": True, "kv_seq_len": 2 * call["q_seq_len"]}
    if kind == "head_axis":  # kv heads that do not divide over the head axis
        kv = draw(st.sampled_from([7, 3, 6]))
        return {"num_q_heads": kv * draw(st.sampled_from([1, 2])), "num_kv_heads": kv,
                "head_axis_size": draw(st.sampled_from([4, 8])), "batch_axis_size": 2}
    if kind == "batch_axis":
        return {"batch": draw(st.sampled_from([3, 6])), "batch_axis_size": 4}
    if kind == "layout":  # another library's name for an axis order, or None for "the default"
        return {"layout": draw(st.sampled_from(["BHSD", "bsdh", "BNSH", None]))}
    return {"implementation": draw(st.sampled_from(["triton", "mosaic", "cudnn"]))}


def run(call: dict, platform: str = "cpu"):
    import contextlib

    import jax
    import jax.numpy as jnp

    from errkit_attention import BlockSizes, ranker_attention, sharded_ranker_attention

    impl = call["implementation"]
    if platform == "tpu" and impl == "pallas" and call["head_axis_size"] is None and call["batch_axis_size"] is None:
        impl = "pallas"  # refused on a TPU (RA206): a bad call there too
    config = None
    if call["config"]:
        config = BlockSizes(block_q=call["block_q"], block_kv=call["block_kv"], **{n: call[n] for n in BACKWARD})
    scope = jax.enable_x64(True) if call["dtype"] == "float64" else contextlib.nullcontext()
    with scope:
        layout = call.get("layout", "bshd")

        def shape(seq, heads):  # "bhsd" arrays for a "bhsd" call; an unknown layout's are "bshd"
            return (call["batch"], heads, seq, call["head_dim"]) if layout == "bhsd" else (
                call["batch"], seq, heads, call["head_dim"])

        q = jnp.zeros(shape(call["q_seq_len"], call["num_q_heads"]), call["dtype"])
        k = jnp.zeros(shape(call["kv_seq_len"], call["num_kv_heads"]), call["dtype"])
        kw = dict(causal=call["causal"], config=config, implementation=impl, layout=layout)
        if call["batch_axis_size"] or call["head_axis_size"]:
            from jax.sharding import AbstractMesh

            axes = {"data": call["batch_axis_size"] or 1}
            if call["head_axis_size"]:
                axes["model"] = call["head_axis_size"]
            mesh = AbstractMesh(tuple(axes.values()), tuple(axes))
            kw.update(mesh=mesh, batch_axis="data", head_axis="model" if call["head_axis_size"] else None)
            f = lambda q, k, v: sharded_ranker_attention(q, k, v, **kw)  # noqa: E731
            if call["grad"]:
                f = jax.grad(lambda q, k, v, f=f: f(q, k, v).astype(jnp.float32).sum())
            return jax.jit(f).trace(q, k, k).lower(lowering_platforms=("cpu",))
        f = lambda q, k, v: ranker_attention(q, k, v, **kw)  # noqa: E731
        if call["grad"]:
            f = jax.grad(lambda q, k, v, f=f: f(q, k, v).astype(jnp.float32).sum())
        return jax.block_until_ready(jax.jit(f)(q, k, k))


def apply(call: dict, code: str, param: str, value, params: dict) -> dict | None:
    if param == "has_config":
        return {**call, "config": bool(value)}
    if param in ("q_dtype", "k_dtype", "v_dtype"):
        return {**call, "dtype": value}
    if param in call:
        return {**call, param: value}
    return None


def values(call: dict) -> dict:
    return {"layout": "bshd", **call, "has_config": call["config"], "backend": "cpu", "raised_by": "ranker", "cap": None, "cap_method": "tanh",
            "has_bound": False, "batch_axis_size": call["batch_axis_size"] or 1, "head_axis_size": call["head_axis_size"] or 1}


OURS = family(Family("ours", base, perturb, run, apply, values, platforms=("cpu", "tpu"), kernels=("ranker",)))

"""Runners of jax.nn.dot_product_attention and JAX's cuDNN fused attention (RA530-RA559).

jax.nn's own checks and its XLA implementation run for real on the CPU. The cuDNN path needs a GPU:
here the cuDNN version query is answered by a stand-in (`cudnn_stub`: the module's `cuda_versions`,
as tests/advice/test_upstream_gpu.py does) and the GPU generation by a stubbed compute capability (Hopper
or not, which sets H_max), and the call is traced and lowered for CUDA from the CPU
(`jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`). That runs, for real, every check of
jax.nn, of the cuDNN helper (`dot_product_attention` / `paged_attention`: layout, FP8, padding,
window), `check_layout`, `check_is_flash_attention` (forward, and the training variant under
jax.grad), the batching rule (vmap), and the lowering of the cuDNN custom call with its backend
config. It does not run cuDNN itself: what cuDNN's frontend accepts when XLA compiles the custom call
on a GPU is not checked here.

`cudnn_on_cpu()` is for fix snippets (an entry's `setup`): it lets `implementation='cudnn'` run
eagerly on a CPU within the snippet only (a frame of the snippet marks it), with the same checks,
the fused kernel itself replaced by zeros.
"""

from __future__ import annotations

import contextlib
import re
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.cudnn import fused_attention_stablehlo as fas

from verify import register

F = jax.nn.dot_product_attention
B, T, S, N, K, H = 2, 4, 6, 4, 2, 8


class _FakeCuda:
    def __init__(self, cudnn=91000):
        self.cudnn = cudnn

    def cuda_runtime_get_version(self):
        return 12080

    def cudnn_get_version(self):
        return self.cudnn


@contextlib.contextmanager
def cudnn_stub(h_max: int = 128, cudnn: int = 91000, cc: str | None = None):
    """cuDNN `cudnn` present; a GPU of Hopper generation or later iff h_max == 256 (compute capability `cc`
    exactly, for the 10.3 check, if given)."""
    hopper = int(h_max) >= 256
    saved = fas.cuda_versions, fas.check_compute_capability, fas.is_cuda_compute_capability_equal
    fas.cuda_versions = _FakeCuda(cudnn)
    fas.check_compute_capability = lambda capability: hopper and tuple(map(int, capability.split("."))) <= (9, 0)
    fas.is_cuda_compute_capability_equal = lambda capability: cc == capability
    try:
        yield
    finally:
        fas.cuda_versions, fas.check_compute_capability, fas.is_cuda_compute_capability_equal = saved


def lower_cuda(fn, *args):
    """Trace `fn` and lower it for CUDA (cuDNN custom calls included), on the CPU."""
    return jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",))


def spec(*shape, dtype=jnp.bfloat16):
    return jax.ShapeDtypeStruct(tuple(int(s) for s in shape), dtype)


def cudnn_call(q, k, v, *, h_max=128, grad=False, **kw):
    """jax.nn.dot_product_attention(..., implementation='cudnn') lowered for CUDA (under jax.grad if `grad`)."""

    def fwd(q, k, v, *extra):
        named = dict(zip(sorted(k_ for k_ in kw if kw[k_] is not None and hasattr(kw[k_], "shape")), extra))
        rest = {k_: x for k_, x in kw.items() if k_ not in named}
        return F(q, k, v, implementation="cudnn", **named, **rest)

    arrays = [kw[k_] for k_ in sorted(k_ for k_ in kw if kw[k_] is not None and hasattr(kw[k_], "shape"))]
    fn = fwd
    if grad:
        fn = jax.grad(lambda q, k, v, *extra: fwd(q, k, v, *extra).astype(jnp.float32).sum())
    with cudnn_stub(h_max):
        return lower_cuda(fn, q, k, v, *arrays)


def _shape(value) -> tuple[int, ...]:
    """A shape param: a tuple, or the printed expected shape '[2, -1, -1, 8]' (-1: any size, 4 here)."""
    if isinstance(value, str):
        value = [int(x) for x in re.findall(r"-?\d+", value)]
    return tuple(4 if int(x) == -1 else int(x) for x in value)


# -- jax.nn.dot_product_attention: its own checks, XLA implementation ------------------------------

NN_NAMES = ("query", "key", "value", "mask", "bias", "query_seq_lengths", "key_value_seq_lengths")
HELPER_NAMES = ("q_seqlen", "kv_seqlen", "q_offsets", "kv_offsets")


def _nn_inputs(dtype=jnp.float32):
    return dict(query=jnp.ones((B, T, N, H), dtype), key=jnp.ones((B, S, K, H), dtype), value=jnp.ones((B, S, K, H), dtype))


def _nn_run(inputs: dict, implementation="xla"):
    q, k, v = inputs.pop("query"), inputs.pop("key"), inputs.pop("value")
    return F(q, k, v, implementation=implementation, **inputs)


def _check_layout(**kw):
    z = lambda *s, dtype=jnp.bfloat16: jnp.zeros(s, dtype)  # noqa: E731
    args = dict(query=z(B, T, N, H), key=z(B, S, K, H), value=z(B, S, K, H), bias=None, q_seqlen=None, kv_seqlen=None,
                q_offsets=None, kv_offsets=None, page_table_k=None, page_table_v=None, layout=fas.AttentionLayout.BTNH)
    args.update(kw)
    return fas.check_layout(**args)


@register("RA530")
def input_rank(p: dict):
    name, rank = p["name"], int(p["rank"])
    if name in HELPER_NAMES:  # the cuDNN helper's own check, called directly
        shape = (B,) + (3,) * (rank - 1)
        if name in ("q_offsets", "kv_offsets"):  # packed: offsets and seqlens are [B, M+1] / [B, M]
            return _check_layout(q_offsets=jnp.zeros((B, 3) if name != "q_offsets" else shape, jnp.int32),
                                 **({name: jnp.zeros(shape, jnp.int32)} if name != "q_offsets" else {}))
        return _check_layout(**{name: jnp.zeros(shape, jnp.int32)})
    inputs = _nn_inputs()
    if name in ("query_seq_lengths", "key_value_seq_lengths"):
        inputs[name] = jnp.full((B,) + (1,) * (rank - 1), 3, jnp.int32)
    else:
        base = {"mask": (B, 1, T, S), "bias": (B, 1, T, S)}.get(name, inputs.get(name, jnp.zeros(0)).shape)
        dtype = bool if name == "mask" else jnp.float32
        extra = max(rank - len(base), 0)
        inputs[name] = jnp.ones((1,) * extra + tuple(base)[max(len(base) - rank, 0):], dtype)
    return _nn_run(inputs)


@register("RA531")
def input_dtype(p: dict):
    name, dtype, expected = p["name"], jnp.dtype(p["dtype"]), jnp.dtype(p["expected_dtype"])
    if name in HELPER_NAMES:
        return _check_layout(**{name: jnp.zeros((B,), dtype)})
    if name in ("query", "value"):
        inputs = _nn_inputs(expected)
        inputs[name] = inputs[name].astype(dtype)
    else:
        inputs = _nn_inputs()
        if name == "mask":
            inputs["mask"] = jnp.ones((B, 1, T, S), dtype)
        else:
            inputs[name] = jnp.full((B,), 3, dtype)
    return _nn_run(inputs)


@register("RA532")
def input_shape(p: dict):
    """The key is built from the expected shape (every size jax.nn expects comes from it), the named input
    from input_shape (-1 = any size: 4 here, a multiple of the key's 2 heads)."""
    name = p["name"]
    if name in HELPER_NAMES:
        return _check_layout(**{name: jnp.zeros((int(p["b"]),), jnp.int32)})
    expected = [int(x) for x in re.findall(r"-?\d+", str(p.get("expected_shape") or ""))]
    if name == "value" and len(expected) == 4:
        key_shape = tuple(expected)
    elif name == "query" and len(expected) == 4:
        key_shape = (expected[0], S, K, expected[3])
    elif expected:
        key_shape = (expected[0], S, K, H)
    else:
        key_shape = (B, S, K, H)
    inputs = dict(query=jnp.ones((key_shape[0], T, N, key_shape[3])), key=jnp.ones(key_shape), value=jnp.ones(key_shape))
    shape = _shape(p["input_shape"])
    if name in ("query_seq_lengths", "key_value_seq_lengths"):
        inputs[name] = jnp.full(shape, 3, jnp.int32)
    else:
        inputs[name] = jnp.ones(shape, jnp.float32)
    return _nn_run(inputs)


@register("RA533")
def implementation(p: dict):
    impl = p["implementation"]
    q, k, v = (x.astype(jnp.bfloat16) for x in _nn_inputs().values())
    if impl == "cudnn":  # a GPU with cuDNN, bfloat16 inputs (what the fix says 'cudnn' needs)
        return cudnn_call(q, k, v)
    return F(q, k, v, implementation=impl)


@register("RA534")
def cudnn_right_window(p: dict):
    q, k, v = (spec(*x.shape) for x in _nn_inputs().values())
    causal = bool(p.get("is_causal") or False)
    lengths = {"key_value_seq_lengths": jnp.full((B,), S, jnp.int32)} if p.get("has_seq_lengths") else {}
    return cudnn_call(q, k, v, is_causal=causal, local_window_size=(2, int(p["r_window"])), **lengths)


@register("RA535")
def mask_bias_heads(p: dict):
    n, kv, heads = int(p["num_q_heads"]), int(p["num_kv_heads"]), int(p["mask_heads"])
    q = jnp.ones((B, T, n, H), jnp.float32)
    k = v = jnp.ones((B, S, kv, H), jnp.float32)
    arg = "bias" if p.get("input") == "bias" else "mask"
    x = jnp.ones((B, heads, T, S), bool if arg == "mask" else jnp.float32)
    return F(q, k, v, implementation="xla", **{arg: x})


# -- cuDNN: jax.nn with implementation='cudnn', or the helper, lowered for CUDA ---------------------


@register("RA540")
def cudnn_not_detected(p: dict):
    q, k, v = (x.astype(jnp.bfloat16) for x in _nn_inputs().values())
    return F(q, k, v, implementation="cudnn")  # the real CPU jaxlib: no cuDNN


@register("RA541")
def cudnn_dtype(p: dict):
    dtype = jnp.dtype(p["q_dtype"])
    return cudnn_call(spec(B, T, N, H, dtype=dtype), spec(B, S, K, H, dtype=dtype), spec(B, S, K, H, dtype=dtype))


@register("RA542")
def cudnn_head_dim(p: dict):
    qh = int(p["qH"])
    return cudnn_call(spec(B, T, N, qh), spec(B, S, K, qh), spec(B, S, K, qh), h_max=int(p["H_max"]))


@register("RA543")
def cudnn_bias_seq_len(p: dict):
    t, s = int(p["q_seq_len"]), int(p["kv_seq_len"])
    bias = spec(B, 1, int(p["bT"]), int(p["bS"]))
    return cudnn_call(spec(B, t, N, H), spec(B, s, K, H), spec(B, s, K, H), bias=bias)


@register("RA544")
def cudnn_training_bias_odd(p: dict):
    t, s = int(p["T"]), int(p["S"])
    return cudnn_call(spec(B, t, N, H), spec(B, s, K, H), spec(B, s, K, H), bias=spec(B, N, t, s), grad=True)


@register("RA545")
def cudnn_sliding_window(p: dict):
    left = int(p["sliding_window_length"]) - 1  # jax.nn passes left + 1
    return cudnn_call(spec(B, T, N, H), spec(B, S, K, H), spec(B, S, K, H), local_window_size=(left, 0))


@register("RA546")
def cudnn_vmap_axis(p: dict):
    axis = int(p["batch_dim"])
    shapes = [(B, T, N, H), (B, S, K, H), (B, S, K, H)]
    args = [spec(*(s[:axis] + (2,) + s[axis:])) for s in shapes]
    with cudnn_stub():
        return lower_cuda(jax.vmap(lambda q, k, v: F(q, k, v, implementation="cudnn"), in_axes=axis), *args)


@register("RA553")
def cudnn_page_table(p: dict):
    blocks, slots = int(p["k_blocks"]), int(p["table_blocks"])
    per_batch = slots // B
    table = jnp.zeros((B, 1, per_batch, 1), jnp.int32)
    pool = jnp.zeros((blocks, 4, K, H), jnp.bfloat16)
    return _check_layout(query=jnp.zeros((B, 1, N, H), jnp.bfloat16), key=pool, value=pool, page_table_k=table, page_table_v=table)


@register("RA556")
def cudnn_fp8_shape(p: dict):
    t, s, qh = int(p["T"]), int(p["S"]), int(p["qH"])
    training = bool(p.get("is_training", True))
    f8 = jnp.float8_e4m3fn
    keys = list(fas.fp8_params_keys) + (list(fas.fp8_params_keys_bwd) if training else [])
    params = {key: spec(1, 1, 1, 1, dtype=jnp.float32) for key in keys}

    def fwd(q, k, v, params):
        return fas.dot_product_attention(q, k, v, fp8_params=params, use_fp8=True, scale=1.0)

    fn = fwd
    if training:
        fn = jax.grad(lambda q, k, v, params: fwd(q, k, v, params)[0].astype(jnp.float32).sum())
    with cudnn_stub():
        return lower_cuda(fn, spec(1, t, 1, qh, dtype=f8), spec(1, s, 1, qh, dtype=f8), spec(1, s, 1, qh, dtype=f8), params)


# -- fix snippets: implementation='cudnn' on a CPU, within a snippet ---------------------------------

_MARK = "__cudnn_on_cpu__"


def _in_marked_snippet() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get(_MARK):
            return True
        frame = frame.f_back
    return False


def cudnn_on_cpu(namespace: dict) -> None:
    """Let implementation='cudnn' run eagerly on a CPU in the snippet whose globals are `namespace`.

    Installed once and inert elsewhere: the cuDNN version query answers 9.10 only when a frame of a
    marked snippet is on the stack (the real CPU jaxlib has no cuDNN otherwise), and the cuDNN
    custom calls, which have no CPU lowering at all, lower on the CPU to zeros of their result
    shapes. Every Python-side check runs for real; cuDNN's own compile-time acceptance does not.
    """
    from jax._src.interpreters import mlir

    namespace[_MARK] = True
    if getattr(fas.check_cudnn_version, "_errkit_stand_in", False):
        return
    real = fas.check_cudnn_version

    def check_cudnn_version():
        if fas.cuda_versions is None and _in_marked_snippet():
            return 91000
        return real()

    check_cudnn_version._errkit_stand_in = True
    fas.check_cudnn_version = check_cudnn_version

    def zeros(ctx, *args, **params):
        if "mask_type" in params:  # as the CUDA lowering does when it writes the backend config
            fas.convert_mask_type_to_string(params["mask_type"])
        return [mlir.full_like_aval(ctx, 0, aval) for aval in ctx.avals_out]

    for prim in (fas._dot_product_attention_fwd_p, fas._dot_product_attention_bwd_p,
                 fas._dot_product_attention_fp8_fwd_p, fas._dot_product_attention_fp8_bwd_p):
        mlir.register_lowering(prim, zeros, platform="cpu")


__all__ = ["cudnn_on_cpu", "cudnn_stub", "lower_cuda", "np"]

"""Runners of JAX's GPU attention kernels: the Pallas Triton `attention.mha` and the Mosaic GPU
`attention_mgpu` (TuningConfig, attention, attention_with_pipeline_emitter).

Triton: each call runs in interpret mode on the CPU (the Python checks and the kernel itself) and is
lowered for CUDA from the CPU (`jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`), which
runs the Pallas Triton lowering and its rules (tile loads must be powers of two in size). Triton's
own compiler does not run (no GPU), so anything only it refuses is not seen.

Mosaic GPU: the kernel has no interpret mode. Its Python checks run, and jaxlib's CPU build lowers
it for CUDA (the Mosaic GPU lowering: (8, 64) tiling, WGMMA operand sizes, shared-memory size) -
what a Hopper GPU would run is not run. `attention` first asks jaxlib's CUDA plugin for the CUDA
runtime version (`assert cuda_versions is not None`, RA506); the plugin is absent on the CPU, so the
runners stub that query for the duration of a call (12.9.1 unless said otherwise).

x-algorithm's FA3 ranker kernel copies attention_mgpu's TuningConfig and checks (same order) but
cannot be installed here: its wordings are verified through JAX's kernel.
"""

from __future__ import annotations

import contextlib
import functools
from types import SimpleNamespace
from unittest import mock

import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.gpu import attention, attention_mgpu

from verify import register

B, H = 1, 1
TRITON_HEAD_DIM = 16
MOSAIC_HEAD_DIM = 64
CUDA_OK = 12091  # a CUDA runtime outside the range RA505 refuses for causal masking


@contextlib.contextmanager
def cuda_runtime(version: int = CUDA_OK):
    """attention_mgpu with a CUDA runtime version to read (the CPU jaxlib has no CUDA plugin)."""
    stub = SimpleNamespace(cuda_runtime_get_version=lambda: version)
    try:
        with mock.patch.object(attention_mgpu, "cuda_versions", stub):
            yield
    finally:
        # a trace cached with the stub would skip the CUDA checks of later calls (the jitted kernels'
        # caches only: jax.clear_caches() would make every later test compile afresh)
        attention_mgpu.attention.fun.clear_cache()
        attention_mgpu.attention_with_pipeline_emitter.clear_cache()


def lower_for_cuda(f, *args):
    """Trace f and lower it for CUDA from the CPU: every Python check and the GPU lowering run."""
    return jax.jit(f).trace(*args).lower(lowering_platforms=("cuda",))


def _inputs(q_seq_len: int, kv_seq_len: int, head_dim: int, dtype=jnp.float16):
    q = jnp.zeros((B, q_seq_len, H, head_dim), dtype)
    k = jnp.zeros((B, kv_seq_len, H, head_dim), dtype)
    return q, k, k


def mosaic(q_seq_len: int = 128, kv_seq_len: int = 128, head_dim: int = MOSAIC_HEAD_DIM, *,
           grad: bool = False, emitter: bool = False, cuda: int = CUDA_OK, **config):
    """attention_mgpu with TuningConfig(**config) (defaults 64, 64, 2; backward blocks 64 for `grad`),
    lowered for CUDA: the forward pass, its gradient, or attention_with_pipeline_emitter."""
    config = {"block_q": 64, "block_kv": 64, "max_concurrent_steps": 2, **config}
    if grad and not any(k in config for k in ("block_q_dkv", "block_kv_dkv", "block_q_dq", "block_kv_dq")):
        config.update(block_q_dkv=64, block_kv_dkv=64, block_q_dq=64, block_kv_dq=64)
    cfg = attention_mgpu.TuningConfig(**config)
    q, k, v = _inputs(q_seq_len, kv_seq_len, head_dim)
    if emitter:
        f = functools.partial(attention_mgpu.attention_with_pipeline_emitter, config=cfg)
    elif grad:
        f = jax.grad(lambda q, k, v: attention_mgpu.attention(q, k, v, cfg).astype(jnp.float32).sum(), argnums=(0, 1, 2))
    else:
        f = functools.partial(attention_mgpu.attention, config=cfg)
    with cuda_runtime(cuda):
        return lower_for_cuda(f, q, k, v)


def triton(q_seq_len: int = 32, kv_seq_len: int = 32, head_dim: int = TRITON_HEAD_DIM, *, grad: bool = False,
           return_residuals: bool = False, backward_pass_impl: str = "triton", **blocks):
    """attention.mha with BlockSizes(**blocks) (forward blocks 16 unless given; backward blocks as
    given): run in interpret mode, then lowered for CUDA (the forward pass or its gradient)."""
    blocks = {"block_q": 16, "block_k": 16, **blocks}
    block_sizes = attention.BlockSizes(**blocks)
    q, k, v = _inputs(q_seq_len, kv_seq_len, head_dim)

    def call(interpret: bool):
        def f(q, k, v):
            return attention.mha(q, k, v, None, block_sizes=block_sizes, backward_pass_impl=backward_pass_impl,
                                 return_residuals=return_residuals, interpret=interpret)

        if not grad:
            return f
        out = (lambda q, k, v: f(q, k, v)[0]) if return_residuals else f
        return jax.grad(lambda q, k, v: out(q, k, v).astype(jnp.float32).sum(), argnums=(0, 1, 2))

    jax.block_until_ready(jax.jit(call(interpret=True))(q, k, v))
    return lower_for_cuda(call(interpret=False), q, k, v)


def _or(value, default):
    return default if value is None else value


@register("RA220")
def mosaic_blocks(p: dict):
    # the message shows one of the two (TuningConfig checks block_q first); the other is 64 unless given
    # (or a case's). Lengths that the blocks tile with every step (2 * block_q queries, as many key blocks
    # as steps and two at least): only the blocks, and what a case assumes, are in question.
    config = _config(p, block_q=64, block_kv=64)
    steps = config.get("max_concurrent_steps", 2)
    return mosaic(2 * config["block_q"], max(steps, 2) * config["block_kv"], _or(p.get("head_dim"), MOSAIC_HEAD_DIM),
                  grad=bool(p.get("backward")), **config)


@register("RA221")
def mosaic_pipeline(p: dict):
    return mosaic(max_concurrent_steps=p["max_concurrent_steps"])


FORWARD = ("block_q", "block_kv", "max_concurrent_steps")


def _config(p: dict, names=FORWARD, **default) -> dict:
    """The TuningConfig fields a case assumes (block_q=128, max_concurrent_steps=3), else the defaults."""
    return {**default, **{n: p[n] for n in names if p.get(n) is not None}}


@register("RA109")
def mosaic_head_dim(p: dict):
    """head_dim with the config a case assumes (lengths that its blocks tile)."""
    config = _config(p)
    kv_len = max(256, config.get("block_kv", 64) * config.get("max_concurrent_steps", 2))  # (every step runs)
    return mosaic(2 * config.get("block_q", 64) * 2, kv_len, head_dim=p["head_dim"], grad=bool(p.get("backward")), **config)


@register("RA224")
def mosaic_causal_grad(p: dict):
    return mosaic(grad=True, causal=p["causal"])


@register("RA225")
def mosaic_emitter_causal(p: dict):
    return mosaic(emitter=True, causal=p["causal"])


BACKWARD = ("block_q_dkv", "block_kv_dkv", "block_q_dq", "block_kv_dq")


@register("RA223")
def backward_blocks(p: dict):
    """All four unset: the Mosaic GPU kernel (its TuningConfig refuses a partial set, RA213); some
    set: JAX's Triton mha, whose BlockSizes takes any subset (its own wording, a variant)."""
    given = {n: p.get(n) for n in BACKWARD}
    if all(v is None for v in given.values()):
        return mosaic(grad=True, **given)
    return triton(grad=True, **given)


@register("RA230")
def q_seq_len_blocks(p: dict):
    """Which kernel the values are of: `block` (printed block_q * 2) is the Mosaic GPU forward pass,
    block_q_dq / block_q_dkv its backward pass, `block_q` alone JAX's Triton mha."""
    n = p["q_seq_len"]
    if p.get("block") is not None:  # (with what a case assumes: head_dim, block_kv, steps, jax.grad)
        config = _config(p, ("block_kv", "max_concurrent_steps"))
        kv_len = config.get("block_kv", 64) * max(config.get("max_concurrent_steps", 2), 2)
        return mosaic(n, kv_len, _or(p.get("head_dim"), MOSAIC_HEAD_DIM), grad=bool(p.get("backward")),
                      block_q=p["block"] // 2, **config)
    if p.get("block_q_dq") is not None or p.get("block_q_dkv") is not None:
        cw = _or(p.get("compute_wgs"), 1)
        blocks = {"block_q_dq": _or(p.get("block_q_dq"), 64), "block_q_dkv": _or(p.get("block_q_dkv"), 64),
                  "block_kv_dq": 64, "block_kv_dkv": 64}
        return mosaic(n, 64 * 2 * cw, grad=True, compute_wgs_bwd=cw, **blocks)
    return triton(n, 128, block_q=p["block_q"], block_k=128)


@register("RA231")
def kv_seq_len_blocks(p: dict):
    """`block_kv` is the Mosaic GPU forward pass, block_kv_dkv / block_kv_dq its backward pass,
    `block_k` JAX's Triton mha."""
    n = p["kv_seq_len"]
    head_dim = _or(p.get("head_dim"), MOSAIC_HEAD_DIM)  # (a case's assumption)
    if p.get("block_kv_dkv") is not None or p.get("block_kv_dq") is not None:
        cw = _or(p.get("compute_wgs"), 1)
        blocks = _config(p, FORWARD + BACKWARD, block_q_dq=64, block_q_dkv=64)
        blocks.update(block_kv_dkv=_or(p.get("block_kv_dkv"), 64), block_kv_dq=_or(p.get("block_kv_dq"), 64))
        q_len = 128 * cw * max(blocks["block_q_dq"], blocks["block_q_dkv"]) // 64
        return mosaic(q_len, n, head_dim, grad=True, compute_wgs_bwd=cw, **blocks)
    if p.get("block_kv") is not None:
        config = _config(p)
        return mosaic(2 * config.get("block_q", 64), n, head_dim, grad=bool(p.get("backward")), **config)
    return triton(128, n, block_q=128, block_k=p["block_k"])


@register("RA222")
def backward_pass_impl(p: dict):
    return triton(grad=True, backward_pass_impl=p["backward_pass_impl"],
                  block_q_dkv=16, block_kv_dkv=16, block_q_dq=16, block_kv_dq=16)


@register("RA501")
def fused_backward_blocks(p: dict):
    return triton(p["q_seq_len"], p["kv_seq_len"], grad=True, block_q_dq=p["block_q_dq"], block_kv_dkv=p["block_kv_dkv"],
                  block_q_dkv=16, block_kv_dq=16)

"""Public API: ``ranker_attention``.

Reads top to bottom: configuration -> input checks -> dispatch. Every input
error is reported by errkit_attention/_validators.py; nothing below them raises.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp

from errkit_attention import _validators, tuning
from errkit_attention.config import BlockSizes
from errkit_attention.pallas_attention import pallas_attention
from errkit_attention.reference import SEQ_AXIS, attention_reference


# jax.default_backend() names: "gpu" for CUDA and ROCm (their platform names accepted too), "tpu".
_KERNEL_BACKENDS = ("gpu", "cuda", "rocm", "tpu")


def resolve_implementation(implementation: str | None) -> str:
    """None -> "pallas" when jax's default backend is a GPU or a TPU, "xla" otherwise (the CPU).

    Decided when the call is traced, from the default backend alone: not where the function is
    later lowered (an earlier lax.platform_dependent choice was reverted: its cond refuses the
    ordered effects of checkify checks / io_callback in the branches, and the default must stay
    differentiable twice on the CPU). Exporting for a GPU or TPU from a CPU host therefore needs
    implementation="pallas"."""
    if implementation is not None:
        return implementation
    return "pallas" if jax.default_backend() in _KERNEL_BACKENDS else "xla"


def as_number(x):
    """A concrete NumPy or JAX scalar (np.float32(0.125), 1 / jnp.sqrt(32.), np.int64(64)) as the
    Python number it holds; anything else unchanged (None, Python numbers, tracers, arrays that are
    not scalars, strings), for the validators to accept or refuse."""
    if x is None or type(x) in (int, float, bool) or isinstance(x, jax.core.Tracer):
        return x
    if getattr(x, "shape", None) == () and hasattr(x, "dtype") and hasattr(x, "item"):
        try:
            value = x.item()
        except Exception:  # not concrete after all: the validators refuse it with its repr
            return x
        if type(value) in (int, float):  # a bool scalar stays itself (refused as not a number)
            return value
    return x


_BLOCK_FIELDS = tuple(f.name for f in dataclasses.fields(BlockSizes))


def as_config(config):
    """A BlockSizes whose NumPy or JAX integer sizes are Python ints (a static jit argument must hash
    and compare by value); any other config unchanged. Float sizes stay floats (refused, RA211)."""
    if type(config) is not BlockSizes:
        return config
    sizes = {}
    for name in _BLOCK_FIELDS:
        value = getattr(config, name)
        number = as_number(value)
        if type(number) is int and number is not value:
            sizes[name] = number
    return dataclasses.replace(config, **sizes) if sizes else config


def validate(q, k, v, *, bound, causal, sm_scale, cap, cap_method, config,
             implementation, layout="bshd") -> str:
    """Runs the validators in their fixed order; returns the resolved implementation.

    Checks on a traced bound's values (RA305, RA306) are staged as checkify checks. NumPy and JAX
    scalars are checked as the Python numbers they hold (see as_number)."""
    sm_scale, cap, config = as_number(sm_scale), as_number(cap), as_config(config)
    _validators.validate_options(implementation, sm_scale, cap, cap_method, causal, layout)
    impl = resolve_implementation(implementation)
    _validators.validate_backend(impl)
    _validators.validate_qkv(q, k, v, impl, layout)
    _validators.validate_mask(bound, causal, q, k, layout)
    _validators.checkify_mask(bound, causal, q, k, layout)
    _validators.validate_config(config, impl)
    return impl


def dispatch(q, k, v, *, bound, causal, sm_scale, cap, cap_method, config,
             impl: str, layout: str = "bshd"):
    """Runs an implementation on already validated inputs (jitted; the options
    are static, so one compilation serves every call with the same options), laid out as
    `layout` says (errkit_attention/reference.py ``SEQ_AXIS``)."""
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(q.shape[-1])
    if isinstance(bound, jax.core.Tracer):
        # Values the validators could not read: clamped, never wrapped by the int32 cast (any
        # value from kv_seq_len up already makes every key context). checkify reports them.
        bound = jnp.clip(bound, 0, k.shape[SEQ_AXIS[layout]]).astype(jnp.int32)
    # The architecture whose table row (errkit_attention/tuning.py) the kernel takes: a static argument,
    # read outside the jit so that tuning.target() is never hidden by its trace cache.
    arch = tuning.current_arch() if impl == "pallas" else None
    forward = tuning.current_forward() if impl == "pallas" else None  # tuning.forward_kernel()
    backward = tuning.current_backward() if impl == "pallas" else None  # tuning.backward_kernel()
    # A GPU the call targets (its backend, or tuning.target()): an explicit config's tiles are
    # checked against it (RA214); static too, so that a trace made without it is not reused
    fits_on = arch if impl == "pallas" and config is not None and tuning.gpu_targeted(arch) else None
    return _run(q, k, v, bound, causal=bool(causal), sm_scale=float(sm_scale),
                cap=None if cap is None else float(cap), cap_method=cap_method,
                config=config, impl=impl, arch=arch, forward=forward, backward=backward,
                fits_on=fits_on, layout=layout)


@functools.partial(jax.jit, static_argnames=(
    "causal", "sm_scale", "cap", "cap_method", "config", "impl", "arch", "forward", "backward",
    "fits_on", "layout"))
def _run(q, k, v, bound, *, causal, sm_scale, cap, cap_method, config, impl, arch, forward,
         backward, fits_on, layout):
    if impl == "xla":
        return attention_reference(q, k, v, bound=bound, causal=causal,
                                   sm_scale=sm_scale, cap=cap,
                                   cap_method=cap_method, layout=layout)
    return pallas_attention(
        q, k, v, bound=bound, causal=causal, sm_scale=sm_scale, cap=cap,
        cap_method=cap_method, config=config,
        # Interpret mode on CPU, Triton on GPU (on Hopper, Mosaic GPU's forward for 16-bit
        # inputs: errkit_attention/tuning.py gpu_forward): chosen when the call is lowered, not
        # traced, so a function exported for CUDA from a CPU host holds the kernel.
        interpret=None, arch=arch, forward=forward, backward=backward, fits_on=fits_on,
        layout=layout)


def ranker_attention(q, k, v, *, bound=None, causal=False, sm_scale=None,
                     cap=None, cap_method="tanh", config=None,
                     implementation=None, layout="bshd"):
    """Attention of candidates over a shared context.

    Args:
      q: [batch, q_seq_len, num_q_heads, head_dim] ([batch, num_q_heads, q_seq_len,
        head_dim] with layout="bhsd").
      k, v: [batch, kv_seq_len, num_kv_heads, head_dim] (with layout="bhsd",
        [batch, num_kv_heads, kv_seq_len, head_dim]); query head h reads kv
        head h // (num_q_heads // num_kv_heads) (GQA / MQA).
      bound: None, or an integer array [batch] (int32, or any integer dtype
        whose values fit int32): the number of leading context tokens of
        each example (needs q_seq_len == kv_seq_len). Query i attends key j iff
        j == i or (j < bound[b] and (not causal or j <= i)). Its values are
        checked on an eager call: a negative value raises RA305, one above
        2**31 - 1 raises RA306. Under jax.jit (a traced bound) they are
        checked only under jax.experimental.checkify, which reports the same
        codes and messages (`checkify.checkify(ranker_attention)`); without
        checkify a traced bound is clamped to [0, kv_seq_len], so a negative
        value acts as 0 and a too large one as kv_seq_len, silently.
      causal: without bound, attend j <= i only; with bound, restricts the
        context part as above.
      sm_scale: logit scale, default 1 / sqrt(head_dim): a Python number or a
        concrete NumPy / JAX scalar (np.float32(0.125), 1 / jnp.sqrt(32.)
        outside jit), converted to a Python float; a traced value is refused
        (RA202): the scale is compiled in.
      cap: soft-cap of the logits (a positive number, as for sm_scale), None
        for no capping.
      cap_method: "tanh" (cap * tanh(s / cap)), "soft_sign" (s / (1 + |s| / cap))
        or "none".
      config: errkit_attention.BlockSizes for the Pallas kernel, None for the defaults: per
        architecture, head_dim, dtype and pass, from errkit_attention/tuning.py's table (whose
        every row a compile check proves to fit its GPU); NumPy / JAX integer sizes
        (BlockSizes(np.int64(64), 64)) count as ints.
      implementation: "pallas", "xla", or None: "pallas" when jax's default
        backend is a GPU or a TPU, "xla" when it is the CPU (or anything else),
        decided when the call is traced. So a function traced on a CPU host
        with the default holds no kernel, whichever platform it is lowered
        for: to export for a GPU (or a TPU) from a CPU host, pass
        implementation="pallas".
        "pallas" is lowered as Triton kernels for a GPU (on Hopper, the forward of
        bfloat16 / float16 inputs at head_dim 64, 128 or 256 with config=None as a
        Mosaic GPU kernel, errkit_attention/mosaic_gpu.py), as Mosaic kernels for
        a TPU, and run in Pallas' interpret mode on the CPU; which one is decided when the function is
        lowered, not traced, so `jax.jit(f).trace(...).lower(
        lowering_platforms=("cuda",))` on a CPU host holds the GPU kernels.
        Lowering for several platforms at once that include the CPU (e.g.
        ("cuda", "cpu")) fails in jax 0.10 ("Only interpret mode is supported
        on CPU backend"): jax lowers both branches for every platform.
      layout: "bshd" (the default: q, k, v, the output and the gradients are
        [batch, seq_len, num_heads, head_dim]) or "bhsd" ([batch, num_heads,
        seq_len, head_dim], as JAX's TPU flash and splash attention take them);
        anything else is refused (RA207). The TPU kernels work on [b, h, s, d]:
        with "bhsd" they read and write the caller's arrays with no transpose
        (with "bshd" the transposes cost 0.6 ms of a 2.7 ms forward at head_dim
        256 on a TPU v5e). The GPU kernels (Triton, Mosaic GPU) and interpret
        mode take [b, s, h, d] and transpose a "bhsd" call's arrays in and out;
        the xla implementation takes either.

    Returns:
      [batch, q_seq_len, num_q_heads, head_dim] in q.dtype ([batch, num_q_heads,
      q_seq_len, head_dim] with layout="bhsd"). float64 (the xla
      implementation, with jax_enable_x64) is computed in float64.
    """
    # 0. numbers as callers write them, 1. checks (validators only), 2. dispatch.
    sm_scale, cap, config = as_number(sm_scale), as_number(cap), as_config(config)
    impl = validate(q, k, v, bound=bound, causal=causal, sm_scale=sm_scale,
                    cap=cap, cap_method=cap_method, config=config,
                    implementation=implementation, layout=layout)
    return dispatch(q, k, v, bound=bound, causal=causal, sm_scale=sm_scale,
                    cap=cap, cap_method=cap_method, config=config, impl=impl,
                    layout=layout)

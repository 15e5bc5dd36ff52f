"""Public API: ``ranker_attention``.

Reads top to bottom: configuration -> input checks -> dispatch. Every input
error is reported by kernel/_validators.py; nothing below them raises.
"""

from __future__ import annotations

import functools
import math

import jax

from kernel import _validators
from kernel.config import BlockSizes
from kernel.pallas_attention import pallas_attention
from kernel.reference import attention_reference


def resolve_implementation(implementation: str | None) -> str:
    """None -> "pallas" when the default backend is a GPU, "xla" otherwise."""
    if implementation is not None:
        return implementation
    return "pallas" if jax.default_backend() == "gpu" else "xla"


def validate(q, k, v, *, bound, causal, sm_scale, cap, cap_method, config,
             implementation) -> str:
    """Runs the validators in their fixed order; returns the resolved implementation."""
    _validators.validate_options(implementation, sm_scale, cap, cap_method, causal)
    impl = resolve_implementation(implementation)
    _validators.validate_backend(impl)
    _validators.validate_qkv(q, k, v, impl)
    _validators.validate_mask(bound, causal, q, k)
    _validators.validate_config(config, impl)
    return impl


def dispatch(q, k, v, *, bound, causal, sm_scale, cap, cap_method, config,
             impl: str):
    """Runs an implementation on already validated inputs (jitted; the options
    are static, so one compilation serves every call with the same options)."""
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(q.shape[-1])
    return _run(q, k, v, bound, causal=bool(causal), sm_scale=float(sm_scale),
                cap=None if cap is None else float(cap), cap_method=cap_method,
                config=config, impl=impl)


@functools.partial(jax.jit, static_argnames=(
    "causal", "sm_scale", "cap", "cap_method", "config", "impl"))
def _run(q, k, v, bound, *, causal, sm_scale, cap, cap_method, config, impl):
    if impl == "xla":
        return attention_reference(q, k, v, bound=bound, causal=causal,
                                   sm_scale=sm_scale, cap=cap,
                                   cap_method=cap_method)
    return pallas_attention(
        q, k, v, bound=bound, causal=causal, sm_scale=sm_scale, cap=cap,
        cap_method=cap_method, config=config if config is not None else BlockSizes(),
        # Interpret mode on CPU, Triton on GPU: chosen when the call is lowered, not
        # traced, so a function exported for CUDA from a CPU host holds the kernel.
        interpret=None)


def ranker_attention(q, k, v, *, bound=None, causal=False, sm_scale=None,
                     cap=None, cap_method="tanh", config=None,
                     implementation=None):
    """Attention of candidates over a shared context.

    Args:
      q: [batch, q_seq_len, num_q_heads, head_dim].
      k, v: [batch, kv_seq_len, num_kv_heads, head_dim]; query head h reads kv
        head h // (num_q_heads // num_kv_heads) (GQA / MQA).
      bound: None, or int32 [batch]: the number of leading context tokens of
        each example (needs q_seq_len == kv_seq_len). Query i attends key j iff
        j == i or (j < bound[b] and (not causal or j <= i)).
      causal: without bound, attend j <= i only; with bound, restricts the
        context part as above.
      sm_scale: logit scale, default 1 / sqrt(head_dim).
      cap: soft-cap of the logits (a positive number), None for no capping.
      cap_method: "tanh" (cap * tanh(s / cap)), "soft_sign" (s / (1 + |s| / cap))
        or "none".
      config: kernel.BlockSizes for the Pallas kernel, None for the defaults.
      implementation: "pallas", "xla", or None (pallas on GPU, xla otherwise).

    Returns:
      [batch, q_seq_len, num_q_heads, head_dim] in q.dtype.
    """
    # 1. checks (validators only), 2. dispatch.
    impl = validate(q, k, v, bound=bound, causal=causal, sm_scale=sm_scale,
                    cap=cap, cap_method=cap_method, config=config,
                    implementation=implementation)
    return dispatch(q, k, v, bound=bound, causal=causal, sm_scale=sm_scale,
                    cap=cap, cap_method=cap_method, config=config, impl=impl)

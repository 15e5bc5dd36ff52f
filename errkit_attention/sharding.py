"""``sharded_ranker_attention``: the kernel under ``jax.shard_map``.

Batch is split over ``batch_axis``; with ``head_axis`` the q heads and the kv
heads are both split into contiguous chunks over it, so every shard keeps
whole GQA groups (shard s holds q heads [s*hq/n, (s+1)*hq/n) and kv heads
[s*hkv/n, (s+1)*hkv/n)). Attention is independent per example and per head,
so no collective is needed. The heads are axis 2 of q, k and v ("bshd"), or axis 1 with
layout="bhsd" (``_specs``).
"""

from __future__ import annotations

import functools
import math

import jax
from jax.sharding import PartitionSpec as P

from errkit_attention import _validators
from errkit_attention.attention import as_config, as_number, dispatch, validate
from errkit_attention.reference import HEADS_AXIS


def sharded_ranker_attention(q, k, v, *, mesh, batch_axis="data", head_axis=None,
                             bound=None, causal=False, sm_scale=None, cap=None,
                             cap_method="tanh", config=None,
                             implementation=None, layout="bshd"):
    """``ranker_attention`` with q/k/v/bound sharded over ``mesh``.

    Inputs are validated once, on the global arrays (then the mesh); each shard then runs the
    chosen implementation on its local block without re-validating. ``layout`` is
    ranker_attention's: q, k, v and the output in the same layout, ``head_axis`` splitting its
    heads axis (2 for "bshd", 1 for "bhsd").
    """
    # Numbers as callers write them (as ranker_attention does); then the arrays first: the sharding
    # checks read their batch and head dimensions.
    sm_scale, cap, config = as_number(sm_scale), as_number(cap), as_config(config)
    impl = validate(q, k, v, bound=bound, causal=causal, sm_scale=sm_scale,
                    cap=cap, cap_method=cap_method, config=config,
                    implementation=implementation, layout=layout)
    _validators.validate_sharding(mesh, batch_axis, head_axis, q, k, layout)
    if sm_scale is None:  # from the global head_dim (the same on every shard)
        sm_scale = 1.0 / math.sqrt(q.shape[-1])
    return _sharded(q, k, v, bound, mesh=mesh, batch_axis=batch_axis,
                    head_axis=head_axis, causal=bool(causal),
                    sm_scale=float(sm_scale),
                    cap=None if cap is None else float(cap),
                    cap_method=cap_method, config=config, impl=impl, layout=layout)


def _qkv_spec(batch_axis, head_axis, layout: str) -> P:
    """q, k, v's (and the output's) partition: batch over batch_axis, heads over head_axis."""
    spec = [batch_axis, None, None, None]
    spec[HEADS_AXIS[layout]] = head_axis
    return P(*spec)


@functools.partial(jax.jit, static_argnames=(
    "mesh", "batch_axis", "head_axis", "causal", "sm_scale", "cap", "cap_method",
    "config", "impl", "layout"))
def _sharded(q, k, v, bound, *, mesh, batch_axis, head_axis, causal, sm_scale,
             cap, cap_method, config, impl, layout):
    qkv_spec = _qkv_spec(batch_axis, head_axis, layout)
    local = functools.partial(dispatch, causal=causal, sm_scale=sm_scale,
                              cap=cap, cap_method=cap_method, config=config,
                              impl=impl, layout=layout)
    if bound is None:
        def per_shard(q, k, v):
            return local(q, k, v, bound=None)
        in_specs, args = (qkv_spec, qkv_spec, qkv_spec), (q, k, v)
    else:
        def per_shard(q, k, v, bound):
            return local(q, k, v, bound=bound)
        in_specs, args = (qkv_spec, qkv_spec, qkv_spec, P(batch_axis)), (q, k, v, bound)

    # check_vma=False: pallas_call does not track varying manual axes.
    return jax.shard_map(per_shard, mesh=mesh, in_specs=in_specs,
                         out_specs=qkv_spec, check_vma=False)(*args)

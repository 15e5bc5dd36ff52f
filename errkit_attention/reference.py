"""The "xla" implementation: ranker attention in plain jax.numpy.

It is written to be read: it is the definition the Pallas kernel is held to.
Inputs are assumed valid (see errkit_attention/_validators.py).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

# Logit given to masked-out keys. Finite (not -inf) so that a row whose keys
# are all masked in one kv block never produces inf - inf = nan in the
# online softmax of the Pallas kernel; exp(MASK_VALUE - m) is exactly 0.
MASK_VALUE = -0.7 * float(np.finfo(np.float32).max)

# The layouts ranker_attention takes (its `layout`; RA207 refuses any other): the axis of q, k and
# v holding the sequence, and the one holding the heads. Batch is axis 0 and head_dim axis 3 in both.
SEQ_AXIS = {"bshd": 1, "bhsd": 2}
HEADS_AXIS = {"bshd": 2, "bhsd": 1}


def swap_seq_heads(x):
    """[b, s, h, d] <-> [b, h, s, d]: an array of one layout in the other."""
    return jnp.swapaxes(x, 1, 2)


def bshd_shape(x, layout: str) -> tuple:
    """The shape of q, k or v in `layout` as (batch, seq_len, heads, head_dim)."""
    batch, a, b, head_dim = x.shape
    return (batch, a, b, head_dim) if layout == "bshd" else (batch, b, a, head_dim)


def soft_cap(s: jax.Array, cap: float | None, cap_method: str) -> jax.Array:
    """Soft-caps float32 (float64) logits ``s``. ``cap=None`` or ``"none"``: no capping."""
    if cap is None or cap_method == "none":
        return s
    if cap_method == "tanh":
        return cap * jnp.tanh(s / cap)
    # "soft_sign"
    return s / (1.0 + jnp.abs(s) / cap)


def attention_mask(q_len: int, kv_len: int, bound: jax.Array | None, causal: bool):
    """Boolean mask, True where query i may attend key j.

    Returns None (no masking), an array [1, q_len, kv_len], or, with ``bound``,
    an array [batch, q_len, kv_len]:

    * no bound: everything, or ``j <= i`` when causal;
    * bound: ``j == i`` or (``j < bound[b]`` and (not causal or ``j <= i``)),
      i.e. candidates see the whole context and themselves, never each other.
    """
    i = jnp.arange(q_len)[:, None]
    j = jnp.arange(kv_len)[None, :]
    if bound is None:
        return (j <= i)[None] if causal else None
    context = j < bound.astype(jnp.int32)[:, None, None]
    if causal:
        context = context & (j <= i)[None]
    return context | (j == i)[None]


def attention_reference(q, k, v, *, bound=None, causal=False, sm_scale, cap=None,
                        cap_method="tanh", layout="bshd"):
    """q: [b, sq, hq, d]; k, v: [b, skv, hkv, d] -> [b, sq, hq, d] in q.dtype; with
    layout="bhsd" each is [b, h, s, d] instead (the same attention of the swapped arrays)."""
    if layout == "bhsd":
        out = attention_reference(*map(swap_seq_heads, (q, k, v)), bound=bound, causal=causal,
                                  sm_scale=sm_scale, cap=cap, cap_method=cap_method)
        return swap_seq_heads(out)
    batch, q_len, num_q_heads, head_dim = q.shape
    kv_len, num_kv_heads = k.shape[1], k.shape[2]
    group = num_q_heads // num_kv_heads  # query head h reads kv head h // group

    # [b, hkv, g, sq, d]: one batched matmul per kv head, shared by its group.
    qg = q.reshape(batch, q_len, num_kv_heads, group, head_dim).transpose(0, 2, 3, 1, 4)
    # float32; float64 for float64 inputs when x64 is enabled
    acc = jax.dtypes.canonicalize_dtype(jnp.promote_types(q.dtype, jnp.float32))
    logits = jnp.einsum("bhgqd,bkhd->bhgqk", qg, k,
                        preferred_element_type=acc)
    logits = soft_cap(logits * sm_scale, cap, cap_method)

    mask = attention_mask(q_len, kv_len, bound, causal)  # [b or 1, sq, skv]
    if mask is not None:
        logits = jnp.where(mask[:, None, None], logits, MASK_VALUE)

    probs = jax.nn.softmax(logits, axis=-1)
    out = jnp.einsum("bhgqk,bkhd->bhgqd", probs, v.astype(acc))
    return out.transpose(0, 3, 1, 2, 4).reshape(q.shape).astype(q.dtype)

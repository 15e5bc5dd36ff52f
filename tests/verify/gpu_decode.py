"""Runners of JAX's Pallas GPU (Triton) decode attention (decode_attention.mqa / gqa: RA510-RA516)
and paged attention (paged_attention.paged_attention: RA520-RA524, and the paged wordings of RA510
and RA513), on the CPU.

A call passes only when the real kernel runs in interpret mode (its Python checks and its body) and
also lowers for CUDA from the CPU (`jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`),
which runs the Triton lowering's own checks (every loaded or stored array a power of two in size).
`decode_attention` and `paged_attention` below are the real modules called that way: the entries'
snippets use them (their `setup` imports them from here).

Inputs are tiny (batch 1, head_dim 16) so that the family's verification stays well under a minute.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.gpu import decode_attention as _decode
from jax.experimental.pallas.ops.gpu import paged_attention as _paged

from verify import register


def interpret_and_lower(fn, *args, **kwargs):
    """fn(*args, **kwargs) run in interpret mode, then lowered for CUDA (Triton): both must pass."""
    out = jax.block_until_ready(fn(*args, interpret=True, **kwargs))
    jax.jit(lambda *a: fn(*a, **kwargs)).trace(*args).lower(lowering_platforms=("cuda",))
    return out


class _Checked:
    """A kernel module whose functions run through `interpret_and_lower`."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        fn = getattr(self._module, name)
        return lambda *args, **kwargs: interpret_and_lower(fn, *args, **kwargs)


decode_attention = _Checked(_decode)
paged_attention = _Checked(_paged)


def decode(k_seq_len: int, k_splits: int = 16, block_k: int | None = None, num_q_heads: int = 4,
           head_dim: int = 16, block_h: int = 16, num_kv_heads: int | None = None):
    """mqa (or gqa with num_kv_heads) on ones; block_k None keeps the kernel's default."""
    kw = dict(k_splits=k_splits, block_h=block_h) | ({} if block_k is None else {"block_k": block_k})
    q = jnp.ones((1, num_q_heads, head_dim), jnp.float32)
    if num_kv_heads is None:
        k = jnp.ones((1, k_seq_len, head_dim), jnp.float32)
        return decode_attention.mqa(q, k, k, **kw)
    k = jnp.ones((1, k_seq_len, num_kv_heads, head_dim), jnp.float32)
    return decode_attention.gqa(q, k, k, **kw)


def paged(pages_per_sequence: int, k_splits: int = 16, pages_per_compute_block: int | None = None,
          block_h: int = 16, page_size: int = 4, num_q_heads: int = 4, num_kv_heads: int = 1, head_dim: int = 16):
    """paged_attention with one sequence whose pages are 0..pages_per_sequence-1 (the last one partly filled)."""
    kw = dict(k_splits=k_splits, block_h=block_h)
    if pages_per_compute_block is not None:
        kw["pages_per_compute_block"] = pages_per_compute_block
    q = jnp.ones((1, num_q_heads, head_dim), jnp.float32)
    pages = jnp.ones((num_kv_heads, pages_per_sequence, page_size, head_dim), jnp.float32)
    block_tables = jnp.arange(pages_per_sequence, dtype=jnp.int32)[None]
    lengths = jnp.array([pages_per_sequence * page_size - 1], jnp.int32)
    return paged_attention.paged_attention(q, pages, pages, block_tables, lengths, **kw)


@register("RA510")
def splits_divide(p: dict):
    if p.get("pages_per_sequence") is not None:
        return paged(p["pages_per_sequence"], p["k_splits"])
    return decode(p["k_seq_len"], p["k_splits"])  # the default block_k, as a user who did not set it


@register("RA511")
def split_at_least_16(p: dict):
    return decode(p["k_seq_len"], p["k_splits"])


@register("RA513")
def block_tiles_split(p: dict):
    if p.get("pages_per_partition") is not None:
        return paged(p["pages_per_partition"], 1, p["pages_per_compute_block"])
    return decode(p["k_seq_len"], p["k_splits"], p["block_k"])


@register("RA523")
def paged_block_h(p: dict):
    return paged(16, 16, block_h=p["block_h"])

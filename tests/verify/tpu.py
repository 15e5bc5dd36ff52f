"""Runners of JAX's Pallas TPU kernels except splash: flash attention, paged attention and ragged
paged attention (jax/experimental/pallas/ops/tpu/...).

Flash and paged attention: a runner passes only when the call both lowers for TPU from the CPU
(`jax.jit(f).trace(*args).lower(lowering_platforms=("tpu",))`, which traces the kernel body and runs
the Mosaic TPU lowering checks, e.g. a block's last two dims multiples of 8 and 128 or the full dim)
and runs under `pltpu.force_tpu_interpret_mode()`. Lowering comes first: a bad example fails there
without paying for interpretation.

Ragged paged attention neither lowers for TPU from the CPU (its lowering asks the device for its TPU
generation: "Unsupported TPU device kind: cpu") nor runs in TPU interpret mode in jax 0.10.2 (the
interpreter does not support its reshaped refs), so its runner traces it with `jax.eval_shape`: every
Python check (`static_validate_inputs`, the tiling check of `get_min_heads_per_blk`) and the kernel
body's tracing run, the Mosaic lowering checks do not. Its `dynamic_validate_inputs` checks run on
concrete values.

Paged attention with megacore_mode set is only lowered: TPU interpret mode on a CPU does not finish
a call that splits the grid over a megacore chip's two TensorCores.

Inputs are tiny (batch 1, one head, head_dim 128, sequences of a few hundred) so the family runs in
well under a minute on two cores.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas.ops.tpu import flash_attention as FA
from jax.experimental.pallas.ops.tpu import ragged_paged_attention as RPA
from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention

from verify import register


def _lower_and_interpret(f, *args, interpret=True):
    """Lower `f` for TPU (Mosaic's checks), then run it in TPU interpret mode."""
    jax.jit(f).trace(*args).lower(lowering_platforms=("tpu",))
    if not interpret:
        return None
    with pltpu.force_tpu_interpret_mode():
        return jax.block_until_ready(jax.jit(f)(*args))


# -- flash attention ---------------------------------------------------------------------------


def flash(*, batch=1, heads=1, q_seq_len=128, kv_seq_len=128, head_dim=128, block_q=128, block_k_major=128,
          block_k=128, block_b=1, segment_ids=False, ab_shape=None):
    """TPU flash_attention forward with these shapes and BlockSizes."""
    sizes = FA.BlockSizes(block_q=block_q, block_k_major=block_k_major, block_k=block_k, block_b=block_b)
    q = jnp.ones((batch, heads, q_seq_len, head_dim), jnp.float32)
    k = v = jnp.ones((batch, heads, kv_seq_len, head_dim), jnp.float32)
    ab = None if ab_shape is None else jnp.zeros(tuple(ab_shape), jnp.float32)
    seg = (FA.SegmentIds(jnp.zeros((batch, q_seq_len), jnp.int32), jnp.zeros((batch, kv_seq_len), jnp.int32))
           if segment_ids else None)
    return _lower_and_interpret(lambda q, k, v: FA.flash_attention(q, k, v, ab, seg, block_sizes=sizes), q, k, v)


def _opt(p: dict, name: str, default):
    value = p.get(name)
    return default if value is None else value


@register("RA600")
def flash_minor_major(p: dict):
    # The forward pair (block_k / block_k_major); kv_seq_len is the one the user runs (default: the major block).
    major = p["major"]
    return flash(kv_seq_len=_opt(p, "kv_seq_len", major), block_k_major=major, block_k=p["minor"])


@register("RA605")
def flash_bias(p: dict):
    return flash(batch=p["batch_size"], heads=p["num_heads"], q_seq_len=p["q_seq_len"], kv_seq_len=p["kv_seq_len"],
                 ab_shape=p["ab_shape"])


@register("RA606")
def flash_segment_ids(p: dict):
    b, shape = p["batch_size"], tuple(p["segment_ids_shape"])
    q_len, kv_len = _opt(p, "q_seq_len", 128), _opt(p, "kv_seq_len", 128)
    q_ids = jnp.zeros(shape if p.get("q_seq_len") is not None else (b, q_len), jnp.int32)
    kv_ids = jnp.zeros(shape if p.get("kv_seq_len") is not None else (b, kv_len), jnp.int32)
    sizes = FA.BlockSizes(block_q=128, block_k_major=128, block_k=128, block_b=1)
    q = jnp.ones((b, 1, q_len, 128), jnp.float32)
    k = v = jnp.ones((b, 1, kv_len, 128), jnp.float32)
    seg = FA.SegmentIds(q_ids, kv_ids)
    return _lower_and_interpret(lambda q, k, v: FA.flash_attention(q, k, v, None, seg, block_sizes=sizes), q, k, v)


@register("RA609")
def flash_key_block(p: dict):
    major = _opt(p, "block_k_major", 128)
    return flash(kv_seq_len=_opt(p, "kv_seq_len", major), head_dim=_opt(p, "head_dim", 128), block_k_major=major,
                 block_k=p["block_k"])


@register("RA610")
def flash_head_dim(p: dict):
    kv = _opt(p, "kv_seq_len", 256)
    block_k = _opt(p, "block_k", 128)
    return flash(kv_seq_len=kv, head_dim=p["head_dim"], block_k_major=_opt(p, "block_k_major", block_k),
                 block_k=block_k)


@register("RA611")
def flash_block_fits(p: dict):
    """block_name/block on the dimension dim_name/dim_size; the other sizes are BlockSizes.get_default's
    (128), block_k the given one (when the message is about block_k_major)."""
    name, block, dim_name, dim = p["block_name"], p["block"], p["dim_name"], p["dim_size"]
    kw = dict(q_seq_len=128, kv_seq_len=128, batch=1)
    kw[{"q_seq_len": "q_seq_len", "kv_seq_len": "kv_seq_len", "batch": "batch"}[dim_name]] = dim
    sizes = dict(block_q=128, block_k_major=128, block_k=_opt(p, "block_k", 128), block_b=1)
    if name not in sizes:
        raise NotImplementedError(f"runner: only the forward block sizes, not {name}")
    sizes[name] = block
    if dim_name == "q_seq_len" and name != "block_q" or dim_name == "batch" and name != "block_b":
        raise NotImplementedError(f"runner: {name} does not tile {dim_name}")
    if dim_name == "kv_seq_len" and name != "block_k_major":
        sizes["block_k_major"] = min(sizes["block_k_major"], dim)
    return flash(**kw, **sizes)


# -- paged attention ---------------------------------------------------------------------------


def paged(*, batch_size=2, num_q_heads=8, num_kv_heads=1, head_dim=128, page_size=16, total_pages=8,
          pages_per_sequence=2, pages_per_compute_block=1, megacore_mode=None, lengths_dtype=jnp.int32,
          page_indices_rows=None):
    q = jnp.ones((batch_size, num_q_heads, head_dim), jnp.float32)
    pages = jnp.ones((num_kv_heads, total_pages, page_size, head_dim), jnp.float32)
    lengths = jnp.full((batch_size,), page_size, lengths_dtype)
    rows = batch_size if page_indices_rows is None else page_indices_rows
    page_indices = (jnp.arange(rows * pages_per_sequence, dtype=jnp.int32) % total_pages).reshape(rows, pages_per_sequence)

    def f(q, k, v, lengths, page_indices):
        return paged_attention(q, k, v, lengths, page_indices, pages_per_compute_block=pages_per_compute_block,
                               megacore_mode=megacore_mode)

    # With megacore_mode set, the kernel splits its grid over the two TensorCores of a megacore chip;
    # TPU interpret mode on a CPU never finishes such a call (jax 0.10.2), so it is only lowered.
    return _lower_and_interpret(f, q, pages, pages, lengths, page_indices, interpret=megacore_mode is None)


@register("RA650")
def paged_compute_block(p: dict):
    return paged(pages_per_sequence=p["pages_per_sequence"], pages_per_compute_block=p["pages_per_compute_block"])


@register("RA653", "RA654")
def paged_megacore(p: dict):
    return paged(batch_size=_opt(p, "batch_size", 2), num_kv_heads=_opt(p, "num_kv_heads", 2),
                 megacore_mode=p["megacore_mode"])


# -- ragged paged attention (jax.eval_shape: validation and tracing only) --------------------------

_PACKED = {1: jnp.float32, 2: jnp.bfloat16, 4: jnp.int8}


def ragged(*, num_q_heads=None, num_combined_kv_heads=2, kv_dtype=jnp.float32, head_dim=128, page_size=16,
           max_num_seqs=2, pages_per_seq=4, num_tokens=16, num_kv_pages_per_block=2, num_queries_per_block=8,
           **kw):
    num_q_heads = num_combined_kv_heads // 2 if num_q_heads is None else num_q_heads
    q = jnp.ones((num_tokens, num_q_heads, head_dim), jnp.float32)
    kv_pages = jnp.ones((max_num_seqs * pages_per_seq, page_size, num_combined_kv_heads, head_dim), kv_dtype)
    kv_lens = jnp.full((max_num_seqs,), page_size, jnp.int32)
    page_indices = jnp.arange(max_num_seqs * pages_per_seq, dtype=jnp.int32).reshape(max_num_seqs, pages_per_seq)
    cu_q_lens = jnp.minimum(jnp.arange(max_num_seqs + 1, dtype=jnp.int32) * 8, num_tokens)
    num_seqs = jnp.array([max_num_seqs], jnp.int32)

    def f(*args):
        return RPA.ragged_paged_attention(*args, num_kv_pages_per_block=num_kv_pages_per_block,
                                          num_queries_per_block=num_queries_per_block, **kw)

    return jax.eval_shape(f, q, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs)


@register("RA680")
def ragged_block_sizes(p: dict):
    return ragged(pages_per_seq=_opt(p, "pages_per_seq", 4), num_kv_pages_per_block=p.get("num_kv_pages_per_block"),
                  num_queries_per_block=p.get("num_queries_per_block"))


@register("RA682")
def ragged_tiling(p: dict):
    """The combined kv heads in the kv dtype of that packing; num_q_heads (grouped queries) when given,
    else one query head per kv head."""
    return ragged(num_combined_kv_heads=p["num_combined_kv_heads"], kv_dtype=_PACKED[_opt(p, "kv_packing", 1)],
                  num_q_heads=p.get("num_q_heads"))


@register("RA676")
def ragged_metadata_shapes(p: dict):
    """kv_lens / cu_q_lens of the given shapes for page_indices of max_num_seqs rows (static checks)."""
    max_num_seqs = _opt(p, "max_num_seqs", None)
    if max_num_seqs is None:
        max_num_seqs = _opt(p, "num_cu_q_lens", 3) - 1
    kv_shape = tuple(_opt(p, "kv_lens_shape", (max_num_seqs,)))
    cu_shape = tuple(_opt(p, "cu_q_lens_shape", (max_num_seqs + 1,)))
    q = jnp.ones((16, 1, 128), jnp.float32)
    kv_pages = jnp.ones((8, 16, 2, 128), jnp.float32)
    page_indices = jnp.zeros((max_num_seqs, 4), jnp.int32)

    def f(q, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs):
        return RPA.ragged_paged_attention(q, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs,
                                          num_kv_pages_per_block=2, num_queries_per_block=8)

    return jax.eval_shape(f, q, kv_pages, jnp.full(kv_shape, 16, jnp.int32), page_indices,
                          jnp.zeros(cu_shape, jnp.int32), jnp.array([1], jnp.int32))


@register("RA671")
def ragged_pages_per_seq(p: dict):
    """dynamic_validate_inputs (concrete values) with a page table pages_per_seq wide and two
    sequences, the longest holding max_kv_len tokens in pages of page_size."""
    pages, size, longest = p["pages_per_seq"], p["page_size"], p["max_kv_len"]
    q = jnp.ones((16, 2, 128), jnp.float32)
    kv_pages = jnp.ones((max(16, 2 * pages), size, 4, 128), jnp.float32)
    page_indices = jnp.arange(2 * pages, dtype=jnp.int32).reshape(2, pages)
    return RPA.dynamic_validate_inputs(q, kv_pages, jnp.array([min(20, longest), longest], jnp.int32), page_indices,
                                       jnp.array([0, 6, 16], jnp.int32), jnp.array([2], jnp.int32))


@register("RA672")
def ragged_total_q_tokens(p: dict):
    """dynamic_validate_inputs (concrete values) with q of max_num_batched_tokens rows and one
    sequence of total_q_tokens query tokens."""
    total, rows = p["total_q_tokens"], p["max_num_batched_tokens"]
    q = jnp.ones((rows, 1, 128), jnp.float32)
    kv_pages = jnp.ones((8, 16, 2, 128), jnp.float32)
    return RPA.dynamic_validate_inputs(q, kv_pages, jnp.array([total], jnp.int32), jnp.arange(8, dtype=jnp.int32).reshape(1, 8),
                                       jnp.array([0, total], jnp.int32), jnp.array([1], jnp.int32))

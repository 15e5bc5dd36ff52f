"""Claims of the TPU family's entries (flash, paged, ragged paged attention), held to the real
kernels: what an explanation or a check says happens, happens; what the old text said
and the kernel contradicts, is gone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

sys.path[:0] = [str(Path(__file__).parents[1])]
from errkit.core import expr  # noqa: E402
from support import bundled_catalogue  # noqa: E402
from verify import tpu  # noqa: E402

ENTRIES = bundled_catalogue().by_code()


def test_ra610_head_dim_192_runs_on_the_single_step_path():
    # one block over every key: no multiple-of-128 head_dim needed (lowered and interpreted)
    tpu.flash(q_seq_len=128, kv_seq_len=256, head_dim=192, block_k_major=256, block_k=256)
    with pytest.raises(NotImplementedError, match="head_dim=192 should be a multiple of 128"):
        tpu.flash(q_seq_len=128, kv_seq_len=256, head_dim=192, block_k_major=128, block_k=128)
    entry = ENTRIES["RA610"]
    assert "single-step" in entry.explanation
    assert expr.evaluate(entry.check, {"head_dim": 192, "block_k": 256, "kv_seq_len": 256})
    assert not expr.evaluate(entry.check, {"head_dim": 192, "block_k": 128, "kv_seq_len": 256})


def test_ra609_single_step_path_skips_the_check():
    tpu.flash(q_seq_len=128, kv_seq_len=200, block_k_major=200, block_k=200)
    assert "single-step" in ENTRIES["RA609"].explanation


@pytest.mark.parametrize("packing", [1, 2, 4])
def test_ra682_twelve_combined_heads_tile_for_no_kv_dtype(packing):
    with pytest.raises(ValueError, match="num_combined_kv_heads=12 can not be XLA fully tiled"):
        tpu.ragged(num_combined_kv_heads=12, kv_dtype=tpu._PACKED[packing])
    tpu.ragged(num_combined_kv_heads=16, kv_dtype=tpu._PACKED[packing])
    assert "fail for float32 and\n  bfloat16" not in ENTRIES["RA682"].explanation
    assert "fail for every dtype" in ENTRIES["RA682"].explanation


def test_ra680_one_block_size_given_still_means_the_tuned_table():
    """With either size None, the kernel looks both up (on a CPU: RA683), the given one is not used."""
    for given in ({"num_kv_pages_per_block": 2, "num_queries_per_block": None},
                  {"num_kv_pages_per_block": None, "num_queries_per_block": 8}):
        with pytest.raises(NotImplementedError, match="TPU version must be 4 or higher"):
            tpu.ragged(**given)
    assert "When either of them is None" in ENTRIES["RA680"].explanation


def test_ra612_mha_reference_gradient_with_a_scale_fails_too():
    from jax.experimental.pallas.ops.tpu import flash_attention as fa

    x = jnp.ones((1, 1, 8, 8))
    with pytest.raises(NotImplementedError):
        jax.grad(lambda q: fa.mha_reference(q, x, x, None, sm_scale=0.5).sum())(x)
    jax.grad(lambda q: fa.mha_reference_no_custom_vjp(q, x, x, None, sm_scale=0.5).sum())(x)

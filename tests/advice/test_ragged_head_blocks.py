"""Ragged paged attention's query-head-blocks-sublanes rule (catalog/kernels/tpu-ragged.yaml), which a
TPU v5e taught (scripts/verify_advice_tpu.py, 2026-12-07: RA105's value of 12 kv heads for 12 query
heads with float32 kv_pages, refused by the Pallas TPU lowering), held to the kernel's own head
blocking: `get_min_heads_per_blk` of jax's ragged_paged_attention, called on the CPU for every head
count a generator draws, and the lowering's condition on the query block it gives (its
second-to-last dimension a multiple of 8 or the whole axis). The kernel itself does not lower for
TPU from a CPU, so the chip's error is the one real run; this test checks the rule's every case.
"""

from __future__ import annotations

import pytest

pytest.importorskip("jax")
pytest.importorskip("hypothesis")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from errkit.core import expr, suggest  # noqa: E402
from support import ROOT, bundled_catalogue  # noqa: E402

RULE = "query-head-blocks-sublanes"
PACKING = {"float32": 1, "bfloat16": 2, "int8": 4}


def kernel_blocks_lower(num_q_heads: int, num_kv_heads: int, q_dtype: str, kv_dtype: str) -> bool | None:
    """Whether the query block the kernel picks passes the lowering's tiling (None: the kernel
    refuses the heads itself, before any block is made)."""
    import jax.numpy as jnp
    from jax.experimental.pallas.ops.tpu.ragged_paged_attention import kernel

    try:
        q_heads_per_blk, _ = kernel.get_min_heads_per_blk(num_q_heads, 2 * num_kv_heads, jnp.dtype(q_dtype),
                                                         jnp.dtype(kv_dtype))
    except (ValueError, AssertionError):
        return None
    return q_heads_per_blk % 8 == 0 or q_heads_per_blk == num_q_heads


def rule_holds(num_q_heads: int, num_kv_heads: int, kv_dtype: str) -> bool:
    check = next(r.check for r in bundled_catalogue().kernels["tpu-ragged"].rules if r.name == RULE)
    return expr.evaluate(check, {"num_q_heads": num_q_heads, "num_combined_kv_heads": 2 * num_kv_heads,
                                 "kv_packing": PACKING[kv_dtype]})


@st.composite
def heads(draw):
    num_kv_heads = draw(st.sampled_from([1, 2, 3, 4, 5, 6, 8, 12, 16, 20, 24, 32, 40, 64]))
    ratio = draw(st.sampled_from([1, 1, 2, 3, 4, 5, 7, 8]))
    return (num_kv_heads * ratio, num_kv_heads, draw(st.sampled_from(["float32", "bfloat16"])),
            draw(st.sampled_from(sorted(PACKING))))


@settings(max_examples=300, derandomize=True, deadline=None, database=None)
@given(heads())
def test_the_rule_is_the_kernels_head_blocking(case):
    num_q_heads, num_kv_heads, q_dtype, kv_dtype = case
    lowers = kernel_blocks_lower(num_q_heads, num_kv_heads, q_dtype, kv_dtype)
    if lowers is not None:
        assert rule_holds(num_q_heads, num_kv_heads, kv_dtype) == lowers, case


def test_the_chips_case():
    """12 query heads with 12 float32 kv heads: blocks of 4 query heads, refused on the chip."""
    assert kernel_blocks_lower(12, 12, "float32", "float32") is False
    assert not rule_holds(12, 12, "float32") and rule_holds(12, 12, "bfloat16") and rule_holds(12, 4, "float32")


def test_ra105_no_longer_offers_it():
    """RA105 for `num_q_heads=12 must be divisible by num_kv_heads=5` raised by ragged attention: no
    12 among the values of any case (the chip refused it with float32 kv_pages)."""
    import json

    record = json.loads(json.loads((ROOT / "errkit" / "_index.json").read_text())["entries"]["RA105"])
    for fix in record["fixes"]:
        for s in suggest.suggestions(fix, {"num_q_heads": 12, "num_kv_heads": 5}, kernel="tpu-ragged"):
            values = [s.get("value")] + [c.get("value") for c in s.get("cases") or ()]
            if s.get("sets") == "num_kv_heads":
                assert all(12 not in (v if isinstance(v, list) else [v]) for v in values), s

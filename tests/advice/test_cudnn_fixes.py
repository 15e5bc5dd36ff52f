"""The cuDNN / jax.nn.dot_product_attention family's corrections, checked on the texts users
paste and against the real checks (tests/verify/cudnn.py): the values suggested are ones the kernel
accepts, and the entries describe the branches they come from."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")
sys.path[:0] = [str(Path(__file__).parents[1]), str(Path(__file__).parents[2])]

from support import bundled_catalogue, explain_first, pasted_text, raised_by  # noqa: E402
from verify import cudnn  # noqa: E402, F401 - registers the runners
from verify import RUNNERS  # noqa: E402


def values_for(text: str, sets: str) -> list:
    """The values `errkit explain` suggests for `text` that replace the param `sets`."""
    out = []
    res = explain_first(text)
    for fix in res["fixes"]:
        for s in fix["suggestions"]:
            if s.get("sets") == sets and s["value"] not in (None, []):
                out.extend(s["value"] if isinstance(s["value"], list) else [s["value"]])
    return out


HEAD_DIM = "NotImplementedError: The head dim must be <= {H_max} and a multiple of 8, but got {qH}."


@pytest.mark.parametrize("h_max, qh, want", [
    (128, 256, [128]),   # the old next_multiple(qH, 8) said 256, past the limit in the same `if`; splitting heads gives 128
    (128, 130, []),      # the old one said 136 (> 128): nothing fits, use implementation='xla'
    (256, 130, [136]),   # on Hopper 136 is within the limit
    (128, 12, [16]),
])
def test_ra542_suggestions_stay_within_h_max(h_max, qh, want):
    text = HEAD_DIM.format(H_max=h_max, qH=qh)
    assert explain_first(text)["code"] == "RA542"
    got = values_for(text, "qH")
    assert got == want
    for value in got:  # and the real check accepts each one, on a GPU of that generation
        RUNNERS["RA542"]({"H_max": h_max, "qH": value})


def test_ra542_old_suggestion_fails_the_real_check():
    err = raised_by(lambda: RUNNERS["RA542"]({"H_max": 128, "qH": 256}))
    assert explain_first(pasted_text(err))["code"] == "RA542"


@pytest.mark.parametrize("num_q_heads, num_kv_heads", [(4, 4), (4, 2), (4, 1)])
def test_ra535_fires_for_mha_as_for_gqa(num_q_heads, num_kv_heads):
    """`assert tN == N` in _reshape_to_grouped runs for every head layout on the XLA path, MHA included."""
    err = raised_by(lambda: RUNNERS["RA535"]({"num_q_heads": num_q_heads, "num_kv_heads": num_kv_heads, "mask_heads": 3}))
    assert type(err) is AssertionError
    assert explain_first(pasted_text(err))["code"] == "RA535"
    for heads in (1, num_q_heads):
        RUNNERS["RA535"]({"num_q_heads": num_q_heads, "num_kv_heads": num_kv_heads, "mask_heads": heads})


def test_ra535_explanation_is_scoped_to_the_xla_path_and_covers_mha():
    entry = bundled_catalogue().by_code()["RA535"]
    assert "MHA" in entry.explanation and "XLA path" in entry.explanation
    assert "For grouped-query attention the function reshapes" not in entry.explanation


def test_ra544_suggestions_make_odd_lengths_even_only():
    text = "NotImplementedError: Unsupported sequence length Q 76, KV 77."
    # both lengths together (the old per-length values left S = 77 or T odd): T kept, S padded
    assert values_for(text, "T, S") == [[76, 78]]
    RUNNERS["RA544"]({"T": 76, "S": 78})

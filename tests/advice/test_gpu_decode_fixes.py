"""JAX's Pallas GPU decode and paged attention (RA510-RA516, RA520-RA524): the values the
audit found failing are rejected by the real kernels (interpret mode + CUDA lowering), and the
suggestions computed for the audit's messages no longer offer them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

sys.path[:0] = [str(Path(__file__).parents[1])]
from support import explain_first  # noqa: E402
from verify.gpu_decode import decode, paged  # noqa: E402


def _raises(fn, *args, **kwargs) -> str:
    try:
        fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - whatever the kernel raises is the outcome
        return f"{type(err).__name__}: {err}"
    return ""


def _values(text: str) -> dict:
    res = explain_first(text)
    return {s["label"]: s.get("value") for fix in res["fixes"] for s in fix["suggestions"]}


# What the old suggestions gave, and why each fails on the real kernel.
OLD_FAILURES = [
    (lambda: decode(100, 100), "must be >= 16"),                     # RA511's divisors(100) included 100
    (lambda: decode(100, 6), "must be divisible by"),                # RA511's k_seq_len // 16 = 6
    (lambda: decode(1000, 5), "power of 2"),                         # RA510's divisor 5: 200 keys per split
    (lambda: decode(1000, 8), "power of 2"),                         # 125 keys per split
    (lambda: decode(1008, 16), "power of 2"),                        # RA510's pad to a multiple of 16: 63 per split
    (lambda: decode(1000, 8, 25), "power of 2"),                     # RA513's divisors(125): 25, 125 lower badly
    (lambda: decode(1000, 8, 125), "power of 2"),
    (lambda: decode(1000, 8, 5), "block_k must be >= 16"),           # ... and 1, 5 fail RA512
    (lambda: paged(16, 16, block_h=48), "power of 2"),               # RA523's next multiple of 16 for 40
    (lambda: paged(16, 16, block_h=80), "power of 2"),
]


@pytest.mark.parametrize("n", range(len(OLD_FAILURES)))
def test_the_audits_values_fail_on_the_real_kernel(n):
    call, want = OLD_FAILURES[n]
    assert want in _raises(call)


def test_ra510_ra511_offer_only_power_of_two_splits_or_a_pad():
    got = _values("AssertionError: k_seq_len=1000 must be divisible by k_splits=16")
    assert got["k_splits giving power-of-two splits of >= 16 keys (none: pad k_seq_len)"] == []
    assert got["k_seq_len padded to k_splits power-of-two splits"] == [1024]
    got = _values("AssertionError: k_seq_len=100 divided by k_splits=10 must be >= 16.")
    assert got["k_splits giving power-of-two splits of >= 16 keys (none: pad k_seq_len)"] == []
    assert got["k_seq_len padded to k_splits power-of-two splits"] == [160]
    assert not _raises(decode, 1024, 16) and not _raises(decode, 160, 10)


def test_ra513_offers_no_block_that_fails_lowering():
    got = _values("AssertionError: Sequence length (k_seq_len=1000) split by k_splits=8 must by divisible by block_k=64")
    assert got["block_k values that tile a split (none: pad k_seq_len)"] == []
    assert got["k_seq_len padded to a multiple of k_splits * block_k (none: make block_k a power of two)"] == [1024]
    assert not _raises(decode, 1024, 8, 64)


def test_ra523_offers_powers_of_two():
    assert _values("ValueError: block_h must divisible by 16, but is 40.")["nearest valid block_h"] == [32, 64]
    assert not _raises(paged, 16, 16, block_h=32) and not _raises(paged, 16, 16, block_h=64)

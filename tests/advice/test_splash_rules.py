"""Splash attention: the rules of catalog/kernels/splash.yaml that only the TPU lowering
enforces hold as declared (a value breaking one fails lowering from the CPU, one keeping it
lowers), and the suggestions the issue found wrong now give values that run.

The kernel calls are tests/verify/splash.py's (traced under TPU interpret mode, lowered for TPU).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

sys.path[:0] = [str(Path(__file__).parents[1])]
from verify import splash as S  # noqa: E402

from errkit.core import suggest  # noqa: E402
from errkit.explain.matching.index import Index  # noqa: E402
from support import bundled_catalogue  # noqa: E402

LOWERING = "Pallas TPU lowering"
BWD = dict(block_q_dkv=128, block_kv_dkv=128, block_q_dq=128, block_kv_dq=128)

# rule -> (a configuration breaking only it, one keeping it)
LOWERING_RULES = {
    "query-block-sublanes": [(dict(block_q=4), dict(block_q=8)),
                             (dict(q_seq_len=100, block_q=50), dict(q_seq_len=100, block_q=100))],
    "dkv-query-block-lanes": [(dict(BWD, block_q_dkv=64), dict(BWD, block_q_dkv=128)),
                              (dict(BWD, block_q=64, block_q_dkv=64), dict(BWD, q_seq_len=64, block_q=64, block_q_dkv=64, block_q_dq=64))],
    "dq-query-block-lanes": [(dict(BWD, block_q_dq=8), dict(BWD, q_seq_len=192, block_q=64, block_q_dkv=192, block_q_dq=192))],
    "dkv-key-block-sublanes": [(dict(BWD, block_kv_dkv=4), dict(BWD, block_kv_dkv=8))],
}


def _raised(**cfg):
    try:
        S.splash(**cfg)
    except Exception as err:  # noqa: BLE001 - whatever the kernel raises is the outcome
        return err
    return None


def test_every_lowering_rule_has_a_case():
    kernel = bundled_catalogue().kernels["splash"]
    assert {r.name for r in kernel.rules if r.enforced == "lowering"} == set(LOWERING_RULES)


@pytest.mark.parametrize("rule", sorted(LOWERING_RULES))
def test_lowering_rule_holds_as_declared(rule):
    for breaking, keeping in LOWERING_RULES[rule]:
        err = _raised(**breaking)
        assert err is not None and LOWERING in str(err), (rule, breaking, err)
        assert _raised(**keeping) is None, (rule, keeping, _raised(**keeping))


def test_the_segment_ids_rule_on_the_dkv_query_block_holds_as_declared():
    """dkv-query-block-lanes-with-segment-ids: a whole query length of 200 as block_q_dkv is taken
    without segment ids and refused with them (RA703), a multiple of 128 is taken with them."""
    rule = next(r for r in bundled_catalogue().kernels["splash"].rules if r.name == "dkv-query-block-lanes-with-segment-ids")
    whole = dict(BWD, q_seq_len=200, block_q=200, block_q_dkv=200, block_q_dq=200)
    assert _raised(**whole) is None
    err = _raised(segment_ids=True, **whole)
    assert isinstance(err, NotImplementedError) and "block_q must be a multiple of 128" in str(err)
    assert _raised(segment_ids=True, **dict(BWD, q_seq_len=256, block_q_dkv=128)) is None
    assert "not segment_ids" in rule.check


def _suggested(code: str, params: dict) -> dict:
    data = Index.load().entries[code]
    return {s["label"]: s.get("value") for fix in data["fixes"] for s in suggest.suggestions(fix, params)}


# The evidence: (entry, params of the bad example, what the old suggestion gave, the runner's params for a value)
def test_ra702_no_longer_suggests_a_block_that_does_not_divide_the_keys():
    # old: next_multiple(192, 128) = 256, and kv_seq_len 384 % 256 != 0
    values = _suggested("RA702", {"bkv_compute": 192, "NUM_LANES": 128, "kv_seq_len": 384})
    forward = [v for label, v in values.items() if label.startswith("block_kv (")]
    assert forward == [[128, 384]]
    for block in forward[0]:
        assert _raised(kv_seq_len=384, block_kv=block) is None


def test_ra708_suggests_only_multiples_of_128():
    # old: divisors(320) (1 .. 160) and gcd(320, 128) = 64
    values = _suggested("RA708", {"bkv": 320, "bkv_compute": 128, "kv_seq_len": 640})
    lists = [v for v in values.values() if isinstance(v, list)]
    assert lists and all(b % 128 == 0 for v in lists for b in v)
    assert values["valid key blocks for this compute block (when kv_seq_len is given)"] == [128, 640]


def test_ra710_suggests_blocks_the_backward_kernels_lower():
    # old: divisors(256) and gcd(256, 96) = 32: 8 .. 64 lower for the forward pass only
    values = _suggested("RA710", {"q_block_size": 96, "q_seq_len": 256})
    # 256 is the whole length: refused per shard with q_seq_shards=2, offered as that case's value
    assert values["valid query blocks (none: pad the queries)"] == [128]
    assert _raised(**dict(BWD, block_q=8, block_q_dkv=8, block_q_dq=8)) is not None
    assert _raised(block_q=8) is None  # the forward pass alone takes 8

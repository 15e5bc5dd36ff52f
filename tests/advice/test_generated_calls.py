"""Advice held to the real kernels on bad calls nobody wrote by hand: for each kernel family, a small
seeded sample of the bad calls its generator draws (tests/verify/calls) is run on the real kernel,
the error explained, every offered value and snippet change applied to the same call, and the call
run again. A value that then fails is a failure naming the entry, the call and what the kernel said.
scripts/verify_advice.py runs thousands; this keeps a few per family in the suite."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")
pytest.importorskip("hypothesis")

sys.path[:0] = [str(Path(__file__).parents[1]), str(Path(__file__).parents[2])]
from verify import calls  # noqa: E402

FAMILIES = calls.load_families()
PER_FAMILY = 3
SEED = 4747


def describe(attempt) -> str:
    lines = []
    for t in attempt.failures():
        lines.append(f"{t.code} fix {t.fix} {t.label!r}: {t.param}={t.value!r} on {attempt.call} -> {t.said}")
    for t in attempt.tried:
        if t.outcome == "base-refused":
            lines.append(f"the generator's base call {attempt.base} is refused by the kernel (a generator bug)")
    return "\n".join(lines)


@pytest.mark.parametrize("name", sorted(n for n, f in FAMILIES.items() if "cpu" in f.platforms))
def test_every_offered_value_makes_a_generated_bad_call_run(name):
    attempts = calls.sample(FAMILIES[name], PER_FAMILY, SEED)
    assert attempts, f"{name}: the generator drew no call"
    bad = [describe(a) for a in attempts if describe(a)]
    assert not bad, "\n".join(bad)
    unexplained = [a.error for a in attempts if a.outcome == "unexplained"]
    assert not unexplained, f"{name}: errors errkit does not explain: {unexplained}"


def test_the_sample_tries_values():
    """The sample is not empty of advice: some family's calls get values applied and run."""
    tried = [t for name in ("ragged", "cudnn") for a in calls.sample(FAMILIES[name], PER_FAMILY, SEED) for t in a.tried]
    assert any(t.outcome == "worked" for t in tried)


def test_a_wrong_value_is_caught():
    """The harness is not vacuous: a value that breaks another rule of the kernel is a failure."""
    fam = FAMILIES["ragged"]
    base = {"num_q_heads": 14, "num_kv_heads": 2, "kv_dtype": "bfloat16", "head_dim": 128, "page_size": 16,
            "pages_per_seq": 4, "num_kv_pages_per_block": 2, "num_queries_per_block": 8}
    tried = calls.Tried("RA105", 1, "planted", "num_kv_heads", 7, "value", "")
    calls._check(fam, tried, {**base, "num_kv_heads": 4}, base, "cpu", lambda c: {**c, "num_kv_heads": 7})
    assert tried.outcome == "failed" and "can not be XLA fully tiled" in tried.said

"""Paste mutations as a property (issue 51): every wording of the catalogue, with realistic values,
passed on the way logs and people pass it (tests/mutations.py: worker, rank, pytest and logger
prefixes, text after the message, quotes and markdown, hard wraps, case changes, a value retyped as
`<V>` or `...`, a shortened list) gets the answer of the unaltered text: its entry, exact, with its
values; where the mutation removed a value, still its entry, and no value claimed for what is gone.

Per kind, every wording (about 450), each mutated with choices from a generator hypothesis draws
(derandomized: the same catalogue gives the same texts; about a millisecond a text with the index
loaded once). `python scripts/paste_mutations.py` prints the failures per kind, with the texts. Every wording is
held to every kind; text after a free-text value that ends its wording is judged as
tests/mutations.py RUNS_ON says (nothing in the paste tells such prose from the value).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

import mutations
from support import bundled_catalogue

from errkit.explain.matching.index import Index

SAMPLES = mutations.samples(bundled_catalogue())
INDEX = Index.load()
_REFERENCE: dict[str, dict | None] = {}

def reference(s: mutations.Sample) -> dict | None:
    """The values the unaltered text is answered with (None when that answer is wrong: the wording
    is then left out of every kind, and scripts/paste_mutations.py counts it apart)."""
    if s.key not in _REFERENCE:
        answer = mutations.explain(f"{s.exception}: {s.message}", INDEX)
        _REFERENCE[s.key] = None if mutations.bare_answer(s, answer) else (answer[1].get("params") or {})
    return _REFERENCE[s.key]


def test_every_wording_gets_at_least_20_mutations():
    assert len(SAMPLES) > 400
    rng = random.Random(51)
    fewest = min(len(mutations.mutations(rng, s)) for s in SAMPLES)
    assert fewest >= 20 and len(mutations.KIND_NAMES) >= 25


def test_the_unaltered_wordings_are_answered_right():
    """The reference the kinds are judged against: every wording's own rendering gets its entry (or
    the entry whose wording renders to the very same text), exact with its values (approximate for
    an entry that needs context: other compilers print it), so none is left out of the kinds."""
    wrong = [s.key for s in SAMPLES if reference(s) is None]
    assert wrong == []


@pytest.mark.parametrize("kind", mutations.KIND_NAMES)
def test_a_mutated_paste_gets_the_answer_of_the_unaltered_one(kind):
    applicable = [s for s in SAMPLES if mutations.applies(kind, s) and reference(s) is not None]
    assert len(applicable) > 10

    @settings(derandomize=True, max_examples=1, database=None, deadline=None, phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))  # no shrinking: a failing kind fails on several wordings at once
    @given(rng=st.randoms(use_true_random=True))
    def check(rng):
        failures = []
        for s in applicable:
            text = mutations.mutate(kind, rng, s)
            why = mutations.verdict(text, s, reference(s), mutations.explain(text.text, INDEX))
            if why:
                failures.append((s.key, why, text.text[:200]))
        assert not failures, f"{len(failures)} of {len(applicable)} wordings: {failures[:5]}"

    check()


def _sample(key: str) -> mutations.Sample:
    return next(s for s in SAMPLES if s.key == key)


@pytest.mark.parametrize("after", mutations.AFTER)
def test_a_value_running_to_the_line_end_takes_only_text_nothing_marks_as_not_its_own(after):
    """The text-after verdict, on answers made up for it: RA808's libtpu `reason` ends its wording
    (free text, read to the line's end): with RUNS_ON prose after it, the value alone or with that
    prose is right; anything else, and any other trailer read into it, is wrong; a value that does
    not end its wording never takes the prose."""
    s = _sample("RA808/0")
    text = mutations.Text("text after", mutations.raised(s) + after,
                          runs_on=after if after in mutations.RUNS_ON else "")
    reason = s.params["reason"]

    def verdict(value, code="RA808", rc=0, confidence="exact", sample=s, values=None):
        params = values if values is not None else {"reason": value}
        return mutations.verdict(text, sample, {k: sample.params[k] for k in params},
                                 (rc, {"code": code, "confidence": confidence, "params": params}))

    assert s.line_end == ("reason",)
    assert verdict(reason) is None
    assert (verdict(reason + after) is None) == (after in mutations.RUNS_ON)
    assert verdict(reason[:-2]) is not None
    assert verdict(reason + after + " x") is not None
    assert verdict(reason + after, code="RA800") is not None
    assert verdict(reason, rc=1, confidence="approximate") is not None
    other = next(x for x in SAMPLES if not x.line_end and any(isinstance(v, str) for v in x.params.values()))
    name = next(k for k, v in other.params.items() if isinstance(v, str))
    text = mutations.Text("text after", mutations.raised(other) + after, runs_on=after if after in mutations.RUNS_ON else "")
    assert mutations.verdict(text, other, {name: other.params[name]},
                             (0, {"code": other.code, "confidence": "exact", "params": {name: other.params[name] + after}})) is not None


def test_only_free_text_values_that_end_their_wording_run_to_the_line_end():
    """Sample.line_end: the wordings whose last value is free text (form text or sentence) with no
    fixed text after it, and only those."""
    ends = {s.key: s.line_end for s in SAMPLES if s.line_end}
    assert ends == {"RA808/0": ("reason",), "RA818/0": ("diagnostic",)}

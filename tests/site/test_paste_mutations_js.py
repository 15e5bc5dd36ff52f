"""Paste mutations on the paste page (issue 51): the page's match.js, in node, answers every
mutated wording of tests/mutations.py as the unaltered one, like errkit explain does
(tests/explain/test_paste_mutations.py).

Needs node. Without it these tests skip, except under CI (CI set), where a missing node fails.
"""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

import mutations
from support import ROOT, bundled_catalogue
from errkit.generate.outputs import render_all
from tests.site.test_paste_page_js import ASSETS, CATALOGUE, NODE, Node

SAMPLES = mutations.samples(bundled_catalogue())


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """match.js with the index `errkit generate` writes now, in one node process."""
    if NODE is None:
        reason = "node is not installed (apt-get install -y nodejs): the JavaScript checks need it"
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the JavaScript checks: {reason}")
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("page")
    shutil.copytree(ROOT / ASSETS, root / ASSETS)
    for rel, data in render_all(CATALOGUE).items():
        if rel.parent == ASSETS:
            (root / rel).write_bytes(data)
    session = Node(root / ASSETS)
    bare = session({"cases": [f"{s.exception}: {s.message}" for s in SAMPLES]})["cases"]
    references = {}
    for s, results in zip(SAMPLES, bare):
        answer = mutations.js_answer(results)
        references[s.key] = None if mutations.bare_answer(s, answer) else answer[1]["params"]
    try:
        yield session, references
    finally:
        session.close()


def test_the_page_answers_the_unaltered_wordings_right(page):
    _, references = page
    wrong = [k for k, v in references.items() if v is None]
    assert wrong == []


@pytest.mark.parametrize("kind", mutations.KIND_NAMES)
def test_the_page_answers_a_mutated_paste_as_the_unaltered_one(page, kind):
    session, references = page
    applicable = [s for s in SAMPLES if mutations.applies(kind, s) and references[s.key] is not None]

    @settings(derandomize=True, max_examples=1, database=None, deadline=None, phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(rng=st.randoms(use_true_random=True))
    def check(rng):
        texts = [mutations.mutate(kind, rng, s) for s in applicable]
        answers = session({"cases": [t.text for t in texts]})["cases"]
        failures = [(s.key, why, t.text[:200]) for s, t, results in zip(applicable, texts, answers)
                    if (why := mutations.verdict(t, s, references[s.key], mutations.js_answer(results)))]
        assert not failures, f"{len(failures)} of {len(applicable)} wordings: {failures[:5]}"

    check()

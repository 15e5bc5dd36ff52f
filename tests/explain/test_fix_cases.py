"""A fix's values per case of what the message cannot show (`cases`: query shards, segment ids, the
backward pass): explain gives each case's value after the plain one, only where it differs and only
when the message did not print what the case assumes; text, markdown, HTML and `--json` say it."""

from __future__ import annotations

import io
import json

from errkit.core.suggest import suggestions
from errkit.explain import command
from errkit.explain.render import render

WHOLE_LENGTH = "ValueError: q_block_size=128 should divide q_seq_len=200."  # RA710: 200 is not a multiple of 128
GRAD_CASE = "with segment_ids, under jax.grad"

FIX = {
    "suggest": {"blocks": "[b for b in divisors(n) if b % 128 == 0 or b == n]"},
    "sets": {"blocks": "block"},
    "cases": [{"when": "with segment ids", "assume": {"segment_ids": True},
               "suggest": {"blocks": "[b for b in divisors(n) if b % 128 == 0]"}},
              {"when": "with 2 shards", "assume": {"shards": 2},
               "suggest": {"blocks": "[b for b in divisors(n // shards) if b % 128 == 0 or b == n // shards]"}}],
}


def _answer(text: str) -> dict:
    out = io.StringIO()
    command.run([text], as_json=True, show_all=False, out=out, err=io.StringIO())
    return json.loads(out.getvalue().splitlines()[0])


def test_each_case_that_changes_a_value_is_given_after_it():
    found = suggestions(FIX, {"n": 200, "segment_ids": None, "shards": None})[0]
    assert found["value"] == [200]
    assert found["cases"] == [{"when": "with segment ids", "value": []}, {"when": "with 2 shards", "value": [100]}]


def test_a_case_giving_the_same_value_is_not_repeated():
    found = suggestions(FIX, {"n": 256, "segment_ids": None, "shards": None})[0]
    assert found["value"] == [128, 256]
    assert found["cases"] == [{"when": "with 2 shards", "value": [128]}]  # segment ids change nothing at 256


def test_a_case_whose_assumption_the_message_printed_is_left_out():
    found = suggestions(FIX, {"n": 200, "segment_ids": None, "shards": 4})[0]
    assert [c["when"] for c in found["cases"]] == ["with segment ids"]


def test_explain_gives_the_case_in_every_format():
    res = _answer(WHOLE_LENGTH)
    fix = res["fixes"][0]["suggestions"][0]
    assert fix["value"] == [200] and fix["cases"] == [{"when": GRAD_CASE, "value": []}]
    assert f"{GRAD_CASE}: none satisfies every constraint" in render(res, "text")
    assert f"    - {GRAD_CASE}: none satisfies every constraint" in render(res, "markdown")
    assert f"{GRAD_CASE}: none satisfies every constraint" in render(res, "html")


def test_markdown_and_html_say_the_wordings_life():
    res = _answer(WHOLE_LENGTH)
    assert "raised since jax 0.4.25" in render(res, "markdown") and "raised since jax 0.4.25" in render(res, "html")

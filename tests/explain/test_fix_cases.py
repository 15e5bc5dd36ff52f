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
    # the label says what none means ("none: pad the queries")
    assert f"{GRAD_CASE}: none\n" in render(res, "text")
    assert f"    - {GRAD_CASE}: none\n" in render(res, "markdown")
    assert f"{GRAD_CASE}: none</li>" in render(res, "html") or f"{GRAD_CASE}: none<" in render(res, "html")


def test_markdown_and_html_say_the_wordings_life():
    res = _answer(WHOLE_LENGTH)
    assert "raised since jax 0.4.25" in render(res, "markdown") and "raised since jax 0.4.25" in render(res, "html")


def test_a_value_the_message_lacks_is_given_per_case():
    """RA556's message does not say whether the call is under jax.grad: no plain value, each case's."""
    res = _answer("ValueError: Unsupported sequence length Q 1000, KV 1024 and head dim 72 for FP8.")
    by_label = {s["label"]: s for s in res["fixes"][0]["suggestions"]}
    training = by_label["T padded to a multiple of 128 (training; none: T already is one)"]
    inference = by_label["head dim for FP8 inference (none: above 256, use bfloat16)"]
    assert "needs" in training and training["cases"] == [{"when": "in training (under jax.grad)", "value": [1024]}]
    assert inference["cases"] == [{"when": "in inference (no jax.grad)", "value": [80]}]
    text = render(res, "text")
    assert "depends on what the message does not show" in text and "in inference (no jax.grad): 80" in text


def test_an_empty_value_whose_label_says_what_none_means_says_none():
    res = _answer("ValueError: BlockSizes block_q and block_kv must be powers of two in [16, 1024], got block_q=48, block_kv=64")
    text = render(res, "text")
    assert "nearest valid block_q (none: block_q is valid): 32, 64" in text  # computed: no name the message lacks
    assert "nearest valid block_kv (none: block_kv is valid): none\n" in text


def test_a_value_no_wording_prints_is_named_and_another_wordings_suggestion_is_not():
    lacking = {s["label"]: s for s in _answer("NotImplementedError: block_q must be a multiple of 128")["fixes"][0]["suggestions"]}
    assert [s.get("missing") for s in lacking.values()] == [["q_seq_len"]]  # RA703: the message never prints it
    assert "needs q_seq_len, which the message does not show" in render(_answer("NotImplementedError: block_q must be a multiple of 128"), "text")
    other = [s for fix in _answer("ValueError: q_block_size=96 should divide q_seq_len=256.")["fixes"] for s in fix["suggestions"]]
    assert [s for s in other if "needs" in s] and not [s for s in other if s.get("missing")]  # the per-shard wording's

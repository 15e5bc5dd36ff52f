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
FORWARD_CASE = "without q_seq_shards, without segment_ids, forward only"  # the kernel's cases (catalog/kernels/splash.yaml)

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
    # no block valid in every case (the backward kernels and segment ids want multiples of 128): per case
    assert fix["value"] == [] and fix["cases"][0] == {"when": FORWARD_CASE, "value": [8, 40, 200]}
    assert f"{FORWARD_CASE}: 8, 40, 200\n" in render(res, "text")
    assert f"    - {FORWARD_CASE}: 8, 40, 200\n" in render(res, "markdown")
    assert f"{FORWARD_CASE}: 8, 40, 200<" in render(res, "html")


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
    assert "valid query blocks (none: pad the queries): none\n" in render(_answer(WHOLE_LENGTH), "text")
    res = _answer("ValueError: BlockSizes block_q and block_kv must be powers of two in [16, 1024], got block_q=48, block_kv=64")
    assert "block_q, block_kv (together: each the nearest valid size up, a valid one kept): (64, 64)\n" in render(res, "text")


def test_a_value_no_wording_prints_is_named_and_another_wordings_suggestion_is_not():
    lacking = {s["label"]: s for s in _answer("NotImplementedError: block_q must be a multiple of 128")["fixes"][0]["suggestions"]}
    assert [s.get("missing") for s in lacking.values()] == [["q_seq_len"]]  # RA703: the message never prints it
    assert "needs q_seq_len, which the message does not show" in render(_answer("NotImplementedError: block_q must be a multiple of 128"), "text")
    other = [s for fix in _answer("ValueError: q_block_size=96 should divide q_seq_len=256.")["fixes"] for s in fix["suggestions"]]
    assert [s for s in other if "needs" in s] and not [s for s in other if s.get("missing")]  # the per-shard wording's


# -- the cases covering every combination of what the message cannot show (issue 47) --------------

def _partition_fix(regardless: bool) -> dict:
    """Blocks dividing n, per combination of steps and jax.grad: under jax.grad with three steps none
    fits (`regardless`: whatever n is, as a shared-memory bound does; else n leaves none)."""
    def case(when, assume, source, none_whatever=False):
        record = {"when": when, "assume": assume, "suggest": {"blocks": source}, "partition": True}
        if none_whatever:
            record["regardless"] = ["blocks"]
        return record

    return {
        "suggest": {"blocks": "[]"},
        "sets": {"blocks": "block"},
        "cases": [case("forward only, two steps", {"grad": False, "steps": 2}, "[b for b in divisors(n) if b % 64 == 0]"),
                  case("forward only, three steps", {"grad": False, "steps": 3}, "[b for b in divisors(n) if b % 64 == 0]"),
                  case("under jax.grad, two steps", {"grad": True, "steps": 2}, "[b for b in divisors(n) if b == 64]"),
                  case("under jax.grad, three steps", {"grad": True, "steps": 3}, "[]", regardless)],
    }


def test_where_no_value_fits_whatever_the_message_shows_the_value_valid_wherever_any_is_is_offered():
    [found] = suggestions(_partition_fix(regardless=True), {"n": 256})
    assert found["value"] == [64]
    assert found["cases"] == [{"when": "under jax.grad, three steps", "value": []}]


def test_where_the_message_leaves_no_value_each_case_is_given():
    [found] = suggestions(_partition_fix(regardless=False), {"n": 256})
    assert found["value"] == []
    assert [(c["when"], c["value"]) for c in found["cases"]] == [
        ("forward only, two steps", [64, 128, 256]), ("forward only, three steps", [64, 128, 256]),
        ("under jax.grad, two steps", [64]), ("under jax.grad, three steps", [])]


def test_cases_of_one_value_are_one_line_and_most_of_them_the_other_cases():
    from errkit.explain.render import case_values

    label = "blocks"
    cases = [{"when": f"case {n}", "value": [128]} for n in range(5)] + [
        {"when": "case 5", "value": []}, {"when": "case 6", "value": []}, {"when": "case 7", "not_computed": "too big"}]
    assert case_values({"label": label, "cases": cases}) == [
        "case 5; case 6: none satisfies every constraint", "case 7: not computed: too big",
        "in the other 5 cases: 128"]
    few = cases[:3] + cases[5:7]  # three of one value: not "most" enough to be the other cases
    assert case_values({"label": label, "cases": few}) == [
        "case 0; case 1; case 2: 128", "case 5; case 6: none satisfies every constraint"]


def test_a_needed_value_is_named_only_where_the_expression_reads_it_as_a_whole_word():
    """answer.missing_named: a suggestion that needs values the message lacks names each one its
    expression reads; a name inside a longer identifier (`seq_len` in `kv_seq_len`) or an
    attribute-like run is not one it reads."""
    from errkit.explain.answer import missing_named

    declared = {"seq_len": {}, "kv_seq_len": {}, "block": {}, "heads": {}}
    found = [{"label": "a", "needs": "next_multiple(kv_seq_len, block) + heads_total"},
             {"label": "b", "needs": "seq_len*2+(block)"}, {"label": "c", "value": 3}]
    missing_named(found, declared, {"block": 128}, frozenset())
    assert [s.get("missing") for s in found] == [["kv_seq_len"], ["seq_len"], None]

"""The matcher's prefilter: each wording's key, the regex of all keys over raw bytes, the lines it
picks (reading across chunks: tests/explain/matching/test_chunks.py)."""

from __future__ import annotations

import json
import re

import pytest

from errkit.explain.matching.chunks import explain_chunks
from errkit.catalogue import wordings
from errkit.generate.index import choose_keys, key_candidates
from errkit.explain.matching.index import Index
from errkit.explain.matching.keys import key_pattern
from errkit.explain.matching.line import LineReader
from support import FIXTURES, bundled_catalogue

from errkit.catalogue.load import load
from errkit.generate import index as index_gen

CATALOGUE = bundled_catalogue()
WORDINGS = [w for e in CATALOGUE.entries for w in wordings.wordings(e)]
INDEX = Index.load()
NOISE = [
    "2026-11-29 10:00:00,001 INFO trainer: Return the number of items; the result should not be empty.",
    "2026-11-29 10:00:00,002 INFO trainer: step 12 loss=0.4213 lr=3e-4 tokens=51234",
    "2026-11-29 10:00:00,003 DEBUG data: the block of 128 tokens must be a multiple of the page size",
]


def _renderings(wording):
    for params in wordings.sample_params(wording.entry):
        try:
            yield wording.render(params)
        except (KeyError, ValueError, TypeError):
            continue


def _index_wording(wording) -> dict:
    return next(w for w in INDEX.wordings if w["code"] == wording.entry.code and w["variant"] == wording.index)


@pytest.mark.parametrize("wording", WORDINGS, ids=lambda w: f"{w.entry.code}-v{w.index}")
def test_every_rendering_holds_its_wordings_key(wording):
    key = _index_wording(wording)["key"]
    if key is None:  # no fixed text of 3+ characters: recognised by its raise site or on lines naming an exception
        assert not key_candidates(wording)
        return
    for text in _renderings(wording):
        assert re.search(key_pattern(key), text), (key, text)


def test_phrase_keys_allow_any_whitespace_between_their_words():
    phrased = [w for w in WORDINGS if (_index_wording(w)["key"] or "").count(" ")]
    assert len(phrased) > 20  # most upstream wordings have no code-like token
    for wording in phrased:
        key = _index_wording(wording)["key"]
        text = next(iter(_renderings(wording)), None)
        if text is None or key not in text:
            continue
        spaced = text.replace(key, key.replace(" ", " \t "), 1)
        found, _, _ = explain_chunks(INDEX, ["ValueError: " + spaced + "\n"])
        assert found and found[0].match.code == wording.entry.code, (key, spaced)


def test_only_lines_holding_a_key_are_read(monkeypatch):
    read = []
    original = LineReader.match_line

    def spy(self, line, line_no=0):
        read.append(line_no)
        return original(self, line, line_no)

    monkeypatch.setattr(LineReader, "match_line", spy)
    lines = NOISE * 50 + ["ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8"] + NOISE * 50
    found, _, _ = explain_chunks(Index.load(), ["\n".join(lines) + "\n"])
    assert [f.match.code for f in found] == ["RA105"]
    assert read == [151]  # the noise (English prose and a near-miss of a wording) is never matched


def test_keys_prefer_code_like_tokens_then_phrases_then_words_nobody_shares():
    assert choose_keys([{"must", "be", "num_q_heads=", "must be"}]) == ["num_q_heads="]
    assert choose_keys([{"must", "should", "must be divisible"}]) == ["must be divisible"]
    # a key many wordings share makes every line holding it try them all: a rarer one wins
    shared = {"block_size=", "block_size must"}
    keys = choose_keys([shared | {f"only{i} here"} for i in range(30)])
    assert "block_size=" not in keys
    assert choose_keys([set()]) == [None]


def test_json_log_lines_are_read_as_the_strings_they_hold():
    import json

    message = 'Unsupported qkv_layout: "BHSD"'  # quotes JSON escapes
    lines = [
        json.dumps({"time": "2026-11-29T10:00:00", "level": "error", "msg": f"ValueError: {message}"}),
        json.dumps({"level": "error", "msg": "step failed", "exc_info": "Traceback (most recent call last):\n"
                    '  File "train.py", line 3, in <module>\nValueError: num_q_heads=12 must be divisible by and num_kv_heads=8'}),
    ]
    found, _, _ = explain_chunks(Index.load(), ["\n".join(lines) + "\n"])
    got = {f.match.code: (f.match.params, f.last_line) for f in found}
    assert got == {"RA550": ({"layout": "BHSD"}, 1), "RA105": ({"num_q_heads": 12, "num_kv_heads": 8}, 2)}


def test_a_remembered_message_with_values_read_after_it_is_another_answer():
    """Matches of one remembered message share its values and their key; values read from the
    lines after one of them make it another answer (planted: the key kept from before its values
    were read -> the two are counted as one)."""
    kernels = Index(json.loads(json.dumps(index_gen.build(load(FIXTURES / "kernels").catalogue))))
    header = "RuntimeError: kernel compile failed: out of scratch memory\n"
    dump = '\nThe dump:\n  %12 = failing op: "tpu.matmul"(%3, %4)\n  scratch 19.85M of 16.00M\n'
    noise = "\n".join(NOISE * 200) + "\n"
    found, _, _ = explain_chunks(kernels, [(header + noise + header + dump + noise + header + noise).encode()])
    assert sorted((f.count, sorted(f.match.params)) for f in found) == [(1, ["limit", "operation", "used"]), (2, [])]

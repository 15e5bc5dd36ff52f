"""The matcher's prefilter: each wording's key, the regex of all keys over raw bytes, line counting
across chunks."""

from __future__ import annotations

import json
import random
import re

import pytest

from errkit.explain import match, reading
from errkit.catalogue import wordings
from errkit.generate.index import choose_keys, key_candidates
from errkit.explain.match import Index
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
        found, _, _ = match.explain_chunks(INDEX, ["ValueError: " + spaced + "\n"])
        assert found and found[0].match.code == wording.entry.code, (key, spaced)


def test_only_lines_holding_a_key_are_read(monkeypatch):
    read = []
    original = LineReader.match_line

    def spy(self, line, line_no=0):
        read.append(line_no)
        return original(self, line, line_no)

    monkeypatch.setattr(LineReader, "match_line", spy)
    lines = NOISE * 50 + ["ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8"] + NOISE * 50
    found, _, _ = match.explain_chunks(Index.load(), ["\n".join(lines) + "\n"])
    assert [f.match.code for f in found] == ["RA105"]
    assert read == [151]  # the noise (English prose and a near-miss of a wording) is never matched


def test_line_numbers_are_the_same_whatever_the_chunks():
    rng = random.Random(0)
    errors = {}
    lines = []
    for i in range(1, 3001):
        if i % 97 == 0:
            errors[i] = f"ValueError: num_q_heads={i} must be divisible by and num_kv_heads=7"
            lines.append(errors[i])
        else:
            lines.append(rng.choice(NOISE))
    data = ("\n".join(lines) + "\n").encode()
    cuts = sorted(rng.sample([m.end() for m in re.finditer(b"\n", data)], 40))
    chunks = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
    for parts in ([data], chunks):
        found, _, _ = match.explain_chunks(Index.load(), parts)
        assert {f.last_line: f.match.params["num_q_heads"] for f in found} == {i: i for i in errors}


def test_chunks_cut_inside_lines_and_characters_give_the_answers_of_the_whole_input():
    """A file is read in blocks as they come (errkit/explain/reading.py line_chunks): a block may
    end inside a line, or inside a character; the lines cut across are read with the next block."""
    rng = random.Random(1)
    lines = [rng.choice(NOISE) + " été" for _ in range(3000)]
    for i in range(97, 3000, 97):
        lines[i] = f"2026-11-29 10:00:00,{i:03d} ERROR café: ValueError: num_q_heads={i} must be divisible by and num_kv_heads=7"
    data = ("\n".join(lines) + "\n").encode()
    inside = [c for c in range(len(data)) if 0x80 <= data[c] < 0xC0]  # inside a character
    cuts = sorted({inside[0], *rng.sample(inside, 20), *rng.sample(range(1, len(data)), 40)})
    assert cuts[0] < 8192  # the first block too, where the input is checked for UTF-8
    chunks = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
    index = Index.load()
    whole, warned = _answers(index, [data]), []
    assert len(whole) == 30
    found, _, _ = match.explain_chunks(index, reading.line_chunks(iter(chunks)), warned.append)
    assert sorted((f.match.code, f.last_line, f.count, f.match.key()[1], f.match.wording.get("location") or "",
                   f.match.kernel) for f in found) == whole
    assert warned == []


def _answers(index, parts) -> list[tuple]:
    found, _, _ = match.explain_chunks(index, parts)
    return sorted((f.match.code, f.last_line, f.count, f.match.key()[1], f.match.wording.get("location") or "", f.match.kernel)
                  for f in found)


def test_the_windows_around_a_match_are_read_across_where_chunks_end():
    """A traceback's frames that tell which kernel raised a message (before it), a compiler dump's
    values (after it) and one error printed over two lines (one answer) are read even when the
    input's chunks end between them and the message: a chunk per line gives the answers of the
    whole input."""
    raised = ("Traceback (most recent call last):\n"
              '  File "/venv/lib/python3.12/site-packages/jax/experimental/pallas/ops/tpu/ragged_paged_attention/kernel.py",'
              " line 212, in static_validate_inputs\n"
              '    raise ValueError(f"{num_q_heads=} must be divisible by {num_kv_heads=}")\n'
              "ValueError: num_q_heads=12 must be divisible by num_kv_heads=8\n")
    dump = ("RuntimeError: kernel compile failed: out of scratch memory\n\nThe dump:\n"
            '  %12 = failing op: "tpu.matmul"(%3, %4)\n  allocation in tiles_kernel.3\n  scratch 19.85M of 16.00M\n')
    cudnn = ("E0101 cuda_dnn.cc:429] Loaded runtime CuDNN library: 8.5.0 but source was compiled with: 8.6.0.\n"
             "E1126 13:04:33.173027 1713450 cuda_dnn.cc:535] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n"
             "E1126 13:04:33.173300 1713450 cuda_dnn.cc:539] Memory usage: 11372396544 bytes free, 11539054592 bytes total.\n")
    noise = "\n".join(NOISE * 200) + "\n"  # 40 KB: more than a window, so a chunk per line is scanned in many rounds
    text = (noise + raised + noise + dump + noise + cudnn + noise).encode()
    lines = text.splitlines(keepends=True)
    kernels = Index(json.loads(json.dumps(index_gen.build(load(FIXTURES / "kernels").catalogue))))
    for index in (Index.load(), kernels):
        whole = _answers(index, [text])
        assert whole and whole == _answers(index, lines)
    assert [(a[2], a[3]) for a in _answers(Index.load(), lines) if a[0] == "RA827"] == [
        (1, "[('compiled_cudnn', '8.6.0'), ('free_bytes', 11372396544), ('runtime_cudnn', '8.5.0'), "
            "('status', 'CUDNN_STATUS_INTERNAL_ERROR'), ('total_bytes', 11539054592)]")]
    assert [a[4].split(":")[0] for a in _answers(Index.load(), lines) if a[0] == "RA105"] == [
        "jax/experimental/pallas/ops/tpu/ragged_paged_attention/kernel.py"]
    assert [(a[3], a[5]) for a in _answers(kernels, lines)] == [
        ("[('limit', 16777216), ('operation', 'tpu.matmul'), ('used', 20814234)]", "tiles")]


def test_undecodable_bytes_are_reported_where_they_matter():
    noise = ("\n".join(NOISE * 200) + "\n").encode()
    assert len(noise) > 8192
    error = b"ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8\n"

    def warnings(data: bytes) -> list[str]:
        heard = []
        found, _, _ = match.explain_chunks(Index.load(), [data], warn=heard.append)
        assert [f.match.code for f in found] == ["RA105"]
        return heard

    assert warnings(b"\xff\xfe head\n" + noise + error)  # the start of the input is not UTF-8
    assert warnings(noise + b"\xc3\x28 " + error)  # a line read further is not UTF-8
    assert warnings(noise + b"noise \xc3\x28 never read\n" + error) == []  # nothing read was affected


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
    found, _, _ = match.explain_chunks(Index.load(), ["\n".join(lines) + "\n"])
    got = {f.match.code: (f.match.params, f.last_line) for f in found}
    assert got == {"RA550": ({"layout": "BHSD"}, 1), "RA105": ({"num_q_heads": 12, "num_kv_heads": 8}, 2)}


def test_a_line_with_no_end_in_sight_is_not_held_whole(monkeypatch):
    """Lines are held back until their end is read, LONGEST_CARRY bytes at most: a log with no
    newline for that long is scanned as it comes (memory flat in its size) and still matched
    (planted: no such bound -> the scanned blocks grow with the input)."""
    monkeypatch.setattr(match, "LONGEST_CARRY", 64 << 10)
    sizes = []
    original = match.scan

    def spy(index, data, *args, **kwargs):
        sizes.append(len(data))
        return original(index, data, *args, **kwargs)

    monkeypatch.setattr(match, "scan", spy)
    error = b" ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8 "
    chunks = [b"a" * 16384] * 60 + [error] + [b"b" * 16384] * 60 + [b"\n" + "\n".join(NOISE).encode() + b"\n"]
    found, _, _ = match.explain_chunks(Index.load(), chunks)
    assert [f.match.code for f in found] == ["RA105"]
    assert max(sizes) <= (64 << 10) + match.GATHER + 16384 + match.TIE_CONTEXT


def test_a_remembered_message_with_values_read_after_it_is_another_answer():
    """Matches of one remembered message share its values and their key; values read from the
    lines after one of them make it another answer (planted: the key kept from before its values
    were read -> the two are counted as one)."""
    kernels = Index(json.loads(json.dumps(index_gen.build(load(FIXTURES / "kernels").catalogue))))
    header = "RuntimeError: kernel compile failed: out of scratch memory\n"
    dump = '\nThe dump:\n  %12 = failing op: "tpu.matmul"(%3, %4)\n  scratch 19.85M of 16.00M\n'
    noise = "\n".join(NOISE * 200) + "\n"
    found, _, _ = match.explain_chunks(kernels, [(header + noise + header + dump + noise + header + noise).encode()])
    assert sorted((f.count, sorted(f.match.params)) for f in found) == [(1, ["limit", "operation", "used"]), (2, [])]

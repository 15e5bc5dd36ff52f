"""The chunks room (errkit/explain/matching/chunks.py): a whole input read in chunks gives the
answers of the whole input, wherever the chunks end; the distinct answers counted."""

from __future__ import annotations

import json
import random
import re

from hypothesis import given, settings, strategies as st

from errkit.catalogue.load import load
from errkit.core.index_format import TIE_CONTEXT
from errkit.explain import reading
from errkit.explain.matching.index import Index
from errkit.explain.matching import chunks
from errkit.explain.matching.chunks import GATHER, explain_chunks, unprefixed
from errkit.generate import index as index_gen
from support import FIXTURES

NOISE = [
    "2026-11-29 10:00:00,001 INFO trainer: Return the number of items; the result should not be empty.",
    "2026-11-29 10:00:00,002 INFO trainer: step 12 loss=0.4213 lr=3e-4 tokens=51234",
    "2026-11-29 10:00:00,003 DEBUG data: the block of 128 tokens must be a multiple of the page size",
]


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
        found, _, _ = explain_chunks(Index.load(), parts)
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
    found, _, _ = explain_chunks(index, reading.line_chunks(iter(chunks)), warned.append)
    assert sorted((f.match.code, f.last_line, f.count, f.match.key()[1], f.match.wording.get("location") or "",
                   f.match.kernel) for f in found) == whole
    assert warned == []


def _answers(index, parts) -> list[tuple]:
    found, _, _ = explain_chunks(index, parts)
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
        found, _, _ = explain_chunks(Index.load(), [data], warn=heard.append)
        assert [f.match.code for f in found] == ["RA105"]
        return heard

    assert warnings(b"\xff\xfe head\n" + noise + error)  # the start of the input is not UTF-8
    assert warnings(noise + b"\xc3\x28 " + error)  # a line read further is not UTF-8
    assert warnings(noise + b"noise \xc3\x28 never read\n" + error) == []  # nothing read was affected


def test_a_line_with_no_end_in_sight_is_not_held_whole(monkeypatch):
    """Lines are held back until their end is read, LONGEST_CARRY bytes at most: a log with no
    newline for that long is scanned as it comes (memory flat in its size) and still matched
    (planted: no such bound -> the scanned blocks grow with the input)."""
    monkeypatch.setattr(chunks, "LONGEST_CARRY", 64 << 10)
    sizes = []
    original = chunks.scan

    def spy(index, data, *args, **kwargs):
        sizes.append(len(data))
        return original(index, data, *args, **kwargs)

    monkeypatch.setattr(chunks, "scan", spy)
    error = b" ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8 "
    parts = [b"a" * 16384] * 60 + [error] + [b"b" * 16384] * 60 + [b"\n" + "\n".join(NOISE).encode() + b"\n"]
    found, _, _ = explain_chunks(Index.load(), parts)
    assert [f.match.code for f in found] == ["RA105"]
    assert max(sizes) <= (64 << 10) + GATHER + 16384 + TIE_CONTEXT


def test_each_distinct_answer_is_counted_most_recent_first_with_the_tail_and_whether_text_was_seen():
    text = ("ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8\n" * 2
            + "ValueError: q, k and v must all be 4D [batch, seq_len, num_heads, head_dim], got: q_ndim=3, k_ndim=4, v_ndim=4\n"
            + "last line\n")
    found, tail, seen = explain_chunks(Index.load(), [text])
    assert [(f.match.code, f.count, f.last_line) for f in found] == [("RA101", 1, 3), ("RA105", 2, 2)]
    assert tail.endswith("last line\n") and tail.first_line == 1 and seen
    assert explain_chunks(Index.load(), [b"  \n\n"])[2] is False


def test_a_prefix_repeated_on_a_pasted_tracebacks_lines_is_taken_off():
    data = (b"(worker pid=8) Traceback (most recent call last):\n(worker pid=8)   File \"x.py\", line 1, in f\n"
            b"(worker pid=8) ValueError: boom\nother line\n")
    assert unprefixed(data) == b'Traceback (most recent call last):\n  File "x.py", line 1, in f\nValueError: boom\nother line\n'
    group = b"  + Exception Group Traceback (most recent call last):\n  |   File \"x.py\"\n"
    assert unprefixed(group) == group  # an exception group's own layout is kept


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(st.text("ab \n", max_size=300).map(str.encode), min_size=1, max_size=12))
def test_the_tail_is_the_inputs_last_bytes_whatever_its_chunks(pieces):
    """Reading.tail (what the approximate pass reads) is the input's last TAIL bytes, for any
    chunks: one longer than TAIL alone, or several shorter ones together."""
    old = chunks.TAIL
    chunks.TAIL = 100  # (small: chunks longer and shorter than it)
    try:
        reading = chunks.Reading()
        for _ in chunks.scan_chunks(Index.load(), list(pieces), reading=reading):
            pass
    finally:
        chunks.TAIL = old
    assert reading.tail == b"".join(pieces)[-100:]

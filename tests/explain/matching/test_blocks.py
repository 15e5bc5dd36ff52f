"""The blocks room (errkit/explain/matching/blocks.py): one block of text, line by line."""

from __future__ import annotations

from errkit.core.index_format import MAX_LINE
from errkit.explain.matching.index import Index
from errkit.explain.matching.blocks import _read_line, _traceback_end, scan

INDEX = Index.load()
GQA = "ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8"
NOISE = "2026-11-29 10:00:00,000 INFO trainer: the loss went down again\n"


def _found(data, **kwargs) -> list[tuple]:
    return [(m.code, m.line, m.offset) for m in scan(INDEX, data, **kwargs)]


def test_a_block_gives_each_match_with_its_line_and_where_its_line_starts():
    data = (NOISE * 3 + GQA + "\n" + NOISE).encode()
    for paste in (True, False):  # every line read, or those the prefilter finds
        assert _found(data, paste=paste, first_line=10) == [("RA105", 13, len(NOISE) * 3)]


def test_only_the_lines_starting_in_begin_end_are_scanned_and_reached_says_where_it_stopped():
    data = (GQA + "\n" + NOISE + GQA + "\n" + GQA + "\n").encode()
    second = len(GQA) + 1 + len(NOISE)
    reached = [None]
    found = _found(data, paste=False, begin=len(GQA) + 1, end=second + len(GQA) + 1, first_line=2, reached=reached)
    assert found == [("RA105", 3, second)]
    assert reached == [second + len(GQA) + 1]


def test_a_traceback_is_read_at_its_exception_line_and_reached_goes_past_the_end():
    tb = ('Traceback (most recent call last):\n  File "/x/jax/experimental/pallas/ops/gpu/attention.py", line 9, in mha\n'
          "    assert q.shape == k.shape\nAssertionError\n")
    data = (NOISE + tb).encode()
    frame = data.index(b"  File")
    reached = [None]
    found = list(scan(INDEX, data, paste=False, begin=0, end=data.index(b"\n", frame) + 1, reached=reached))
    assert [(m.code, m.line) for m in found] == [("RA502", 5)]
    assert reached[0] == len(data)  # the exception line was read past the block's end


def test_a_paste_joins_a_hard_wrapped_message_a_log_does_not():
    wrapped = (GQA[:40] + "\n" + GQA[40:] + "\n").encode()
    assert [m.code for m in scan(INDEX, wrapped, paste=True)] == ["RA105"]
    assert [m.code for m in scan(INDEX, wrapped, paste=False)] == []


def test_an_undecodable_line_read_is_said_once_per_line():
    data = b"caf\xe9 " + GQA.encode() + b"\nnoise \xff\n"
    said = []
    assert [m.code for m in scan(INDEX, data, paste=True, undecodable=lambda: said.append(1))] == ["RA105"]
    assert said == [1]  # the noise line is not worth reading: not said


def test_a_huge_line_is_read_around_its_hit():
    line = ("x " * MAX_LINE + GQA + " y" * MAX_LINE).encode()
    where = line.index(b"ValueError")
    text = _read_line(line, 0, len(line), where, None)
    assert len(text) == MAX_LINE and GQA in text
    assert [m.code for m in scan(INDEX, line + b"\n", paste=True)] == ["RA105"]


def test_the_end_of_a_traceback_is_its_first_line_naming_an_exception_and_never_the_next_traceback():
    data = b"    frame source\n\nFor simplicity, JAX has removed its internal frames.\n--------------------\nValueError: x\n"
    start, end = _traceback_end(data, 0)
    assert data[start:end] == b"ValueError: x"
    assert _traceback_end(b"    src\nTraceback (most recent call last):\nValueError: x\n", 0) is None
    assert _traceback_end(b"    src\n" * 3 + b"ValueError: x\n", 0, limit=2) is None

"""A log line's answer is remembered for the lines that differ from it only in the digits of their
stamp (errkit/explain/matching/memory.py; a JSON line: its numbers and time-like
strings): the same answers as reading each line, on generated logs of every kind, on every
collected real-world text behind varied stamps and in JSON lines, on messages whose first word is
a number (a value, not a stamp), and on lines that start with a brace but are no JSON."""

from __future__ import annotations

import json

import pytest

from benchmarks import logs
from errkit.explain.matching.index import Index
from errkit.explain.matching.chunks import explain_chunks
from errkit.explain.matching import memory
from errkit.explain.matching.memory import Memory
from errkit.core.index_format import PASTE_SIZE
from tests.realworld import report


@pytest.fixture(scope="module")
def index():
    return Index.load()


def _answers(index: Index, text: str, remember: bool, monkeypatch) -> list:
    with monkeypatch.context() as patch:
        if not remember:
            patch.setattr(memory, "MAX_MEMO_LINE", -1)
        index.room(Memory).clear()
        warned = []
        found, _, _ = explain_chunks(index, [text.encode("utf-8", "surrogateescape")], warned.append)
    return [(f.match.code, f.match.key(), f.match.line, f.count, f.last_line, f.match.text, f.match.span,
             f.match.kernel, f.match.context, f.match.weak) for f in found] + warned


def _stamped(lines: list[str]) -> str:
    out = []
    for n, line in enumerate(lines):
        out.append(f"2026-11-29 10:{n // 60 % 60:02d}:{n % 60:02d},{n % 1000:03d} ERROR trainer: {line}")
        out.append(f"I1129 10:{n % 60:02d}:00.{n:06d}  {4000 + n % 7} {line}")
        out.append(json.dumps({"time": f"2026-11-29T10:00:{n % 60:02d}Z", "pid": 4000 + n % 7, "msg": line}))
    return "\n".join(out) + "\n"


def _padded(text: str) -> str:
    """Long enough to be read as a log (a paste is read otherwise: every line, wrapped lines joined)."""
    prose = "2026-11-29 10:00:00,000 INFO trainer: the loss went down again\n"
    return text + prose * (PASTE_SIZE // len(prose) + 1)


@pytest.mark.parametrize("kind", logs.KINDS)
def test_same_answers_on_generated_logs(index, kind, monkeypatch):
    text, _ = logs.make_log(kind, 20_000, error_every=7, seed=3)
    remembered = _answers(index, text, True, monkeypatch)
    assert len(remembered) > 50
    assert remembered == _answers(index, text, False, monkeypatch)


def test_same_answers_on_real_world_texts_behind_stamps(index, monkeypatch):
    lines = [line for case in report.load_cases() if case.get("text")
             for line in case["text"].splitlines() if line.strip()]
    text = _padded(_stamped(lines * 2))
    remembered = _answers(index, text, True, monkeypatch)
    assert len(remembered) > 100
    assert remembered == _answers(index, text, False, monkeypatch)


def test_a_leading_number_is_a_value_not_a_stamp(index, monkeypatch):
    # RA944's wording begins with a value: "12 " and "13 " look like stamps, the match begins there
    lines = ["12 broadcast on both sequences.", "13 broadcast on both sequences.",
             "2026-11-29 10:00:01,100 14 broadcast on both sequences."]
    text = _padded("\n".join(lines * 3) + "\n")
    remembered = _answers(index, text, True, monkeypatch)
    assert remembered == _answers(index, text, False, monkeypatch)
    assert sorted(f[1] for f in remembered) == [("RA944", repr([("name", name)])) for name in ("12", "13", "14")]
    assert [f[3] for f in remembered] == [3, 3, 3]


def test_a_leading_number_is_a_value_for_an_entry_that_reads_on(index, monkeypatch):
    # RA831 reads values from the lines after it: its line's own match is remembered, not its answer;
    # its wording begins with a value too ("12 " looks like a stamp)
    message = "{memref} must have a number of elements that is a multiple of 128 (got 100)"
    lines = [message.format(memref=n) for n in (12, 13, 12)] + [
        "2026-11-29 10:00:01,100 " + message.format(memref=n) for n in (14, 15)]
    text = _padded("\n".join(lines) + "\n")
    remembered = _answers(index, text, True, monkeypatch)
    assert remembered == _answers(index, text, False, monkeypatch)
    assert sorted((f[1][1], f[3]) for f in remembered) == [
        (repr([("elements", 100), ("memref", str(n)), ("warpgroup_size", 128)]), count)
        for n, count in ((12, 2), (13, 1), (14, 1), (15, 1))]


def test_a_line_starting_with_a_brace_that_is_no_json_keeps_its_values(index, monkeypatch):
    # a JSON line's numbers are read as 0 in its key: a line that only starts like one is matched whole
    message = "ValueError: self.block_q={block} must be a multiple of 64"
    lines = [f"{{worker {n % 3}}} " + message.format(block=block) for n, block in enumerate((96, 80, 72, 96, 80, 96))]
    lines += [json.dumps({"time": f"10:00:0{n}", "msg": message.format(block=block)}) for n, block in enumerate((96, 80, 96))]
    text = _padded("\n".join(lines) + "\n")
    remembered = _answers(index, text, True, monkeypatch)
    assert any(answer is not None for answer, _ in index.room(Memory)._answers.values())  # the JSON lines' answer
    assert remembered == _answers(index, text, False, monkeypatch)
    assert sorted((f[1][1], f[3]) for f in remembered) == [
        (repr([("block_q", block)]), count) for block, count in ((72, 1), (80, 3), (96, 5))]


def _traceback(path: str, func: str) -> str:
    return ("Traceback (most recent call last):\n"
            '  File "/srv/train.py", line 12, in <module>\n    step()\n'
            f'  File "/venv/lib/python3.12/site-packages/{path}", line 204, in {func}\n    assert q.shape == k.shape\n'
            "AssertionError\n")


def test_a_traceback_is_remembered_with_its_last_frame(index, monkeypatch):
    # a bare AssertionError is RA502's only where its last frame is in JAX's GPU attention
    raised = _traceback("jax/experimental/pallas/ops/gpu/attention.py", "mha")
    other = _traceback("mylib/model.py", "forward")
    text = _padded((raised + other) * 3)
    remembered = _answers(index, text, True, monkeypatch)
    assert remembered == _answers(index, text, False, monkeypatch)
    assert [(f[0], f[3]) for f in remembered] == [("RA502", 3)]


def test_an_undecodable_line_remembered_still_warns(index):
    # remembered while reading one input, answered from memory in the next: that one warns too
    line = "2026-11-29 10:00:0{n},000 INFO trainer: caf\xe9 ValueError: sm_scale must be a finite number or None, got nan"
    index.room(Memory).clear()
    for n in range(2):
        text = _padded("x\n" * 9000 + line.format(n=n) + "\n").encode("latin-1")
        warned = []
        found, _, _ = explain_chunks(index, [text], warned.append)
        assert [f.match.code for f in found] == ["RA202"]
        assert warned == ["errkit: the input is not valid UTF-8; undecodable bytes were replaced"]
    assert len(index.room(Memory)._answers) > 0


def test_an_unclosed_json_string_is_read_once():
    """A JSON line's key is made by one pass of a regex over it: an unclosed string full of escaped
    quotes is one token to the line's end (a pattern needing the closing quote fails there and
    starts again at each escaped quote: quadratic, 58 ms for a 4 KB line)."""
    line = b'{"time": "10:00:01", "msg": "' + b'\\"' * 2000
    key, cut = memory.line_key(line, 0, len(line))
    assert cut == memory.JSON_KEY and key.startswith(b'{"time": "00:00:00", "msg": "\\"')
    tokens = [m.group() for m in memory._JSON_TOKENS[0].finditer(line)]
    assert tokens[-1] == b"\"" + b"\\\"" * 2000 and len(tokens) == 4


def test_lines_that_differ_only_in_their_stamps_digits_share_a_key():
    one = b"2026-11-29 10:00:01,123 E trainer: got 12 heads\n"
    two = b"2026-12-01 23:59:59,999 E trainer: got 12 heads\n"
    other = b"2026-11-29 10:00:01,123 E trainer: got 13 heads\n"
    keys = [memory.line_key(line, 0, len(line) - 1) for line in (one, two, other)]
    assert keys[0] == keys[1] != keys[2]
    assert keys[0][1] == len(b"2026-11-29 10:00:01,123 E ")  # the stamp: STAMP's characters from the start
    assert memory.key_of(one, 0, len(one) - 1, False) == keys[0]
    long = b"x" * (memory.MAX_MEMO_LINE + 1)
    assert memory.key_of(long, 0, len(long), False) is None


def test_a_traceback_line_is_keyed_with_its_frame():
    text = b'  File "/x/kernel.py", line 3, in f\nValueError: boom\n'
    start = text.index(b"ValueError")
    key = memory.key_of(text, start, len(text) - 1, True)
    assert key[0].startswith(b'  File "/x/kernel.py", line 3, in f\0') and key[2] == b"ValueError: boom"
    not_a_frame = b'  File "broken\nValueError: boom\n'
    assert memory.traceback_key(not_a_frame, not_a_frame.index(b"V"), len(not_a_frame) - 1) is None


def test_a_match_beginning_in_a_stamp_with_digits_is_not_remembered(index):
    line = "12 broadcast on both sequences. trainer stopped"
    data = line.encode()
    key = memory.line_key(data, 0, len(data))
    from errkit.explain.matching.found import Match

    begins_in_stamp = Match("RA105", index.wordings[0], {"n": 12}, 1, span=(0, 10))
    after_stamp = Match("RA105", index.wordings[0], {}, 1, span=(3, 10))
    assert not memory.stamp_free(key, begins_in_stamp, None, data, 0)
    assert memory.stamp_free(key, after_stamp, None, data, 0)
    kept = Memory()
    kept.remember(key, begins_in_stamp, None, line, data, 0)
    assert kept.recaller()(key[0]) is None
    kept.remember(key, after_stamp, None, line, data, 0)
    answer, undecodable = kept.recaller()(key[0])
    assert answer.code == "RA105" and answer is not after_stamp and not undecodable
    assert answer.params is after_stamp.params  # shared: replaced, never changed in place

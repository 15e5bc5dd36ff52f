"""A line's text (errkit/explain/matching/text.py). header_begin: HEADER searched from where
header_begin says a match can first start gives the whole line's answer, on Python's engine and RE2
(planted: begun at the run of name characters itself, or at the first `Error` only -> fails)."""

import re

import re2
from hypothesis import example, given, strategies as st

from errkit.core.index_format import HEADER
from errkit.explain.matching.text import EXC, MSG, clean, header_begin, json_record, json_strings, raise_statement

PIECES = ["Error", "Exception", "ValueError", "Value", "x", "_", "3", ".", ":", ": ", " ", "\t", "[", "]", "|", ">",
          "(", "#", "-", "é", "m", "jax.", "E   "]
LINES = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)
ENGINES = (re.compile(HEADER.pattern), re2.compile(HEADER.pattern))


def _answer(found):
    return None if found is None else (found.span(), found.group(EXC), found.group(MSG))


@given(LINES)
@example("2026-11-29 10:00:01,100 ERROR trainer: ValueError: the heads")
@example("jax.errors.Exception.ValueError: m")
@example("#ValueError: no, then KeyError: yes")
@example("Exception in thread: x ValueError: y")
@example("a.ValueError: dotted after a letter")
@example("ValueError")
@example("RuntimeException: then a ValueError: b")
def test_searched_from_header_begin_a_line_gives_the_whole_lines_answer(line):
    begin = header_begin(line)
    for pattern in ENGINES:
        whole = _answer(pattern.search(line))
        assert (None if begin is None else _answer(pattern.search(line, begin))) == whole, pattern


def test_a_line_is_cleaned_of_colours_and_its_line_end():
    assert clean("\x1b[31mValueError\x1b[0m: boom\r\n") == "ValueError: boom"
    assert clean("  kept  ") == "  kept  "


def test_a_raise_statement_is_not_the_message_it_quotes():
    assert raise_statement('raise ValueError(f"got {x}")')
    assert raise_statement('|     raise ValueError("x")')  # an exception group's frame
    assert not raise_statement("raise the block size") and not raise_statement("ValueError: raise (it)")


def test_a_json_lines_strings_are_read_two_levels_deep_in_order():
    line = '{"t": 1, "msg": "a", "exc": {"type": "b", "deep": {"c": "no"}}, "list": ["d", ["no"]]}'
    assert json_strings(line) == ["a", "b", "d"]
    assert json_strings('{"x": NaN}') == [] and json_strings("{not json") == []  # strict JSON only
    assert json_record(line) == "a\nb\nd" and json_record("not json") is None and json_record('{"n": 1}') is None

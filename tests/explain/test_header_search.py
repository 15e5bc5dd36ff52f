"""errkit/explain/match.py header_begin: HEADER searched from where header_begin says a match can
first start gives the whole line's answer, on Python's engine and RE2 (planted: begun at the run
of name characters itself, or at the first `Error` only -> fails)."""

import re

import re2
from hypothesis import example, given, strategies as st

from errkit.core.index_format import HEADER
from errkit.explain.matching.text import EXC, MSG, header_begin

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

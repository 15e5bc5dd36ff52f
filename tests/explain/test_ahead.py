"""errkit/explain/ahead.py: remembered searches answer as bytes.find does, in any order of windows
(planted: a search going on from where the last stopped without the needle's length back -> fails)."""

from hypothesis import example, given, strategies as st

from errkit.explain.ahead import Ahead


@given(st.binary(max_size=200).map(lambda b: bytes(c % 3 + 97 for c in b)),
       st.lists(st.tuples(st.sampled_from([b"a", b"ab", b"ba", b"cab", b"bb"]), st.integers(0, 210), st.integers(0, 60)),
                max_size=30))
@example(b"aaacabaaa", [(b"cab", 0, 4), (b"cab", 1, 6)])  # an occurrence across the end of the window before
@example(b"abab", [(b"ab", 0, 1), (b"ab", 2, 2), (b"ab", 1, 3)])  # found beyond a window, then asked again
def test_every_answer_is_bytes_find(data, queries):
    finder = Ahead(data)
    for needle, low, width in sorted(queries, key=lambda q: q[1]) + queries:  # in order (as a scan), then any
        assert finder.find(needle, low, low + width) == data.find(needle, low, low + width)

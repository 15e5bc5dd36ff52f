"""The around room (errkit/explain/matching/around.py): what the text around a match adds to its
answer: the kernel that raised it (decided once), ties, values read after it, the raise site."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from errkit.explain.ahead import Ahead
from errkit.explain.matching.index import Index
from errkit.explain.matching.chunks import explain_chunks
from errkit.explain.matching import around
from errkit.explain.matching.around import Around, Before, break_tie, decide_kernel, match_location
from errkit.explain.matching.found import Match

INDEX = Index.load()
VMEM = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem. "
        "Used 20.00M of 16.00M vmem. Exceeded vmem capacity by 4.00M.\n")
SPLASH_FRAME = ('Traceback (most recent call last):\n  File "/venv/lib/python3.12/site-packages/jax/experimental/pallas/ops/'
                'tpu/splash_attention/splash_attention_kernel.py", line 9, in f\n    x()\n')


def _found(text: str) -> list[Match]:
    return [f.match for f in explain_chunks(INDEX, [text])[0]]


@pytest.mark.parametrize("text, kernel", [
    (VMEM, None),  # a wording of four kernels, nothing around it tells: not told
    (SPLASH_FRAME + VMEM, "splash"),  # the traceback shows splash's source
    (SPLASH_FRAME + VMEM + "  %flash_fwd = custom-call(...)\n", "tpu-flash"),  # the dump after it names flash's kernel: it wins
    ("  %flash_fwd = custom-call(...)\n" + VMEM, None),  # a name above the message is not read
])
def test_the_kernel_that_raised_it_is_decided_from_the_text_around_it(text, kernel):
    (match,) = _found(text)
    assert (match.code, match.kernel) == ("RA810", kernel)


def test_a_wording_of_one_kernel_is_that_kernels_from_the_start():
    wording = next(w for w in INDEX.wordings if len(w.get("kernels") or ()) == 1)
    match = Match(wording["code"], wording, {}, 1)
    assert match.kernel == wording["kernels"][0]
    decide_kernel(match, shown="other", named="another")  # nothing around it changes that
    assert match.kernel == wording["kernels"][0]


def test_of_several_kernels_the_one_named_after_wins_over_the_one_shown_above():
    wording = next(w for w in INDEX.wordings if len(w.get("kernels") or ()) > 1)
    match = Match(wording["code"], wording, {}, 1)
    decide_kernel(match, shown="a", named="b")
    assert match.kernel == "b"
    decide_kernel(match, shown="a", named=None)
    assert match.kernel == "a"


def test_values_read_after_a_match_replace_its_params_never_change_them():
    (match,) = _found(VMEM)
    shared = {"used": 1}
    again = Match(match.code, match.wording, shared, 1)
    data = ("x\n" + VMEM + "  %splash_mha_fwd = custom-call(...)\n").encode()
    INDEX.room(Around).read_on(again, data, 2)
    assert shared == {"used": 1}  # the remembered match's dict is left as it was


def _twins(locations=(None, None), releases=(None, None)) -> Index:
    base = dict(INDEX.wordings[0], template="boom {n}", regex=r"boom[ \t\n\r\f\v]+(?P<g0>-?[0-9]+)", key="boom",
                captures=[["g0", "n", "int"]], literal_chars=4, skeleton="boom <n>", kernels=[])
    entries = {code: INDEX.data["entries"]["RA105"] for code in ("AA100", "BB100")}
    return Index({"entries": entries, "wordings": [
        dict(base, code="AA100", location=locations[0], releases=releases[0]),
        dict(base, code="BB100", location=locations[1], releases=releases[1])]})


def test_a_tie_is_broken_by_the_raise_site_shown_then_by_the_release_named():
    index = _twins(("pkg/a.py:1 in f", "pkg/b.py:2 in g"),
                   ({"dist": "jax", "bounds": [[">=", [0, 5]]]}, {"dist": "jax", "bounds": [["<", [0, 5]]]}))
    first = Match("AA100", index.wordings[0], {"n": 1}, 1, text="boom 1", span=(0, 6))
    first.ties = [Match("BB100", index.wordings[1], {"n": 1}, 1)]
    chosen = break_tie(first, 'File "/x/pkg/b.py", line 2, in g\njax==0.6.0\n')
    assert (chosen.code, chosen.text, chosen.span, chosen.ties) == ("BB100", "boom 1", (0, 6), [])
    first.ties = [Match("BB100", index.wordings[1], {"n": 1}, 1)]
    assert break_tie(first, "using jax==0.4.31\n").code == "BB100"  # no site shown: the release
    first.ties = [Match("BB100", index.wordings[1], {"n": 1}, 1)]
    assert break_tie(first, "nothing said\n").code == "AA100"  # nothing tells: the first


def test_a_match_whose_answer_reads_its_surroundings_is_said_to_depend_on_them():
    room = INDEX.room(Around)
    (alone,) = _found("ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8\n")
    (several,) = _found(VMEM)
    assert not room.depends(alone) and room.depends(several) and not room.depends(None)


def test_a_message_without_fixed_text_is_told_by_its_raise_site_and_exception():
    path = "/venv/lib/python3.12/site-packages/jax/experimental/pallas/ops/gpu/attention.py"
    found = match_location(INDEX, path, "mha", 7, "AssertionError", "")
    assert (found.code, found.line, found.text) == ("RA502", 7, path + " in mha")  # a file's wording: any function
    assert match_location(INDEX, path, "mha", 7, "KeyError", "") is None  # another exception
    assert match_location(INDEX, "/srv/mylib/attention.py", "mha", 7, "AssertionError", "") is None
    functions = "/venv/lib/python3.12/site-packages/jax/_src/nn/functions.py"
    assert match_location(INDEX, functions, "_apply_masks", 3, "AssertionError", "").code == "RA535"
    assert match_location(INDEX, functions, "softmax", 3, "AssertionError", "") is None  # a function's wording: that one


@pytest.mark.parametrize("text, name, found", [
    (b"  %splash_mha_fwd.3 = ", "splash_mha", True),
    (b"  %my_splash_mha = ", "splash_mha", False),  # inside another identifier
    (b"  %12splash_mha = ", "splash_mha", True),  # digits do not start an identifier
    (b"  splash = ", "splash_mha", False),
])
def test_a_kernel_name_counts_where_it_starts_an_identifier(text, name, found):
    assert around.starts_identifier_in(Ahead(text), 0, len(text), name) is found


_BYTES = st.lists(st.sampled_from([b"a", b"J", b"AX", b"/", b"\\", b" ", b"\n", b"\xc3\xa9", b"\xe2\x84\xaa", b"\xff", b"\xc3",
                                   b"jax==0.4.31", b'File "C:\\x\\pkg\\b.py"']), max_size=30).map(b"".join)
_LINE = st.text(alphabet="aJx/\\ =.\u212a\u00e9\u03a3", max_size=20)


@settings(max_examples=400, deadline=None)
@given(raw=_BYTES, line=_LINE, data=st.data())
def test_the_context_before_a_line_is_looked_in_as_its_decoded_text(raw, line, data):
    """around.Before: what is found in the bytes before a line (ending with a line's end, as a line
    starts after one) and the line is what the decoded text with slashes for backslashes holds,
    lower-cased or not, for any needle: one of its own parts or another; the bytes read in a larger
    block, alone or through an Ahead of it that earlier windows of the block were searched with."""
    raw = raw + b"\n" if raw else raw
    text = (raw.decode("utf-8", "replace") + line).replace("\\", "/")
    pieces = [text[a:b] for a in range(0, len(text), 3) for b in (a + 2, a + 5)] + ["jax", "pkg/b.py", "k", "\u212a", "\ufffd"]
    needles = data.draw(st.lists(st.sampled_from(pieces) | st.text(alphabet="ajkx/\\ .\u212a", min_size=1, max_size=4),
                                 min_size=1, max_size=4))
    head = data.draw(_BYTES) + b"\n"
    block = head + raw + b"tail\n"
    ahead = Ahead(block)
    for needle in needles:  # (an earlier window of the block, searched first)
        ahead.find(needle.encode("utf-8", "replace"), 0, len(head))
        ahead.find(b"\\", 0, len(head))
    for before in (Before(block, len(head), len(head) + len(raw), line), Before(block, len(head), len(head) + len(raw), line, ahead)):
        assert before.text() == text
        for needle in needles:
            assert before.shows(needle) == (needle in text)
            assert before.shows_lowered(needle.lower()) == (needle.lower() in text.lower())
    alone = Before.of(line)
    assert alone.shows(needles[0]) == (needles[0] in line.replace("\\", "/"))


def _marks_of(index) -> list[str]:
    from errkit.core.index_format import CONTEXT_MARKS

    kernels = index.data.get("kernels") or {}
    return [*CONTEXT_MARKS, *(n for k in kernels.values() for n in (k.get("names") or ())),
            *(k["source"] for k in kernels.values() if k.get("source"))]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_context_is_shown_where_any_mark_is_within_reach(data):
    """Around.shows_context (one regex of every mark): JAX's side is shown exactly where one of the
    marks (CONTEXT_MARKS, a kernel's names or sources) lies whole within FRAME_REACH bytes of the
    line, as a search for each mark says; marks cut at the window's edge or before it do not count."""
    from errkit.core.index_format import FRAME_REACH

    marks = _marks_of(INDEX)
    filler = st.sampled_from([b"x" * 700, b"y" * 3000, b"\n", b"prose line\n", b"\xc3\xa9", b"mosaic ", b"jax"])
    parts = data.draw(st.lists(filler | st.sampled_from(marks).map(lambda m: m.encode("utf-8")), max_size=30))
    text = b"".join(parts)
    start = data.draw(st.integers(0, len(text)))
    window = text[max(0, start - FRAME_REACH):start + FRAME_REACH]
    assert Around(INDEX).shows_context(text, start) == any(m.encode("utf-8") in window for m in marks)


def test_marks_too_many_for_one_regex_are_searched_one_by_one(monkeypatch):
    """An installed catalogue whose marks RE2 refuses as one regex: shows_context searches each
    mark, with the same answers, never an error."""
    class Refusing:
        def compile(self, *_):
            raise ValueError("pattern too large - compile failed")

    monkeypatch.setattr(around, "engine", Refusing)
    room = Around(INDEX)
    mark = _marks_of(INDEX)[0].encode("utf-8")
    assert room.shows_context(b"x" * 5000 + mark + b"\n" + b"y" * 5000, 5000)
    assert not room.shows_context(mark + b"\n" + b"y" * 9000, 9000)


_READ_CODES = sorted({w["code"] for w in INDEX.wordings if (INDEX.entries.get(w["code"]) or {}).get("reads")})


def _read_as_text(room: Around, match: Match, window: str) -> dict:
    """What read_on reads, as it read it first: each read's regex searched in the decoded window."""
    from errkit.core.regex import engine
    from errkit.explain.matching.index import captured

    extra = {}
    for read in room.reads(match.code):
        m = engine().compile(read["regex"]).search(window)
        for param, value in ((captured(read["captures"], m) if m else None) or {}).items():
            extra.setdefault(param, value)
    return extra


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_values_read_after_a_match_are_those_of_its_decoded_text(data):
    """Around.read_on searches an ASCII window's bytes as they are (RE2's wrapper then maps no
    offsets), others decoded: the values read are those each read's regex finds in the decoded
    window, for every entry that reads, on texts its reads match (generated from their regexes),
    among ASCII or other prose and bad bytes."""
    room = Around(INDEX)
    code = data.draw(st.sampled_from(_READ_CODES))
    read = data.draw(st.sampled_from(room.reads(code)))
    found = data.draw(st.from_regex(read["regex"], fullmatch=True).filter(lambda s: "\n" not in s))
    noise = st.sampled_from([b"", b"prose ", b"\xc3\xa9t\xc3\xa9 ", b"\xff", b"Required: 1, ", b"x = 2\n"])
    window = data.draw(noise) + found.encode("utf-8") + data.draw(noise) + b"\n"
    wording = next(w for w in INDEX.wordings if w["code"] == code)
    match = Match(code, wording, {}, 1)
    room.read_on(match, b"line\n" + window, 5)
    assert match.params == _read_as_text(room, Match(code, wording, {}, 1), window.decode("utf-8", "replace"))


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_kernel_named_after_a_match_is_found_alike_in_short_and_long_windows(data):
    """read_on looks for the kernels' names in a short window (SHORT_WINDOW bytes) at once, then
    where one is in it: the kernel named is the one found through the scan's Ahead alone, for
    names starting identifiers, inside others, after digits, cut short, in windows either side
    of the limit."""
    kernels = INDEX.data["kernels"]
    wording = next(w for w in INDEX.wordings if w["code"] == "RA810" and len(w.get("kernels") or ()) > 1)
    names = [n for k in wording["kernels"] for n in kernels[k].get("names") or ()]
    piece = st.sampled_from(names).flatmap(lambda n: st.sampled_from([f"%{n} = ", f"my_{n} ", f"12{n}.3 ", n[:-1] + " ", f" {n}"]))
    filler = st.sampled_from(["x" * 500, "prose\n", " ", "\xe9"])
    after = "".join(data.draw(st.lists(piece | filler, max_size=12)))
    block = ("head\n" + VMEM + after + "\n").encode("utf-8")
    results = []
    for short in (around.SHORT_WINDOW, -1):
        old, around.SHORT_WINDOW = around.SHORT_WINDOW, short
        try:
            results.append(INDEX.room(Around).read_on(Match("RA810", wording, {}, 1), block, 5, Ahead(block)))
        finally:
            around.SHORT_WINDOW = old
    assert results[0] == results[1]

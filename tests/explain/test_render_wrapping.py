"""The terminal answer's wrapping (errkit/explain/render.py `wrapped`, `means`): lines of the width
at most, broken at spaces, and the first lines of a long paragraph the same whether or not the
rest is wrapped (`limit`: the explanation's first MEANS_LINES lines are all the answer shows)."""

import io

from hypothesis import given, settings, strategies as st

from errkit.explain.render import MEANS_LINES, means, wrapped

WORDS = st.lists(st.text(alphabet="abcdefghij.,()=_-", min_size=1, max_size=30), max_size=120)
SPACES = st.sampled_from([" ", "  ", "\n", " \t "])


def reference(text: str, width: int, indent: str) -> list[str]:
    """The greedy wrap as first written: a line grown word by word."""
    lines, line = [], ""
    room = max(20, width - len(indent))
    for word in text.split():
        if line and len(line) + 1 + len(word) > room:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return [lines[0]] + [indent + rest for rest in lines[1:]]


@settings(max_examples=300, deadline=None)
@given(words=WORDS, gaps=st.lists(SPACES, min_size=120, max_size=120), width=st.integers(10, 140),
       limit=st.integers(1, 6))
def test_wrapping_is_the_greedy_wrap_and_its_first_lines_need_no_rest(words, gaps, width, limit):
    text = "".join(w + g for w, g in zip(words, gaps))
    whole = wrapped(text, width, " " * 11)
    assert whole == reference(text, width, " " * 11)
    assert wrapped(text, width, " " * 11, limit=limit) == whole[:limit]


class _Style:
    width, verbose = 72, False

    @staticmethod
    def dim(text):
        return text


def test_a_long_explanation_shows_its_first_lines_and_where_the_rest_is():
    sentence = "A block shape must be divisible by the operand's tiling in its last two dims. "
    shown = means(sentence * 12 + "\n\nSecond paragraph.", _Style())
    assert len(shown) == MEANS_LINES + 1 and shown[-1].strip() == "(--verbose: the whole explanation)"
    assert shown[0].startswith("A block shape") and all(len(line) <= 72 for line in shown)


@settings(max_examples=60, deadline=None)
@given(width=st.integers(20, 160), verbose=st.booleans(), on=st.booleans(), paragraphs=st.integers(1, 3))
def test_the_explanation_is_wrapped_for_the_terminal_it_is_shown_on_each_time(width, verbose, on, paragraphs):
    """means() keeps the lines of an explanation for the answers of one entry (a log's answers share
    it): each terminal's width, colour and verbosity get their own lines, the lines of the first
    computation; a caller changing the list it got changes nothing kept."""
    from errkit.explain import render

    sentence = "A block shape must be divisible by the operand's tiling in its last two dims. "
    explanation = "\n\n".join([sentence * 6] * paragraphs)
    style = render.Style(io.StringIO(), "never", verbose=verbose)
    style.on, style.width = on, width
    first = means(explanation, style)
    assert first == render._means(explanation, style)
    first.append("changed by a caller")
    assert means(explanation, style) == render._means(explanation, style)
    style.width = width + 13
    assert means(explanation, style) == render._means(explanation, style)

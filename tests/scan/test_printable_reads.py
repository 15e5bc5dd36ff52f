"""errkit/scan/coverage.py's `_reads` (whether a site's template prints a wording's rendering, each
field any text) against the regex it replaced (each fixed piece escaped, `.+?` for each field,
fullmatch, DOTALL): the same answer on random templates and texts built from a small alphabet,
where pieces overlap, repeat and run into each other."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from errkit.core import template
from errkit.scan.coverage import _reads

ALPHABET = "ab =\n"
LITERAL = st.text(ALPHABET, max_size=4)


def _regex(tpl) -> re.Pattern:
    return re.compile("".join(re.escape(p) if isinstance(p, str) else re.escape(p.doc) + "(?:.+?)" for p in tpl.parts), re.S)


@st.composite
def templates(draw):
    parts = []
    for n in range(draw(st.integers(0, 4))):
        parts.append(draw(LITERAL).replace("{", "").replace("}", ""))
        parts.append("{f%d=}" % n if draw(st.booleans()) else "{f%d}" % n)
    parts.append(draw(LITERAL))
    return template.parse("".join(parts))


@settings(max_examples=3000, deadline=None)
@given(templates(), st.text(ALPHABET, max_size=14))
def test_reads_answers_as_the_regex_does(tpl, text):
    assert _reads(tpl.pieces, text) == bool(_regex(tpl).fullmatch(text))


@settings(max_examples=500, deadline=None)
@given(templates(), st.lists(st.text(ALPHABET, min_size=1, max_size=3), min_size=4, max_size=4))
def test_a_rendering_of_the_template_is_read(tpl, values):
    """Texts the template does print (each field given a value): the interesting `True` cases."""
    text = tpl.render(lambda f: values[int(f.name[1:]) % 4])
    assert _reads(tpl.pieces, text) == bool(_regex(tpl).fullmatch(text)) is True

"""The keys room (errkit/explain/matching/keys.py): which wordings a line may be, and what makes a
line of a log worth reading."""

from __future__ import annotations

import random

from errkit.core.index_format import FRAME_MARK, LOOKUP_MARKS, MARKERS
from errkit.core.regex import escape
from errkit.explain.matching.index import Index
from errkit.explain.matching.keys import Keys, KeySet, candidates, key_pattern

INDEX = Index.load()


def _index(*wordings: dict) -> Index:
    base = dict(INDEX.wordings[0], key=None, location=None, template="t")
    return Index({"entries": {}, "wordings": [dict(base, **w) for w in wordings]})


def test_the_first_lines_find_the_keys_the_compiled_set_finds():
    """explain's first lines are prefiltered without compiling the keys (start-up time): the
    answer must be the compiled set's, whatever the whitespace between a key's words."""
    keys = Index.load().keys
    rng = random.Random(16)
    spaces = [" ", "  ", "\t", " \t\n ", "\r\n", "\f", "\v", "\u00a0", "\u2003"]  # the last two are not SPACE
    lines = []
    for key in keys:
        for _ in range(3):
            words = key.split(" ")
            glued = "".join(w + rng.choice(spaces) for w in words[:-1]) + words[-1]
            lines.append(rng.choice(["", "x", "E   ValueError: ", " "]) + glued + rng.choice(["", ".", " tail", "\t"]))
    lines += [key[:-1] for key in keys] + [key.upper() for key in keys]
    literal, compiled = KeySet(keys), KeySet(keys)
    compiled._compile()
    literal.LITERAL_LINES = len(lines)
    for line in lines:
        assert literal.present(line) == compiled.present(line), line
    assert literal._regexes is None  # answered without compiling


def test_a_line_may_be_the_wordings_of_each_key_it_holds_and_those_tried_everywhere():
    index = _index({"key": "tile size"}, {"key": "page size"}, {"key": "tile size"}, {"template": "{x}"}, {"location": "k.py in f"})
    assert candidates(index, "the tile  size must be 8") == [0, 2, 3]  # any run of whitespace between a key's words
    assert candidates(index, "the page\tsize is 3") == [1, 3]
    assert candidates(index, "nothing here") == [3]  # no fixed text to look for: tried on every line read


def test_the_locator_looks_for_frames_only_when_a_wording_is_known_by_its_raise_site():
    keyed = _index({"key": "tile size"}).room(Keys)
    assert keyed.alternatives() == [key_pattern("tile size"), *LOOKUP_MARKS]
    located = _index({"key": "tile size"}, {"location": "k.py in f"}).room(Keys)
    assert escape(FRAME_MARK) in located.alternatives()
    everywhere = _index({"key": "tile size"}, {"template": "{x}"}).room(Keys)
    assert set(MARKERS) <= set(everywhere.alternatives())
    assert keyed.locator().search(b"x: the tile \t size") is not None and keyed.locator().search(b"tilesize") is None


def test_nothing_to_look_for_is_no_locator():
    assert _index({"template": ""}).room(Keys).locator() is None

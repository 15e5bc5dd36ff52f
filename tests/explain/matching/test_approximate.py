"""The approximate room (errkit/explain/matching/approximate.py): the closest wordings when nothing
matched exactly, from a bounded shortlist."""

from __future__ import annotations

import random

from errkit.core.index_format import APPROXIMATE_MAX, SHORTLIST
from errkit.explain.matching.index import Index
from errkit.explain.matching.approximate import Closest, approximate, normalised_for_similarity, quoted_starts, shortlist

INDEX = Index.load()


def test_the_approximate_pass_compares_a_bounded_shortlist():
    rng = random.Random(1)
    words = ["block", "size", "must", "be", "a", "multiple", "of", "heads", "tile", "page", "got", "shape"]
    wordings = [dict(INDEX.wordings[0], code=f"SY{i:04d}", template="t", key=None, location=None,
                     skeleton=" ".join(rng.choices(words, k=8)) + f" kernel_{i}_variant")
                for i in range(5000)]
    index = Index({"entries": {}, "wordings": wordings})
    edited = "a tile of " + wordings[1234]["skeleton"].replace(" ", " x", 2)  # edited, its rare word kept
    found = shortlist(index, edited)
    assert len(found) == SHORTLIST  # out of 5,000 wordings that share words with it
    assert found[0] == 1234  # the rare word it shares decides


def test_a_wording_tried_only_at_its_raise_site_is_never_a_closest_one():
    base = dict(INDEX.wordings[0], template="t", skeleton="the tile size must be a multiple of eight")
    index = Index({"entries": {}, "wordings": [dict(base, key=None, location="kernel.py in f"), dict(base, key="tile size")]})
    assert shortlist(index, "tile size must be a multiple of eight") == [1]


def test_an_edited_message_gets_its_entry_below_a_perfect_score():
    found = approximate(INDEX, "step 1\nValueError: num_q_heads=12 must be evenly divisible by num_kv_heads=8!\nstep 3\n")
    assert found and found[0].code == "RA105" and not found[0].exact
    assert 0.6 <= found[0].score <= APPROXIMATE_MAX < 1
    assert found[0].line == 2  # the tail's line, counted from its first line (1 here)


def test_each_entry_appears_once_at_its_best_score():
    found = approximate(INDEX, "ValueError: num_q_heads=12 must be divisble by num_kv_heads=8\n"
                               "ValueError: num_q_heads=12 must be divisible by and num_kv_heads=eight\n", limit=10)
    codes = [m.code for m in found]
    assert len(codes) == len(set(codes))
    assert [m.score for m in found] == sorted((m.score for m in found), reverse=True)


def test_prose_quoting_the_start_of_a_message_is_compared_with_as_much_of_the_wording():
    lines = [(1, 'I keep getting "num_q_heads must be divisible by" and have no idea why'), (2, 'a `supercalifragilistic expialidocious` quote')]
    assert quoted_starts(lines) == [(1, "num_q_heads must be divisible by", True)]


def test_values_are_not_what_similarity_compares():
    assert normalised_for_similarity("got (1, 2) and 'x' at <shape>, -3.5e+2 blocks") == "got # and # at #, # blocks"


def test_the_room_keeps_its_postings_and_skeletons_per_index():
    closest = INDEX.room(Closest)
    assert INDEX.room(Closest) is closest
    shortlist(INDEX, "block size must be a multiple of the page size")
    assert closest._postings  # filled on first use, then kept
    other = Index(INDEX.data)
    assert other.room(Closest) is not closest and other.room(Closest)._postings is None

"""The line room (errkit/explain/matching/line.py): the wording one line holds, read as pasted."""

from __future__ import annotations

from errkit.explain.matching.index import Index
from errkit.explain.matching import keys
from errkit.explain.matching.line import LineReader, _unquote, apart, match_line, match_note

INDEX = Index.load()
GQA = "num_q_heads=12 must be divisible by and num_kv_heads=8"


def test_the_message_after_the_exception_name_is_read_and_spanned_in_the_line():
    line = f"2026-11-29 10:00:01,000 ERROR x: ValueError: {GQA}"
    found = match_line(INDEX, line, 7)
    assert (found.code, found.params, found.line) == ("RA105", {"num_q_heads": 12, "num_kv_heads": 8}, 7)
    assert line[found.span[0]:found.span[1]] == found.text == GQA


def test_a_message_answered_before_is_answered_without_looking_up_keys(monkeypatch):
    reader = LineReader(Index(INDEX.data))
    assert reader.match_line(f"ValueError: {GQA}").code == "RA105"
    looked = []
    original = keys.Keys.candidates
    monkeypatch.setattr(keys.Keys, "candidates", lambda self, line: looked.append(line) or original(self, line))
    again = reader.match_line(f"[worker 3] ValueError: {GQA}", 9)
    assert (again.code, again.line, looked) == ("RA105", 9, [])
    assert again.params is reader.match_line(f"ValueError: {GQA}").params  # one dict for every repeat


def test_a_message_in_prose_is_found_anywhere_in_the_line():
    found = match_line(INDEX, f"I get '{GQA}' when I run it")
    assert found.code == "RA105" and found.text == GQA


def test_a_raise_statement_is_not_matched():
    assert match_line(INDEX, f'    raise ValueError("{GQA}")') is None


def test_a_json_line_is_read_as_its_strings():
    found = match_line(INDEX, '{"time": "10:00", "msg": "ValueError: ' + GQA + '"}')
    assert (found.code, found.span) == ("RA105", None)  # no span: the text is the unescaped string's


def test_a_note_line_or_a_page_link_names_an_entry_with_the_links_values():
    note = match_note(INDEX, "[RA105] Query heads are not a multiple - see https://x.io/errors/RA105/?num_q_heads=12&num_kv_heads=8")
    assert (note.code, note.weak, note.params) == ("RA105", True, {"num_q_heads": 12, "num_kv_heads": 8})
    assert match_note(INDEX, "[RA105] Query heads are not a multiple - see https://x.io/errors/RA101/?num_q_heads=12").params == {}  # another entry's link
    link = match_note(INDEX, "see https://x.io/errors/RA105/?num_q_heads=12&num_kv_heads=%38&bogus=1&num_kv_heads=x")
    assert (link.code, link.weak, link.params) == ("RA105", True, {"num_q_heads": 12, "num_kv_heads": 8})
    assert match_note(INDEX, "see https://x.io/errors/ZZ999/") is None


def test_a_query_value_is_unquoted_as_a_browser_quotes_it():
    assert _unquote("a+b%20c%E2%9C%93%zz%4") == "a b c\u2713%zz%4"


def test_wordings_of_the_same_fixed_text_are_apart_only_across_entries_or_raise_sites():
    wording = dict(INDEX.wordings[0], location="a.py:1 in f")
    from errkit.explain.matching.found import Match

    best = Match(wording["code"], wording, {}, 1)
    assert not apart(dict(wording), best)  # the same entry, the same site
    assert apart(dict(wording, location="b.py:1 in f"), best)  # another raise site of the same text
    assert apart(dict(wording, code="ZZ100"), best)  # another entry
    assert not apart(dict(wording, template="other", location="b.py:1 in f"), best)  # another wording of the entry

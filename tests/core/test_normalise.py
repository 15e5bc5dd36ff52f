"""Undoing what copying does to an error text, keeping where each character came from."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from errkit.core.normalise import normalise, original_span, text_encoding


@pytest.mark.parametrize("line, text, origin", [
    ("it\u2019s \u201cok\u201d", "it's \"ok\"", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
    ("\u2018a\u2019 \u2032 \uff07", "'a' ' '", [0, 1, 2, 3, 4, 5, 6, 7]),
    ("a\u00a0b\u2009c\u3000d", "a b c d", [0, 1, 2, 3, 4, 5, 6, 7]),
    ("1\u22122 \u2013 3\u20104", "1-2 - 3-4", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
    ("x\u200by\u200dz\ufeff", "xyz", [0, 2, 4, 6]),  # zero-width characters go
    ("\ufeffa", "a", [1, 2]),
    ("\x1b[31mred\x1b[0m", "red", [5, 6, 7, 12]),  # colour codes go
    ("a\x1b[?25hb\x1b[1;32;40mc", "abc", [0, 7, 18, 19]),
    ("\x1b[K", "", [3]),
    ("a\x1b[Xmb", "amb", [0, 4, 5, 6]),  # ESC [ X (erase characters) ends at its letter
    ("&lt;b&gt; &amp; &quot;&apos;", "<b> & \"'", [0, 4, 5, 9, 10, 15, 16, 22, 28]),
    ("&#65;&#x41;&#X41;", "AAA", [0, 5, 11, 17]),
    ("&#xe9;t&#233;", "\u00e9t\u00e9", [0, 6, 7, 13]),
    ("&#x4A;&#X4a;&#88;", "JJX", [0, 6, 12, 17]),
    ("a&#10;b&#13;", "a b ", [0, 1, 6, 7, 12]),  # a line stays a line
    ("&#x7f;&#0;", "  ", [0, 6, 10]),  # what does not print is a space
    ("&#8217;&#x201c;", "'\"", [0, 7, 15]),  # an entity for a curly quote is a straight one
    ("&#8203;", " ", [0, 7]),  # one for a zero-width character, a space
    ("&nbsp;x", " x", [0, 6, 7]),
    ("&#000000065;", "A", [0, 12]),  # the longest entity read: ten characters between '&' and ';'
    ("\u00e9 &amp", "\u00e9 &amp", None),
])
def test_normalise(line, text, origin):
    assert normalise(line) == (text, origin)


@pytest.mark.parametrize("line", [
    "plain ascii", "", "a & b", "&unknown;", "&#;", "&#x;", "&#xZZ;", "&#12a;", "&#-1;", "&#x110000;", "&#1114112;",
    "&#0000000065;",  # eleven characters: too long for an entity
    "&x41;", "&65;", "&#6_5;", "&# 65;", "&#+65;", "&#x+41;", "&#\u0666\u0665;",  # what int() reads, an entity does not
    "\u00e9[31mx", "\u00e9\x1b[31",  # '[' after anything but ESC
    "&amp", "\x1b[31", "\x1b[31m"[:-1] + "\u00e9", "\x1bx", "\x1b", "caf\u00e9", "\u00e9\u00e8",
])
def test_what_needs_no_change_is_given_back_as_it_is(line):
    assert normalise(line) == (line, None)


def test_a_plain_line_is_the_same_object():
    line = "kv_seq_len=4992 should be divisible"
    got, origin = normalise(line)
    assert got is line and origin is None


@given(st.text(st.sampled_from("ab \u2019\u00a0\u200b&;#x1\x1b[m")))
def test_every_character_knows_where_it_came_from(line):
    text, origin = normalise(line)
    if origin is None:
        assert text == line
        return
    assert len(origin) == len(text) + 1 and origin[-1] == len(line)
    assert origin == sorted(origin) and len(set(origin[:-1])) == len(origin) - 1
    for i, ch in enumerate(text):
        if ch in "ab1x":  # kept as they are: found where they were
            assert line[origin[i]] == ch


def test_original_span():
    assert original_span(None, 2, 5) == (2, 5)
    text, origin = normalise("\x1b[1mkv\x1b[0m = \u20194\u2019")
    assert text == "kv = '4'"
    start = text.index("'4'")
    assert original_span(origin, start, start + 3) == (13, 16)
    assert original_span(origin, 0, 2) == (4, 10)  # up to where the next character kept starts


@pytest.mark.parametrize("head, encoding", [
    (b"\xef\xbb\xbfplain text", "utf-8-sig"),
    ("kv_seq_len=4992".encode("utf-16"), "utf-16"),  # with its byte-order mark
    (b"\xfe\xff" + "kv_seq_len=4992".encode("utf-16-be"), "utf-16"),
    ("kv_seq_len=4992".encode("utf-16-le"), "utf-16-le"),
    ("kv_seq_len=4992".encode("utf-16-be"), "utf-16-be"),
    ("abcd".encode("utf-16-le"), "utf-16-le"),  # eight bytes: enough to tell
    ("abc".encode("utf-16-le"), None),  # six: too few
    (b"\xff\xfe" + "abc".encode("utf-16-le"), None),
    (b"\xff\xfe" + "abcd".encode("utf-16-le"), "utf-16"),  # eight bytes after the mark
    (b"plain ascii text", None),
    (b"", None),
    (b"\x00" * 16, None),  # NULs in every byte: no text
    (b"a\x00b\x00c\x00d\x00\x00\x00\x00\x00\x00\x00\x00\x00", None),  # 3 of 9 even bytes NUL
    (b"a\x00" * 6 + b"aa" * 4, "utf-16-le"),  # 6 of 10 odd bytes NUL: enough
    (b"a\x00" * 5 + b"aa" * 5, None),  # 5 of 10: too few
    (b"\x00a" * 6 + b"aa" * 4, "utf-16-be"),
    (b"\x00a" * 5 + b"aa" * 5, None),
    (b"\x00\x00" + b"a\x00" * 9, "utf-16-le"),  # one even NUL of ten: still UTF-16-LE
    (b"\x00\x00" * 2 + b"a\x00" * 8, None),  # two: not
    (b"\x00\x00" + b"\x00a" * 9, "utf-16-be"),
    (b"\x00\x00" * 2 + b"\x00a" * 8, None),
])
def test_text_encoding(head, encoding):
    assert text_encoding(head) == encoding


def test_text_encoding_reads_the_first_512_bytes():
    text = "x".encode("utf-16-le") * 256  # 512 bytes of UTF-16-LE
    assert text_encoding(text + b"\x00" * 1000) == "utf-16-le"
    assert text_encoding(b"\xff\xfe" + text + b"\x00" * 1000) == "utf-16"
    assert text_encoding(b"plain" * 103 + b"\x00" * 100) is None  # NULs past byte 512 are not read
    # 25 NULs in the 256 even bytes: at most a tenth, UTF-16-LE; one more NUL, as byte 513, is not read
    edge = b"\x00\x00" * 25 + b"a\x00" * 231
    assert text_encoding(edge) == text_encoding(edge + b"\x00") == "utf-16-le"
    assert text_encoding(b"\xff\xfe" + edge + b"\x00") == "utf-16"

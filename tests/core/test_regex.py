"""The explain path's regex engine: RE2 when installed, Python's `re` on request or without it, and
the small patterns compiled on first use by whichever engine is loaded."""

import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from errkit.core import regex


@pytest.fixture
def fresh_engine(monkeypatch):
    """No engine chosen yet (the choice is made once per process)."""
    monkeypatch.setattr(regex, "_ENGINE", None)
    monkeypatch.delenv(regex.ENGINE_ENV, raising=False)
    return monkeypatch


def test_the_engine_is_re2_when_installed(fresh_engine):
    pytest.importorskip("re2")
    assert regex.engine().__name__ == "re2" and regex.is_re2()
    assert regex.engine() is regex.engine() is sys.modules["re2"]  # chosen once


def test_the_environment_can_ask_for_pythons_engine(fresh_engine):
    fresh_engine.setenv("ERRKIT_REGEX_ENGINE", "re")
    assert regex.engine() is re and not regex.is_re2()


def test_any_other_value_keeps_re2(fresh_engine):
    pytest.importorskip("re2")
    fresh_engine.setenv("ERRKIT_REGEX_ENGINE", "re2")
    assert regex.is_re2()


def test_without_re2_the_engine_is_pythons(fresh_engine):
    fresh_engine.setitem(sys.modules, "re2", None)  # `import re2` raises ImportError
    assert regex.engine() is re and not regex.is_re2()


def test_a_chosen_engine_stays(fresh_engine):
    fresh_engine.setattr(regex, "_ENGINE", re)
    assert regex.engine() is re


def test_lazy_compiles_on_first_use_with_re_once_re_is_loaded():
    lazy = regex.Lazy(r"(?P<n>[0-9]+)x")
    assert lazy.pattern == r"(?P<n>[0-9]+)x" and lazy.python is False and lazy._compiled is None
    assert lazy.fullmatch("12x").group("n") == "12"
    assert lazy._by_re and isinstance(lazy._compiled, re.Pattern)
    assert lazy.search("a 3x").group(0) == "3x" and lazy.findall("1x 2x") == ["1", "2"]


def test_lazy_compiles_once(monkeypatch):
    compiled = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda pattern, *a: compiled.append(pattern) or real(pattern, *a))
    lazy = regex.Lazy(r"[0-9]+y")
    assert compiled == []  # not at construction
    for _ in range(3):
        assert lazy.fullmatch("12y")
    assert compiled == [r"[0-9]+y"]


def test_lazy_with_only_re2_loaded_compiles_with_re2_then_moves_to_re(monkeypatch):
    pytest.importorskip("re2")
    monkeypatch.setattr(regex, "_ENGINE", None)
    monkeypatch.delenv(regex.ENGINE_ENV, raising=False)
    lazy = regex.Lazy(r"[0-9]+")
    monkeypatch.delitem(sys.modules, "re")  # as in `errkit explain`, before anything imports re
    assert lazy.fullmatch("42") is not None
    assert not lazy._by_re and not isinstance(lazy._compiled, re.Pattern)
    monkeypatch.undo()  # re is loaded again: the next use compiles with it
    assert lazy.fullmatch("42") is not None
    assert lazy._by_re and isinstance(lazy._compiled, re.Pattern)


def test_a_small_pattern_runs_on_re_once_it_is_loaded_else_on_the_engine(monkeypatch):
    pytest.importorskip("re2")
    monkeypatch.setattr(regex, "_ENGINE", None)
    monkeypatch.delenv(regex.ENGINE_ENV, raising=False)
    assert isinstance(regex.compile_small(rb"\n[0-9]+ "), re.Pattern)  # a log: re is loaded
    monkeypatch.delitem(sys.modules, "re")  # a paste: only the engine
    compiled = regex.compile_small(rb"\n[0-9]+ ")
    assert not isinstance(compiled, re.Pattern) and compiled.search(b"x\n12 y").start() == 1


def test_lazy_python_always_uses_re(monkeypatch):
    lazy = regex.Lazy(r"a(?=b)", python=True)  # a lookahead: RE2 has none
    monkeypatch.delitem(sys.modules, "re")
    assert lazy.search("cab").start() == 1
    assert lazy._by_re


def test_lazy_numbered_reads_named_groups_by_number():
    lazy = regex.Lazy(r"(?P<a>[a-z]+)-(?P<b>[0-9]+)", numbered=True)
    assert lazy.number("a") == 1 and lazy.number("b") == 2
    match = lazy.fullmatch("xy-12")
    assert match.group(lazy.number("b")) == "12" and match.groupdict() == {}
    with pytest.raises(TypeError):
        regex.Lazy("(?P<a>x)").number("a")  # not a numbered one


@pytest.mark.parametrize("pattern, plain, numbers", [
    ("(?P<a>x)(?P<b>y)", "(x)(y)", {"a": 1, "b": 2}),
    ("(x)(?P<a>y)", "(x)(y)", {"a": 2}),
    ("(?:x)(?=y)(?P<a>y)", "(?:x)(?=y)(y)", {"a": 1}),
    (r"\((?P<a>x)", r"\((x)", {"a": 1}),
    ("[(](?P<a>x)", "[(](x)", {"a": 1}),
    ("[]a(](?P<n>x)", "[]a(](x)", {"n": 1}),
    ("[^]a(](?P<n>x)", "[^]a(](x)", {"n": 1}),
    (r"[\](](?P<n>x)", r"[\](](x)", {"n": 1}),
    (r"[\\](?P<n>x)", r"[\\](x)", {"n": 1}),
    ("[^(]", "[^(]", {}),
    ("[]](?P<n>x)", "[]](x)", {"n": 1}),  # a ']' first in a class is one of its characters
    ("a[", "a[", {}),
    ("(?P<a>(?P<b>x)|(y))(?P<c>z)", "((x)|(y))(z)", {"a": 1, "b": 2, "c": 4}),
    ("", "", {}),
    ("a\\", "a\\", {}),
    ("[abc", "[abc", {}),
    ("[^", "[^", {}),
])
def test_numbered_groups(pattern, plain, numbers):
    assert regex.numbered_groups(pattern) == (plain, numbers)


@given(st.lists(st.sampled_from(["(?P<g>a)", "(b)", "(?:c)", r"\(", "[(]", "[^)]", "[]]", "d", "|"]), max_size=8))
def test_numbered_groups_match_what_the_named_pattern_matches(pieces):
    named = "".join(f"(?P<g{i}>" + p[len("(?P<g>"):] if p.startswith("(?P<g>") else p for i, p in enumerate(pieces))
    plain, numbers = regex.numbered_groups(named)
    compiled = re.compile(named)
    assert numbers == {name: compiled.groupindex[name] for name in compiled.groupindex}
    text = "abcd(x"
    a, b = compiled.search(text), re.compile(plain).search(text)
    assert (a and a.span()) == (b and b.span())


@given(st.text())
def test_escape_is_re_escape(text):
    assert regex.escape(text) == re.escape(text)
    assert re.fullmatch(regex.escape(text), text, re.DOTALL)


def test_py_space_is_pythons_whitespace():
    spaces = re.compile(f"[{regex.PY_SPACE}]")
    assert all(bool(spaces.fullmatch(chr(c))) is chr(c).isspace() for c in range(0x3001))

"""`errkit explain`'s start: what it imports, and that the shortcuts taken for speed answer as the
long way does (cold start at most 2x `python -c pass`).

The explain path leaves Python's `re` (and `enum`), `json` and `ast` unloaded: its regexes are
compiled by RE2 (errkit/core/regex.py), its index is read from a marshal cache holding the entries and
wordings one by one, and the fixes' expressions come vetted and compiled in that cache."""

import io
import math
import os
import re
import subprocess
import sys
import textwrap

import pytest
import re2
from hypothesis import example, given
from hypothesis import strategies as st

from errkit.explain import registry, command
from errkit.core.index_format import HEADER
from errkit.explain.matching.index import INDEX_FILE, Index, numbered
from errkit.explain.matching import around
from errkit.core import suggest
from errkit.core import helpers, regex, values
from errkit.core.regex import PY_SPACE, escape
from wheelhouse import clean_env
from support import bundled_catalogue

MESSAGE = "num_q_heads=12 must be divisible by and num_kv_heads=8"
HEAVY = ("re", "enum", "json", "ast", "_ast", "argparse", "pathlib", "importlib.metadata", "typing", "inspect", "math")


# -- what a start imports ---------------------------------------------------------------------------


PROBE = textwrap.dedent("""
    import sys
    before = set(sys.modules)
    from errkit.cli import main
    code = main(sys.argv[1:])
    print(repr(sorted(set(sys.modules) - before)), file=sys.stderr)
    sys.exit(code)
""")

PASTES = {
    "a message": MESSAGE,
    "a traceback": ('Traceback (most recent call last):\n  File "model.py", line 3, in <module>\n'
                    '    attention(q, k, v)\nValueError: ' + MESSAGE + "\n"),
    "a pytest failure": f"E       ValueError: {MESSAGE}\n",
    "our note line": "[RA105] Query heads are not a multiple of key/value heads - valid num_kv_heads: 1, 2, 3, 4, 6, 12 "
                     "- see https://errkit.github.io/errkit/0.1/errors/RA105/?num_q_heads=12&num_kv_heads=8",
    "a code": "RA105",
}


@pytest.mark.parametrize("what", list(PASTES))
def test_an_explain_start_imports_no_heavy_module(what, errkit_venv, tmp_path):
    """In the wheel's venv, with the caches warm (the second run), as a user's every start after
    the first."""
    env = dict(clean_env(), ERRKIT_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    for _ in range(2):
        proc = subprocess.run([str(errkit_venv.python), "-c", PROBE, "explain", PASTES[what]], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("RA105"), proc.stdout
    loaded = eval(proc.stderr.strip().splitlines()[-1])  # noqa: S307 - our own probe's repr of a list
    assert "errkit.explain.command" in loaded and ("re2" in loaded or what == "a code")  # (a code needs no regex)
    assert not set(HEAVY) & set(loaded), f"explain imported {sorted(set(HEAVY) & set(loaded))}"
    # a log's prefilter and look-ahead, and the log records of the lines read after a match, are
    # not this paste's (issue 30: cold start unchanged)
    assert not {"hyperscan", "errkit.explain.prefilter", "errkit.explain.ahead", "errkit.explain.records"} & set(loaded)


def test_the_first_start_builds_the_cache_the_next_ones_read(tmp_path):
    env = dict(os.environ, ERRKIT_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    runs = [subprocess.run([sys.executable, "-m", "errkit", "explain", MESSAGE], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300) for _ in range(2)]
    assert runs[0].stdout == runs[1].stdout and runs[0].stdout.startswith("RA105")
    (cache,) = (tmp_path / "cache").glob("index-*")
    assert cache.read_bytes().startswith(registry.CacheFile.MAGIC)


# -- the regexes without lookarounds mean what they meant ------------------------------------------


def test_py_space_is_pythons_whitespace():
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]  # (a lone surrogate is no UTF-8)
    spaces = {c for c in chars if re.fullmatch(r"\s", c)}
    for engine in (re, re2):
        klass = engine.compile(f"[{PY_SPACE}]")
        assert {c for c in chars if klass.fullmatch(c)} == spaces, engine


# HEADER as it was, with a lookbehind: Python's `re` only
LOOKBEHIND_HEADER = re.compile(
    r"(?:^|(?<=[\s:\[\]|>(]))(?P<exc>(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*(?:Error|Exception))"
    r"(?:: ?(?P<msg>.*))?$"
)
PIECES = ["ValueError", "Exception", "jax.errors.", "Error", "x", "_", "1", ".", ":", ": ", " ", "\t", "[", "]", "|", ">",
          "(", ")", "\u3000", "\xa0", "\x1c", "é", "E   ", "2026-01-01 ", "boom", "Errors", "\r"]


def _header(pattern, text: str):
    m = pattern.search(text)
    if m is None:
        return None
    msg = pattern.groupindex["msg"]
    return m.group("exc"), m.group("msg"), m.start(msg) if m.group("msg") is not None else None


@pytest.mark.parametrize("before", [*" \t\u3000\x1c:[]|>(", *"a_.)-='\"", "", "x."])
def test_header_is_read_after_each_character_it_was(before):
    for text in (f"{before}ValueError: boom", f"log{before}jax.errors.TracerError", f"{before}Exception:x"):
        expected = _header(LOOKBEHIND_HEADER, text)
        assert _header(re.compile(HEADER.pattern), text) == expected
        assert _header(re2.compile(HEADER.pattern), text) == expected


@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_header_without_lookbehind_finds_what_it_found(text):
    expected = _header(LOOKBEHIND_HEADER, text)
    assert _header(re.compile(HEADER.pattern), text) == expected
    assert _header(re2.compile(HEADER.pattern), text) == expected


@given(st.text(alphabet=st.sampled_from("abc_.()[]{}?*+-|^$\\&~# \t\n\r\v\f:'\"é"), max_size=20))
def test_escape_is_re_escape(text):
    assert escape(text) == re.escape(text)
    assert re2.fullmatch(escape(text), text) is not None


@given(st.sampled_from(["", "-", "+"]), st.sampled_from(["", "0", "00", "1", "01"]),
       st.sampled_from(["inf", "nan", "5", "1.5", "e3", "infx", ""]), st.sampled_from(["", "%", ",", "_"]))
def test_number_reads_as_before(sign, zeros, body, tail):
    text = sign + zeros + body + tail
    cleaned = text.rstrip("%").replace(",", "").replace("_", "")
    assert values._number(text) == re.sub(r"^([-+]?)0+(?=inf|nan)", r"\1", cleaned)


@given(st.text(alphabet=st.sampled_from("ab_19 .%-é"), max_size=30),
       st.text(alphabet=st.sampled_from("ab_19%"), min_size=1, max_size=4))
@example("12splash_fwd", "splash")  # digits before it in its run: the identifier starts there
@example("a12splash_fwd", "splash")  # a letter before: it starts earlier
@example("x.splash", "splash")
@example("splash", "1splash")
def test_an_identifier_starting_with_a_name_is_found_without_a_regex(text, name):
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
    # read in the bytes (read_on does not decode a match's window for kernel names), framed by other bytes
    from errkit.explain.ahead import Ahead

    data = b"\xff9" + text.encode("utf-8") + b"x\xc3"
    assert around.starts_identifier_in(Ahead(data), 2, len(data) - 2, name) == any(w.startswith(name) for w in words)


def test_a_small_pattern_moves_to_pythons_re_once_it_is_loaded():
    pattern = regex.Lazy(r"[0-9]+")
    assert pattern.search("a 12").group() == "12"
    assert pattern._by_re == ("re" in sys.modules or not regex.is_re2())  # (pytest has loaded re)


# -- the cache answers as the JSON index does -------------------------------------------------------


def _suggest_cases():
    index = Index.load()
    for code in index.entries:
        entry = index.entries[code]
        params = {name: values.sample(p["type"], seed) for seed, (name, p) in enumerate(entry["params"].items())}
        for fix in entry["fixes"]:
            if fix.get("suggest"):
                yield code, fix, params


def test_vetted_suggestions_compute_what_vetting_again_computes(tmp_path, monkeypatch):
    """Every suggest expression of the bundled catalogue, with every param, then with each one
    missing: the cache's compiled code gives the answer `expr.evaluate` gives."""
    monkeypatch.setenv("ERRKIT_CACHE_DIR", str(tmp_path))
    index = Index(registry.merged_cached(registry.sources(bundled=INDEX_FILE)))
    assert isinstance(index.data.get("blob"), registry.CacheFile), "read from the cache"
    cases = list(_suggest_cases())
    assert len(cases) > 100
    for code, fix, params in cases:
        vetted = index.vetted(code)
        assert set(fix["suggest"].values()) <= set(vetted), code
        for given_params in [params] + [{k: v for k, v in params.items() if k != name} for name in params]:
            assert suggest.suggestions(fix, given_params, vetted) == suggest.suggestions(fix, given_params), (code, given_params)


def test_an_answer_from_the_cache_is_the_answer_from_the_json_index(tmp_path, monkeypatch):
    monkeypatch.setenv("ERRKIT_CACHE_DIR", str(tmp_path))
    plain = Index.load()
    cached = Index(registry.merged_cached(registry.sources(bundled=INDEX_FILE)))
    assert isinstance(cached.data.get("blob"), registry.CacheFile)
    for text in [*PASTES.values(), "gqa-head-count", "GqaHeadCountError", "num_q_heads=12 must be divisble by num_kv_heads=8"]:
        answers = []
        for index in (plain, cached):
            out = io.StringIO()
            command.run([text], as_json=True, show_all=True, out=out, err=io.StringIO(), index=index)
            answers.append(out.getvalue())
        assert answers[0] == answers[1] and answers[0].startswith('{"code": "RA105"'), text


@pytest.mark.parametrize("garbage", [b"", b"errkit-index-cache\n", b"errkit-index-cache\n\xff\xff\xff\xff\x00\x00\x00\x00",
                                     b"not a cache at all", "truncated"])
def test_a_corrupt_index_cache_is_made_again(garbage, tmp_path):
    env = dict(os.environ, ERRKIT_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")

    def explain_once():
        return subprocess.run([sys.executable, "-m", "errkit", "explain", MESSAGE], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)

    good = explain_once()
    (cache,) = (tmp_path / "cache").glob("index-*")
    whole = cache.read_bytes()
    cache.write_bytes(whole[: len(whole) // 2] if garbage == "truncated" else garbage)
    again = explain_once()
    assert (again.returncode, again.stdout, again.stderr) == (0, good.stdout, "")
    assert cache.read_bytes() == whole, "made again"


# -- the fixes' helpers without `math` --------------------------------------------------------------


@given(st.integers(min_value=-(2**70), max_value=2**70), st.integers(min_value=-(2**70), max_value=2**70))
@example(0, 0)
@example(-12, 0)
def test_gcd_is_maths(a, b):
    assert helpers.gcd(a, b) == math.gcd(a, b)


def _outcome(fn, x):
    try:
        return fn(x)
    except OverflowError:
        return OverflowError


@given(st.one_of(st.integers(min_value=-(2**1100), max_value=2**1100), st.floats(allow_nan=True, allow_infinity=True)))
@example(float("inf"))
@example(float("-inf"))
@example(float("nan"))
@example(1e308)
@example(2**1024)
def test_is_finite_is_maths(x):
    assert _outcome(helpers.is_finite, x) == _outcome(math.isfinite, x)
    assert not helpers.is_finite(True) and not helpers.is_finite("1")


def test_numbered_groups_read_what_named_groups_read():
    """Every wording of the bundled catalogue, on messages rendered from it: its regex as the cache
    keeps it (groups by number) captures the values its named groups capture."""
    from errkit.catalogue import wordings
    index = Index.load()
    by_wording = {(w["code"], w["variant"]): w for w in index.wordings}
    checked = 0
    for entry in bundled_catalogue().entries:
        for wording in wordings.wordings(entry):
            compiled = by_wording.get((entry.code, wording.index))
            if compiled is None or not wording.variant.message:
                continue
            source, groups = numbered(compiled)
            named, plain = re2.compile(compiled["regex"]), re2.compile(source)
            for params in wordings.sample_params(entry):
                try:
                    text = wording.render(params)
                except Exception:
                    continue
                a, b = named.search(text), plain.search(text)
                assert (a is None) == (b is None), text
                if a is not None:
                    assert a.span() == b.span(), text
                    got = [around.captured(compiled["captures"], m, g) for m, g in ((a, None), (b, groups))]
                    assert repr(got[0]) == repr(got[1]), text  # (repr: nan is nan)
                    checked += 1
    assert checked > 300

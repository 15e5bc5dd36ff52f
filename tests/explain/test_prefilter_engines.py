"""The prefilter engines (errkit/explain/prefilter.py) give the same answers: the same logs read
through RE2 (the locator searched line by line) and through Hyperscan (each block scanned once)
match the same lines the same way, and each key alone is found where RE2 finds it. Planted while
writing it: the third key dropped from the Hyperscan database -> the english, tracebacks and json
logs differ; the first or the sixth dropped -> the logs read the same (their lines hold other keys
too); so test_each_key_alone_is_found_by_every_engine, which fails for any key dropped (planted:
the first -> fails)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from errkit.explain import prefilter
from errkit.explain.matching.index import Index
from errkit.explain.matching.chunks import scan_chunks
from errkit.explain.matching.keys import Keys
from errkit.explain.reading import line_chunks

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks import logs  # noqa: E402

BLOCK = 64 * 1024  # blocks much smaller than a log's 4 MB: many block ends in a short log


def _read(index: Index, text: str) -> list[tuple]:
    data = text.encode("utf-8")
    blocks = line_chunks(data[at:at + BLOCK] for at in range(0, len(data), BLOCK))
    return [(m.code, m.line, m.offset, m.text, repr(sorted(m.params.items())), m.kernel, m.weak)
            for m, _ in scan_chunks(index, blocks)]


def _with(engine, tmp_path) -> Index:
    index = Index.load()
    if engine == "re2":
        index.room(Keys)._prefilter = prefilter.Searched(index.room(Keys).locator())
    else:
        pytest.importorskip("hyperscan")
        made = index.room(Keys)._prefilter = prefilter.scanned(index.room(Keys).alternatives(), str(tmp_path))  # what `chosen` makes
        assert made is not None and made.split is not None
    return index


@pytest.mark.parametrize("kind", logs.KINDS)
def test_every_engine_reads_a_log_the_same(kind, tmp_path):
    text, expected = logs.make_log(kind, 12_000, error_every=30, seed=7)
    text += "".join(f"[RA105] see https://errkit.github.io/errkit/0.1/errors/RA{n}05/\n" for n in range(1, 4))
    answers = {engine: _read(_with(engine, tmp_path), text) for engine in prefilter.ENGINES}
    assert answers["re2"], "nothing matched: the log holds no catalogued error"
    assert sum(1 for a in answers["re2"] if not a[-1]) >= sum(expected.values()) * 0.9
    for engine, found in answers.items():
        assert found == answers["re2"], f"{engine} differs from re2"


@pytest.mark.parametrize("engine", prefilter.ENGINES[1:])
def test_each_key_alone_is_found_by_every_engine(engine, tmp_path):
    fast, index = _with(engine, tmp_path), Index.load()
    plain = prefilter.Searched(index.room(Keys).locator())
    for key in index.keys:
        data = b"2026-11-29 INFO noise\n  at " + key.replace(" ", " \t ").encode("utf-8") + b" end\n"
        assert plain.over(data)(0) is not None, key
        assert fast.room(Keys)._prefilter.over(data)(0) == plain.over(data)(0), key


def test_a_database_compiled_before_is_read_from_the_cache(tmp_path):
    pytest.importorskip("hyperscan")
    alternatives = Index.load().room(Keys).alternatives()
    assert prefilter._hyperscan(alternatives, str(tmp_path)) is not None
    saved = list(tmp_path.glob("prefilter-*.hs"))
    assert len(saved) == 1
    loaded = prefilter._hyperscan(alternatives, str(tmp_path))  # from the file, with a scratch of its own
    assert prefilter.Scanned(loaded).over(b'x\n  File "a.py", line 1\n')(0) == 4


def test_re2_is_chosen_when_asked_or_when_hyperscan_is_missing(monkeypatch):
    index = Index.load()
    monkeypatch.setenv(prefilter.ENV, "re2")
    assert prefilter.chosen(index.room(Keys).alternatives(), index.room(Keys).locator()).name == "re2"
    monkeypatch.delenv(prefilter.ENV)
    monkeypatch.setitem(sys.modules, "hyperscan", None)  # not installed
    assert prefilter.chosen(index.room(Keys).alternatives(), index.room(Keys).locator()).name == "re2"


WHITESPACE_RUNS = (" ", " ", " ", "  ", "\t", "\n", " \n", "\r\n", "\n\n", "\n   ", "\t \f", "\v\v\v")


@pytest.mark.parametrize("most, patterns", [(None, "runs"), (3, "runs"), (None, "pairs")])
def test_single_spaced_scan_finds_the_starts_of_the_alternatives(most, patterns, tmp_path, monkeypatch):
    """Scanned with the single-spaced database and the run patterns (what `scanned` builds) finds
    the same match starts as the alternatives themselves, in texts of keys' words joined by runs
    of every kind (runs near and far from each other, a match across lines), and so do its
    fallback to the alternatives for a block of many runs (`most`: MAX_PAIRS made 3) and the
    pairs of whitespace characters that stand for the run patterns of a large catalogue.
    Planted: `reach` made 0 -> fails (the matches with a run of two are missed); the clusters'
    windows cut at their last run's start (no `reach` after it) -> fails."""
    pytest.importorskip("hyperscan")
    import random

    alternatives = Index.load().room(Keys).alternatives()
    if patterns == "pairs":  # a catalogue too large for run patterns
        monkeypatch.setattr(prefilter, "MAX_RUN_PATTERNS", 0)
    split = prefilter.scanned(alternatives, str(tmp_path))
    exact = prefilter.Scanned(prefilter._hyperscan(alternatives, str(tmp_path)))
    if most is not None:
        monkeypatch.setattr(prefilter.Scanned, "MAX_PAIRS", most)
    words = [w for key in Index.load().keys for w in key.split(" ")] + ["noise", "the", "2026-11-29"]
    rng = random.Random(11)
    for _ in range(1500):
        text = "".join(rng.choice(words) + (rng.choice(WHITESPACE_RUNS) if rng.random() < 0.4 else " ")
                       for _ in range(rng.randint(1, 60))).encode("utf-8")
        split._exact_for = 0
        assert sorted(set(split.starts(text))) == sorted(set(exact.starts(text))), text


@pytest.mark.parametrize("runs", [("  ", "  "), (" \t ", " " * 300), ("\n  ", "\n" + " " * 600), (" ", " \v\v ")])
def test_a_short_piece_between_two_runs_is_read_over(runs, tmp_path):
    """A key whose middle piece is short (`Expected a tiled`: `a` is looked for with the piece
    before it) with runs of two or more on both sides, the second longer than a block's `reach`:
    found where the alternatives themselves find it (_run_end goes on over the short piece).
    Planted: _run_end stopping at the first run's end -> fails for the long runs; no run pattern
    after a short piece -> fails for a single space before it and a run after it."""
    pytest.importorskip("hyperscan")
    from errkit.core.index_format import SPACE

    alternatives = Index.load().room(Keys).alternatives()
    split = prefilter.scanned(alternatives, str(tmp_path))
    exact = prefilter.Scanned(prefilter._hyperscan(alternatives, str(tmp_path)))
    keys = [a for a in alternatives if len(a.split(SPACE + "+")) == 3
            and len(prefilter._unescaped(a.split(SPACE + "+")[1]).encode()) < prefilter.SHORT]
    assert len(keys) >= 5
    for key in keys:
        first, short, last = (prefilter._unescaped(p) for p in key.split(SPACE + "+"))
        text = f"noise here\n  at {first}{runs[0]}{short}{runs[1]}{last} end\n".encode()
        found = sorted(set(split.starts(text)))
        assert found == sorted(set(exact.starts(text))) and found, (key, text)


def test_run_end_goes_over_short_pieces_between_runs():
    data = b"x   , \t  y  zzz"
    assert prefilter._run_end(data, 1) == 12  # over `,` and `y` (short, each followed by a run of two or more) to `zzz`
    assert prefilter._run_end(b"x  , y", 1) == 3  # `,` followed by one space: the run ends before it
    assert prefilter._run_end(b"ab  cde  f", 2) == 4  # `cde` is not short
    assert prefilter._run_end(b"a" + b" " * 1000 + b"b", 1) == 1001  # longer than REST
    assert prefilter._run_end(b"a  ", 1) == 3


def test_the_locator_regex_is_made_only_for_the_engine_that_searches_with_it(monkeypatch):
    """chosen() takes the locator regex or a function making it: the hyperscan engine never calls
    it (RE2 compiling every key as one regex: 7 ms of each log's start), re2 calls it once."""
    pytest.importorskip("hyperscan")
    index = Index.load()
    made = []

    def locator():
        made.append(1)
        return index.room(Keys).locator()

    monkeypatch.delenv(prefilter.ENV, raising=False)
    assert prefilter.chosen(index.room(Keys).alternatives(), locator).name == "hyperscan" and made == []
    monkeypatch.setenv(prefilter.ENV, "re2")
    found = prefilter.chosen(index.room(Keys).alternatives(), locator)
    assert found.name == "re2" and made == [1] and found.over(b'x\n  File "a.py", line 1\n')(0) == 4

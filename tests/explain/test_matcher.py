"""errkit.Matcher, the matcher as a Python object: the same answers as `errkit explain --all --json`,
pickled small and read again in another process (from explain's index cache), safe to share
between threads; a file's triage reads it in blocks, memory flat in the file's size."""

import json
import pickle
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest

import errkit
from benchmarks import logs
from errkit.explain.inputs import text_blocks

ERRKIT = Path(sys.executable).with_name("errkit")
MESSAGE = "ValueError: num_q_heads=12 must be divisible by num_kv_heads=8"


@pytest.fixture(scope="module")
def matcher():
    return errkit.Matcher()


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("matcher") / "host-042.log"
    path.write_text(logs.make_log("tracebacks", 3000, error_every=30, seed=7)[0])
    return path


def cli_answers(*args) -> list[dict]:
    done = subprocess.run([str(ERRKIT), "explain", "--all", "--json", *map(str, args)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_answers_are_the_commands(matcher, log):
    assert matcher.explain_text(MESSAGE) == cli_answers(MESSAGE)
    assert matcher.explain_lines(log.read_text().splitlines()) == cli_answers(log)
    with open(log, "rb") as handle:  # bytes lines, newlines kept
        assert matcher.explain_lines(handle) == cli_answers(log)
    assert matcher.explain_text("all fine here") == []


def test_a_file_summary_is_the_reports(matcher, log):
    done = subprocess.run([str(ERRKIT), "explain", "--report", "--json", str(log)], capture_output=True, text=True, timeout=120)
    doc = json.loads(done.stdout)
    from errkit.explain.report import report

    with open(log, "rb") as handle:
        assert report(matcher.index, [matcher.triage(handle, str(log))]) == doc


def test_it_pickles_small_and_loads_in_another_process(matcher, tmp_path):
    data = pickle.dumps(matcher)
    assert len(data) < 4096  # where the index is, not the index
    (tmp_path / "matcher.pickle").write_bytes(data)
    child = ("import json, pickle, sys; m = pickle.load(open(sys.argv[1], 'rb')); "
             "print(json.dumps(m.explain_text(sys.argv[2])))")
    done = subprocess.run([sys.executable, "-c", child, str(tmp_path / "matcher.pickle"), MESSAGE], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == matcher.explain_text(MESSAGE)


def test_an_index_compiled_in_memory_pickles_whole():
    from errkit.explain.matching.index import INDEX_FILE, Index

    loaded = errkit.Matcher(index=Index.load(INDEX_FILE))  # no cache file behind it
    again = pickle.loads(pickle.dumps(loaded))
    assert again.explain_text(MESSAGE) == loaded.explain_text(MESSAGE)


def test_threads_share_one_matcher(log):
    shared = errkit.Matcher()  # fresh: its lazy state (key set, compiled regexes) is built under the threads
    lines = log.read_text().splitlines()
    results, failures = [], []

    def work():
        try:
            for _ in range(3):
                results.append(json.dumps(shared.explain_lines(lines)))
                with open(log, "rb") as handle:
                    results.append(json.dumps(shared.triage(handle, str(log))))
        except Exception as err:  # noqa: BLE001 - any failure in a thread fails the test
            failures.append(repr(err))

    threads = [threading.Thread(target=work) for _ in range(6)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch every few bytecodes: a race shows
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    alone = errkit.Matcher()
    with open(log, "rb") as handle:
        expected = {json.dumps(alone.explain_lines(lines)), json.dumps(alone.triage(handle, str(log)))}
    assert failures == [] and len(results) == 36 and set(results) == expected


def test_memory_is_flat_in_the_files_size(matcher, tmp_path):
    """A file three times larger peaks at the same memory (blocks stream through), below its size."""
    block = ("2026-11-29 10:00:00,000 INFO trainer: step done, loss 0.25, nothing to see here at all\n" * 99
             + f"2026-11-29 10:00:00,000 ERROR {MESSAGE}\n").encode()
    small, large = tmp_path / "small.log", tmp_path / "large.log"
    small.write_bytes(block * (20 * 2**20 // len(block)))
    large.write_bytes(block * (60 * 2**20 // len(block)))
    matcher.triage(text_blocks(str(small)), "warm")  # the index's entries read, regexes compiled
    peaks = []
    for path in (small, large):
        tracemalloc.start()
        summary = matcher.triage(text_blocks(str(path)), str(path))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert summary["codes"]["RA105"]["count"] == path.stat().st_size // len(block)
    assert peaks[1] < peaks[0] + 2**20 and peaks[1] < large.stat().st_size / 1.5, peaks


def test_a_catalogue_folder(tmp_path):
    """`Matcher(catalog=DIR)` reads DIR's compiled index when it is up to date; a copy of the
    catalogue without one is a usage error saying what to do, unless a compiler is handed in."""
    import shutil

    from errkit.core import UsageError
    from support import CATALOG

    assert errkit.Matcher(catalog=CATALOG).explain_text(MESSAGE)[0]["code"] == "RA105"
    copy = tmp_path / "catalog"
    shutil.copytree(CATALOG, copy)
    with pytest.raises(UsageError, match="errkit generate"):
        errkit.Matcher(catalog=copy)
    from errkit.generate.index import compiled_index

    compiled = errkit.Matcher(catalog=copy, compile_catalogue=compiled_index)
    assert compiled.explain_text(MESSAGE)[0]["code"] == "RA105"
    assert pickle.loads(pickle.dumps(compiled)).explain_text(MESSAGE) == compiled.explain_text(MESSAGE)  # pickled whole

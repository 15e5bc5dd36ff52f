"""One large log file read by several workers, a part each (errkit/explain/parts.py): the parts'
summaries joined give the summary of the file read whole, wherever the cuts fall (in a
traceback, between the lines of one error, in a JSON log), whatever the number of parts."""

from __future__ import annotations

import gzip
import json
import random

import pytest

from benchmarks import logs
from errkit.explain import parts, triage, workers
from errkit.explain.matching.index import Index
from errkit.explain.reading import file_blocks
from tests.realworld import report

INDEX = Index.load()


@pytest.fixture
def small_parts(monkeypatch):
    """Parts of a few hundred KB, overlaps just over two windows: many joins in a small file."""
    monkeypatch.setattr(parts, "PART_MIN", 1)
    monkeypatch.setattr(parts, "OVERLAP", 34_000)


def _whole(path) -> str:
    return json.dumps(triage.triage(INDEX, file_blocks(str(path)), str(path)), sort_keys=True)


def _in_parts(path, count: int) -> str:
    cuts = parts.parts_of(str(path), count)
    assert cuts is not None and len(cuts) - 1 >= min(count, 3)
    host, header = workers._file_head(str(path))
    found = [parts.summarise_part(INDEX, str(path), str(path), host, header, cuts, k) for k in range(len(cuts) - 1)]
    return json.dumps(parts.joined(found, str(path), host, cuts[-1]), sort_keys=True)


def _real_world_log(path, seed: int) -> None:
    """Every collected real-world text, shuffled, between English log lines (tracebacks, compiler
    dumps, errors over several lines, JSON lines)."""
    rng = random.Random(seed)
    texts = [case["text"] for case in report.load_cases() if case.get("text")]
    prose = logs.prose_sentences()
    out = []
    for _ in range(3):
        rng.shuffle(texts)
        for text in texts:
            out += [f"2026-11-29 10:00:{rng.randrange(60):02d},000 INFO trainer: {rng.choice(prose)}"
                    for _ in range(rng.randrange(4))]
            out.append(text)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


@pytest.mark.parametrize("kind", logs.KINDS)
def test_a_generated_log_in_parts_gives_the_whole_files_summary(kind, small_parts, tmp_path):
    path = tmp_path / "train.log"
    path.write_text(logs.make_log(kind, 12_000, error_every=5, seed=4)[0], encoding="utf-8")
    whole = _whole(path)
    assert json.loads(whole)["matches"] > 1000
    for count in (2, 5, 9):
        assert _in_parts(path, count) == whole, count


def test_real_world_texts_in_parts_give_the_whole_files_summary(small_parts, tmp_path):
    path = tmp_path / "real.log"
    _real_world_log(path, 5)
    whole = _whole(path)
    for count in (3, 7, 11, 13):
        assert _in_parts(path, count) == whole, count


def test_workers_read_a_large_file_in_parts_and_report_as_one(small_parts, tmp_path, monkeypatch):
    path = tmp_path / "host-1.log"
    _real_world_log(path, 8)
    alone = workers.summaries(_matcher(), [str(path)], workers=1)
    planned = []
    original = workers._split
    monkeypatch.setattr(workers, "_split", lambda *a: planned.append(original(*a)) or planned[-1])
    split = workers.summaries(_matcher(), [str(path)], workers=3)
    assert len(planned[0][0]) == 4  # three parts
    assert json.dumps(split, sort_keys=True) == json.dumps(alone, sort_keys=True)


def test_parts_that_cannot_be_joined_are_read_again_whole(small_parts, tmp_path, monkeypatch):
    path = tmp_path / "host-2.log"
    path.write_text(logs.make_log("tracebacks", 8000, error_every=5, seed=1)[0], encoding="utf-8")
    alone = workers.summaries(_matcher(), [str(path)], workers=1)

    def refuse(tail, head):
        raise parts.NoJoin

    monkeypatch.setattr(parts, "_join", refuse)
    assert workers.summaries(_matcher(), [str(path)], workers=2) == alone


def _matcher():
    from errkit.explain.matcher import Matcher

    return Matcher(index=Index.load())


def test_only_plain_text_is_cut_and_each_cut_is_a_lines_start(small_parts, tmp_path):
    text = logs.make_log("english", 6000, seed=2)[0]
    plain = tmp_path / "a.log"
    plain.write_text(text, encoding="utf-8")
    data = plain.read_bytes()
    cuts = parts.parts_of(str(plain), 4)
    assert cuts[0] == 0 and cuts[-1] == len(data) and len(cuts) == 5
    assert all(data[c - 1:c] == b"\n" for c in cuts[1:-1])
    (tmp_path / "a.log.gz").write_bytes(gzip.compress(data))
    (tmp_path / "u.log").write_bytes(text.encode("utf-16"))
    assert parts.parts_of(str(tmp_path / "a.log.gz"), 4) is None and parts.parts_of(str(tmp_path / "u.log"), 4) is None


def test_an_error_over_several_lines_cut_by_an_overlap_is_one_answer_with_every_value(small_parts, tmp_path):
    """An overlap that begins between the lines of one error: the later part finds its last line
    without the values of the first, so the join is at a later match (planted: joined at the first
    match both found, whatever its values -> that error's status is lost)."""
    from tests.explain.matching.test_together import FINAL, HANDLE, MEMORY, TRACEBACK

    rng = random.Random(3)
    prose = logs.prose_sentences()
    lines = []
    for n in range(300):  # each error's status its own: a value lost at a join is missed
        lines += [f"2026-11-29 10:00:{n % 60:02d},000 INFO trainer: {rng.choice(prose)}" for _ in range(rng.randrange(8, 20))]
        lines.append((HANDLE + MEMORY + TRACEBACK + FINAL).rstrip("\n").replace("INTERNAL_ERROR", f"ERROR_{n}"))
    path = tmp_path / "cudnn.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = path.read_bytes()
    whole = _whole(path)
    memory_line = data.index(MEMORY.split("]")[0].encode(), len(data) // 2)
    memory_line = data.rindex(b"\n", 0, memory_line) + 1  # the second line of an error, just past the middle
    cuts = [0, memory_line + parts.OVERLAP, len(data)]  # the second part's scan begins at that line
    host, header = workers._file_head(str(path))
    found = [parts.summarise_part(INDEX, str(path), str(path), host, header, cuts, k) for k in range(2)]
    assert found[1]["head"][0][0] == data.index(FINAL.encode(), memory_line)  # its first match: that error's last line, alone
    assert json.dumps(parts.joined(found, str(path), host, cuts[-1]), sort_keys=True) == whole


@pytest.mark.slow  # (spawned workers each import errkit and read the index: about 10 s)
def test_workers_started_afresh_read_the_parts_they_were_planned_for(small_parts, tmp_path, monkeypatch):
    """Workers that do not inherit this process's memory (forkserver, spawn: where the process runs
    threads, or on macOS) read each part with the overlap its cuts were made for (planted: the
    worker's own OVERLAP -> the parts do not join, or join wrong)."""
    import multiprocessing

    path = tmp_path / "host-3.log"
    _real_world_log(path, 9)
    alone = workers.summaries(_matcher(), [str(path)], workers=1)
    monkeypatch.setattr(workers, "_context", lambda: multiprocessing.get_context("spawn"))
    planned = []
    original = workers._split
    monkeypatch.setattr(workers, "_split", lambda *a: planned.append(original(*a)) or planned[-1])
    split = workers.summaries(_matcher(), [str(path)], workers=2)
    assert len(planned[0][0]) == 3  # two parts
    assert json.dumps(split, sort_keys=True) == json.dumps(alone, sort_keys=True)


def test_a_worker_started_by_a_fork_server_outlives_its_watch():
    """Under forkserver (errkit's context when its process runs threads) a worker's parent is the
    fork server: a worker that watched errkit's own pid ended itself after WATCH seconds of work,
    and its file was reported lost."""
    import multiprocessing
    import time

    pool = workers.Pool(multiprocessing.get_context("forkserver"), 1, time.sleep, int)
    got, lost = [], []
    pool.run([(0, 4 * workers.WATCH)], lambda i, answer: got.append(i), lambda i, why: lost.append(why))
    assert got == [0] and not lost, lost


def test_forked_workers_start_with_the_log_paths_modules_and_prefilter(small_parts, tmp_path, monkeypatch):
    """Before forking the workers of a large file, errkit loads what each would load on its own
    (the prefilter's database, the modules a log's lines need): each starts with it."""
    import multiprocessing
    import sys

    from errkit.explain.matching.keys import Keys

    path = tmp_path / "host-1.log"
    _real_world_log(path, 8)
    matcher = _matcher()
    forked = []
    monkeypatch.setattr(workers, "Pool", lambda *a, **k: forked.append((matcher.index.room(Keys)._prefilter,
                                                                          "errkit.explain.records" in sys.modules)) or _NoPool())
    import errkit.explain

    monkeypatch.delitem(sys.modules, "errkit.explain.records", raising=False)  # (as in a process that read no log yet)
    monkeypatch.delattr(errkit.explain, "records", raising=False)
    monkeypatch.setattr(workers, "_context", lambda: multiprocessing.get_context("fork"))
    workers.summaries(matcher, [str(path)], workers=2)
    assert forked and forked[0][0] is not None and forked[0][1]


class _NoPool:
    def run(self, tasks, answered, lost):
        for task, _ in tasks:
            lost(task, "not run")

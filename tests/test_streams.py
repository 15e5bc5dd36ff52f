"""errkit's own process and its streams (errkit/streams.py): a paste's answer ends the process at
once (`end_now`), with everything written to a pipe or a file and the status it had."""

import os
import subprocess
import sys

from support import ROOT

WRITE_AND_END = ("import sys; from errkit.streams import end_now; sys.stdout.write('a' * 200000 + 'END'); "
                 "sys.stderr.write('said on stderr, no newline'); end_now(3)")


def _run(code: str, *args: str, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "NO_COLOR")}  # (block-buffered, as a pipe is; a bar not turned off)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, env={**env, "PYTHONPATH": str(ROOT)},
                          cwd=ROOT, **kw)


def test_ending_now_writes_what_was_buffered_and_keeps_the_status():
    done = _run(WRITE_AND_END)
    assert done.returncode == 3
    assert done.stdout == b"a" * 200000 + b"END"
    assert done.stderr == b"said on stderr, no newline"


def test_ending_now_skips_the_interpreter_teardown():
    """What it is for: no exit handler runs (the interpreter's teardown is skipped)."""
    done = _run("import atexit, sys; atexit.register(lambda: print('teardown')); " + WRITE_AND_END.split("; ", 1)[1])
    assert done.returncode == 3 and b"teardown" not in done.stdout


def test_a_reader_that_left_is_no_traceback():
    """The reader closed its end before the answer was flushed: the status stays, and nothing is
    printed of it."""
    code = ("import sys; from errkit.streams import end_now; sys.stdout.write('x' * 1000); sys.stdin.read(); "
            "end_now(4)")  # (the answer waits in the buffer until the reader has gone)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)})
    proc.stdout.close()
    proc.stdin.close()
    assert proc.wait(timeout=60) == 4
    assert proc.stderr.read() == b""


def test_a_paste_answer_through_the_console_script_is_whole():
    """errkit explain MSG, as its console script runs it, into a pipe: the whole answer."""
    errkit = os.path.join(os.path.dirname(sys.executable), "errkit")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    done = subprocess.run([errkit, "explain", "--json", "num_q_heads=12 must be divisible by and num_kv_heads=8"],
                          capture_output=True, env=env)
    assert done.returncode == 0 and done.stdout.rstrip().endswith(b"}") and b'"code": "RA105"' in done.stdout


def test_a_report_through_the_console_script_is_whole_with_its_status(tmp_path):
    """errkit explain --all --report, as its console script runs it (its process ended once the
    report is written, its workers joined), into a pipe: the whole report and the status it has:
    0 with errors found, 1 with none, on one worker and on two."""
    import json

    errkit = os.path.join(os.path.dirname(sys.executable), "errkit")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    found = tmp_path / "found.log"
    found.write_text("INFO start\nValueError: num_q_heads=12 must be divisible by and num_kv_heads=8\n" * 3000)
    clean = tmp_path / "clean.log"
    clean.write_text("INFO all is well\n" * 100)
    for workers in ("1", "2"):
        done = subprocess.run([errkit, "explain", "--all", "--report", "--json", "--quiet", "--workers", workers, str(found), str(clean)],
                              capture_output=True, env=env)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["totals"]["matches"] == 3000
        done = subprocess.run([errkit, "explain", "--all", "--report", "--quiet", "--workers", workers, str(clean)],
                              capture_output=True, env=env)
        assert done.returncode == 1 and b"no catalogued error found in 1 file(s)" in done.stderr


FORKSERVER_REPORT = """
import multiprocessing, sys
import errkit.cli as cli
import errkit.explain.progress as progress
import errkit.explain.workers as workers
progress.wanted = lambda stream, quiet: True  # the bar on: its queue is made
context = multiprocessing.get_context("forkserver")
workers._context = lambda: context
sys.exit(cli.main())
"""


def test_a_report_ended_at_once_leaves_no_semaphore_of_its_workers_behind(tmp_path):
    """Under forkserver (errkit's choice on macOS, or beside a thread), the progress bar's queue
    holds named semaphores that multiprocessing's resource tracker names as leaked, on stderr,
    when a process ends without freeing them; a report's process ends at once (end_now), so they
    are freed before: nothing on stderr but the bar, status 0."""
    found = tmp_path / "found.log"
    found.write_text("INFO start\nValueError: num_q_heads=12 must be divisible by and num_kv_heads=8\n")
    other = tmp_path / "other.log"
    other.write_text(found.read_text())
    done = _run(FORKSERVER_REPORT, "explain", "--all", "--report", "--workers", "2", str(found), str(other), timeout=120)
    assert done.returncode == 0, done.stderr
    assert b"RA105" in done.stdout
    assert b"leaked" not in done.stderr and b"Traceback" not in done.stderr, done.stderr

"""tests/quiet_cpu.py: while a quiet() is held no test runs, and it waits for those running."""

from __future__ import annotations

import threading
import time

import quiet_cpu


def _started(target) -> tuple[threading.Thread, threading.Event]:
    done = threading.Event()

    def run():
        target()
        done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, done


def test_quiet_waits_for_a_running_test_and_holds_back_the_next(tmp_path):
    release_test, release_quiet = threading.Event(), threading.Event()
    in_quiet = threading.Event()

    def a_test():
        with quiet_cpu.shared(tmp_path):
            release_test.wait(10)

    def lighthouse():
        with quiet_cpu.quiet(tmp_path) as waited:
            assert waited is not None
            in_quiet.set()
            release_quiet.wait(10)

    running, _ = _started(a_test)
    time.sleep(0.2)
    _, quiet_done = _started(lighthouse)
    assert not in_quiet.wait(0.6), "quiet() began while a test ran"
    release_test.set()
    assert in_quiet.wait(5), "quiet() did not begin once the running test ended"

    def next_test():
        with quiet_cpu.shared(tmp_path):
            pass

    _, next_done = _started(next_test)
    assert not next_done.wait(0.6), "a test began while quiet() was held"
    release_quiet.set()
    assert quiet_done.wait(5) and next_done.wait(5), "the next test did not begin after quiet()"


def test_quiet_gives_up_waiting_after_its_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(quiet_cpu, "WAIT_S", 0.5)
    with quiet_cpu.shared(tmp_path):
        start = time.monotonic()
        with quiet_cpu.quiet(tmp_path) as waited:
            assert waited is None
        assert time.monotonic() - start < 3

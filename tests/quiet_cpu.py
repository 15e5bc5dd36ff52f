"""A quiet CPU for the tests that score what they measure of it (Lighthouse): while one holds it,
the pytest-xdist workers start no other test.

Lighthouse times a page's tasks on this machine and scales them to a phone as if nothing else ran
(its simulated 4x slowdown); in a full run the other workers' tests (jax compiles, site builds)
share the cores and a page scoring 92-95 alone read 78-89. Every other test holds a shared lock on
`quiet.lock` while it runs; `quiet()` takes it exclusively, so the runs wait for the tests already
running to end and the others wait for it. A second lock, `gate.lock`, gives it the turn: a test
takes the gate only for a moment before its shared lock, and `quiet()` holds it from the start,
so workers starting test after test cannot keep it waiting. The wait is bounded (WAIT_S): past
it the runs go ahead on a busy CPU, as before. A session fixture that is set up inside a test
(a site build) is not held back: the locks are taken around the test itself."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path

# the longest test of the suite is about 3 minutes (tests/kernel's compiles)
WAIT_S = 300


def lock_folder(tmp_path_factory, worker_id: str) -> Path:
    """The folder every worker of this run sees (xdist's shared base temp), or this session's own."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if worker_id != "master" else base


def _open(folder: Path, name: str) -> int:
    return os.open(folder / name, os.O_RDWR | os.O_CREAT, 0o600)


@contextlib.contextmanager
def shared(folder: Path):
    """Held by a test while it runs: many at once, none while `quiet()` is held."""
    gate, lock = _open(folder, "gate.lock"), _open(folder, "quiet.lock")
    try:
        fcntl.flock(gate, fcntl.LOCK_EX)  # waits while a quiet() holds the gate
        try:
            fcntl.flock(lock, fcntl.LOCK_SH)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield
    finally:
        os.close(lock)  # closing releases the lock
        os.close(gate)


def _take(fd: int, deadline: float) -> bool:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)


@contextlib.contextmanager
def quiet(folder: Path):
    """No other test running while held: yields the seconds waited for the tests already running,
    or None when they ran past WAIT_S (the CPU is not quiet then)."""
    gate, lock = _open(folder, "gate.lock"), _open(folder, "quiet.lock")
    start = time.monotonic()
    deadline = start + WAIT_S
    try:
        held = _take(gate, deadline) and _take(lock, deadline)
        yield round(time.monotonic() - start, 1) if held else None
    finally:
        os.close(lock)
        os.close(gate)

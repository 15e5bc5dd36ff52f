"""A triage's worker processes can die (killed, out of memory), and so can errkit itself (issue 48):

- `kill -9` of the worker reading one file loses that file only: it is named (stderr and the report's
  skipped files), the other files are reported, and the exit status (3) says the report is partial
  (before: BrokenProcessPool, the whole report lost, exit 70);
- `kill -9` of errkit ends its workers (before: still running 90 s later).

Linux: a worker and the file it reads are found in /proc."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux's /proc")]
RA105 = "ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8"


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has ended (its reaper may be slow in a container)


def _reading(pid: int, path: Path) -> bool:
    try:
        return any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


def _wait_for(test, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = test()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("not in time")


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    from scripts.distinct_values_log import main

    folder = tmp_path_factory.mktemp("logs")
    for name in ("big1.log", "big2.log"):  # a minute or more each
        with open(folder / name, "w") as out:
            main(400_000, out)
    for k in range(3):
        (folder / f"small{k}.log").write_text(f"host=small-{k} {RA105}\n" * 5)
    return {p.name: p for p in folder.iterdir()}


def _start(*paths: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "errkit", "explain", "--all", "--json", "--quiet", "--workers", "2",
                             *map(str, paths)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_killed_worker_loses_its_file_only(logs):
    run = _start(logs["small0.log"], logs["big1.log"], logs["small1.log"], logs["small2.log"])
    try:
        victim = _wait_for(lambda: next((c for c in _children(run.pid) if _reading(c, logs["big1.log"])), None))
        os.kill(victim, signal.SIGKILL)
        out, err = run.communicate(timeout=120)
    finally:
        run.kill()
    assert run.returncode == 3, err
    doc = json.loads(out)
    lost = {f["file"]: f["skipped"] for f in doc["files"] if f["skipped"]}
    assert list(lost) == [str(logs["big1.log"])] and "killed by signal 9 (SIGKILL)" in lost[str(logs["big1.log"])]
    assert doc["totals"]["matches"] == 15 and doc["totals"]["files"] == 3, doc["totals"]
    assert f"errkit: lost {logs['big1.log']}: the worker reading it died (killed by signal 9 (SIGKILL))" in err, err


def test_errkit_killed_ends_its_workers(logs):
    run = _start(logs["big1.log"], logs["big2.log"])
    try:
        workers = _wait_for(lambda: (lambda found: found if len(found) == 2 else None)(
            [c for c in _children(run.pid) if _reading(c, logs["big1.log"]) or _reading(c, logs["big2.log"])]))
        os.kill(run.pid, signal.SIGKILL)
        run.communicate(timeout=30)
        _wait_for(lambda: not any(_alive(w) for w in workers), timeout=10)
    finally:
        run.kill()
        for w in _children(run.pid):
            os.kill(w, signal.SIGKILL)

"""A triage's progress bar: drawn on standard error when it is a terminal (a pseudo-terminal here),
never in a pipe, with NO_COLOR set or with --quiet. `ERRKIT_PROGRESS_AFTER=0` draws it from the
first file done (a real run waits a second), so no test depends on how long a run takes."""

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

ERRKIT = Path(sys.executable).with_name("errkit")
MESSAGE = "2026-11-29 10:00:00,000 ERROR ValueError: num_q_heads=12 must be divisible by num_kv_heads=8\n"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("progress")
    for n in range(6):
        (root / f"host-{n:03d}.log").write_text(("INFO step\n" * 2000) + MESSAGE)
    return root


def run(folder: Path, tmp_path: Path, terminal: bool, *options, env=None) -> tuple[int, str, str]:
    """(exit status, stdout, what standard error showed): a pseudo-terminal's output, or a pipe's."""
    env = {**os.environ, "ERRKIT_PROGRESS_AFTER": "0", "NO_COLOR": "", "TERM": "xterm-256color", **(env or {})}
    args = [str(ERRKIT), "explain", "--all", *(() if "--workers" in options else ("--workers", "1")), *options, str(folder)]
    out_file = tmp_path / "stdout.txt"
    with open(out_file, "wb") as out:
        if not terminal:
            done = subprocess.run(args, stdout=out, stderr=subprocess.PIPE, env=env, timeout=120)
            return done.returncode, out_file.read_text(), done.stderr.decode()
        master, slave = pty.openpty()
        proc = subprocess.Popen(args, stdout=out, stderr=slave, stdin=subprocess.DEVNULL, env=env)
        os.close(slave)
        seen = bytearray()
        while True:
            try:
                block = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not block:
                break
            seen += block
        os.close(master)
        code = proc.wait(timeout=120)
    return code, out_file.read_text(), seen.decode("utf-8", "replace")


def test_progress_is_drawn_on_a_terminal(folder, tmp_path):
    code, out, err = run(folder, tmp_path, True)
    assert code == 0 and out.startswith("errkit triage: 6 catalogued error(s)")
    assert "files" in err and "lines/s" in err and "ETA" in err, err
    assert "6/6 files" in err  # the last file done is drawn before the bar goes


def test_no_progress_in_a_pipe_with_no_color_or_quiet(folder, tmp_path):
    for terminal, options, env in ((False, (), None), (True, ("--quiet",), None), (True, (), {"NO_COLOR": "1"})):
        code, out, err = run(folder, tmp_path, terminal, *options, env=env)
        assert code == 0 and out.startswith("errkit triage: 6 catalogued error(s)")
        assert err == "", (terminal, options, env, err)


@pytest.fixture(scope="module")
def large(tmp_path_factory) -> Path:
    """Two files of three 4 MB blocks each: progress is drawn inside each file, not only after it."""
    root = tmp_path_factory.mktemp("large")
    for n in range(2):
        (root / f"host-{n:03d}.log").write_bytes((b"INFO step done, nothing to see here at all\n" * 300_000) + MESSAGE.encode())
    return root


@pytest.mark.parametrize("workers", ["1", "2"])
def test_progress_moves_inside_a_file(large, tmp_path, workers):
    code, out, err = run(large, tmp_path, True, "--workers", workers)
    assert code == 0 and out.startswith("errkit triage: 2 catalogued error(s)")
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", err)  # the bar's text, without its colours and cursor moves
    assert "2/2 files" in shown
    inside = [float(mb) for mb in re.findall(r"0/2 files ([0-9.]+)/[0-9.]+ MB", shown)]
    assert inside and max(inside) > 0, shown  # bytes counted while no file was done yet

"""`errkit explain`'s answer on a terminal, through the real command (issue 52, item 4): the fixes
before the explanation, which is wrapped to the terminal and cut to its first lines (--verbose:
all of it); colour on a terminal only, unless --color, NO_COLOR or FORCE_COLOR say otherwise (a
pseudo-terminal stands for the user's); a mistyped option answered with the command's own usage
and what was meant."""

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from errkit.explain.matcher import Matcher

ERRKIT = Path(sys.executable).with_name("errkit")
MESSAGE = "ValueError: num_q_heads=12 must be divisible by num_kv_heads=8"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    return {**env, **extra}


def explain(*args, **env) -> subprocess.CompletedProcess:
    return subprocess.run([str(ERRKIT), "explain", *args], capture_output=True, text=True, timeout=60, env=_env(**env))


def on_a_terminal(*args, columns: int = 72, **env) -> str:
    """What `errkit explain ARGS` writes to a pseudo-terminal `columns` wide."""
    main, child = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    done = subprocess.Popen([str(ERRKIT), "explain", *args], stdout=child, stderr=subprocess.DEVNULL, env=_env(**env))
    os.close(child)
    out = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    assert done.wait(timeout=60) == 0
    return out.decode().replace("\r\n", "\n")


def _labels(text: str) -> list[str]:
    return [line[2:11].strip() for line in text.splitlines() if line.startswith("  ") and line[2:11].strip()]


def test_the_fixes_come_before_a_wrapped_and_shortened_explanation():
    explanation = Matcher().index.entries["RA105"]["explanation"]
    done = explain(MESSAGE, COLUMNS="72")
    assert done.returncode == 0, done.stderr
    labels = _labels(done.stdout)
    assert labels.index("fix 1") < labels.index("fix 2") < labels.index("means") < labels.index("docs"), labels
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  means"))
    said = lines[start:next(i for i, line in enumerate(lines) if line.startswith("  docs"))]
    assert all(len(line) <= 72 for line in said), said
    assert 2 <= len(said) <= 4 and said[-1].strip() == "(--verbose: the whole explanation)", said
    words = " ".join(line[11:] for line in said[:-1]).split()
    assert words == " ".join(explanation.split()).split()[:len(words)], "the explanation's first words, in order"
    assert len(words) < len(explanation.split())

    verbose = explain(MESSAGE, "--verbose", COLUMNS="72").stdout.splitlines()
    start = next(i for i, line in enumerate(verbose) if line.startswith("  means"))
    said = verbose[start:next(i for i, line in enumerate(verbose) if line.startswith("  docs"))]
    assert all(len(line) <= 72 for line in said)
    assert " ".join(line[11:] for line in said).split() == explanation.split(), "all of it with --verbose"


def test_the_terminal_width_is_the_terminals():
    text = ANSI.sub("", on_a_terminal(MESSAGE, columns=60))
    means = text.split("  means")[1].split("  docs")[0]
    assert max(len(line) for line in ("  means" + means).splitlines()) <= 60
    wide = ANSI.sub("", on_a_terminal(MESSAGE, columns=160))
    assert len(wide.split("  means")[1].split("  docs")[0].splitlines()) < len(means.splitlines())


@pytest.mark.parametrize("args, env, coloured", [
    ((), {}, True),                                    # auto: a terminal
    (("--color", "never"), {}, False),
    ((), {"NO_COLOR": "1"}, False),
    ((), {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),  # NO_COLOR wins, as CPython reads them
    (("--color=always",), {"NO_COLOR": "1"}, True),    # asked for on the command line
])
def test_colour_on_a_terminal(args, env, coloured):
    assert bool(ANSI.search(on_a_terminal(*args, MESSAGE, **env))) == coloured


@pytest.mark.parametrize("args, env, coloured", [
    ((), {}, False),                                   # auto: a pipe
    ((), {"FORCE_COLOR": "1"}, True),
    ((), {"FORCE_COLOR": ""}, False),                  # set but empty: not set
    (("--color", "always"), {}, True),
    (("--color", "never"), {"FORCE_COLOR": "1"}, False),
])
def test_colour_in_a_pipe(args, env, coloured):
    done = explain(*args, MESSAGE, **env)
    assert done.returncode == 0 and bool(ANSI.search(done.stdout)) == coloured


@pytest.mark.parametrize("args, said", [
    (("--jsno", MESSAGE), "unrecognized arguments: --jsno (did you mean --json?)"),
    (("--colour", "never", MESSAGE), "unrecognized arguments: --colour (did you mean --color?)"),
    (("--format", "htm", MESSAGE), "(did you mean html?)"),
    (("--color", "sometimes", MESSAGE), "invalid choice: 'sometimes'"),
])
def test_a_mistyped_option_gets_the_commands_usage_and_what_was_meant(args, said):
    done = explain(*args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("usage: errkit explain "), done.stderr
    assert f"errkit explain: error: " in done.stderr and said in done.stderr, done.stderr


def test_a_mistyped_command_gets_what_was_meant():
    done = subprocess.run([str(ERRKIT), "explian", MESSAGE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "(did you mean explain?)" in done.stderr

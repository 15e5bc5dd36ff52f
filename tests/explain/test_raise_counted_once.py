"""One raise is one failure (issue 52): the texts real programs print for one raise (our kernel's
error with its `[RA105] ... see` note line, `logging.exception`'s message then its traceback, a
chained traceback repeating the message, as JAX's and wrappers' do) counted once by `errkit explain --all` and by the
report, through the real command; two raises of the same error are still two."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ERRKIT = Path(sys.executable).with_name("errkit")
MESSAGE = "num_q_heads=12 must be divisible by num_kv_heads=8"


def printed(program: str) -> str:
    """What `program` prints on standard error (its traceback), run by this Python."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(program)], capture_output=True, text=True, timeout=120)
    assert done.stderr, done
    return done.stderr


def counts(text: str) -> tuple[list[str], list[tuple[str, int]]]:
    """(the first line of each `explain --all` answer, [(code, count)] of the report)."""
    answers = subprocess.run([str(ERRKIT), "explain", "--all", "-"], input=text, capture_output=True, text=True, timeout=60)
    report = subprocess.run([str(ERRKIT), "explain", "--all", "--report", "--json", "-"], input=text, capture_output=True,
                            text=True, timeout=60)
    assert answers.returncode == 0 and report.returncode == 0, (answers.stderr, report.stderr)
    heads = [line for line in answers.stdout.splitlines() if line.startswith("RA")]
    return heads, [(e["code"], e["count"]) for e in json.loads(report.stdout)["errors"]]


KERNEL = """
    from errkit_attention._validators import check_ra105
    check_ra105(12, 8)
"""
LOGGED = f"""
    import logging
    logging.basicConfig(format="%(asctime)s %(levelname)s %(message)s")
    try:
        raise ValueError("{MESSAGE}")
    except ValueError as err:
        logging.exception(err)
"""
RERAISED = f"""
    def check():
        raise ValueError("{MESSAGE}")
    try:
        check()
    except ValueError as err:
        raise ValueError(str(err)) from err
"""
TWICE = f"""
    import traceback
    for attempt in range(2):
        try:
            raise ValueError("{MESSAGE}")
        except ValueError:
            traceback.print_exc()
"""


@pytest.mark.parametrize("program", [KERNEL, LOGGED, RERAISED], ids=["kernel-note", "logging-exception", "chained"])
def test_one_raise_is_counted_once(program):
    text = printed(program)
    assert text.count(MESSAGE) + text.count("[RA105]") == 2, text  # the message printed twice, or with its note
    heads, report = counts(text)
    assert len(heads) == 1 and "(x" not in heads[0], heads
    assert report == [("RA105", 1)]


def test_two_raises_are_counted_twice():
    heads, report = counts(printed(TWICE))
    assert len(heads) == 1 and "(x2, " in heads[0], heads
    assert report == [("RA105", 2)]

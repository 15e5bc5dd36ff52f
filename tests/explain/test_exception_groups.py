"""An exception group's traceback (tokamax's "all implementations failed", Python 3.11+'s `|`-prefixed
format): the group and each sub-exception are answered once each, with their values, and a
traceback's `raise ...(f"...")` source line is never taken for the message it quotes."""

from __future__ import annotations

import io
import json
from pathlib import Path

from errkit.explain import command
from errkit.explain.matching.text import raise_statement

GROUP = Path(__file__).parents[1] / "fixtures" / "texts" / "tokamax-exception-group.txt"


def _all(text: str) -> list[dict]:
    out = io.StringIO()
    command.run([text], as_json=True, show_all=True, out=out, err=io.StringIO())
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_the_group_and_its_sub_exceptions_are_each_answered_once():
    found = {(r["code"], r["count"]): r for r in _all(GROUP.read_text())}
    assert set(found) == {("RA947", 2), ("RA953", 1)}
    assert found[("RA947", 2)]["params"] == {"device_kind": "TPU v4"}  # free text up to the '.', spaces kept
    assert found[("RA953", 1)]["line"] == 6  # the ExceptionGroup line, not the raise line quoting it


def test_a_raise_line_is_not_a_message():
    assert raise_statement('raise ExceptionGroup("all implementations failed", errors)')
    assert raise_statement('|     raise NotImplementedError(f"Not supported on {device.device_kind}.")')
    assert not raise_statement("NotImplementedError: Not supported on cpu.")
    assert not raise_statement("raise the block size to 128")  # prose
    assert _all('    raise NotImplementedError(f"Not supported on {device.device_kind}.")') == [] or \
        all(r["confidence"] != "exact" for r in _all('    raise NotImplementedError(f"Not supported on {device.device_kind}.")'))

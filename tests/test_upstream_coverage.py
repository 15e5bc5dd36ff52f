"""The catalogue recognises every wording users meet from the kernels we promise to cover."""

import re
from pathlib import Path

import pytest

from errkit import template, values
from errkit.match import Index
from support import ROOT

XALGO = ROOT.parent / "shared" / "upstream" / "x-algorithm-messages.md"


def xalgo_wordings():
    if not XALGO.exists():
        return []
    rows = re.findall(r"^\| (\w+) \| `(.*)` \|$", XALGO.read_text(), re.M)
    return [(exc, text) for exc, text in rows if exc != "exception"]


def sample_rendering(text: str, seed: int) -> str:
    """The wording with each placeholder filled with a plausible value of the type its name suggests."""
    tpl = template.parse(text)

    def value(field):
        name = field.name.lower()
        if "shape" in name:
            return values.sample("shape", seed)
        if "dtype" in name:
            return "bfloat16"
        if any(w in name for w in ("method", "impl")):
            return "clip"
        return 3 + seed * 64 + len(name)

    return tpl.render(value)


@pytest.mark.skipif(not XALGO.exists(), reason="../shared/upstream not present")
@pytest.mark.parametrize("exception, wording", xalgo_wordings(), ids=lambda x: x[:40] if isinstance(x, str) else None)
def test_every_x_algorithm_wording_is_recognised(exception, wording):
    index = Index.load()
    for seed in (0, 1):
        text = sample_rendering(wording, seed)
        found = index.match_line(f"{exception}: {text}")
        assert found is not None and found.exact, text
        # the value of every placeholder is read back
        assert len(found.params) == len({f.name for f in template.parse(wording).fields}), (text, found.params)


def test_the_x_algorithm_list_was_read():
    if XALGO.exists():
        assert len(xalgo_wordings()) == 29

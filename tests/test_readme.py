"""The README is short (what errkit is, the two set-up commands, a tour, links) and its links lead
somewhere: every relative link names a file of the repository."""

import re

from support import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
SET_UP = [
    'python3 -m venv --upgrade-deps .venv && .venv/bin/pip install -q . && .venv/bin/errkit explain "num_q_heads=12 must be divisible by and num_kv_heads=8"',
    'python3 -m venv .venv && .venv/bin/pip install -q -e ".[kernel,docs,test]" && .venv/bin/python -m pytest',
]


def test_the_readme_is_at_most_1500_words():
    assert len(README.split()) <= 1500


def test_the_two_set_up_commands_are_there_as_they_were():
    blocks = re.findall(r"```sh\n(.*?)\n```", README, re.S)
    assert blocks[:2] == SET_UP


def test_every_relative_link_names_a_file():
    links = [t for t in re.findall(r"\]\(([^)\s]+)\)", README) if not re.match(r"[a-z]+:|#", t)]
    assert links, "the README links its pages"
    missing = [t for t in links if not (ROOT / t.split("#")[0]).is_file()]
    assert missing == []

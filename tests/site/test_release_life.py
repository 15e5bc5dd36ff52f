"""The life of a wording, from its release range (issue 29 item 7, issue 26 item 5): "raised since
jax X" and, where the range has an upper bound, "no longer raised since jax Y", on the entry page
(per wording and a summary for the entry) and in `errkit explain` (text and --json), in the same
words (errkit/core/lifespan.py)."""

from __future__ import annotations

import html
import itertools
import json
import shutil

import pytest

from errkit.catalogue import releases
from errkit.catalogue.load import load
from errkit.core.lifespan import life, summary
from errkit.explain.render import as_text
from errkit.generate import site

from support import FIXTURES, errkit_subprocess, explain_first


def record(text: str) -> dict:
    return releases.parse(text).index_record(None)


@pytest.mark.parametrize("text, since, until, says", [
    ("jax>=0.4.29,<0.4.36", "0.4.29", "0.4.36", "raised since jax 0.4.29; no longer raised since jax 0.4.36"),
    ("jax<0.4.36,>=0.4.29", "0.4.29", "0.4.36", "raised since jax 0.4.29; no longer raised since jax 0.4.36"),
    ("jax>=0.4.36", "0.4.36", None, "raised since jax 0.4.36"),
    ("jax>=0.7.0,<0.8.0", "0.7.0", "0.8.0", "raised since jax 0.7.0; no longer raised since jax 0.8.0"),  # as written
    ("jax==0.5.3", "0.5.3", None, "raised in jax 0.5.3 only"),
    ("jax>0.4.2,<=0.5", None, None, "raised after jax 0.4.2; no longer raised after jax 0.5"),
    ("jax>=0.4.25,!=0.4.26,<0.5", "0.4.25", "0.5", "raised since jax 0.4.25; not in jax 0.4.26; no longer raised since jax 0.5"),
    ("jax>=0.4.25,>=0.4.31,<0.6,<0.5.3", "0.4.31", "0.5.3", "raised since jax 0.4.31; no longer raised since jax 0.5.3"),
])
def test_a_range_says_when_its_wording_was_first_and_last_raised(text, since, until, says):
    assert life(record(text)) == {"since": since, "until": until, "text": says}
    assert life(None) is None


def test_an_entrys_summary_covers_all_its_wordings():
    assert summary([record("jax>=0.4.29,<0.4.36"), record("jax>=0.4.25,<0.4.31")]) == \
        "raised since jax 0.4.25; no longer raised since jax 0.4.36"
    assert summary([record("jax>=0.4.38"), record("jax>=0.4.31,<0.4.38"), record("jax>=0.4.27,<0.4.31"), None]) == \
        "raised since jax 0.4.27; 2 of its 3 wordings no longer raised (since jax 0.4.31, 0.4.38)"
    assert summary([record("jax>=0.4.36")]) == "raised since jax 0.4.36"
    assert summary([None, None]) is None


# -- the generated entry page --------------------------------------------------------------------

BOUNDED, UNBOUNDED = "jax>=0.4.29,<0.4.36", "jax>=0.4.36"


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    """XX102 of the fixture catalogue with a bounded range on its message and a variant, raised
    since its message stopped, with an unbounded one; its generated page, markdown and HTML escapes undone."""
    folder = tmp_path_factory.mktemp("life") / "catalog"
    shutil.copytree(FIXTURES / "site" / "catalog", folder)
    entry = folder / "evil" / "XX102-plain.yaml"
    entry.write_text(entry.read_text().replace(
        'message: "plain value {v!r} is not allowed"\n',
        f'message: "plain value {{v!r}} is not allowed"\nreleases: "{BOUNDED}"\n')
        + f'variants:\n  - message: "plain value {{v!r}} is refused"\n    source: "upstream plain"\n'
          f'    releases: "{UNBOUNDED}"\n')
    catalogue = load(folder).catalogue
    text = site.pages(catalogue)["site/docs/errors/XX102.md"]
    return html.unescape(text.replace("\\", ""))


def test_the_entry_page_says_each_wordings_life(page):
    message = page.split("## The message", 1)[1].split("##", 1)[0]
    assert "Raised by jax >=0.4.29,<0.4.36: raised since jax 0.4.29; no longer raised since jax 0.4.36." in message
    variants = page.split("## You may also see this as", 1)[1]
    assert "raised by jax >=0.4.36 (raised since jax 0.4.36)" in variants
    assert "no longer" not in variants, "the unbounded wording is still raised"


def test_the_entry_page_sums_up_the_entrys_life_under_its_title(page):
    meta = next(line for line in page.splitlines() if line.startswith("`XX102` · "))
    assert " · raised since jax 0.4.29; 1 of its 2 wordings no longer raised (since jax 0.4.36) · " in meta


# -- errkit explain ------------------------------------------------------------------------------


def test_explain_json_gives_the_matched_wordings_life():
    bounded = explain_first("Minimum pl.dot size is 16")  # RA516: jax>=0.4.29,<0.4.36
    assert bounded["code"] == "RA516"
    assert bounded["matched"]["life"] == {"since": "0.4.29", "until": "0.4.36",
                                          "text": "raised since jax 0.4.29; no longer raised since jax 0.4.36"}
    unbounded = explain_first("NotImplementedError: Q must be fp16/bf16/fp8_e4m3fn/fp8_e5m2, got float32")  # RA541: jax>=0.4.38
    assert unbounded["code"] == "RA541"
    assert unbounded["matched"]["life"] == {"since": "0.4.38", "until": None, "text": "raised since jax 0.4.38"}
    older = explain_first("NotImplementedError: Q must be fp16 or bf16, got float32")  # RA541's variant, jax>=0.4.31,<0.4.38
    assert (older["code"], older["matched"]["variant"]) == ("RA541", 2)
    assert older["matched"]["life"]["until"] == "0.4.38"


def test_explain_text_says_the_matched_wordings_life():
    text = as_text(explain_first("Minimum pl.dot size is 16"))
    lines = text.splitlines()
    block = [lines[1]] + [line for line in itertools.takewhile(lambda line: line.startswith(" " * 11), lines[2:])]
    wording = " ".join(" ".join(block).split())  # the wording's lines, wrapped to the terminal's width
    assert wording.endswith(", raised since jax 0.4.29; no longer raised since jax 0.4.36"), wording
    assert "0.4.35" not in wording, "the life, not the range said twice"


def test_the_command_says_it_in_text_and_json():
    done = errkit_subprocess("explain", "Minimum pl.dot size is 16")
    assert done.returncode == 0, done.stderr.decode()
    said = " ".join(done.stdout.decode().split())  # wrapped to the terminal's width
    assert ", raised since jax 0.4.29; no longer raised since jax 0.4.36 " in said
    done = errkit_subprocess("explain", "--json", "Minimum pl.dot size is 16")
    assert json.loads(done.stdout.decode().splitlines()[0])["matched"]["life"]["until"] == "0.4.36"


# -- in the browser --------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_built_entry_page_shows_the_life(browser, served):
    page = browser.new_page()
    page.goto(served + "errors/RA541/")
    article = page.locator("article").inner_text()
    assert "raised since jax 0.4.25; 3 of its 5 wordings no longer raised (since jax 0.4.27, 0.4.31, 0.4.38)" in article
    assert "Raised by jax 0.4.38 and later: raised since jax 0.4.38." in article
    assert "(raised since jax 0.4.31; no longer raised since jax 0.4.38)" in article
    page.goto(served + "errors/RA516/")
    assert "Raised by jax 0.4.29 to 0.4.35: raised since jax 0.4.29; no longer raised since jax 0.4.36." in \
        page.locator("article").inner_text()
    page.close()

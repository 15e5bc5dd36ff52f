"""What the README and the guides show errkit printing is what it prints.

Every console sample (a ```console block of README.md or a hand-written page of the site) is run
by scripts/console_samples.py and compared with what it shows: an exact sample line for line (the
script writes those again: `python scripts/console_samples.py`), an elided one (`...` lines) in
order. `errkit` samples are exact: generated, never edited by hand. The `--json` example of the
explain guide is compared with what `errkit explain --json` prints, and the preview address the
pages give with where `mkdocs serve` serves the site."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from scripts import console_samples
from support import ROOT

SAMPLES = [s for page in console_samples.pages() for s in console_samples.samples(page)]


def test_the_pages_have_their_samples():
    wheres = [s.where.split(":")[0] for s in SAMPLES]
    assert {"README.md", "site/docs/triage.md", "site/docs/guide/where-errors-happen.md"} <= set(wheres)
    assert len(SAMPLES) >= 5


@pytest.mark.parametrize("sample", [pytest.param(s, id=s.where, marks=[pytest.mark.slow] if s.in_checkout else [])
                                    for s in SAMPLES])
def test_a_console_sample_is_what_a_run_prints(sample):
    printed = console_samples.run(sample)
    if sample.elided:
        for (command, shown), out in zip(sample.commands, printed):
            assert console_samples.shows(shown, out), f"{sample.where}: `{command}` printed:\n" + "\n".join(out)
    else:
        assert console_samples.rendered(sample, printed) == sample.body, \
            f"{sample.where} is stale: run `python scripts/console_samples.py`"


def test_errkit_samples_are_generated_whole():
    """An `errkit` sample shows all that the command prints: the script keeps it so."""
    for sample in SAMPLES:
        if any(command.startswith("errkit ") for command, _ in sample.commands):
            assert not sample.elided, f"{sample.where}: an errkit sample is generated whole, not elided"


def test_elisions_match_only_what_was_printed():
    printed = ["Traceback (most recent call last):", "  File x", "ValueError: v", "", "RA105  t", "  fix 1", "  docs d"]
    assert console_samples.shows(["Traceback (most recent call last):", "...", "ValueError: v", "", "RA105  t", "...",
                                  "  docs d"], printed)
    assert console_samples.shows(["...", "  fix 1", "..."], printed)
    assert not console_samples.shows(["...", "  fix 2", "..."], printed)
    assert not console_samples.shows(["...", "RA105  t"], printed), "the last lines must end the output"
    assert not console_samples.shows(["RA105  t", "..."], printed), "the first lines must begin it"
    assert not console_samples.shows(["...", "  docs d", "  fix 1", "..."], printed), "in order"
    assert console_samples.shows(printed, printed) and not console_samples.shows(printed[:-1], printed)


def test_the_json_example_of_the_explain_guide_is_what_explain_prints():
    """The same keys and values, but for a text the page cuts with ` ...` and the fixes after the first."""
    page = (ROOT / "site" / "docs" / "guide" / "explain.md").read_text(encoding="utf-8")
    example = json.loads(re.search(r"`--json` prints .*?```json\n(.*?)```", page, re.S).group(1))
    done = subprocess.run([sys.executable, "-m", "errkit", "explain", "--json", example["matched"]["text"]],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    printed = json.loads(done.stdout.splitlines()[0])

    def alike(shown, real, where="answer"):
        if isinstance(shown, str) and shown.endswith(" ..."):
            assert isinstance(real, str) and real.startswith(shown[:-4]), where
        elif isinstance(shown, dict):
            assert isinstance(real, dict) and list(shown) == list(real), f"{where}: keys {list(shown)} != {list(real)}"
            for key in shown:
                alike(shown[key], real[key], f"{where}.{key}")
        elif isinstance(shown, list) and where.endswith(".fixes"):
            assert isinstance(real, list) and shown and len(real) >= len(shown), where
            for n, (a, b) in enumerate(zip(shown, real)):
                alike(a, b, f"{where}[{n}]")
        else:
            assert shown == real, f"{where}: {shown!r} != {real!r}"

    alike(example, printed)


def test_the_documented_preview_address_is_where_mkdocs_serve_serves():
    """`mkdocs serve` mounts the site at the path of its site_url (mkdocs/commands/serve.py:
    `mount_path = urlsplit(config.site_url or '/').path`)."""
    site_url = re.search(r"^site_url: (\S+)$", (ROOT / "site" / "mkdocs.yml").read_text(), re.M).group(1)
    address = f"http://127.0.0.1:8000{urlsplit(site_url).path}"
    pages = [ROOT / "README.md", ROOT / "site" / "docs" / "guide" / "site.md", ROOT / "site" / "docs" / "contributing.md"]
    said = [(page.name, m.group(0)) for page in pages for m in re.finditer(r"http://127\.0\.0\.1:8000\S*", page.read_text())]
    assert said, "the pages say where the preview is"
    assert [(name, url) for name, url in said if not url.startswith(address)] == []

"""An entry page's "Reproduce" snippet is self-contained on the project's public API (issue 29 item
4): it imports nothing from the repository's tests folder, and it calls the generated
`check_raNNN` function only where no verified fix snippet (one tests/advice/test_fix_snippets.py
runs) can stand in for it. A snippet taken from a fix is run here too: it raises the entry's error."""

from __future__ import annotations

import re

import pytest

from errkit.generate.examples import reproduce

from support import bundled_catalogue

CATALOGUE = bundled_catalogue()
ENTRIES = sorted(CATALOGUE.entries, key=lambda e: e.code)


def _has_verified_before(entry) -> bool:
    return any(f.before and not f.unverified and (f.setup or entry.setup) for f in entry.fixes)


def test_no_snippet_imports_the_tests_folder():
    bad = [e.code for e in ENTRIES if (r := reproduce(e, CATALOGUE))
           and re.search(r"^\s*(from|import)\s+(tests|verify|support)\b|sys\.path", r["code"], re.M)]
    assert not bad, bad


def test_the_internal_check_only_where_no_fix_snippet_stands_in():
    internal = {e.code for e in ENTRIES if (r := reproduce(e, CATALOGUE)) and re.search(r"\bcheck_ra\d{3}\b", r["code"])}
    assert not {e.code for e in ENTRIES if e.code in internal and _has_verified_before(e)}
    assert internal <= {"RA206"}, internal  # RA206's only snippet needs a backend this machine lacks (unverified)


@pytest.mark.slow
@pytest.mark.parametrize("code", ["RA101", "RA201", "RA301", "RA401"])
def test_a_snippet_from_a_fix_raises_the_entrys_error(code):
    pytest.importorskip("jax")
    from support import explain_first, pasted_text

    entry = next(e for e in ENTRIES if e.code == code)
    snippet = reproduce(entry, CATALOGUE)
    assert snippet["how"].endswith("code before the fix"), snippet
    with pytest.raises(Exception) as raised:
        exec(compile(snippet["code"], "<reproduce>", "exec"), {"__name__": "snippet"})  # noqa: S102
    assert explain_first(pasted_text(raised.value))["code"] == code

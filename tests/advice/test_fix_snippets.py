"""Fix snippets are examples that run: with the entry's `setup` before it and its `then`
after it, a fix's `before` raises the entry's error and its `after` runs without error."""

from __future__ import annotations

import importlib.util

import pytest

pytest.importorskip("jax")

from snippet_shims import on_cpu  # noqa: E402
from support import bundled_catalogue, explain_first, pasted_text  # noqa: E402

CATALOGUE = bundled_catalogue()


# tokamax is not in the test extra (it pulls flax, optax, orbax and pins typeguard==2.13.3): the
# snippets of catalog/tokamax/ run where it is installed (tokamax 0.0.12 on CPU) and are skipped elsewhere.
NO_TOKAMAX = pytest.mark.skipif(importlib.util.find_spec("tokamax") is None, reason="tokamax is not installed")


def runnable():
    out = []
    for entry in CATALOGUE.entries:
        for n, fix in enumerate(entry.fixes, 1):
            setup, then = fix.setup or entry.setup, fix.then or entry.then
            if (setup or then) and not fix.unverified and (fix.before or fix.after):
                marks = [NO_TOKAMAX] if "import tokamax" in (setup or "") + (then or "") else []
                out.append(pytest.param(entry, fix, setup or "", then or "", id=f"{entry.code}-fix{n}", marks=marks))
    return out


def test_every_snippet_runs_or_says_why_not():
    silent = [f"{entry.code} fix {n}" for entry in CATALOGUE.entries for n, fix in enumerate(entry.fixes, 1)
              if (fix.before or fix.after) and not fix.unverified and not (fix.setup or entry.setup or fix.then or entry.then)]
    assert not silent, "these fixes' snippets are never run (no setup/then) and do not say why (unverified:):\n" + "\n".join(silent)


def run(*parts: str) -> BaseException | None:
    try:
        exec(compile(on_cpu("\n".join(parts)), "<snippet>", "exec"), {"__name__": "snippet"})  # noqa: S102 - the catalogue's own examples
    except Exception as err:  # noqa: BLE001 - whatever the snippet raises is the outcome
        return err
    return None


@pytest.mark.parametrize("entry, fix, setup, then", runnable())
def test_before_raises_and_after_runs(entry, fix, setup, then):
    if fix.before:
        err = run(setup, fix.before, then)
        assert err is not None, f"{entry.code}: the 'before' snippet ran without error"
        assert explain_first(pasted_text(err))["code"] == entry.code, pasted_text(err)
    if fix.after:
        err = run(setup, fix.after, then)
        assert err is None, f"{entry.code}: the 'after' snippet raised {type(err).__name__}: {err}"

"""Fixes verified against the real kernels: every computed suggestion, applied to every
bad example of its entry, makes the kernel run; the bad example itself raises the entry's error.

Runners live in tests/verify/ (one module per family of kernels). A fix marked `unverified` (it
cannot run on a CPU: cuDNN, on-chip memory) says why instead; `python tests/advice/test_fix_verification.py`
prints the counts (verified / unverified / entries without a runner).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

sys.path[:0] = [str(Path(__file__).parents[1]), str(Path(__file__).parents[2])]  # as a script: verify/, support.py, errkit_attention/
import verify  # noqa: E402
from errkit.core import suggest  # noqa: E402
from errkit.explain.matching.index import Index  # noqa: E402
from support import bundled_catalogue, explain_first, pasted_text  # noqa: E402

for module in pkgutil.iter_modules(verify.__path__):
    importlib.import_module(f"verify.{module.name}")

CATALOGUE = bundled_catalogue()
INDEX = Index.load()
MAX_VALUES = 3  # of a list suggestion, the values applied (the nearest first)


def bad_cases(suggesting: bool = False) -> list:
    """Each bad example of an entry with a runner (of one whose fixes suggest a value, if `suggesting`)."""
    return [pytest.param(entry, entry.typed(raw), id=f"{entry.code}-bad{n + 1}")
            for entry in CATALOGUE.entries if entry.code in verify.RUNNERS
            if not suggesting or any(fix.suggest and not fix.unverified for fix in entry.fixes)
            for n, raw in enumerate(entry.bad_examples)]


OWN_CASES = Path(__file__).parent / "cases" / "own-cases.yaml"


def own_cases(suggesting: bool = False) -> list:
    """The cases of our own making (cases/own-cases.yaml): the entry's params (those not given are
    None, as in its examples) with what the runner needs besides them (of entries whose fixes
    suggest a value, if `suggesting`)."""
    from ruamel.yaml import YAML

    by_code = {e.code: e for e in CATALOGUE.entries}
    out = []
    for n, case in enumerate(YAML(typ="safe").load(OWN_CASES.read_text(encoding="utf-8")), 1):
        entry = by_code[case["code"]]
        if suggesting and not any(fix.suggest and not fix.unverified for fix in entry.fixes):
            continue
        params = entry.typed({name: case["params"].get(name) for name in entry.params})
        out.append(pytest.param(entry, {**params, **(case.get("runner") or {})}, id=f"{entry.code}-own{n}"))
    return out


def realworld_cases() -> list:
    """Each real-world case (tests/realworld/) whose text shows every value its entry's runner reads
    (those of the entry's bad examples): the values people really had."""
    spec = importlib.util.spec_from_file_location("realworld_report", Path(__file__).parents[1] / "realworld" / "report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    by_code = {e.code: e for e in CATALOGUE.entries}
    out = []
    for case in report.load_cases():
        entry = by_code.get(case.get("code") or "")
        if entry is None or entry.code not in verify.RUNNERS or not entry.bad_examples or case["class"] == "negative":
            continue
        if not any(fix.suggest and not fix.unverified for fix in entry.fixes):
            continue
        if set(entry.bad_examples[0]) <= set(case["values"]):
            params = entry.typed({k: case["values"][k] for k in entry.bad_examples[0]})
            out.append(pytest.param(entry, params, id=f"{entry.code}-{case['id']}"))
    return out


def applied(entry, params: dict):
    """(fix number, label, param, value) for each value a suggestion gives for these params."""
    data = INDEX.entries[entry.code]
    for n, (fix, model) in enumerate(zip(data["fixes"], entry.fixes), 1):
        if model.unverified:
            continue
        for s in suggest.suggestions(fix, params):
            if "sets" not in s or s.get("value") in (None, []):
                continue
            value = s["value"]
            if ", " in s["sets"]:  # one configuration of several params, or a list of them
                for config in (value if isinstance(value[0], list) else [value])[:MAX_VALUES]:
                    yield n, s["label"], s["sets"], tuple(config)
                continue
            picks = value if isinstance(value, list) and not isinstance(params[s["sets"]], (list, tuple)) else [value]
            for pick in _nearest_first(picks, params[s["sets"]])[:MAX_VALUES]:
                yield n, s["label"], s["sets"], tuple(pick) if isinstance(pick, list) else pick


def case_values(entry, params: dict):
    """(fix number, case, label, param, value) for each value a fix's case (`cases`: what the
    message cannot show) gives for these params where it differs from the value without it, and
    the values without it that the case leaves out (a case that changes nothing is not one)."""
    data = INDEX.entries[entry.code]
    for n, (fix, model) in enumerate(zip(data["fixes"], entry.fixes), 1):
        if model.unverified or not fix.get("cases"):
            continue
        for s in suggest.suggestions(fix, params):
            for said in s.get("cases", ()):
                if "sets" not in s or "value" not in said:
                    continue
                case = next(c for c in fix["cases"] if c["when"] == said["when"])
                if case["assume"].get("raised_by"):  # another kernel's values: the generated calls of its family try them
                    continue
                picks = said["value"] if isinstance(said["value"], list) else [] if said["value"] is None else [said["value"]]
                base = s.get("value") if isinstance(s.get("value"), list) else [s.get("value")]
                dropped = [v for v in base if v is not None and v not in picks]
                yield n, case, s["label"], s["sets"], _nearest_first(picks, params.get(s["sets"]))[:MAX_VALUES], dropped


def with_value(params: dict, name: str, value) -> dict:
    """`params` with a suggested value set: one param, or a configuration of several (`a, b`)."""
    if ", " in name:
        return dict(params, **dict(zip(name.split(", "), value)))
    return dict(params, **{name: value})


def _nearest_first(values: list, current):
    try:
        return sorted(values, key=lambda v: abs(v - current))
    except TypeError:
        return list(values)


def raised(run, params: dict) -> BaseException | None:
    try:
        run(params)
    except Exception as err:  # noqa: BLE001 - whatever the kernel raises is the outcome
        return err
    return None


@pytest.mark.parametrize("entry, params", bad_cases() + own_cases())
def test_a_bad_example_raises_its_entry(entry, params):
    err = raised(verify.RUNNERS[entry.code], params)
    assert err is not None, f"{entry.code}: {params} ran without an error"
    assert explain_first(pasted_text(err))["code"] == entry.code, pasted_text(err)


@pytest.mark.parametrize("entry, params", bad_cases(suggesting=True) + realworld_cases() + own_cases(suggesting=True))
def test_every_suggestion_applied_makes_the_kernel_run(entry, params):
    tried = list(applied(entry, params))
    if not tried and list(case_values(entry, params)):
        return  # no value valid in every case the message cannot show: each case's values are tried (below)
    assert tried, f"{entry.code}: no suggestion gives a value to apply (sets) for {params}"
    failures = []
    for n, label, name, value in tried:
        err = raised(verify.RUNNERS[entry.code], with_value(params, name, value))
        if err is not None:
            failures.append(f"fix {n} {label!r}: {name}={value!r} -> {type(err).__name__}: {str(err)[:200]}")
    assert not failures, "\n".join(failures)


def cased_cases() -> list:
    """The bad examples and real-world cases of entries whose fixes have cases, for which a case
    gives other values than the plain suggestion (elsewhere the plain values hold in every case)."""
    return [c for c in bad_cases(suggesting=True) + realworld_cases() + own_cases(suggesting=True)
            if any(f.get("cases") for f in INDEX.entries[c.values[0].code]["fixes"]) and list(case_values(*c.values))]


@pytest.mark.parametrize("entry, params", cased_cases())
def test_a_case_value_makes_the_kernel_run_in_its_case_where_the_plain_value_does_not(entry, params):
    """Each value a fix's case gives (`with segment_ids, under jax.grad: ...`) runs with the case's
    assumptions given to the runner; a value the plain suggestion gives and the case drops raises
    under them (the case is real), and so does the plain value in a case said to take none."""
    failures, tried = [], 0
    for n, case, label, name, picks, dropped in case_values(entry, params):
        assumed = dict(params, **case["assume"])
        for value in picks:
            tried += 1
            err = raised(verify.RUNNERS[entry.code], with_value(assumed, name, value))
            if err is not None:
                failures.append(f"fix {n} {label!r} {case['when']}: {name}={value!r} -> {type(err).__name__}: {str(err)[:200]}")
        own = {c.when for f in entry.fixes for c in f.cases}
        # (a kernel's case widens the values valid in every case; a case of what the message cannot show that
        # takes none of the plain values, the plain value being the one valid wherever any is, refuses them)
        for value in dropped[:1] if case["when"] in own or (case.get("partition") and not picks) else ():
            tried += 1
            if raised(verify.RUNNERS[entry.code], with_value(assumed, name, value)) is None:
                failures.append(f"fix {n} {label!r} {case['when']}: {name}={value!r}, which the case drops, runs")
    assert tried and not failures, "\n".join(failures)


def test_cases_are_tried():
    """Cases of fixes are tried: RA703's query shards and RA710's segment ids under jax.grad at least."""
    assert {c.values[0].code for c in cased_cases()} >= {"RA703", "RA710"}


def status(entry, fix, label: str) -> str:
    """A suggestion is verified (its value applied by a runner), unverified (its fix says why), or
    neither (no `sets`, or no runner for its entry)."""
    if fix.unverified:
        return "unverified"
    return "verified" if label in fix.sets and entry.code in verify.RUNNERS else "neither"


def counts() -> dict[str, int]:
    """Suggestions verified by a runner, unverified (the fix says why), neither."""
    out = {"verified": 0, "unverified": 0, "neither": 0}
    for entry in CATALOGUE.entries:
        for fix in entry.fixes:
            for label in fix.suggest:
                out[status(entry, fix, label)] += 1
    return out


def test_every_suggestion_is_verified_or_says_why_not():
    neither = [f"{entry.code} fix {n} {label!r}" for entry in CATALOGUE.entries for n, fix in enumerate(entry.fixes, 1)
               for label in fix.suggest if status(entry, fix, label) == "neither"]
    assert not neither, "no runner applies these, and their fix does not say why (unverified:):\n" + "\n".join(neither)


if __name__ == "__main__":
    print(counts())

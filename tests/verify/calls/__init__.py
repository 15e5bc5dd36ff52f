"""Bad calls of each kernel family, made by a seeded generator and run on the real kernels: each error
is explained as a user would paste it (the whole traceback), every value the answer offers is applied
back to the same call, and the call runs again. What the advice says is held to what the kernel does.

A family (one module here) gives:

- `base(draw)`: a call the kernel accepts, drawn by hypothesis from realistic values (shapes, head
  counts, head_dim, dtypes, block sizes, options, with and without jax.grad, sharded where the family
  shards), and `perturb(draw, base)`: the fields to change so that it fails (one or two, as people
  get them wrong: a length set by the data, a block tuned for another kernel, a head count pruned);
- `run(call, platform)`: the call on the real kernel ("cpu": interpret mode and lowering from the
  CPU; "tpu": compiled and run on a TPU), raising what it raises;
- `apply(call, code, param, value, params)`: the call with an offered value of an entry's param
  applied as a user would (None when the call has nothing that value sets);
- `values(call)`: the kernel's values (catalog/kernels/) the call has, to tell which of the answer's
  cases (`with bfloat16 kv_pages`, `raised by ...`) it is in and to check a value's stated condition;
- `actions`: the change a fix without a value asks for (its snippet: drop the bias, cast to one
  dtype), keyed by (code, fix number).

Each bad call holds one mistake (`perturb`: one or several fields changed together, as one wrong
setting changes them), so the call with an offered value applied must run. A failure names the
entry, the call and what the kernel then said. The base call itself is run again when that fails: a
base the kernel refuses is the generator's mistake, reported apart.
"""

from __future__ import annotations

import dataclasses
import io
import json
import traceback
from typing import Any, Callable

MAX_VALUES = 3  # of a list of values, those applied (the nearest to the call's own first)


@dataclasses.dataclass
class Family:
    name: str
    base: Callable  # (draw) -> dict: a call the kernel accepts
    perturb: Callable  # (draw, base) -> dict: the fields changed so that it fails
    run: Callable  # (call, platform) -> None, raising what the kernel raises
    apply: Callable  # (call, code, param, value, params: the message's values) -> dict | None
    values: Callable  # (call) -> dict of kernel values
    actions: dict = dataclasses.field(default_factory=dict)  # (code, fix number) -> (call) -> dict | None
    platforms: tuple = ("cpu",)
    kernels: tuple = ()  # the catalogue's kernels it may raise from


FAMILIES: dict[str, Family] = {}


def family(fam: Family) -> Family:
    FAMILIES[fam.name] = fam
    return fam


def load_families() -> dict[str, Family]:
    """Every family module of this package imported (each registers itself)."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return FAMILIES


@dataclasses.dataclass
class Tried:
    code: str
    fix: int
    label: str
    param: str
    value: Any
    kind: str  # "value", "case" (a case's value, the call being in that case), "snippet"
    outcome: str  # worked | failed | not-applicable | declined | base-refused
    said: str = ""  # what the kernel then said (failed), or why not
    explained: str | None = None  # the code of that error, when explained
    trace: str = ""  # that error's whole traceback (failed)


@dataclasses.dataclass
class Attempt:
    family: str
    call: dict
    base: dict
    outcome: str  # ran (not a bad call) | unexplained | explained
    error: str = ""  # the error as the kernel raised it (str), for a corpus
    trace: str = ""  # the whole traceback
    code: str | None = None
    kernel: str | None = None  # the kernel explain told, if any
    tried: list = dataclasses.field(default_factory=list)
    skipped: list = dataclasses.field(default_factory=list)  # (code, fix, why) of fixes not tried

    def failures(self) -> list[Tried]:
        return [t for t in self.tried if t.outcome == "failed"]

    def as_dict(self) -> dict:
        return {**dataclasses.asdict(self), "call": _plain(self.call), "base": _plain(self.base),
                "tried": [_plain(dataclasses.asdict(t)) for t in self.tried]}


def _plain(value):
    """JSON-shaped: tuples as lists, dtypes and other objects as their names."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(getattr(value, "name", value))


def pasted(err: BaseException) -> str:
    """What a user pastes: the whole traceback, its exception line last."""
    return "".join(traceback.format_exception(err))


_INDEX = []


def index():
    if not _INDEX:
        from errkit.explain.matching.index import Index

        _INDEX.append(Index.load())
    return _INDEX[0]


def explain(text: str) -> dict | None:
    """The first exact answer `errkit explain --json` gives for `text`, else None."""
    from errkit.explain import command

    out = io.StringIO()
    command.run([text], as_json=True, show_all=False, out=out, err=io.StringIO(), index=index())
    for line in out.getvalue().splitlines():
        if line.strip():
            res = json.loads(line)
            return res if res.get("confidence") == "exact" else None
    return None


def raised(fam: Family, call: dict, platform: str) -> BaseException | None:
    try:
        fam.run(call, platform)
    except Exception as err:  # noqa: BLE001 - whatever the kernel raises is the outcome
        return err
    return None


def attempt(fam: Family, base: dict, change: dict, platform: str = "cpu") -> Attempt:
    """One bad call (`base` with `change`): run, explained, each offered value applied and run again."""
    call = {**base, **change}
    err = raised(fam, call, platform)
    if err is None:
        return Attempt(fam.name, call, base, "ran")
    text = pasted(err)
    res = explain(text)
    out = Attempt(fam.name, call, base, "explained" if res else "unexplained", error=f"{type(err).__name__}: {err}"[:4000],
                  trace=text[-20000:])
    if res is None:
        return out
    out.code = res["code"]
    out.kernel = (res["matched"].get("kernel") or {}).get("id")
    record = index().entries[res["code"]]
    facts = {**fam.values(call)}
    for n, fix in enumerate(res["fixes"], 1):
        model = _index_fix(record, fix)
        if fix.get("unverified") and platform == "cpu":  # (on a TPU, a TPU fix is run: what its label waits for)
            out.skipped.append((res["code"], n, "unverified: " + fix["unverified"]))
            continue
        offered = list(_offered(res["code"], n, fix, model, res["params"], facts))
        action = fam.actions.get((res["code"], n))
        if not offered and action is None:
            if fix.get("before") or fix.get("after"):
                out.skipped.append((res["code"], n, "a snippet this family has no action for"))
            continue
        for label, param, value, kind, declined in offered:
            tried = Tried(res["code"], n, label, param, _plain(value), kind, "")
            out.tried.append(tried)
            if declined:
                tried.outcome, tried.said = "declined", declined
                continue
            _check(fam, tried, call, base, platform, lambda c: _apply(fam, c, res["code"], param, value, res["params"]))
        if action is not None:
            tried = Tried(res["code"], n, fix["summary"][:80], "", None, "snippet", "")
            out.tried.append(tried)
            _check(fam, tried, call, base, platform, action)
    return out


def _apply(fam: Family, call: dict, code: str, param: str, value, params: dict) -> dict | None:
    """The call with a value applied; a configuration (`sets: "a, b"`, a list of values) field by field."""
    if "," not in param:
        return fam.apply(call, code, param, value, params)
    for name, one in zip((p.strip() for p in param.split(",")), value):
        call = fam.apply(call, code, name, one, params) if call is not None else None
    return call


def _check(fam: Family, tried: Tried, call: dict, base: dict, platform: str, how) -> None:
    """Run the call with a change applied (tried.outcome: worked, failed, not-applicable, base-refused)."""
    new = how(call)
    if new is None:
        tried.outcome, tried.said = "not-applicable", "the call has nothing this sets"
        return
    err = raised(fam, new, platform)
    if err is None:
        tried.outcome = "worked"
        return
    if raised(fam, base, platform) is not None:
        tried.outcome, tried.said = "base-refused", "the generator's base call fails too"
        return
    tried.outcome, tried.said = "failed", f"{type(err).__name__}: {err}"[:600]
    tried.trace = pasted(err)[-20000:]
    again = explain(tried.trace)
    tried.explained = again["code"] if again else None


def _index_fix(record: dict, fix: dict) -> dict:
    """The index's record of an answer's fix (its cases' assumptions, its rules' checks)."""
    for candidate in record["fixes"]:
        if candidate["summary"] == fix["summary"]:
            return candidate
    return {}


def _offered(code: str, n: int, fix: dict, model: dict, params: dict, facts: dict):
    """(label, param, value, kind, declined-why) of each value a fix offers that applies to the
    call: the plain values (valid in every case), each case's where the call is in that case."""
    for s in fix["suggestions"]:
        param = s.get("sets")
        if not param:
            continue
        if "value" in s and s["value"] not in (None, []):
            nowhere = _in_case_without_value(model, s, facts)
            for value in _picks(s["value"], param, params):
                yield s["label"], param, value, "value", nowhere or _declined(model, s, param, value, params, facts)
        for said in s.get("cases") or ():
            case = next((c for c in model.get("cases") or () if c["when"] == said["when"]), None)
            if case is None or "value" not in said or said["value"] in (None, []):
                continue
            if not all(facts.get(k, _UNSET) == v for k, v in case["assume"].items()):
                continue  # the call is not in that case (or cannot tell)
            for value in _picks(said["value"], param, params):
                yield s["label"] + " / " + said["when"], param, value, "case", _declined(model, s, param, value, params, facts)


_UNSET = object()


def _in_case_without_value(model: dict, s: dict, facts: dict) -> str | None:
    """Why the plain value is not for this call: the answer says no value holds in a case the call
    is in (the value offered is the one valid wherever any is: errkit/core/suggest.py)."""
    for said in s.get("cases") or ():
        if "value" not in said or said["value"] not in (None, []):
            continue
        case = next((c for c in model.get("cases") or () if c["when"] == said["when"]), None)
        if case is not None and all(facts.get(k, _UNSET) == v for k, v in case["assume"].items()):
            return f"its answer says no value holds when {said['when']}"
    return None


def _picks(value, param: str, params: dict) -> list:
    """The values to apply: a configuration (several params) as one, a list's nearest first."""
    if "," in param:  # a configuration, or a list of them
        return value[:MAX_VALUES] if value and isinstance(value[0], list) else [value]
    if not isinstance(value, list):
        return [value]
    current = params.get(param)
    try:
        return sorted(value, key=lambda v: abs(v - current))[:MAX_VALUES]
    except TypeError:
        return value[:MAX_VALUES]


def _declined(model: dict, s: dict, param: str, value, params: dict, facts: dict) -> str | None:
    """Why a value is not for this call, by a condition its answer states (`requires`: a kernel rule
    on what the message does not show), checked on the call's own values; None to apply it."""
    from errkit.core import expr

    for rule in (model.get("requires") or {}).get(s["label"]) or ():
        if rule["says"] not in (s.get("requires") or ()) or not rule["check"]:
            continue
        env = {**facts, **params, param: value}
        try:
            if not expr.evaluate(rule["check"], env):
                return f"its stated condition does not hold for this call: {rule['says']}"
        except Exception:  # noqa: BLE001 - a value the call does not give: applied, not declined
            continue
    return None


# -- a run of many calls -----------------------------------------------------------------------------


def tally(attempts: list[Attempt]) -> dict:
    """Per entry: calls explained as it, values offered (tried), values that worked, failures, and
    what was not tried; and the totals."""
    per: dict[str, dict] = {}
    totals = {"calls": len(attempts), "ran": 0, "unexplained": 0, "explained": 0, "offered": 0, "worked": 0,
              "failed": 0, "declined": 0, "not_applicable": 0, "base_refused": 0}
    for a in attempts:
        totals[a.outcome if a.outcome != "ran" else "ran"] += 1
        if a.outcome != "explained":
            continue
        row = per.setdefault(a.code, {"calls": 0, "offered": 0, "worked": 0, "failed": 0, "declined": 0,
                                      "not_applicable": 0, "base_refused": 0, "nothing_offered": 0, "families": []})
        row["calls"] += 1
        if not a.tried:  # no value the call could be given, and no snippet this family applies
            row["nothing_offered"] += 1
            totals["nothing_offered"] = totals.get("nothing_offered", 0) + 1
        if a.family not in row["families"]:
            row["families"].append(a.family)
        for t in a.tried:
            key = t.outcome.replace("-", "_")
            if key in ("worked", "failed"):
                row["offered"] += 1
                totals["offered"] += 1
            row[key] = row.get(key, 0) + 1
            totals[key] = totals.get(key, 0) + 1
    return {"entries": dict(sorted(per.items())), "totals": totals}


def draw(fam: Family, n: int, seed: int) -> list[tuple[dict, dict]]:
    """`n` bad calls of `fam` (base, change) drawn by hypothesis from `seed`: the same calls for the
    same seed and code; a call drawn twice is kept once. Nothing is run."""
    from hypothesis import HealthCheck, Phase, given, settings, seed as seeded
    from hypothesis import strategies as st

    drawn: list[tuple[dict, dict]] = []
    seen: set[str] = set()

    @st.composite
    def bad_call(draw_):
        base = fam.base(draw_)
        return base, fam.perturb(draw_, base)

    @seeded(seed)
    @settings(max_examples=n, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(bad_call())
    def one(pair):
        key = json.dumps(_plain({**pair[0], **pair[1]}), sort_keys=True)
        if key not in seen:
            seen.add(key)
            drawn.append(pair)

    one()
    return drawn


def sample(fam: Family, n: int, seed: int, platform: str = "cpu") -> list[Attempt]:
    """`n` bad calls of `fam` drawn from `seed` (`draw`), each attempted (`attempt`) on `platform`."""
    return [attempt(fam, base, change, platform) for base, change in draw(fam, n, seed)]

"""A fix's suggestions computed from the values a message shows: each `suggest` expression of the
fix evaluated (from the index cache's vetted code when it can tell the same as vetting again), and
the results made JSON-shaped. Shared by `errkit explain` and the site's generated pages.

The index writes each suggestion out to satisfy the rules of the kernels that may raise its error
(errkit/catalogue/kernels.py): `suggest` for all of them at once, and each kernel's own values as a
case assuming RAISED_BY. Given the kernel that raised the error, its values are the answer; given
only the kernels that may have, the values valid for all of them, and each one's where they differ."""

from errkit.core.bounds import Meter, OverBound, unshowable

RAISED_BY = "raised_by"  # the name a kernel's case assumes (errkit/catalogue/kernels.py)


def suggestions(fix: dict, params: dict, vetted: dict | None = None, meter: Meter | None = None,
                kernel: str | None = None, candidates: list | None = None) -> list[dict]:
    """The fix's suggestions computed from `params`; `vetted`: its expressions already vetted and
    compiled (explain's Index.vetted, lint's and the pages' vetting.suggestion_code), used when they
    read only names `params` has; `meter`: the bounds they share (errkit/core/bounds.py; explain:
    one per answer), a new one for this fix by default; `kernel`: the kernel that raised the error,
    when told, else `candidates`: those that may have. A suggestion over a bound, or whose result is
    no value to show, is {"label", "not_computed": why}; one whose value a kernel's rule could not be
    checked on (it reads what the message does not show) says that rule (`requires`)."""
    cases = fix.get("cases") or ()
    by_kernel = [c for c in cases if c["assume"].get(RAISED_BY)]
    told = [c for c in by_kernel if c["assume"][RAISED_BY] == kernel] if kernel else []
    if by_kernel:
        rest = [c for c in cases if RAISED_BY not in c["assume"]]  # the entry's own cases
        head = next((c for c in told if len(c["assume"]) == 1), None)
        suggest = {**fix.get("suggest", {}), **head["suggest"]} if head else fix.get("suggest", {})
        # told: that kernel's values and cases; nothing told: those for all the fix's kernels (raised_by "")
        every = [c for c in cases if c["assume"].get(RAISED_BY) == ""] if candidates is None else []
        mine = [c for c in told if c is not head] if head else every
        fix = {**fix, "suggest": suggest, "cases": rest + mine}
    out = _computed(fix, params, vetted, meter)
    if by_kernel and not told:
        _add_kernels(out, [c for c in by_kernel if len(c["assume"]) == 1], candidates, params, vetted, meter)
    _add_requires(out, fix.get("requires") or {}, [kernel] if told else candidates)
    return out


def _computed(fix: dict, params: dict, vetted: dict | None, meter: Meter | None) -> list[dict]:
    out = []
    sets = fix.get("sets") or {}
    meter = Meter() if meter is None else meter
    for label, source in fix.get("suggest", {}).items():
        try:
            value = evaluate(source, params, vetted, meter)
            why = unshowable(value)
            if why is not None:
                raise OverBound(why)
            found = {"label": label, "value": jsonable(value)}
            if label in sets:
                found["sets"] = sets[label]
            out.append(found)
        except OverBound as err:
            out.append({"label": label, "not_computed": str(err)})
        except ValueError as err:  # expr.ExprError: the expression is not for these values
            if getattr(err, "rule", None) == "unknown-name":
                out.append({"label": label, "needs": source})
        except Exception:  # a suggestion that cannot be computed for these values is left out
            continue
    partition = []
    for case in fix.get("cases") or ():
        if case.get("partition"):
            partition.append(case)
        else:
            _add_case(out, case, params, vetted, meter)
    if partition:
        _add_partition(out, partition, params, vetted, meter)
    return out


def _case_value(found: dict, case: dict, params: dict, vetted: dict | None, meter: Meter) -> dict | None:
    """{"when", "value"} (or "not_computed") of a suggestion in `case`; None when the case is not
    one to consider (the message printed a value it assumes) or says nothing of these values."""
    if any(params.get(name) is not None for name in case["assume"]):
        return None
    source = case["suggest"].get(found["label"])
    if source is None:
        return None
    try:
        value = evaluate(source, {**params, **case["assume"]}, vetted, meter)
        why = unshowable(value)
        if why is not None:
            raise OverBound(why)
        return {"when": case["when"], "value": jsonable(value)}
    except OverBound as err:
        return {"when": case["when"], "not_computed": str(err)}
    except Exception:  # not for these values (a name still missing): nothing to say of this case
        return None


def _add_case(out: list[dict], case: dict, params: dict, vetted: dict | None, meter: Meter) -> None:
    """Each suggestion's value in `case` (what the message cannot show: {"when", "assume", "suggest"}),
    added to the suggestion as {"when", "value"} where it differs from the value without it; a case
    whose assumed names the message printed is not one to consider."""
    for found in out:
        said = _case_value(found, case, params, vetted, meter)
        if said is not None and not ("value" in said and "value" in found and said["value"] == found["value"]):
            found.setdefault("cases", []).append(said)


def _add_partition(out: list[dict], cases: list[dict], params: dict, vetted: dict | None, meter: Meter) -> None:
    """The cases that together cover every combination of what the message cannot show. Where no
    value holds in all of them and every combination that takes none is one where no value fits
    whatever the message shows (`regardless`: the rest of the configuration is refused there), the
    value offered is the one that holds in every combination where any does, and those are said as
    cases with no value. Otherwise each case is added where it differs from the value, as
    `_add_case` does."""
    for found in out:
        pairs = [(case, _case_value(found, case, params, vetted, meter)) for case in cases]
        said = [s for _, s in pairs if s is not None]
        filled = [s["value"] for s in said if s.get("value") not in (None, [])]
        empty = [s for s in said if "value" in s and s["value"] in (None, [])]
        nowhere = all(found["label"] in case.get("regardless", ()) for case, s in pairs if s is not None and s in empty)
        if filled and empty and nowhere and len(filled) + len(empty) == len(said) and found.get("value", 0) in (None, []):
            shared = _common(filled)
            if shared not in (None, []):
                found["value"] = shared
                found.setdefault("cases", []).extend(empty)
                continue
        whole = bool(filled) and found.get("value", 0) in (None, [])  # (then each case, none too, for the whole picture)
        for one in said:
            if whole or not ("value" in one and "value" in found and one["value"] == found["value"]):
                found.setdefault("cases", []).append(one)


def _add_kernels(out: list[dict], heads: list[dict], candidates: list | None, params: dict, vetted: dict | None,
                 meter: Meter) -> None:
    """The raising kernel not told: each suggestion's value valid for every kernel that may have
    raised it (`candidates`; all of the fix's when None: the value written for all of them), and
    each kernel's own value where it differs, as a case ("raised by ...")."""
    by_id = {c["assume"][RAISED_BY]: c for c in heads}
    considered = [k for k in (by_id if candidates is None else candidates) if k in by_id]
    if not considered:
        return
    for found in out:
        if "value" not in found:
            continue
        values = {}
        for name in considered:
            source = by_id[name]["suggest"].get(found["label"])
            if source is None:
                continue
            try:
                value = evaluate(source, {**params, RAISED_BY: name}, vetted, meter)
                if unshowable(value) is None:
                    values[name] = jsonable(value)
            except Exception:  # not for these values: nothing to say of this kernel
                continue
        if not values:
            continue
        if candidates is not None:
            # what every candidate allows; where their own values share none (the nearest of each),
            # the value written for all of the fix's kernels, which satisfies each candidate's rules too
            shared = _common(list(values.values()))
            if shared not in (None, []) or found["value"] in (None, []):
                found["value"] = shared
        differ = [(name, value) for name, value in values.items() if value != found["value"]]
        if differ:  # the kernels whose rules the value satisfies, each one's own below
            found["kernels"] = list(values)
        for name, value in differ:
            found.setdefault("cases", []).append({"when": by_id[name]["when"], "value": value, "kernel": name})


def _common(values: list):
    """What every value allows: the items of a list every list holds (in the first's order), a value
    every value is; else None."""
    first = values[0]
    if all(isinstance(v, list) for v in values):
        return [item for item in first if all(item in v for v in values[1:])]
    return first if all(v == first for v in values[1:]) else None


def _add_requires(out: list[dict], requires: dict, kernels: list | None) -> None:
    """What each suggestion's value was not checked against: the rules (of the kernels that may
    have raised the error) that read values the message does not show."""
    for found in out:
        said = []
        for rule in requires.get(found["label"]) or ():
            if (kernels is None or rule["kernel"] in kernels) and rule["says"] not in said:
                said.append(rule["says"])
        if said and "value" in found:
            found["requires"] = said


class NeedsValues(ValueError):
    """What expr.ExprError says of an expression reading a name the values at hand lack."""

    rule = "unknown-name"


def evaluate(source: str, params: dict, vetted: dict | None, meter: Meter):
    """`expr.evaluate(source, params)` within `meter`'s bounds, from the cache's vetted code when it
    can tell the same."""
    ready = (vetted or {}).get(source)
    if ready is not None and params.keys().isdisjoint(ready[2]):  # (no loop name shadows a value)
        from errkit.core.helpers import HELPERS, evaluate_code

        missing = set(ready[1]) - params.keys()
        if not missing:
            return evaluate_code(ready[0], params, meter=meter)
        if missing.isdisjoint(HELPERS):  # vetting again would stop at one of them: an unknown name
            raise NeedsValues(source)
    from errkit.core import expr  # vets it against these values (imports ast)

    return expr.evaluate(source, params, meter=meter)


def jsonable(value):
    if isinstance(value, tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return value


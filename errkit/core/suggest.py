"""A fix's suggestions computed from the values a message shows: each `suggest` expression of the
fix evaluated (from the index cache's vetted code when it can tell the same as vetting again), and
the results made JSON-shaped. Shared by `errkit explain` and the site's generated pages."""

from errkit.core.bounds import Meter, OverBound, unshowable


def suggestions(fix: dict, params: dict, vetted: dict | None = None, meter: Meter | None = None) -> list[dict]:
    """The fix's suggestions computed from `params`; `vetted`: its expressions already vetted and
    compiled (explain's Index.vetted, lint's and the pages' vetting.suggestion_code), used when they
    read only names `params` has; `meter`: the bounds they share (errkit/core/bounds.py; explain:
    one per answer), a new one for this fix by default. A suggestion over a bound, or whose result
    is no value to show, is {"label", "not_computed": why}."""
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
    for case in fix.get("cases") or ():
        _add_case(out, case, params, vetted, meter)
    return out


def _add_case(out: list[dict], case: dict, params: dict, vetted: dict | None, meter: Meter) -> None:
    """Each suggestion's value in `case` (what the message cannot show: {"when", "assume", "suggest"}),
    added to the suggestion as {"when", "value"} where it differs from the value without it; a case
    whose assumed names the message printed is not one to consider."""
    if any(params.get(name) is not None for name in case["assume"]):
        return
    assumed = {**params, **case["assume"]}
    for found in out:
        source = case["suggest"].get(found["label"])
        if source is None:
            continue
        try:
            value = evaluate(source, assumed, vetted, meter)
            why = unshowable(value)
            if why is not None:
                raise OverBound(why)
            said = {"when": case["when"], "value": jsonable(value)}
        except OverBound as err:
            said = {"when": case["when"], "not_computed": str(err)}
        except Exception:  # not for these values (a name still missing): nothing to say of this case
            continue
        if not ("value" in said and "value" in found and said["value"] == found["value"]):
            found.setdefault("cases", []).append(said)


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


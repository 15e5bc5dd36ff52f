"""Suggestions that solve the raising kernel (errkit/catalogue/kernels.py: solutions, and
errkit/core/suggest.py picking the told kernel's values): every value satisfies every rule of the
kernel on it, with the message's values, what the kernel derives (`from`) and every case it
declares for what the message cannot show (`cases`); a rule nothing can check is said."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from errkit.catalogue import kernels
from errkit.catalogue.model import Entry, Fix, Kernel, KernelValue, Param, Rule
from errkit.core.suggest import suggestions
from support import bundled_catalogue


def kernel(id_: str, values: dict, rules: list[tuple[str, str]], title: str | None = None) -> Kernel:
    vals = {}
    for name, spec in values.items():
        spec = spec or {}
        vals[name] = KernelValue(name, spec.get("type", "int"), name, False, None, spec.get("from"),
                                 tuple((c, f"with {name}={c}") for c in spec.get("cases", ())))
    return Kernel(id_, title or id_, f"pkg/{id_}.py", MappingProxyType(vals),
                  tuple(Rule(n, check, n) for n, check in rules))


def entry(params: dict, fixes: list[Fix], kernel_id: str | None, variants=()) -> Entry:
    return Entry(code="XX100", slug="x", title="x", area="a", exception="ValueError", message="m", explanation="x",
                 params=MappingProxyType({n: Param(n, "int", n, optional) for n, optional in params.items()}),
                 fixes=tuple(fixes), kernel=kernel_id, variants=tuple(variants))


def fix(suggest: dict, sets: dict) -> Fix:
    return Fix(summary="s", suggest=MappingProxyType(suggest), sets=MappingProxyType(sets))


def values(e: Entry, ks: dict, params: dict, **kw) -> dict:
    """label -> (value, {when: value}) of the first fix, as explain computes it."""
    solved = kernels.solutions(e, ks)[0]
    record = {"suggest": solved["suggest"], "sets": dict(e.fixes[0].sets), "cases": solved["cases"],
              "requires": solved["requires"]}
    return {s["label"]: (s.get("value"), {c["when"]: c.get("value") for c in s.get("cases") or ()}, s.get("requires"))
            for s in suggestions(record, params, **kw)}


LANES = {"lanes": kernel("lanes", {"n": None, "block": None}, [("divides", "n % block == 0"), ("lanes", "block % 128 == 0")])}


def test_a_value_satisfies_the_rules_the_message_did_not_break():
    e = entry({"n": False, "block": False}, [fix({"blocks": "divisors(n)"}, {"blocks": "block"})], "lanes")
    assert values(e, LANES, {"n": 1024, "block": 96})["blocks"][0] == [128, 256, 512, 1024]


def test_nearest_picks_among_valid_values_only():
    e = entry({"n": False, "block": False}, [fix({"near": "nearest(divisors(n), block)"}, {"near": "block"})], "lanes")
    assert values(e, LANES, {"n": 1024, "block": 96})["near"][0] == [128]  # 64 divides 1024, is nearer, and is refused


def test_a_single_value_the_rules_refuse_is_not_offered():
    e = entry({"n": False, "block": False}, [fix({"padded": "next_multiple(n, block)"}, {"padded": "n"})], "lanes")
    assert values(e, LANES, {"n": 1000, "block": 96})["padded"][0] == []  # 1056: block 96 is refused whatever n
    assert values(e, LANES, {"n": 1000, "block": 128})["padded"][0] == [1024]


DERIVED = {"ragged": kernel("ragged", {"heads": None, "combined": {"from": "2 * heads"}, "packing": {"cases": [1, 2, 4]}},
                            [("tiles", "combined % packing == 0 and (combined // packing in (1, 2, 4, 8) or combined // packing % 8 == 0)")])}


def test_what_the_message_cannot_show_is_taken_in_every_case_and_given_per_case():
    e = entry({"q": False, "heads": False}, [fix({"valid": "divisors(q)"}, {"valid": "heads"})], "ragged")
    value, cases, _ = values(e, DERIVED, {"q": 14, "heads": 4})["valid"]
    assert value == [2]  # combined 4: tiles for packings 1, 2 and 4
    assert cases == {"with packing=1": [1, 2], "with packing=2": [1, 2]}  # combined 2 tiles unless packed by 4


def test_a_rule_on_what_nothing_shows_is_said_not_applied():
    ks = {"k": kernel("k", {"heads": None, "q": None}, [("grouped", "q % heads == 0")])}
    e = entry({"heads": False}, [fix({"more": "heads * 2"}, {"more": "heads"})], "k")
    value, _, requires = values(e, ks, {"heads": 3})["more"]
    assert value == 6 and requires == ["grouped"]


def test_a_rule_the_other_shown_values_break_leaves_nothing_to_offer():
    """A value of one field cannot make up for another field the kernel refuses (one the suggestion
    reads: a wording that shows the suggestion's values shows it)."""
    ks = {"k": kernel("k", {"a": None, "b": None}, [("a-even", "a % 2 == 0"), ("b-small", "b <= 8")])}
    e = entry({"a": False, "b": False}, [fix({"a values": "[2, 4, 6] if b > 0 else []"}, {"a values": "a"})], "k")
    assert values(e, ks, {"a": 3, "b": 4})["a values"][0] == [2, 4, 6]
    assert values(e, ks, {"a": 3, "b": 16})["a values"][0] == []


def test_a_configuration_sets_several_fields_together():
    ks = {"k": kernel("k", {"a": None, "b": None}, [("a-pow", "is_power_of_two(a)"), ("b-pow", "is_power_of_two(b)"),
                                                     ("ordered", "a <= b")])}
    e = entry({"a": False, "b": False}, [fix({"both": "[next_power_of_two(a), next_power_of_two(b)]"}, {"both": "a, b"})], "k")
    assert values(e, ks, {"a": 100, "b": 200})["both"][0] == [[128, 256]]
    assert values(e, ks, {"a": 300, "b": 200})["both"][0] == []  # 512 > 256: refused together


TWO = {"loose": kernel("loose", {"n": None, "block": None}, [("divides", "n % block == 0")], "the loose kernel"),
       "strict": kernel("strict", {"n": None, "block": None}, [("divides", "n % block == 0"), ("lanes", "block % 128 == 0")],
                        "the strict kernel")}


def two_kernel_entry() -> Entry:
    from errkit.catalogue.model import Variant

    return entry({"n": False, "block": False}, [fix({"blocks": "divisors(n)"}, {"blocks": "block"})], "loose",
                 [Variant(message="m", source="strict", kernel="strict")])


def test_the_told_kernel_gets_its_own_values():
    e = two_kernel_entry()
    assert values(e, TWO, {"n": 512, "block": 96}, kernel="loose")["blocks"][0] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert values(e, TWO, {"n": 512, "block": 96}, kernel="strict")["blocks"][0] == [128, 256, 512]


def test_untold_the_values_valid_for_each_kernel_that_may_have_raised_it_and_each_ones_own():
    e = two_kernel_entry()
    value, cases, _ = values(e, TWO, {"n": 512, "block": 96}, candidates=["loose", "strict"])["blocks"]
    assert value == [128, 256, 512]
    assert cases == {"raised by the loose kernel": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]}
    only_loose = values(e, TWO, {"n": 512, "block": 96}, candidates=["loose"])["blocks"][0]
    assert only_loose == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]


def test_every_suggestion_of_the_catalogue_has_its_kernels_rules_written_in():
    """No suggestion of the bundled catalogue is left unsolved (too long, or a list built in a way the
    rules cannot be written into): each one's rules are applied, or said (requires)."""
    catalogue = bundled_catalogue()
    unsolved = [f"{e.code} {label}: {r['says']}" for e in catalogue.entries for fx in kernels.solutions(e, catalogue.kernels)
                for label, rules in fx["requires"].items() for r in rules if r["rule"] == "not-applied"]
    assert not unsolved, "\n".join(unsolved)


@pytest.mark.parametrize("code, fix_number", [("RA105", 0), ("RA710", 0), ("RA231", 0)])
def test_solved_expressions_vet_as_explain_reads_them(code, fix_number):
    from errkit.core import expr

    e = bundled_catalogue().get(code)
    solved = kernels.solutions(e, bundled_catalogue().kernels)[fix_number]
    for source in [*solved["suggest"].values(), *(s for c in solved["cases"] for s in c["suggest"].values())]:
        expr.check(source, set(e.params) | {"raised_by"} | {n for c in solved["cases"] for n in c["assume"]})

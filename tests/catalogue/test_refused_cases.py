"""errkit/catalogue/refused_cases.py: a case refuses every value when the rules not tied to the data
take none of the candidates; rules on a shown length are left out, cased values tried in each."""

from __future__ import annotations

import ast

from errkit.catalogue import refused_cases
from errkit.catalogue.vetting import Verdicts


def _trees(*sources: str) -> list:
    return [ast.parse(s, mode="eval").body for s in sources]


def told(conditions, targets=("block_q",), cased=None) -> bool:
    return refused_cases.fits_nowhere(Verdicts(), _trees(*conditions), targets, cased or {})


def test_a_bound_no_value_meets_refuses_the_case():
    # the forward's shared memory with head_dim=128, block_kv=128, three steps, under jax.grad
    smem = "4 * 128 * (block_q + 3 * 128) + 2072 + 96 + 1024 * ((block_q + 127) // 128) <= 232448"
    assert told(["block_q >= 64 and block_q % 64 == 0", smem])
    assert not told(["block_q >= 64 and block_q % 64 == 0", smem.replace("3 * 128", "2 * 128")])


def test_a_rule_tied_to_a_shown_length_is_left_out():
    # a multiple of 128 divides no length of 32, but some length: the case is not refused
    assert not told(["block_q % 128 == 0", "q_seq_len_per_shard % block_q == 0"])
    assert told(["block_q % 128 == 0", "block_q < 128"])  # (the value's own rules still count)


def test_a_shown_value_with_cases_is_tried_in_each():
    fits_one = ["compute_wgs * block_q + 384 < 512", "block_q >= 64"]
    assert not told(fits_one, cased={"compute_wgs": [1, 2]})  # fits with one warpgroup
    assert told(fits_one, cased={"compute_wgs": [2, 3]})
    many = {f"v{n}": [1, 2] for n in range(7)}  # 128 combinations: not tried, not told refused
    assert not told(["block_q < 0 and " + " and ".join(f"v{n} > 0" for n in range(7))], cased=many)


def test_a_configuration_or_no_rule_is_not_told():
    assert not told(["block_q < 0"], targets=("block_q", "block_kv"))
    assert not told([])
    assert refused_cases.names(ast.parse("divisors(n) and x % 2", mode="eval")) == {"n", "x"}

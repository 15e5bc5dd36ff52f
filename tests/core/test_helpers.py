"""The suggestion helpers catalogue expressions call: each against its definition (or the standard
library function it stands in for), edges included."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from errkit.core import helpers
from errkit.core.bounds import OverBound
from errkit.core.helpers import (
    aligned_divisors, clamp, common_divisors, divisors, gcd, is_finite, is_power_of_two, nearest, next_multiple,
    next_power_of_two, prev_multiple, prev_power_of_two,
)


@given(st.integers(-5, 3000))
def test_divisors_are_every_positive_divisor_ascending(n):
    assert divisors(n) == [d for d in range(1, n + 1) if n % d == 0]


@pytest.mark.parametrize("n, expected", [
    (1, [1]), (2, [1, 2]), (12, [1, 2, 3, 4, 6, 12]), (36, [1, 2, 3, 4, 6, 9, 12, 18, 36]),  # 6 once
    (49, [1, 7, 49]), (97, [1, 97]), (0, []), (-12, []),
])
def test_divisors(n, expected):
    assert divisors(n) == expected


def test_divisors_read_their_argument_as_an_int():
    assert divisors(12.0) == [1, 2, 3, 4, 6, 12]
    assert divisors("6") == [1, 2, 3, 6]
    assert all(type(d) is int for d in divisors(12.0))


@pytest.mark.parametrize("n, expected", [
    (10**12, None),  # 2**12 * 5**12: 169 divisors
    (10**12 + 39, [1, 10**12 + 39]),  # a prime past the old bound, which answered [] for it
    (99999999999973, [1, 99999999999973]),  # the largest prime under 10**14
    (2**61 - 1, [1, 2**61 - 1]),
    (2**64 - 59, [1, 2**64 - 59]),  # the largest prime under 2**64
    (4294967279 * 4294967291, [1, 4294967279, 4294967291, 4294967279 * 4294967291]),  # two primes near 2**32
    (99999999999973 * 131, [1, 131, 99999999999973, 99999999999973 * 131]),
    (2**64, [2**k for k in range(65)]),
    (3**40, [3**k for k in range(41)]),
])
def test_divisors_of_large_numbers_are_factored(n, expected):
    got = divisors(n)
    assert got == sorted(set(got)) and all(n % d == 0 for d in got) and got[0] == 1 and got[-1] == n
    assert all(n // d in got for d in got)  # each divisor's partner too
    if expected is not None:
        assert got == expected
    else:
        assert len(got) == 169 and got[:4] == [1, 2, 4, 5]


def test_divisors_agree_with_the_walk_up_to_the_square_root():
    import random

    def walked(n):
        small = [d for d in range(1, int(n**0.5) + 2) if d * d <= n and n % d == 0]
        return sorted(set(small) | {n // d for d in small})

    rng = random.Random(52)
    for n in [*range(1, 2000), *(rng.randrange(1, 10**10) for _ in range(60)), 720720, 2**31 - 1]:
        assert divisors(n) == walked(n), n


def test_divisors_past_the_bound_are_refused_with_a_reason():
    from errkit.core import expr

    def over(source, env):
        with pytest.raises(OverBound) as err:
            expr.evaluate(source, env)
        return str(err.value)

    assert divisors(2**64 + 1) == [] and divisors(2**80) == []  # the helper alone: nothing, at once
    assert over("divisors(n)", {"n": 2**64 + 1}) == "divisors of a number over 2**64 are not computed"
    assert over("aligned_divisors(n, 8, 512)", {"n": 10**30}) == "divisors of a number over 2**64 are not computed"


@pytest.mark.parametrize("n, m, at_most, expected", [
    (4992, 128, 512, [128, 384]),
    (1000, 128, 1000, []),
    (1024, 128, 4096, [128, 256, 512, 1024]),
    (1024, 128, 512, [128, 256, 512]),  # at_most is inclusive
    (1024, 128, 511, [128, 256]),
    (12, 0, 12, []),  # no multiple of 0
    (12, -2, 12, []),
    (12, 1, 12, [1, 2, 3, 4, 6, 12]),
    (12, 3, 12.9, [3, 6, 12]),  # read as ints
    (12, 3.0, 6, [3, 6]),
    (0, 1, 10, []),
])
def test_aligned_divisors(n, m, at_most, expected):
    assert aligned_divisors(n, m, at_most) == expected


@pytest.mark.parametrize("candidates, x, expected", [
    ([1, 2, 3, 4, 6, 12], 8, [6, 12]),
    ([1, 2, 3, 4, 6, 12], 4, [4]),
    ([1, 2, 3, 4, 6, 12], 13, [12]),
    ([1, 2, 3, 4, 6, 12], 0, [1]),
    ([12, 1, 6, 6, 4], 5, [4, 6]),  # unsorted, repeated
    ([64, 32, 128], 100, [64, 128]),
    ([], 3, []),
    ([2.5, 1.5], 2, [1.5, 2.5]),
])
def test_nearest(candidates, x, expected):
    assert nearest(candidates, x) == expected


@given(st.lists(st.integers(-50, 50)), st.integers(-60, 60))
def test_nearest_is_the_closest_on_each_side(candidates, x):
    got = nearest(candidates, x)
    if x in candidates:
        assert got == [x]
    else:
        below, above = [c for c in candidates if c < x], [c for c in candidates if c > x]
        assert got == ([max(below)] if below else []) + ([min(above)] if above else [])


@pytest.mark.parametrize("n, m, up, down", [
    (100, 64, 128, 64), (128, 64, 128, 128), (129, 64, 192, 128), (10, 64, 64, 64),  # prev: at least m
    (0, 8, 0, 8), (-5, 4, -4, 4), (7, 1, 7, 7), (100.5, 64, 128, 64), (7, 0, 7, 7),  # m == 0: n itself
])
def test_next_and_prev_multiple(n, m, up, down):
    assert next_multiple(n, m) == up and type(next_multiple(n, m)) is int
    assert prev_multiple(n, m) == down and type(prev_multiple(n, m)) is int


@given(st.integers(0, 10**6), st.integers(1, 5000))
def test_next_multiple_is_the_smallest_multiple_not_below(n, m):
    got = next_multiple(n, m)
    assert got % m == 0 and got >= n and got - m < n


@given(st.integers(0, 10**6), st.integers(1, 5000))
def test_prev_multiple_is_the_largest_multiple_not_above_or_m(n, m):
    got = prev_multiple(n, m)
    assert got % m == 0 and (got == m if n < m else got <= n < got + m)


@pytest.mark.parametrize("n, expected", [
    (1, True), (2, True), (1024, True), (2**70, True), (0, False), (-2, False), (6, False), (1023, False),
    (True, False), (2.0, False), ("2", False), (None, False),
])
def test_is_power_of_two(n, expected):
    assert is_power_of_two(n) is expected


@pytest.mark.parametrize("n, up, down", [
    (-3, 1, 1), (0, 1, 1), (1, 1, 1), (2, 2, 2), (3, 4, 2), (5, 8, 4), (1023, 1024, 512), (1024, 1024, 1024),
    (1025, 2048, 1024), (100.7, 128, 64),
])
def test_next_and_prev_power_of_two(n, up, down):
    assert next_power_of_two(n) == up
    assert prev_power_of_two(n) == down


@given(st.integers(2, 2**40))
def test_powers_of_two_bracket_n(n):
    up, down = next_power_of_two(n), prev_power_of_two(n)
    assert is_power_of_two(up) and is_power_of_two(down)
    assert down <= n <= up < 2 * n and n < 2 * down


@given(st.integers(-(2**1000), 2**1000) | st.floats())
def test_is_finite_is_math_isfinite_on_numbers(x):
    assert is_finite(x) is math.isfinite(x)


@pytest.mark.parametrize("x", [True, False, "1", None, [1], 1j])
def test_is_finite_is_false_for_what_is_no_real_number(x):
    assert is_finite(x) is False


def test_is_finite_past_the_float_range_raises_as_math_does():
    with pytest.raises(OverflowError):
        math.isfinite(10**400)
    with pytest.raises(OverflowError):
        is_finite(10**400)


@given(st.integers(-(10**12), 10**12), st.integers(-(10**12), 10**12))
def test_gcd_is_math_gcd(a, b):
    assert gcd(a, b) == math.gcd(a, b)


@pytest.mark.parametrize("a, b, expected", [(0, 0, 0), (0, 5, 5), (5, 0, 5), (-12, 18, 6), (12, -18, 6), (12.0, 8, 4)])
def test_gcd(a, b, expected):
    assert gcd(a, b) == expected


def test_common_divisors():
    assert common_divisors(12, 18) == [1, 2, 3, 6]
    assert common_divisors(-12, 18) == [1, 2, 3, 6]
    assert common_divisors(7, 5) == [1]
    assert common_divisors(0, 0) == []


@pytest.mark.parametrize("x, expected", [(5, 16), (16, 16), (100, 100), (1024, 1024), (4096, 1024), (1.5, 16)])
def test_clamp(x, expected):
    assert clamp(x, 16, 1024) == expected


def test_the_helpers_expressions_may_call():
    own = ["divisors", "common_divisors", "aligned_divisors", "nearest", "next_multiple", "prev_multiple",
           "is_power_of_two", "next_power_of_two", "prev_power_of_two", "is_finite", "gcd", "clamp"]
    builtins = {"min": min, "max": max, "abs": abs, "len": len, "int": int, "float": float, "round": round, "sorted": sorted}
    assert helpers.HELPERS == {**{name: getattr(helpers, name) for name in own}, **builtins}


def test_evaluate_code_sees_the_helpers_and_env_only():
    code = compile("[d for d in divisors(n) if d > low] + [max(n, 1)]", "<test>", "eval")
    assert helpers.evaluate_code(code, {"n": 12, "low": 3}) == [4, 6, 12, 12]  # a comprehension reads env
    with pytest.raises(NameError, match="'print'"):
        helpers.evaluate_code(compile("print(1)", "<test>", "eval"), {})
    with pytest.raises(NameError, match="'__import__'"):
        helpers.evaluate_code(compile("__import__('os')", "<test>", "eval"), {})


def test_evaluate_code_with_helpers_of_its_own():
    code = compile("twice(n)", "<test>", "eval")
    assert helpers.evaluate_code(code, {"n": 4}, {"twice": lambda v: 2 * v}) == 8
    with pytest.raises(NameError, match="'divisors'"):
        helpers.evaluate_code(compile("divisors(4)", "<test>", "eval"), {}, {"twice": lambda v: 2 * v})
    # an env name shadows a helper of the same name
    assert helpers.evaluate_code(compile("gcd", "<test>", "eval"), {"gcd": 7}) == 7


def test_evaluate_code_leaves_its_arguments_alone():
    env, own = {"n": 4}, {"f": abs}
    helpers.evaluate_code(compile("f(n)", "<test>", "eval"), env, own)
    assert env == {"n": 4} and own == {"f": abs}
    assert "__builtins__" not in helpers.HELPERS


def test_the_walk_divisors_takes_is_charged_before_it_runs():
    from errkit.core.helpers import COSTS, _round_cost, _walk

    # 8 per n**0.25 (Pollard's rho's expected steps) and 400: 524,688 at 2**64, a quarter of MAX_STEPS
    assert [_walk(n) for n in (1, 3, 4, 15, 16, 10**12, 10**12 + 1, 2**64, 0, -4, 15.9)] == [
        408, 408, 408, 408, 416, 8400, 8400, 524_688, 0, 0, 408]
    assert [_walk(n) for n in ("x", None, float("inf"))] == [0, 0, 0]  # divisors() raises on them itself
    assert COSTS[divisors] is _walk
    assert COSTS[aligned_divisors](100, 4, 8) == 424 and COSTS[common_divisors](36, 24) == 408
    with pytest.raises(OverBound, match="over 2\\*\\*64"):
        _walk(2**64 + 1)
    assert _round_cost(5, -1024) == _round_cost(5) == _round_cost(1.5, 10**18) == 0
    with pytest.raises(OverBound, match="round\\(\\) to more than 1024 digits"):
        _round_cost(5, -1025)

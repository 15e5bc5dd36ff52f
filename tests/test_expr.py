"""The restricted expression language: what it accepts, computes, compiles and refuses."""

import math

import pytest

from errkit.core import expr


@pytest.mark.parametrize(
    "source, env, expected",
    [
        ("a % b == 0", {"a": 12, "b": 4}, True),
        ("a % b == 0", {"a": 12, "b": 8}, False),
        ("divisors(n)", {"n": 12}, [1, 2, 3, 4, 6, 12]),
        ("nearest(divisors(n), k)", {"n": 12, "k": 8}, [6, 12]),
        ("nearest(divisors(n), k)", {"n": 12, "k": 4}, [4]),
        ("nearest(divisors(n), k)", {"n": 12, "k": 13}, [12]),
        ("nearest(divisors(n), k)", {"n": 12, "k": 5}, [4, 6]),
        ("next_multiple(n, 64)", {"n": 100}, 128),
        ("prev_multiple(n, 64)", {"n": 100}, 64),
        ("x is None or x > 0", {"x": None}, True),
        ("x is not None and is_finite(x)", {"x": math.inf}, False),
        ("s in ('tanh', 'soft_sign')", {"s": "none"}, False),
        ("shape[0] == batch and shape[-1] == 64", {"shape": (2, 3, 64), "batch": 2}, True),
        ("shape[1:]", {"shape": (2, 3, 64)}, (3, 64)),
        ("(a, b) if a > b else [b]", {"a": 1, "b": 2}, [2]),
        ("2 ** 10", {}, 1024),
        ("clamp(next_power_of_two(b), 16, 1024)", {"b": 100}, 128),
        ("is_power_of_two(b) and 16 <= b <= 1024", {"b": 96}, False),
        ("not (a == b)", {"a": 1, "b": 1}, False),
    ],
)
def test_evaluates(source, env, expected):
    assert expr.evaluate(source, env) == expected


@pytest.mark.parametrize(
    "source, rule",
    [
        ("__import__('os').system('true')", "forbidden-expression"),
        ("().__class__", "forbidden-expression"),
        ("a.real", "forbidden-expression"),
        ("10**10**10", "forbidden-expression"),
        ("a ** b", "forbidden-expression"),
        ("2 ** 65", "forbidden-expression"),
        ("lambda: 1", "forbidden-expression"),
        ("[x for x in divisors(a) for y in divisors(a)]", "forbidden-expression"),
    ("[x for x in [y for y in divisors(a)]]", "forbidden-expression"),
    ("[a for a in divisors(b)]", "forbidden-expression"),
        ("(y := 1)", "forbidden-expression"),
        ("f'{a}'", "forbidden-expression"),
        ("{'k': 1}", "forbidden-expression"),
        ("'x' * 10", "forbidden-expression"),
        ("[0] * a", "forbidden-expression"),
        ("divisors(n=a)", "forbidden-expression"),
        ("a is 1", "forbidden-expression"),
        ("10 ** 100 ** 1", "forbidden-expression"),
        ("99999999999999999999999999", "forbidden-expression"),
        ("_private", "forbidden-expression"),
        ("open('x')", "unknown-name"),
        ("eval('1')", "unknown-name"),
        ("undeclared + 1", "unknown-name"),
        ("a +", "bad-expression"),
        ("", "bad-expression"),
        ("a; b", "bad-expression"),
    ],
)
def test_refuses(source, rule):
    with pytest.raises(expr.ExprError) as err:
        expr.check(source, {"a", "b", "n"})
    assert err.value.rule == rule
    assert str(err.value)


def test_unknown_name_suggests_the_close_one():
    with pytest.raises(expr.ExprError, match="did you mean 'num_q_heads'"):
        expr.check("num_q_head % 2", {"num_q_heads"})


def test_evaluate_has_no_builtins():
    # even a name that is a builtin is unknown unless it is a whitelisted helper
    with pytest.raises(expr.ExprError):
        expr.evaluate("print(1)", {})


def test_to_python_renames_names():
    checked = expr.check("a % b == 0 and divisors(a)", {"a", "b"})
    assert expr.to_python(checked, {"a": "num_q", "b": "num_kv", "divisors": "_h.divisors"}) == (
        "num_q % num_kv == 0 and _h.divisors(num_q)"
    )
    assert checked.names == {"a", "b"}


def test_a_list_can_be_filtered_by_a_condition():
    source = "[b for b in divisors(n) if b % 128 == 0 and b <= m]"
    assert expr.check(source, {"n", "m"}).names == {"n", "m"}  # the loop name is no param
    assert expr.evaluate(source, {"n": 4992, "m": 512}) == [128, 384]
    assert expr.evaluate("[b * 2 for b in divisors(6)]", {}) == [2, 4, 6, 12]

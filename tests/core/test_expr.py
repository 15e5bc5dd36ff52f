"""The restricted expression language: what it accepts, computes, compiles and refuses, and why."""

import _ast as ast
import ast as full_ast
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from errkit.core import bounds, expr, suggest
from errkit.core.helpers import HELPERS

NAMES = {"a", "b", "n"}
ONLY = "only the helpers " + ", ".join(sorted(HELPERS)) + " may be called"


def refusal(source, names=NAMES, functions=HELPERS) -> tuple[str, str, int]:
    """(rule, message, column) of the ExprError that vetting `source` raises."""
    with pytest.raises(expr.ExprError) as err:
        expr.check(source, names, functions)
    return err.value.rule, str(err.value), err.value.column


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
        ("s not in ['tanh', 'soft_sign']", {"s": "none"}, True),
        ("shape[0] == batch and shape[-1] == 64", {"shape": (2, 3, 64), "batch": 2}, True),
        ("shape[1:]", {"shape": (2, 3, 64)}, (3, 64)),
        ("shape[::2]", {"shape": (2, 3, 64)}, (2, 64)),
        ("(a, b) if a > b else [b]", {"a": 1, "b": 2}, [2]),
        ("2 ** 10", {}, 1024),
        ("2 ** 0", {}, 1),
        ("2 ** 64", {}, 2**64),  # the largest exponent allowed
        ("a ** 2 + -a + +a - a // 2 / 4", {"a": 8}, 63.0),
        ("a * 3 + 3 * a", {"a": 2}, 12),  # '*' of numbers is no repetition
        ("[1] + [a] + ['x' + 'y']", {"a": 2}, [1, 2, "xy"]),  # nor is '+' of lists and strings
        ("a != b and a < b <= 2 and b >= a > 0 and not a == b", {"a": 1, "b": 2}, True),
        ("clamp(next_power_of_two(b), 16, 1024)", {"b": 100}, 128),
        ("is_power_of_two(b) and 16 <= b <= 1024", {"b": 96}, False),
        ("not (a == b)", {"a": 1, "b": 1}, False),
        ("18446744073709551616 - 1", {}, 2**64 - 1),  # 2**64 itself is a constant allowed
        ("-18446744073709551616", {}, -(2**64)),
        ("1.5e300 * 2", {}, 3e300),
    ],
)
def test_evaluates(source, env, expected):
    assert expr.evaluate(source, env) == expected


def test_a_long_string_and_a_long_expression_at_the_limits():
    limit = "'" + "x" * expr.MAX_STRING + "'"
    assert expr.evaluate(limit, {}) == "x" * 200
    assert refusal("n + '" + "x" * 201 + "'") == (
        "forbidden-expression", "a string constant longer than 200 characters is not allowed", 4)
    assert expr.MAX_LENGTH == 4000  # (RA231's longest suggestion solved against its kernels' rules: 2,225)
    assert expr.evaluate("1" + " " * 3999, {}) == 1  # 4000 characters, spaces included
    assert refusal("1" + " " * 4000) == ("bad-expression", "expression is longer than 4000 characters", 0)


@pytest.mark.parametrize(
    "source, rule, message, column",
    [
        # what can reach Python's internals
        ("__import__('os').system('true')", "forbidden-expression", f"call of \"__import__('os').system\": {ONLY}", 0),
        ("n + __import__('os')", "forbidden-expression", "a call of '__import__' (names starting with '_') is not allowed", 4),
        ("n + _private", "forbidden-expression", "the name '_private' (names starting with '_') is not allowed", 4),
        ("().__class__", "forbidden-expression", "attribute access is not allowed", 0),
        ("n + a.real", "forbidden-expression", "attribute access is not allowed", 4),
        ("n + a.b(1)", "forbidden-expression", f"call of 'a.b': {ONLY}", 4),
        ("n + (lambda: 1)()", "forbidden-expression", f"call of 'lambda: 1': {ONLY}", 4),
        ("n or (lambda: 1)", "forbidden-expression", "lambda is not allowed", 6),
        ("n + open('x')", "unknown-name", f"call of 'open': {ONLY}", 4),
        ("eval('1')", "unknown-name", f"call of 'eval': {ONLY}", 0),
        ("n + divisors(n=a)", "forbidden-expression", "a keyword argument is not allowed", 4),
        ("divisors(**a)", "forbidden-expression", "a keyword argument is not allowed", 0),
        ("divisors(*a)", "forbidden-expression", "star expression is not allowed", 9),
        # what can take time or memory without bound
        ("10**10**10", "forbidden-expression", "'**' with an exponent other than a literal 0..64 is not allowed", 0),
        ("n + a ** b", "forbidden-expression", "'**' with an exponent other than a literal 0..64 is not allowed", 4),
        ("n + 2 ** 65", "forbidden-expression", "'**' with an exponent other than a literal 0..64 is not allowed", 4),
        ("2 ** -1", "forbidden-expression", "'**' with an exponent other than a literal 0..64 is not allowed", 0),
        ("2 ** True", "forbidden-expression", "'**' with an exponent other than a literal 0..64 is not allowed", 0),
        ("2 ** 2.0", "forbidden-expression", "'**' with an exponent other than a literal 0..64 is not allowed", 0),
        ("10 ** 100 ** 1", "forbidden-expression", "'**' with an exponent other than a literal 0..64 is not allowed", 0),
        ("n + 'x' * 10", "forbidden-expression", "repeating a string or sequence with '*' is not allowed", 4),
        ("10 * 'x'", "forbidden-expression", "repeating a string or sequence with '*' is not allowed", 0),
        ("[0] * a", "forbidden-expression", "repeating a string or sequence with '*' is not allowed", 0),
        ("a * (0,)", "forbidden-expression", "repeating a string or sequence with '*' is not allowed", 0),
        ("n + 18446744073709551617", "forbidden-expression", "an integer constant above 2**64 is not allowed", 4),
        ("99999999999999999999999999", "forbidden-expression", "an integer constant above 2**64 is not allowed", 0),
        # constructs outside the language, each named
        ("n + [x for x in divisors(a) for y in divisors(a)]", "forbidden-expression",
         "a comprehension with more than one 'for' is not allowed", 4),
        ("n + [x for x in [y for y in divisors(a)]]", "forbidden-expression", "a comprehension inside a comprehension is not allowed", 4),
        ("[[y for y in a] for x in a]", "forbidden-expression", "a comprehension inside a comprehension is not allowed", 0),
        ("[x for x in a if [y for y in a]]", "forbidden-expression", "a comprehension inside a comprehension is not allowed", 0),
        ("n + [a for a in divisors(b)]", "forbidden-expression",
         "the loop name 'a' (it must be new, and not start with '_') is not allowed", 4),
        ("[gcd for gcd in a]", "forbidden-expression", "the loop name 'gcd' (it must be new, and not start with '_') is not allowed", 0),
        ("[_x for _x in a]", "forbidden-expression", "the loop name '_x' (it must be new, and not start with '_') is not allowed", 0),
        ("[x for x in a] + [x for x in b]", "forbidden-expression",
         "the loop name 'x' (it must be new, and not start with '_') is not allowed", 0),
        ("n + [x for x, y in a]", "forbidden-expression",
         "a comprehension other than [x for NAME in ITEMS if CONDITION] is not allowed", 4),
        ("[x for x in a if x if x]", "forbidden-expression",
         "a comprehension other than [x for NAME in ITEMS if CONDITION] is not allowed", 0),
        ("[x async for x in a]", "forbidden-expression",
         "a comprehension other than [x for NAME in ITEMS if CONDITION] is not allowed", 0),
        ("n + {x for x in a}", "forbidden-expression", "comprehension is not allowed", 4),
        ("{x: 1 for x in a}", "forbidden-expression", "comprehension is not allowed", 0),
        ("n + (x for x in a)", "forbidden-expression", "generator expression is not allowed", 4),
        ("n + (y := 1)", "forbidden-expression", "assignment expression is not allowed", 5),
        ("n + f'{a}'", "forbidden-expression", "f-string is not allowed", 4),
        ("n + await a", "forbidden-expression", "await is not allowed", 4),
        ("n + (yield)", "forbidden-expression", "yield is not allowed", 5),
        ("n + (yield from a)", "forbidden-expression", "yield is not allowed", 5),
        ("n + [*a]", "forbidden-expression", "star expression is not allowed", 5),
        ("n + {'k': 1}", "forbidden-expression", "dict display is not allowed", 4),
        ("n + {1}", "forbidden-expression", "set display is not allowed", 4),
        ("n + b'x'", "forbidden-expression", "a bytes constant is not allowed", 4),
        ("n + 1j", "forbidden-expression", "a complex constant is not allowed", 4),
        ("n + ...", "forbidden-expression", "a ellipsis constant is not allowed", 4),
        ("n + (a << 1)", "forbidden-expression", "the operator LShift is not allowed", 5),
        ("a >> 1", "forbidden-expression", "the operator RShift is not allowed", 0),
        ("a | b", "forbidden-expression", "the operator BitOr is not allowed", 0),
        ("a & b", "forbidden-expression", "the operator BitAnd is not allowed", 0),
        ("a ^ b", "forbidden-expression", "the operator BitXor is not allowed", 0),
        ("a @ b", "forbidden-expression", "the operator MatMult is not allowed", 0),
        ("n + ~a", "forbidden-expression", "the operator Invert is not allowed", 4),
        ("n and a is 1", "forbidden-expression", "'is' with anything but None is not allowed", 6),
        ("None is a", "forbidden-expression", "'is' with anything but None is not allowed", 0),
        ("a is None is not b", "forbidden-expression", "'is' with anything but None is not allowed", 0),
        # names nobody declared
        ("n + undeclared", "unknown-name", "unknown name 'undeclared'", 4),
        ("n + divisor", "unknown-name", "unknown name 'divisor' (did you mean 'divisors'?)", 4),
        ("n + bb", "unknown-name", "unknown name 'bb' (did you mean 'b'?)", 4),
        # text that is no expression
        ("a +", "bad-expression", "does not parse: invalid syntax", 0),
        ("1 +* 2", "bad-expression", "does not parse: invalid syntax", 3),
        ("(", "bad-expression", "does not parse: '(' was never closed", 0),
        ("a; b", "bad-expression", "does not parse: invalid syntax", 1),
        ("", "bad-expression", "empty expression", 0),
        ("  \n ", "bad-expression", "empty expression", 0),
        (None, "bad-expression", "empty expression", 0),
        (12, "bad-expression", "empty expression", 0),
    ],
)
def test_refuses_naming_the_rule_the_construct_and_where(source, rule, message, column):
    assert refusal(source) == (rule, message, column)


def test_a_refusal_is_a_value_error_with_its_rule():
    err = expr.ExprError("unknown-name", "unknown name 'x'")
    assert isinstance(err, ValueError)
    assert (err.rule, str(err), err.column) == ("unknown-name", "unknown name 'x'", 0)
    assert expr.ExprError("bad-expression", "m", 7).column == 7


def test_a_refusal_of_a_node_with_no_position_is_at_column_0():
    err = expr._forbid(ast.comprehension(), "that")
    assert (err.rule, str(err), err.column) == ("forbidden-expression", "that is not allowed", 0)


def test_columns_count_from_the_first_character_that_is_not_space():
    assert refusal("   n + a.real") == ("forbidden-expression", "attribute access is not allowed", 4)
    assert refusal("  1 +* 2")[2] == 3


def test_a_call_names_the_helpers_it_may_call():
    assert refusal("open(a)", functions={"min", "gcd"}) == ("unknown-name", "call of 'open': only the helpers gcd, min may be called", 0)
    assert refusal("divisors(a)", functions={"gcd"})[1] == "call of 'divisors': only the helpers gcd may be called"


def test_every_comparison_and_operator_is_one_the_whitelists_name(monkeypatch):
    # All ten comparisons are whitelisted today: take one out, and it is refused by name.
    monkeypatch.setattr(expr, "_COMPARE", (ast.Eq,))
    assert refusal("n + (a < b)") == ("forbidden-expression", "the comparison Lt is not allowed", 5)
    assert expr.check("a == b", NAMES).names == {"a", "b"}


def test_a_node_the_vetting_does_not_know_is_refused_by_its_type(monkeypatch):
    # Default deny: a construct the whitelist does not name (a newer Python's, say) is refused.
    monkeypatch.delitem(expr._DESCRIBE, ast.Lambda)
    assert refusal("n or (lambda: 1)") == ("forbidden-expression", "Lambda is not allowed", 6)


def test_unknown_name_suggests_the_close_one():
    with pytest.raises(expr.ExprError, match="did you mean 'num_q_heads'"):
        expr.check("num_q_head % 2", {"num_q_heads"})


def test_evaluate_has_no_builtins():
    # even a name that is a builtin is unknown unless it is a whitelisted helper
    assert refusal("print(1)", set()) == ("unknown-name", f"call of 'print': {ONLY}", 0)
    with pytest.raises(expr.ExprError) as err:
        expr.evaluate("print(1)", {})
    assert err.value.rule == "unknown-name"


def test_evaluate_vets_against_the_names_it_is_given():
    with pytest.raises(expr.ExprError) as err:
        expr.evaluate("a + b", {"a": 1})
    assert (err.value.rule, str(err.value)) == ("unknown-name", "unknown name 'b'")
    with pytest.raises(expr.ExprError) as err:
        expr.evaluate("a.real", {"a": 1})
    assert str(err.value) == "attribute access is not allowed"


def test_evaluate_with_helpers_of_its_own():
    twice = {"twice": lambda v: 2 * v}
    assert expr.evaluate("twice(a) + 1", {"a": 4}, twice) == 9
    with pytest.raises(expr.ExprError) as err:
        expr.evaluate("divisors(a)", {"a": 4}, twice)
    assert str(err.value) == "call of 'divisors': only the helpers twice may be called"
    assert expr.evaluate("divisors(a)", {"a": 4}) == [1, 2, 4]  # None: the standard helpers


def test_check_reports_the_names_read_and_the_loop_names():
    checked = expr.check("  a + gcd(a, n)  ", {"a", "b", "n"})
    assert checked.source == "a + gcd(a, n)"
    assert checked.names == {"a", "n"}  # not b: unread; not gcd: a helper
    assert checked.loops == frozenset()
    assert isinstance(checked.tree, ast.Expression)
    listed = expr.check("[b for b in divisors(n) if b % m == 0]", {"n", "m", "k"})
    assert (listed.names, listed.loops) == ({"n", "m"}, {"b"})
    assert expr.check("True and None is None and 1.5", set()).names == frozenset()


def test_checked_holds_what_it_is_given():
    checked = expr.Checked("s", "t", frozenset({"x"}))
    assert (checked.source, checked.tree, checked.names, checked.loops) == ("s", "t", {"x"}, frozenset())


def test_compiled_gives_code_the_names_it_reads_and_its_loop_names():
    code, names, loops = expr.compiled(" [b for b in divisors(n) if b % m == 0] + [k] ", {"n", "m", "k", "unused"})
    assert (names, loops) == (("k", "m", "n"), ("b",))
    assert code.co_filename == "<catalogue expression>"
    from errkit.core.helpers import evaluate_code
    assert evaluate_code(code, {"n": 12, "m": 4, "k": 0}) == [4, 12, 0]
    with pytest.raises(expr.ExprError) as err:
        expr.compiled("divisors(n)", {"n"}, {"gcd"})
    assert str(err.value) == "call of 'divisors': only the helpers gcd may be called"
    assert expr.compiled("gcd(n, 4)", {"n"}, {"gcd"})[1:] == (("n",), ())


def test_walk_visits_every_node_once():
    tree = expr.parse("f(a, [b, c][0]) + -d")
    names = sorted(node.id for node in expr.walk(tree) if isinstance(node, ast.Name))
    assert names == ["a", "b", "c", "d", "f"]
    nodes = [node for node in expr.walk(tree) if not isinstance(node, (ast.expr_context, ast.operator, ast.unaryop))]
    assert nodes[0] is tree and len(nodes) == len({id(n) for n in nodes}) == 12  # (Load, Add, USub: shared nodes)


def test_to_python_renames_names():
    checked = expr.check("a % b == 0 and divisors(a)", {"a", "b"})
    assert expr.to_python(checked, {"a": "num_q", "b": "num_kv", "divisors": "_h.divisors"}) == (
        "num_q % num_kv == 0 and _h.divisors(num_q)"
    )
    assert checked.names == {"a", "b"}


def test_to_python_without_a_rename_is_the_expression():
    checked = expr.check(" a %  b==0 ", {"a", "b"})
    assert expr.to_python(checked) == "a % b == 0"
    assert expr.to_python(checked, {}) == "a % b == 0"
    listed = expr.check("[b for b in divisors(n) if b > m]", {"n", "m"})
    assert expr.to_python(listed, {"n": "self.n", "divisors": "h.divisors"}) == "[b for b in h.divisors(self.n) if b > m]"


def test_a_list_can_be_filtered_by_a_condition():
    source = "[b for b in divisors(n) if b % 128 == 0 and b <= m]"
    assert expr.check(source, {"n", "m"}).names == {"n", "m"}  # the loop name is no param
    assert expr.evaluate(source, {"n": 4992, "m": 512}) == [128, 384]
    assert expr.evaluate("[b * 2 for b in divisors(6)]", {}) == [2, 4, 6, 12]


@given(st.integers(-(2**64), 2**64), st.integers(-(2**64), 2**64))
def test_arithmetic_is_pythons(x, y):
    source = f"({x}) * ({y}) - ({x}) // max(abs({y}), 1) + ({x}) % max(abs({y}), 1)"
    assert expr.evaluate(source, {}) == eval(source)  # noqa: S307 - the reference
    assert expr.evaluate("a < b or a == b", {"a": x, "b": y}) is (x <= y)


# -- bounded cost: what vetting refuses whatever the values, what evaluation stops (errkit/core/bounds.py)


def test_nesting_is_bounded_at_vetting():
    assert expr.MAX_DEPTH == 32
    assert expr.evaluate("-" * 31 + "a", {"a": 1}) == -1  # 32 deep: the last one allowed
    assert refusal("-" * 32 + "a", {"a"}) == ("forbidden-expression", "an expression nested deeper than 32 levels is not allowed", 32)
    assert refusal("n + (" * 40 + "n" + ")" * 40)[0] == "forbidden-expression"


def test_a_parser_out_of_its_depth_is_a_bad_expression(monkeypatch):
    def deep(*args):
        raise RecursionError
    monkeypatch.setattr(expr, "compile", deep, raising=False)
    assert refusal("a") == ("bad-expression", "does not parse: nested too deeply", 0)


@pytest.mark.parametrize("source", ["(a ** 8) ** 8", "((a ** 2) ** 2) ** 16", "abs(a ** 8) ** 8", "(a ** 64) ** 1",
                                    "(a ** 64) ** 0 + a ** 64", "(a ** 2 * b ** 32) ** 2", "a ** 64 * a ** 64"])
def test_powers_of_powers_within_64_are_allowed(source):
    expr.check(source, NAMES)


@pytest.mark.parametrize("source, power, column", [
    ("(a ** 5) ** 13", 65, 0),  # one past the bound
    ("n + ((a ** 64) ** 64) ** 64", 4096, 5),  # the first power past the bound, the inner one
    ("abs(a ** 8) ** 9", 72, 0),  # through a call
    ("[x ** 8 for x in a][0] ** 9", 72, 0),
    ("(a ** 2 * b ** 40) ** 2", 80, 0),  # through a product
])
def test_powers_of_powers_past_64_are_refused(source, power, column):
    assert refusal(source) == ("forbidden-expression",
                               f"a power of a power (its exponents multiply to {power}, above 64) is not allowed", column)


@pytest.mark.parametrize("source, column", [("divisors", 0), ("n + min[0]", 4), ("sorted(min)", 7), ("[max for x in a]", 1),
                                            ("(gcd, 1)", 1), ("a if a else abs", 12)])
def test_a_helper_named_without_calling_it_is_refused(source, column):
    name = next(h for h in HELPERS if h in source)
    assert refusal(source) == ("forbidden-expression", f"the helper {name!r} named without calling it is not allowed", column)


def test_a_helper_called_is_still_a_call():
    assert expr.evaluate("min(divisors(n)) + max([a, 2])", {"n": 12, "a": 1}) == 3


def over(source, env, meter=None) -> str:
    """The message of the OverBound that evaluating `source` raises."""
    with pytest.raises(bounds.OverBound) as err:
        expr.evaluate(source, env, meter=meter)
    return str(err.value)


BITS = "an int of more than 4096 bits"
ITEMS = "a sequence of more than 10000 items"


def test_the_bounds():
    assert (bounds.MAX_BITS, bounds.MAX_ITEMS, bounds.MAX_STEPS, bounds.MAX_ROUND_DIGITS) == (4096, 10_000, 2_000_000, 1024)


def test_a_power_is_bounded_by_its_bits_before_it_is_computed():
    assert expr.evaluate("a ** 64", {"a": 2**63}) == 2**4032  # 64 bits x 64: 4096, the last allowed
    assert expr.evaluate("a ** 17", {"a": 2**239}) == 2**4063
    assert over("a ** 17", {"a": 2**240}) == BITS  # 241 bits x 17: 4097
    assert over("a ** 64", {"a": 2**64}) == BITS
    assert over("-a ** 2", {"a": 2**2048}) == BITS
    assert expr.evaluate("a ** 64", {"a": 1.5}) == 1.5**64  # a float overflows instead


def test_a_product_is_bounded_by_its_bits_and_a_repetition_by_its_items():
    assert expr.evaluate("a * b", {"a": 2**2047, "b": 2**2047}) == 2**4094  # 2048 + 2048 bits
    assert over("a * b", {"a": 2**2047, "b": 2**2048}) == BITS
    assert over("b * a", {"a": 2**2047, "b": 2**2048}) == BITS
    assert expr.evaluate("s * n", {"s": "ab", "n": 5000}) == "ab" * 5000
    assert over("s * n", {"s": "ab", "n": 5001}) == ITEMS
    assert over("n * s", {"s": "ab", "n": 5001}) == ITEMS
    assert over("divisors(6) * 2501", {}) == ITEMS
    assert expr.evaluate("divisors(6) * 2500", {}) == [1, 2, 3, 6] * 2500
    assert expr.evaluate("s * -1", {"s": "ab"}, meter=bounds.Meter(0)) == ""  # no items: nothing charged
    assert expr.evaluate("a * 2.5", {"a": 2}) == 5.0
    meter = bounds.Meter(10)
    assert expr.evaluate("s * 5", {"s": "ab"}, meter=meter) == "ababababab" and meter.left == 0  # its items charged
    assert over("s * 5", {"s": "abc"}, bounds.Meter(14)) == "more than 2000000 steps"


def test_a_concatenation_is_bounded_by_its_items():
    assert len(expr.evaluate("s + t", {"s": "a" * 5000, "t": "b" * 5000})) == 10_000
    assert over("s + t", {"s": "a" * 5000, "t": "b" * 5001}) == ITEMS
    assert over("divisors(12) + s", {"s": [0] * 9995}) == ITEMS
    meter = bounds.Meter(5)
    assert expr.evaluate("s + t", {"s": "ab", "t": "cde"}, meter=meter) == "abcde" and meter.left == 0
    assert expr.evaluate("a + 1", {"a": 2**4096}) == 2**4096 + 1  # a sum adds a bit at most: not bounded
    with pytest.raises(TypeError, match="can only concatenate"):  # one side no sequence: Python's own error
        expr.evaluate("s + 1", {"s": "ab"})


def test_formatting_a_string_with_percent_is_stopped():
    assert over("'%0999999999d' % a", {"a": 1}) == "'%' formatting of a string (its width has no bound)"
    assert over("s % a", {"s": "%s", "a": 1}) == "'%' formatting of a string (its width has no bound)"
    assert expr.evaluate("a % 5", {"a": 12}) == 2


def test_a_meter_calls_a_helper_without_costs_of_its_own():
    assert bounds.Meter().call(len, "abc") == 3


def test_steps_are_charged_and_bounded():
    meter = bounds.Meter()
    assert meter.left == bounds.MAX_STEPS
    meter.charge(bounds.MAX_STEPS)  # every step spent: still within
    with pytest.raises(bounds.OverBound, match="more than 2000000 steps"):
        meter.charge(1)
    meter = bounds.Meter(3)
    meter.charge(3)
    assert meter.left == 0


def test_a_comprehension_is_charged_its_passes_before_the_first():
    # one pass: 1 + the expression nodes of its element and condition (b; b, 2, b % 2, b % 2 == 0, 0)
    assert expr.evaluate("[b for b in s]", {"s": "abcde"}, meter=bounds.Meter(10)) == list("abcde")  # 5 x 2
    assert over("[b for b in s]", {"s": "abcde"}, bounds.Meter(9)) == "more than 2000000 steps"
    assert expr.evaluate("[b for b in s if b % 2 == 0]", {"s": (1, 2)}, meter=bounds.Meter(19)) == [2]  # 2 x 7 + the compare's 2 reads
    assert over("[b for b in s if b % 2 == 0]", {"s": (1, 2)}, bounds.Meter(13)) == "more than 2000000 steps"
    assert len(expr.evaluate("[c for c in s]", {"s": "x" * 10_000})) == 10_000
    assert over("[c for c in s]", {"s": "x" * 10_001}) == ITEMS
    with pytest.raises(TypeError):  # what it loops over is no sequence: Python says so
        expr.evaluate("[c for c in a]", {"a": 3})


def test_comparisons_and_slices_charge_the_sequences_they_read():
    meter = bounds.Meter(7)
    assert expr.evaluate("s == t", {"s": "abc", "t": "abcd"}, meter=meter) is False and meter.left == 0
    assert over("s in t", {"s": "ab", "t": "xab"}, bounds.Meter(4)) == "more than 2000000 steps"
    meter = bounds.Meter(5)
    assert expr.evaluate("s[1:]", {"s": (1, 2, 3, 4, 5)}, meter=meter) == (2, 3, 4, 5) and meter.left == 0
    meter = bounds.Meter(0)
    assert expr.evaluate("s[1]", {"s": (1, 2)}, meter=meter) == 2  # an item: no sequence read whole
    assert expr.evaluate("a == 1", {"a": 1}, meter=meter) is True  # numbers: nothing to charge


def test_a_helper_call_is_charged_its_arguments_and_its_own_cost():
    meter = bounds.Meter(1 + 40 + 8 * 999 + 400)  # the call, n's 40 bits, 10**12 - 1 factored: 8 per n**0.25, 400
    assert len(expr.evaluate("divisors(n)", {"n": 10**12 - 1}, meter=meter)) == 256 and meter.left == 0
    assert over("divisors(n)", {"n": 10**12 - 1}, bounds.Meter(8432)) == "more than 2000000 steps"
    # past divisors' bound: refused before it runs, with the reason
    assert over("divisors(n)", {"n": 2**64 + 1}) == "divisors of a number over 2**64 are not computed"
    meter = bounds.Meter(1 + 4 + 3 + 1 + 408)  # the call, three args (12: 4 bits, 4: 3, 1.5: 1), divisors(12)'s: 408
    assert expr.evaluate("aligned_divisors(s, 4, 1.5)", {"s": 12}, meter=meter) == [] and meter.left == 0
    meter = bounds.Meter(1 + 5 + 5 + 408)  # gcd(24, 16) = 8: its divisors, 408
    assert expr.evaluate("common_divisors(24, 16)", {}, meter=meter) == [1, 2, 4, 8] and meter.left == 0
    meter = bounds.Meter(1 + 3)
    assert expr.evaluate("sorted(s)", {"s": (3, 1, 2)}, meter=meter) == [1, 2, 3] and meter.left == 0
    assert over("len([divisors(n) for d in divisors(n)])", {"n": 963761198400}) == "more than 2000000 steps"


def test_a_helpers_result_is_bounded():
    assert expr.evaluate("next_power_of_two(a)", {"a": 2**4095}) == 2**4095  # 4096 bits
    assert over("next_power_of_two(a)", {"a": 2**4095 + 1}) == BITS
    assert len(expr.evaluate("sorted(s)", {"s": "x" * 10_000})) == 10_000
    assert over("sorted(s)", {"s": "x" * 10_001}) == ITEMS


def test_round_to_a_far_power_of_ten_is_stopped():
    assert expr.evaluate("round(a, -1024)", {"a": 5}) == 0
    assert over("round(a, -1025)", {"a": 5}) == "round() to more than 1024 digits"
    assert expr.evaluate("round(a, 10**18)", {"a": 1.5}) == 1.5  # digits after the point cost nothing
    assert expr.evaluate("round(a)", {"a": 2.5}) == 2


def test_a_helper_reads_its_arguments_by_their_size():
    env = {"s": "abc", "t": [1, 2], "u": (), "f": 1.5, "z": None, "y": True, "n": 255}
    source, own = "f7(s, t, u, f, z, y, n)", {"f7": lambda *args: len(args)}
    meter = bounds.Meter(1 + 3 + 2 + 0 + 1 + 1 + 1 + 8)  # the call; items, items, items, 1, 1, a bit, 8 bits
    assert expr.evaluate(source, env, own, meter) == 7 and meter.left == 0
    with pytest.raises(bounds.OverBound):
        expr.evaluate(source, env, own, bounds.Meter(16))


def test_a_result_to_show_is_a_value_of_bounded_size():
    assert bounds.MAX_SHOWN == 262_144
    assert bounds.unshowable([1, (2.5, "x"), None, True]) is None
    assert bounds.unshowable(min) == "not a value (builtin_function_or_method)"
    assert bounds.unshowable([[1, divisors_function()]]) == "not a value (function)"
    assert bounds.unshowable(2**4096) == BITS
    assert bounds.unshowable(2**4096 - 1) is None
    assert bounds.unshowable("x" * 262_144) is None
    assert bounds.unshowable("x" * 262_145) == "a result of more than 262144 characters"
    assert bounds.unshowable([0] * 131_072) is None  # an item and a digit each: 262,144
    assert bounds.unshowable([0] * 131_073) == "a result of more than 262144 characters"
    assert bounds.unshowable([2**30] * 21_845) is None  # each an item and 1 + 31 // 3 digits: 12
    assert bounds.unshowable([2**30] * 21_846) == "a result of more than 262144 characters"
    assert bounds.unshowable([1.5] * 131_072) is None and bounds.unshowable([None] * 131_072) is None  # 1 each
    assert bounds.unshowable([1.5] * 131_073) == "a result of more than 262144 characters"
    assert bounds.unshowable([[0] * 131_072]) == "a result of more than 262144 characters"  # 1 + 131,072 x 2
    assert bounds.unshowable([[]] * 262_144) is None
    assert bounds.unshowable([[]] * 262_145) == "a result of more than 262144 characters"


def divisors_function():
    return lambda: 0


def test_suggestions_over_a_bound_are_not_computed():
    fix = {"suggest": {"fine": "divisors(n)", "huge": "[divisors(n) for d in divisors(n)]", "bare": "divisors",
                       "later": "n + 1"}}
    out = suggest.suggestions(fix, {"n": 963761198400})
    assert out[0]["label"] == "fine" and len(out[0]["value"]) == 6720
    assert out[1:] == [{"label": "huge", "not_computed": "more than 2000000 steps"}, {"label": "later", "value": 963761198401}]
    # computed, but no value to show: too big to print, or past the bits (a sum adds a bit)
    assert suggest.suggestions({"suggest": {"x": "[s for d in divisors(n)]", "y": "a + a"}},
                               {"s": "x" * 1000, "n": 963761198400, "a": 2**4095}) == [
        {"label": "x", "not_computed": "a result of more than 262144 characters"},
        {"label": "y", "not_computed": BITS}]
    # one Meter for several fixes (an answer's): what one spends the next has no more
    meter = bounds.Meter(100)
    assert suggest.suggestions({"suggest": {"a": "divisors(n)"}}, {"n": 10**6}, meter=meter) == [
        {"label": "a", "not_computed": "more than 2000000 steps"}]
    assert suggest.suggestions({"suggest": {"b": "s * 1"}}, {"s": "x" * 99}, meter=bounds.Meter(99)) == [{"label": "b", "value": "x" * 99}]


def test_compiled_code_runs_guarded_and_python_source_as_written():
    from errkit.core.helpers import evaluate_code

    code, names, _ = expr.compiled("a ** 64 * a", {"a"})
    assert evaluate_code(code, {"a": 3}) == 3**65
    with pytest.raises(bounds.OverBound, match=BITS):
        evaluate_code(code, {"a": 2**64})
    assert set(bounds.GUARDS) >= set(code.co_names) - {"a"}
    assert expr.to_python(expr.check("a ** 64 * a", {"a"})) == "a ** 64 * a"
    tree = expr.check("[b for b in divisors(n) if b % 2 == 0][1:] + [n * 2]", {"n"}).tree
    guarded = full_ast.unparse(expr.guarded(tree))
    assert guarded == "_add(_v(_each(_call(divisors, n), 7))[1:], [_mul(n, 2)])".replace(
        "_each(_call(divisors, n), 7)", "[b for b in _each(_call(divisors, n), 7) if _v(_mod(b, 2)) == 0]")

"""The restricted expression language: what it accepts, computes, compiles and refuses, and why."""

import _ast as ast
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from errkit.core import expr
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
    assert expr.evaluate("1" + " " * 1999, {}) == 1  # 2000 characters, spaces included
    assert refusal("1" + " " * 2000) == ("bad-expression", "expression is longer than 2000 characters", 0)


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

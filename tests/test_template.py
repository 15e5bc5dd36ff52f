"""Message templates follow f-string rules exactly, and their regexes read the values back."""

import re

import pytest

from errkit import template, values


def fstring(source: str, env: dict) -> str:
    return eval("f" + repr(source), {}, dict(env))  # the reference: Python's own f-strings


CASES = [
    ("{num_q_heads=} must be divisible by {num_kv_heads=}", {"num_q_heads": 12, "num_kv_heads": 8}),
    ("got {x!r} and {x}", {"x": "tanh"}),
    ("{shape=} vs {shape}", {"shape": (2, 128, 8, 64)}),
    ("one dim {s}", {"s": (3,)}),
    ("literal {{braces}} and {n:>5} and {f:.3f}", {"n": 42, "f": 1.5}),
    ("{x = } spaced", {"x": 7}),
    ("{flag=} {none=}", {"flag": True, "none": None}),
    ("{name!s:>8}|", {"name": "ab"}),
]


@pytest.mark.parametrize("source, env", CASES)
def test_render_matches_python_fstrings(source, env):
    tpl = template.parse(source)
    assert tpl.render(lambda f: env[f.name]) == fstring(source, env)


def test_parse_fields():
    tpl = template.parse("{q.shape=} and {block_q * 2=}, {x!r:>3} {{lit}}")
    fields = tpl.fields
    assert [f.name for f in fields] == ["q.shape", "block_q * 2", "x"]
    assert [f.self_doc for f in fields] == [True, True, False]
    assert fields[2].conversion == "r" and fields[2].spec == ">3"
    assert tpl.literals == ("q.shape=", " and block_q * 2=", ", ", " {lit}")


@pytest.mark.parametrize("bad", ["{", "}", "{x!z}", "{}", "{x:{y}}", "{a +}", "{x!r junk}"])
def test_parse_errors(bad):
    with pytest.raises(template.TemplateError):
        template.parse(bad)


def test_not_equal_is_not_a_conversion():
    assert template.parse("{a != b}").fields[0].name == "a != b"


TYPED = [
    ("int", -3), ("int", 128), ("float", 0.125), ("float", float("inf")), ("bool", False),
    ("str", "soft_sign"), ("dtype", "bfloat16"), ("shape", (3,)), ("shape", ()), ("shape", (2, 128, 8, 64)),
]


@pytest.mark.parametrize("self_doc", [True, False])
@pytest.mark.parametrize("type_, value", TYPED)
def test_regex_round_trip(type_, value, self_doc):
    source = "before {v=} after" if self_doc else "before {v} after"
    tpl = template.parse(source)
    pattern, captures = template.to_regex(tpl, lambda f: ("v", type_, False))
    text = tpl.render(lambda f: value)
    match = re.fullmatch(pattern, text)
    assert match, (pattern, text)
    assert template.extract(captures, match) == {"v": value}


def test_dtype_forms_seen_in_the_wild():
    tpl = template.parse("got dtype: {dtype}")
    pattern, captures = template.to_regex(tpl, lambda f: ("dtype", "dtype", False))
    for text in ("dtype('float32')", "dtype(bfloat16)", "float16", "jnp.float32", "'int8'"):
        match = re.fullmatch(pattern, "got dtype: " + text)
        assert match, text
        assert template.extract(captures, match)["dtype"] in values.DTYPE_NAMES


def test_same_param_twice_must_agree():
    tpl = template.parse("{a} and {a}")
    pattern, captures = template.to_regex(tpl, lambda f: ("a", "int", False))
    assert template.extract(captures, re.fullmatch(pattern, "1 and 1")) == {"a": 1}
    assert template.extract(captures, re.fullmatch(pattern, "1 and 2")) is None


def test_whitespace_is_flexible_in_literals():
    tpl = template.parse("{a=} must be  divisible")
    pattern, _ = template.to_regex(tpl, lambda f: ("a", "int", False))
    assert re.fullmatch(pattern, "a=3 must be divisible")

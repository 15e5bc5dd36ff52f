"""Message templates follow f-string rules exactly, and their regexes read the values back."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from errkit.core import template, values


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


SPECS = [  # found by test_random_templates_render_like_fstrings_and_read_back
    ("x{v:>5}", "int", 42), ("x{v:<6}y", "int", -42), ("{v:>6}", "bool", True), ("{v:+}", "bool", False),
    ("{v:.1%}", "float", float("inf")), ("{v:010}", "float", -float("inf")), ("{v!r:<6}|", "bool", None),
    ("{v:>8}|{v}", "float", float("nan")),
]


@pytest.mark.parametrize("source, type_, value", SPECS)
def test_fields_with_a_spec_read_back(source, type_, value):
    tpl = template.parse(source)
    text = tpl.render(lambda f: value)
    assert text == fstring(source, {"v": value})
    pattern, captures = template.to_regex(tpl, lambda f: ("v", type_, value is None))
    match = re.fullmatch(pattern, text)
    assert match, (pattern, text)
    assert repr(template.extract(captures, match)) == repr({"v": value})


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


# -- random templates against Python's own f-strings -----------------------------------------------
# Templates built from literal text ({{ and }} included) and fields {x}, {x=}, {x = }, {x!r}, {x!s},
# {x!a} and {x:spec} over generated names and values; each is also evaluated as a real f-string
# literal. The rendering (or the exception) must be Python's, and the template's regex must match
# the rendering and, where the text determines them, read the values back.

PARAM_TYPES = {
    "int": st.integers(-(10**6), 10**6) | st.integers(-(2**70), 2**70),
    "float": st.floats(),
    "bool": st.booleans(),
    # what values.parse can give back unchanged: no edge spaces, not "None", not quoted
    "str": st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp", "Zs")) | st.just(" "), min_size=1, max_size=8)
    .filter(lambda s: s == s.strip() and s != "None" and not (s[0] == s[-1] and s[0] in "'\"") and not set(s) & SEPARATORS),
    "dtype": st.sampled_from(values.DTYPE_NAMES),
    "shape": st.lists(st.integers(-1, 4096), max_size=4).map(tuple),
}
SEPARATORS = set("|;")  # in literals only: where every field's text ends is then certain
# Specs pad with spaces (zeros for numbers); numbers are written in decimal: a fill character, or a
# hex or binary spec, gives text whose values the regex does not read back.
ALIGN_SPECS = ["", "", ">4", "<6", "^7", ">12", "<"]
NUMBER_SPECS = ALIGN_SPECS + ["+", ",", "_", "010", "+08", " "]
LOSSY_SPECS = [".2f", ".3e", ".1%", "d", ".3"]


@st.composite
def templates(draw):
    """(f-string source, the env it reads, its names' types, whether values are read back)."""
    types = draw(st.dictionaries(st.from_regex(r"v[a-z0-9_]{0,4}", fullmatch=True), st.sampled_from(sorted(PARAM_TYPES)),
                                 min_size=1, max_size=3))
    env = {name: draw(st.none() | PARAM_TYPES[t]) for name, t in types.items()}
    separated = draw(st.booleans())
    source, lossless = "", True
    literal = st.text(st.sampled_from("ab xyz09.,:=!'\"()[]<>-{}é\t|;"), max_size=6).map(lambda t: t.replace("{", "{{").replace("}", "}}"))
    source += draw(literal)
    for i in range(draw(st.integers(1, 4))):
        if i and separated:
            source += draw(literal) + "|" + draw(literal)
        elif i:
            source += draw(literal)
        name = draw(st.sampled_from(sorted(types)))
        doc = draw(st.sampled_from(["", "=", "=", " = ", "= "]))
        conversion = draw(st.sampled_from(["", "", "!r", "!s", "!a"]))
        numeric = types[name] in ("int", "float", "bool") and not conversion
        spec = draw(st.sampled_from(NUMBER_SPECS * 2 + LOSSY_SPECS if numeric else ALIGN_SPECS + ["s"]))
        lossless = lossless and spec not in LOSSY_SPECS
        source += "{" + name + doc + conversion + (":" + spec if spec else "") + "}"
    source += draw(literal)
    return source, env, types, separated and lossless


@given(st.lists(templates(), min_size=10, max_size=30))
def test_random_templates_render_like_fstrings_and_read_back(batch):
    for source, env, types, read_back in batch:
        try:
            want = fstring(source, env)
        except (TypeError, ValueError) as err:  # a spec the value's type has not: the template raises the same
            with pytest.raises(type(err)):
                template.parse(source).render(lambda f: env[f.name])
            continue
        tpl = template.parse(source)
        assert tpl.render(lambda f: env[f.name]) == want, source
        # str values here are any text: the free-text form (a catalogue bounds real ones to a token)
        pattern, captures = template.to_regex(tpl, lambda f: (f.name, types[f.name], env[f.name] is None, "text"))
        match = re.fullmatch(pattern, want)
        assert match, (source, want, pattern)
        if read_back:
            got = template.extract(captures, match)
            assert got is not None and {k: repr(v) for k, v in got.items()} == {k: repr(env[k]) for k in got}, (source, want, got)

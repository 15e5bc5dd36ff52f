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


@pytest.mark.parametrize("bad, message, column", [
    ("{", "unclosed '{' (write '{{' for a literal brace)", 0),
    ("ab {x:>4", "unclosed '{' (write '{{' for a literal brace)", 3),  # a spec that never ends
    ("ab {(a]}", "unclosed '{' (write '{{' for a literal brace)", 3),  # '}' inside an open bracket
    ("ab {d['}']", "unclosed '{' (write '{{' for a literal brace)", 3),  # '}' inside a string
    ("}", "single '}' is not allowed (write '}}' for a literal brace)", 0),
    ("ab }}}", "single '}' is not allowed (write '}}' for a literal brace)", 5),
    ("{x} }", "single '}' is not allowed (write '}}' for a literal brace)", 4),
    ("{x!z}", "conversion must be !r, !s or !a, got !z", 2),
    ("ab {x!", "conversion must be !r, !s or !a, got !", 5),
    ("ab {x!r", "expected ':' or '}' after the conversion", 7),
    ("{x!r junk}", "expected ':' or '}' after the conversion", 4),
    ("ab {x!rr}", "expected ':' or '}' after the conversion", 7),
    ("{}", "empty replacement field", 0),
    ("ab {  }", "empty replacement field", 3),
    ("ab {=}", "empty replacement field", 3),
    ("ab { = }", "empty replacement field", 3),
    ("{x:{y}}", "nested fields in a format spec are not supported", 3),
    ("ab {x!r:{y}}", "nested fields in a format spec are not supported", 8),
    ("ab {x:>{w}}", "nested fields in a format spec are not supported", 6),
    ("{a +}", "{a +} is not a valid Python expression: invalid syntax", 1),
    ("ab {x==}", "{x==} is not a valid Python expression: invalid syntax", 4),
    ("ab {a b=}", "{a b} is not a valid Python expression: invalid syntax. Perhaps you forgot a comma?", 4),
    ("{a!=}", "{a!=} is not a valid Python expression: invalid syntax", 1),  # a comparison left open, no {a!=}
    ("{a<=}", "{a<=} is not a valid Python expression: invalid syntax", 1),
    ("{a>=}", "{a>=} is not a valid Python expression: invalid syntax", 1),
    # statements are no expression, even where a comment hides the parenthesis around them
    ("{a)#'\n(b#'\n0}", "{a)#'\n(b#'\n0} is not a valid Python expression: invalid syntax", 1),
])
def test_parse_errors_say_what_and_where(bad, message, column):
    with pytest.raises(template.TemplateError) as err:
        template.parse(bad)
    assert (str(err.value), err.value.column) == (message, column)
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize("source, expr, self_doc, conversion, spec, doc", [
    ("{d['}']}", "d['}']", False, None, "", ""),  # braces, colons and '!' inside strings and brackets
    ('{"}"!r}', '"}"', False, "r", "", ""),
    ("{a + '!'}", "a + '!'", False, None, "", ""),
    ("{'a:b'}", "'a:b'", False, None, "", ""),
    ("{'\"'}", "'\"'", False, None, "", ""),
    ("{d[1:2]}", "d[1:2]", False, None, "", ""),
    ("{f(a!=b)}", "f(a!=b)", False, None, "", ""),
    ("{(lambda: 1)}", "(lambda: 1)", False, None, "", ""),
    ("{[a, b][0]}", "[a, b][0]", False, None, "", ""),
    ("{ {'k': v}['k'] }", "{'k': v}['k']", False, None, "", ""),
    ("{a != b}", "a != b", False, None, "", ""),
    ("{a==b}", "a==b", False, None, "", ""),
    ("{a<=b=}", "a<=b", True, None, "", "a<=b="),
    ("{a>=b=}", "a>=b", True, None, "", "a>=b="),
    ("{x!r:>5}", "x", False, "r", ">5", ""),
    ("{x!s:}", "x", False, "s", "", ""),
    ("{x!a}", "x", False, "a", "", ""),
    ("{x:}", "x", False, None, "", ""),
    ("{x:%H:%M}", "x", False, None, "%H:%M", ""),
    ("{x=!r}", "x", True, "r", "", "x="),
    ("{x=:>4}", "x", True, None, ">4", "x="),
    ("{ x }", "x", False, None, "", ""),
    ("{x = }", "x", True, None, "", "x = "),
    ("{ x =}", "x", True, None, "", " x ="),
    ("{X}", "X", False, None, "", ""),
    ("{d['a' \"b\"]}", "d['a' \"b\"]", False, None, "", ""),
])
def test_parse_field(source, expr, self_doc, conversion, spec, doc):
    (field,) = template.parse(source).parts
    assert field == template.Field(expr=expr, self_doc=self_doc, conversion=conversion, spec=spec, column=0, doc=doc)


def test_fields_and_literals_keep_their_order_and_columns():
    tpl = template.parse("a {x} b {y!r:>3}{z=}c")
    assert tpl.text == "a {x} b {y!r:>3}{z=}c"
    assert tpl.parts == (
        "a ", template.Field("x", False, None, "", 2), " b ", template.Field("y", False, "r", ">3", 8),
        template.Field("z", True, None, "", 16, "z="), "c",
    )
    assert [f.column for f in tpl.fields] == [2, 8, 16]
    assert tpl.literals == ("a ", " b ", "z=", "c")
    assert template.parse("{a}{b}").literals == ()
    assert template.parse("{a}").parts == (template.Field("a", False, None, "", 0),)
    assert template.parse("").parts == () and template.parse("{{}}").parts == ("{}",)
    assert template.parse("x{{y}}z").parts == ("x{y}z",)


def test_render_writes_the_doc_then_the_value():
    tpl = template.parse("{n=} and {n} and {s!r:>6}.")
    assert tpl.render(lambda f: {"n": 4, "s": "ab"}[f.name]) == "n=4 and 4 and   'ab'."


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


@pytest.mark.parametrize("text", ["a=3 must be 4", "a = 3 must be 4", "a =3 must be 4", "a= 3 must be 4"])
def test_the_equals_of_a_self_documenting_field_takes_any_spacing(text):
    # f"{a = }" prints "a = 3", and people retyping a message space it either way
    for source in ("{a=} must be {b}", "{a = } must be {b}"):
        pattern, captures = template.to_regex(template.parse(source), lambda f: (f.name, "int", False))
        assert template.extract(captures, re.fullmatch(pattern, text)) == {"a": 3, "b": 4}, (source, text)
    pattern, _ = template.to_regex(template.parse("{a=} must be {b}"), lambda f: (f.name, "int", False))
    assert not re.fullmatch(pattern, "a 3 must be 4")  # the "=" itself stays


def test_spaces_that_start_or_end_a_message_may_be_missing():
    pattern, _ = template.to_regex(template.parse(" {a} must be {b}, "), lambda f: (f.name, "int", False))
    assert re.fullmatch(pattern, " 3 must be 4, ") and re.fullmatch(pattern, "3 must be 4,")
    assert not re.fullmatch(pattern, "3 must be 4")  # the text before the spaces stays as written
    reads, _ = template.to_regex(template.parse("{a}x{b}, "), lambda f: (f.name, "int", False))
    assert not re.search(reads, "3x4") and re.search(reads, "3x4,")  # a read's delimiter is kept


def test_unspaced_literals_hold_what_every_spacing_prints():
    tpl = template.parse("{q.shape = } and x={block_q * 2=}, {n}!")
    assert tpl.literals == ("q.shape = ", " and x=block_q * 2=", ", ", "!")
    assert tpl.unspaced_literals == ("q.shape", " and x=block_q * 2", ", ", "!")
    assert template.parse("{a!r} b").unspaced_literals == (" b",)  # only a self-documenting field's "=" is cut


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
    .filter(lambda s: s == s.strip() and s != "None" and not (s[0] == s[-1] and s[0] in "'\"") and not set(s) & SEPARATORS
            and not FIELD_LIKE.search(s)),
    "dtype": st.sampled_from(values.DTYPE_NAMES),
    "shape": st.lists(st.integers(-1, 4096), max_size=4).map(tuple),
}
SEPARATORS = set("|;")  # in literals only: where every field's text ends is then certain
# what a free-text value never holds (values.STR_FORMS["text"]): an f-string field as source code
# writes one, or a "{" at its end
FIELD_LIKE = re.compile(r"\{(?:[A-Za-z_][A-Za-z0-9_.]*(?:[}=!:]|$)|$)")
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


# -- regex, extract, resolve ----------------------------------------------------------------------


def regex(source, type_="int", optional=False, *form):
    tpl = template.parse(source)
    return template.to_regex(tpl, lambda f: (f.name, type_, optional, *form))


def test_to_regex_names_a_group_per_field_and_what_it_carries():
    pattern, captures = template.to_regex(template.parse("{a} x {b.shape=} y {a}"),
                                          lambda f: ({"a": "n", "b.shape": "shape"}[f.name], "int" if f.name == "a" else "shape", False))
    assert captures == (template.Capture("g0", "n", "int"), template.Capture("g1", "shape", "shape"), template.Capture("g2", "n", "int"))
    match = re.fullmatch(pattern, "3 x b.shape=(2, 3) y 3")
    assert match.group("g0") == "3" and match.group("g1") == "(2, 3)" and match.group("g2") == "3"
    assert template.extract(captures, match) == {"n": 3, "shape": (2, 3)}


def test_final_punctuation_is_optional_other_punctuation_is_not():
    pattern, _ = regex("got {n}, want 4.")
    for text in ("got 3, want 4.", "got 3, want 4"):
        assert re.fullmatch(pattern, text), text
    assert not re.fullmatch(pattern, "got 3 want 4.")
    pattern, _ = regex("got {n}!:")
    assert re.fullmatch(pattern, "got 3") and re.fullmatch(pattern, "got 3!:")  # the run as a whole
    assert not re.fullmatch(pattern, "got 3!") and not re.fullmatch(pattern, "got 3:!")
    pattern, _ = regex("{n}.")
    assert re.fullmatch(pattern, "3") and re.fullmatch(pattern, "3.") and not re.fullmatch(pattern, "3,")
    pattern, _ = regex("a. {n} b")
    assert re.fullmatch(pattern, "a. 3 b") and not re.fullmatch(pattern, "a 3 b")
    pattern, _ = regex("a.{n}, b")
    assert re.fullmatch(pattern, "a.3, b") and not re.fullmatch(pattern, "a3, b") and not re.fullmatch(pattern, "a.3 b")
    pattern, _ = regex("{n} is odd; fix it.")
    assert re.fullmatch(pattern, "3 is odd; fix it") and not re.fullmatch(pattern, "3 is odd fix it")
    assert template.FINAL_PUNCTUATION == ".!:;,"


def test_a_regex_matches_its_literal_text_exactly():
    pattern, captures = regex("a+b (c) [{n}] *")
    assert re.fullmatch(pattern, "a+b (c) [3] *") and not re.fullmatch(pattern, "aab (c) [3] *")
    assert captures == (template.Capture("g0", "n", "int"),)
    pattern, _ = regex("no fields here.")
    assert re.fullmatch(pattern, "no fields here") and re.fullmatch(pattern, "no  fields\there.")


def test_spaces_in_literals_match_any_run_of_whitespace():
    pattern, _ = regex("{n=} must be  divisible by\t{m=}")
    for text in ("n=3 must be divisible by m=4", "n=3 must\n be  divisible   by\tm=4", "n=3 must\x0bbe\x0cdivisible\rby m=4"):
        assert re.fullmatch(pattern, text), repr(text)
    assert not re.fullmatch(pattern, "n=3 mustbe divisible by m=4")
    assert not re.fullmatch(pattern, "n=3 must\u2003be divisible by m=4")  # an em space is no ASCII space


def test_a_self_documenting_field_matches_its_doc_then_its_value():
    pattern, _ = regex("{n = }")
    assert re.fullmatch(pattern, "n = 3") and re.fullmatch(pattern, "n  =  3") and not re.fullmatch(pattern, "3")
    pattern, captures = regex("{s=}", "str")
    match = re.fullmatch(pattern, "s='a b'")
    assert match and template.extract(captures, match) == {"s": "a b"}
    value = "it's \"x\""  # repr() escapes a quote: a str repr, not a token
    text = template.parse("{s=}").render(lambda f: value)
    assert template.extract(captures, re.fullmatch(pattern, text)) == {"s": value}
    for source in ("{s!r}", "{s!a}"):
        pattern, captures = regex(source, "str")
        text = template.parse(source).render(lambda f: value)
        assert template.extract(captures, re.fullmatch(pattern, text)) == {"s": value}, source


def test_a_field_passes_its_form_and_optional_to_the_value_pattern():
    assert re.fullmatch(regex("[{s}]", "str", False, "text")[0], "[any words]")
    assert not re.fullmatch(regex("[{s}]", "str", False)[0], "[any words]")  # a token by default
    assert re.fullmatch(regex("[{s}]", "str", False, "list")[0], "[a, b]")
    assert re.fullmatch(regex("[{n}]", "int", True)[0], "[None]") and not re.fullmatch(regex("[{n}]")[0], "[None]")
    pattern, captures = regex("{n:>6}|", "int")
    assert template.extract(captures, re.fullmatch(pattern, "    42|")) == {"n": 42}


def test_extract_reads_typed_values_and_agrees_on_nan():
    pattern, captures = regex("{x} {x}", "float")
    assert repr(template.extract(captures, re.fullmatch(pattern, "nan nan"))) == "{'x': nan}"
    assert template.extract(captures, re.fullmatch(pattern, "1.5 1.50")) == {"x": 1.5}
    assert template.extract(captures, re.fullmatch(pattern, "1.5 2.5")) is None
    assert template.extract((), re.fullmatch("", "")) == {}


@pytest.mark.parametrize("name, expected", [
    ("block_q * 2", "block_q"),  # an alias
    ("num_heads", "num_heads"),  # a param
    ("q.shape", "shape"),  # a dotted name: its last part
    ("self.cfg.shape", "shape"),
    ("Q.shape", "shape"),
    ("shape", "shape"),
    ("q.size", None),  # no param of that name
    ("q.shape[0]", None),  # not a dotted name
    ("f(x).shape", None),
    ("x[0].shape", None),
    ("other", None),
])
def test_resolve(name, expected):
    field = template.parse("{" + name + "}").fields[0]
    params = {"num_heads": 1, "shape": (2,), "block_q": 1}
    assert template.resolve(field, params, {"block_q * 2": "block_q"}) == expected


def test_resolve_prefers_an_alias_then_the_param_then_the_last_part():
    field = template.parse("{q.shape}").fields[0]
    assert template.resolve(field, {"q.shape": 1, "shape": 2}, {"q.shape": "alias"}) == "alias"
    assert template.resolve(field, {"q.shape": 1, "shape": 2}, {}) == "q.shape"
    assert template.resolve(template.parse("{ x }").fields[0], {"x": 1}, {}) == "x"  # by its name, spaces stripped

"""Param types: a YAML value read as a param's value, a value written as an f-string writes it, the
regex that finds it in a message, and the value read back from what that regex matched."""

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from errkit.core import values
from errkit.core.values import ValueTypeError, coerce, format_field, pattern, same, sample

TYPES = ("int", "float", "bool", "str", "dtype", "shape", "bytes")


# -- coerce ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("type_, raw, expected", [
    ("int", 3, 3), ("int", -2**70, -2**70),
    ("float", 0.5, 0.5), ("float", 2, 2.0), ("float", float("inf"), float("inf")),
    ("bool", True, True), ("bool", False, False),
    ("str", "tanh", "tanh"), ("str", "", ""),
    ("dtype", "bfloat16", "bfloat16"), ("dtype", "F8_e4", "F8_e4"),
    ("shape", [2, 128], (2, 128)), ("shape", (3,), (3,)), ("shape", [], ()), ("shape", [-1, 0], (-1, 0)),
    ("bytes", 0, 0), ("bytes", 1024, 1024), ("bytes", "16M", 16 << 20), ("bytes", " 1.5GiB ", 3 << 29),
    ("bytes", "512B", 512), ("bytes", "10 bytes", 10), ("bytes", "2048", 2048),
])
def test_coerce_accepts(type_, raw, expected):
    got = coerce(type_, raw)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("type_", TYPES)
def test_coerce_keeps_none(type_):
    assert coerce(type_, None) is None


@pytest.mark.parametrize("type_, raw", [
    ("int", True), ("int", 1.0), ("int", "3"), ("float", False), ("float", "0.5"), ("bool", 1), ("bool", "True"),
    ("str", 3), ("str", b"x"), ("dtype", "1x"), ("dtype", "float 32"), ("dtype", "jnp.float32"), ("dtype", 3),
    ("shape", [1, "2"]), ("shape", [True]), ("shape", [1.0]), ("shape", "(1, 2)"), ("shape", 3),
    ("bytes", -1), ("bytes", True), ("bytes", "lots"), ("bytes", "16 M B"), ("bytes", 1.5),
])
def test_coerce_refuses_with_the_value_and_the_type(type_, raw):
    with pytest.raises(ValueTypeError) as err:
        coerce(type_, raw)
    assert str(err.value) == f"{raw!r} is not a valid {type_}"


def test_coerce_refuses_an_unknown_type_by_name():
    with pytest.raises(ValueTypeError) as err:
        coerce("complex", 1)
    assert str(err.value) == "unknown param type 'complex'"


def test_coerce_gives_a_subclass_value_as_the_plain_type():
    class Size(int):
        pass

    class Name(str):
        pass

    assert type(coerce("int", Size(4))) is int and type(coerce("bytes", Size(4))) is int
    assert type(coerce("str", Name("a"))) is str and type(coerce("dtype", Name("int8"))) is str
    assert type(coerce("shape", [Size(2)])[0]) is int


# -- format_field: what an f-string writes ---------------------------------------------------------


def fstring(field: str, value) -> str:
    """What f"{v<field>}" writes for the value (without the "v=" of `{v=}`: the field's doc)."""
    out = eval("f" + repr("{v" + field + "}"), {}, {"v": value})
    return out[2:] if field.startswith("=") else out


@pytest.mark.parametrize("field, self_doc, conversion, spec", [
    ("", False, None, ""), ("=", True, None, ""), ("!r", False, "r", ""), ("!s", False, "s", ""),
    ("!a", False, "a", ""), ("=!s", True, "s", ""), ("=:>8", True, None, ">8"), ("!r:>12", False, "r", ">12"),
    ("=!a:<9", True, "a", "<9"), (":^9", False, None, "^9"), ("!s:.1", False, "s", ".1"),  # str(1.5)[:1], not 2e+00
])
@pytest.mark.parametrize("value", ["tanh", "é", 42, 1.5, True, None, (2, 3)])
def test_format_field_is_what_an_fstring_writes(field, self_doc, conversion, spec, value):
    try:
        want = fstring(field, value)
    except TypeError:  # a spec None or a tuple has not
        with pytest.raises(TypeError):
            format_field(value, self_doc, conversion, spec)
        return
    assert format_field(value, self_doc, conversion, spec) == want


# -- pattern: the regex of a field -----------------------------------------------------------------


def finds(type_, text, optional=False, conversion=None, self_doc=False, spec="", form=None) -> bool:
    return re.fullmatch(pattern(type_, optional, conversion, self_doc, spec, form), text) is not None


@pytest.mark.parametrize("type_, texts, not_texts", [
    ("int", ["3", "-128", "np.int32(4)", "numpy.uint8(255)", "Array(3, dtype=int32)", "Array(3, dtype=int32, weak_type=True)",
             "JitTracer(~int32[])", "Traced<int32[]>with<DynamicJaxprTrace>"],
     ["3.5", "+3", "x", "np.int32(4.5)", "None", "Array(3)", "np.int32 (4)", "numpyint32(4)"]),
    ("float", ["0.125", "-1e-05", ".5", "inf", "nan", "+2.", "np.float32(0.125)", "Array(0.25, dtype=float32)"],
     ["1.2.3", "e5", "None", "np.float(1)"]),
    ("bool", ["True", "False"], ["true", "1", "None"]),
    ("dtype", ["float32", "dtype('float32')", "dtype(bfloat16)", "jnp.int8", "'int8'", "<class 'jax.numpy.float32'>"],
     ["32", "jnp.", "dtype()"]),
    ("shape", ["()", "(3,)", "(2, 128, 8, 64)", "(2,3)", "(-1, 4)"], ["[2, 3]", "(a,)", "(2, 3"]),
    ("bytes", ["1048576", "19.85M", "512B", "96.00K", "1.5GiB", "2 MB", "10 bytes"], ["1.5.6M", "-1K", "M"]),
])
def test_pattern_of_each_type(type_, texts, not_texts):
    for text in texts:
        assert finds(type_, text), text
    for text in not_texts:
        assert not finds(type_, text), text


def test_an_optional_field_also_finds_none():
    assert finds("int", "None", optional=True) and finds("int", "3", optional=True)
    assert not finds("int", "None")
    assert finds("shape", "None", optional=True, spec=">8") and finds("shape", "    None", optional=True, spec=">8")


def test_a_str_field_finds_a_token_a_list_or_text_by_its_form():
    assert finds("str", "soft_sign") and finds("str", "jax.Array") and finds("str", "slice(None, 2)")
    assert not finds("str", "two words") and not finds("str", "ends.")
    assert finds("str", "'data', 'model'", form="list") and not finds("str", "'data', 'model'")
    assert not finds("str", "two words", form="list")
    assert finds("str", "any text: at all", form="text")


@pytest.mark.parametrize("text, found", [
    ("TPU v5 lite", True), ("TPU v5e", True), ("TPU7x", True), ("cpu", True), ("NVIDIA H100 80GB HBM3", True),
    ("NVIDIA GeForce RTX 4090", True), ("Tesla V100-SXM2-16GB", True), ("TPU v4 lite", True),
    ("cpu on TPU v5e", False), ("TPU v5 lite with jax 0.10.2", False), ("cpu (while compiling step 3)", False),
])
def test_a_device_kind_is_its_words_not_the_prose_after_it(text, found):
    assert finds("str", text, form="device") is found


@pytest.mark.parametrize("text, found", [
    ("'vector.broadcast' op source rank higher than destination rank", True),
    ("'tpu.matmul' op e.g. bad. see notes", True), ("ends with a stop.", True), ("a 1.5 x. 2", True),
    ("first sentence. Second one", False), ("rank. Retrying in 5s", False), ("", False),
])
def test_a_sentence_does_not_run_past_its_end(text, found):
    assert finds("str", text, form="sentence") is found


def test_a_sample_value_is_one_its_form_finds():
    for form in (None, "list", "text", "device", "sentence"):
        for seed in range(4):
            assert finds("str", sample("str", seed, form), form=form), (form, seed)


@pytest.mark.parametrize("text, found", [
    ("unsupported shape cast {offsets = [0, 0]} of vector<8x128xf32>", True),  # MLIR's attributes
    ("{'a': 1}", True), ("got {} and {1, 2}", True), ("a {b c}", True),
    ("{device_kind}", False), ("on {device.device_kind}", False), ("{x=}", False), ("{x!r}", False),
    ("{x:>4}", False), ("ends with {", False), ("", False),
])
def test_free_text_keeps_printed_braces_but_no_f_string_field(text, found):
    """A traceback's source line quoting its f-string (`msg = f"Not supported on {device}"`) is no
    message; the braces of a printed value are."""
    assert finds("str", text, form="text") is found


@pytest.mark.parametrize("conversion, self_doc, spec, text, found", [
    ("r", False, "", "'a b'", True), ("r", False, "", "a b", False), ("a", False, "", "'\\xe9'", True),
    (None, True, "", "'a b'", True), (None, True, "", "ab", False),  # {x=} writes repr()
    (None, True, ">8", "   ab", True),  # {x=:>8} writes format(), not repr()
    ("s", False, "", "ab", True), ("s", True, "", "a b", False),
    ("r", False, "", "('data', 'fsdp')", True), ("r", False, "", "('data',)", True),
    # repr() escapes a quote: a str repr, which no token is
    ("r", False, "", repr("it's \"x\""), True), ("a", False, "", ascii("it's \"\u00e9\""), True),
    (None, True, "", repr("it's \"x\""), True), ("s", False, "", repr("it's \"x\""), False),
])
def test_a_str_field_written_as_repr_finds_a_quoted_string(conversion, self_doc, spec, text, found):
    assert finds("str", text, conversion=conversion, self_doc=self_doc, spec=spec) is found


def test_a_number_with_a_spec_finds_what_format_writes():
    for spec, value in [(">6", 42), ("+", 3), (",", 1234567), ("_", 10**6), ("010", -5.5), (".1%", 0.25), (".3e", 1e-9),
                        (".2f", float("inf")), (">4", True), ("", 1)]:
        text = format(value, spec)
        assert finds("int", text, spec=spec or ">1"), (spec, text)
        assert finds("float", text, spec=spec or ">1"), (spec, text)
        assert finds("bool", text, spec=spec or ">1"), (spec, text)
    assert not finds("bool", "1"), "a bool without a spec is True or False"
    assert finds("bool", "  True  ", spec=">8", conversion="s") and not finds("bool", "   1", spec=">4", conversion="s")


def test_a_spec_pads_on_either_side_with_spaces_only():
    assert finds("str", "  ab  ", spec="^6") and finds("shape", "(3,)   ", spec="<7")
    assert finds("dtype", "\tfloat32", spec=">8")
    assert not finds("shape", "**(3,)", spec="*>6")
    assert not finds("str", "  ab  ")  # no spec: no padding


def test_pattern_has_no_groups_of_its_own():
    for type_ in TYPES:
        for conversion in (None, "r"):
            for spec in ("", ">4"):
                body = pattern(type_, True, conversion, False, spec, None)
                assert re.compile(body).groups == 0, (type_, conversion, spec)


# -- parse: the value back from its text ----------------------------------------------------------


@pytest.mark.parametrize("type_, text, expected", [
    ("int", "3", 3), ("int", " -128 ", -128), ("int", "1,024", 1024), ("int", "1_000_000", 10**6), ("int", "   0.", 0),
    ("int", "  42.", 42),  # "{n:>4}." writes "  42.": the stop is the wording's
    ("int", "np.int32(4)", 4), ("int", "numpy.int64(128)", 128), ("int", "Array(3, dtype=int32, weak_type=True)", 3),
    ("int", "Array( 7 , dtype=int32)", 7),
    ("float", "0.125", 0.125), ("float", "-1e-05", -1e-05), ("float", "np.float32(0.125)", 0.125),
    ("float", "Array(0.25, dtype=float32, weak_type=True)", 0.25), ("float", "1,234.5", 1234.5),
    ("float", "25.0%", 25.0), ("float", "+00inf", math.inf), ("float", "00inf", math.inf), ("float", "-000inf", -math.inf), ("float", "0010", 10.0),
    ("float", "  -0.5", -0.5),
    ("bool", "True", True), ("bool", "False", False), ("bool", "   1", True), ("bool", "+0", False), ("bool", "100%", True),
    ("bool", "0.00", False),
    ("str", "tanh", "tanh"), ("str", "'a b'", "a b"), ('str', '"it\'s"', "it's"), ("str", r"'a\'b'", "a'b"),
    ("str", r"'a\qb'", "a\\qb"), ("str", "'", "'"), ("str", "'ab\"", "'ab\""), ("str", "'a' + 'b'", "'a' + 'b'"),
    ("str", "('data', 'fsdp')", "('data', 'fsdp')"), ("str", "'x", "'x"), ("str", " padded ", "padded"),
    ("str", "'a',", "'a',"),  # begins with a quote, does not end with it: kept as it is
    ("str", "np.int32(4)", "np.int32(4)"), ("str", "Array(3, dtype=int32)", "Array(3, dtype=int32)"),  # no number
    ("dtype", "dtype(jnp)", "dtype(jnp)"), ("dtype", "jnp.np", "jnp.np"), ("dtype", "np.numpy", "np.numpy"),
    ("dtype", "jnp.jax", "jnp.jax"), ("dtype", "dtype('dtype')", "dtype('dtype')"),  # namespaces only: the text whole
    ("dtype", "float32", "float32"), ("dtype", "dtype('bfloat16')", "bfloat16"), ("dtype", "jnp.int8", "int8"),
    ("dtype", "jax.numpy.float16", "float16"), ("dtype", "<class 'numpy.float32'>", "float32"), ("dtype", "np.uint8", "uint8"),
    ("dtype", "'int4'", "int4"), ("dtype", "()", "()"),
    ("shape", "()", ()), ("shape", "(3,)", (3,)), ("shape", "(2, 128, 8, 64)", (2, 128, 8, 64)), ("shape", "(-1,2)", (-1, 2)),
    ("bytes", "1048576", 1048576), ("bytes", "16M", 16 << 20), ("bytes", "19.85M", round(19.85 * 2**20)),
    ("bytes", "96.00K", 96 << 10), ("bytes", "1.5GiB", 3 << 29), ("bytes", "2 MB", 2 << 20), ("bytes", "1.5KB", 1536),
    ("bytes", "10 bytes", 10), ("bytes", "512B", 512), ("bytes", "1T", 1 << 40), ("bytes", "0.5B", 1), ("bytes", "0.4B", 0),
    ("bytes", "3k", 3 << 10),
])
def test_parse(type_, text, expected):
    got = values.parse(type_, text)
    assert got == expected and type(got) is type(expected), got


@pytest.mark.parametrize("type_", TYPES)
def test_parse_reads_none_as_none(type_):
    assert values.parse(type_, " None ") is None


def test_parse_reads_a_float_nan():
    assert math.isnan(values.parse("float", "nan")) and math.isnan(values.parse("float", "-00nan%"))
    assert math.isnan(values.parse("float", "np.float32(nan)"))


@pytest.mark.parametrize("text", ["JitTracer(~float32[])", "Traced<float32[]>with<DynamicJaxprTrace>",
                                  "Traced<ShapedArray(float32[], weak_type=True)>with<DynamicJaxprTrace(level=1/0)>"])
@pytest.mark.parametrize("type_", ["int", "float"])
def test_a_tracer_where_a_number_was_expected_is_read_as_its_text(type_, text):
    assert values.parse(type_, text) == text


def test_a_number_named_trace_is_no_tracer():
    with pytest.raises(ValueError):
        values.parse("int", "Trace")


def test_parse_refuses_an_unknown_type_by_name():
    with pytest.raises(ValueTypeError) as err:
        values.parse("complex", "1j")
    assert str(err.value) == "unknown param type 'complex'"


@given(st.integers(-(2**70), 2**70))
def test_an_int_reads_back(n):
    for spec in ("", ",", "_", ">30", "+"):
        assert values.parse("int", format(n, spec)) == n


@given(st.floats(allow_nan=False))
def test_a_float_reads_back(x):
    for spec in ("", ">30", "+", "012"):
        assert values.parse("float", format(x, spec)) == x


@given(st.lists(st.integers(-1, 10**6), max_size=5).map(tuple))
def test_a_shape_reads_back(shape):
    assert values.parse("shape", repr(shape)) == shape


@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12))
def test_a_str_repr_reads_back(s):
    assert values.parse("str", repr(s)) == s


# -- same, sample ---------------------------------------------------------------------------------


def test_same():
    nan = float("nan")
    assert same(1, 1) and same("a", "a") and same(nan, nan) and same(None, None) and same(1, 1.0)
    assert not same(1, 2) and not same(nan, 1.0) and not same(1.0, nan) and not same(nan, "nan") and not same("nan", nan)
    assert not same(None, 0)


@pytest.mark.parametrize("type_, seeds, expected", [
    ("int", (0, 1, 2), [3, 10, 17]),
    ("float", (0, 1, 2), [0.5, 1.5, 2.5]),
    ("bool", (0, 1, 2, 3), [False, True, False, True]),
    ("str", (0, 1), ["value0", "value1"]),
    ("dtype", (0, 1, 16, 17), ["bfloat16", "float16", "complex64", "bfloat16"]),
    ("shape", (0, 1, 2, 3, 4), [(2,), (3, 4), (4, 5, 6), (5, 6, 7, 8), (6,)]),
    ("bytes", (0, 1), [3 << 20, 4 << 20]),
])
def test_sample(type_, seeds, expected):
    got = [sample(type_, seed) for seed in seeds]
    assert got == expected and all(type(g) is type(e) for g, e in zip(got, expected))


@pytest.mark.parametrize("type_", TYPES)
def test_a_sample_is_a_value_of_its_type(type_):
    for seed in range(5):
        value = sample(type_, seed)
        assert coerce(type_, list(value) if type_ == "shape" else value) == value


def test_sample_refuses_an_unknown_type_by_name():
    with pytest.raises(ValueTypeError) as err:
        sample("complex", 0)
    assert str(err.value) == "unknown param type 'complex'"


def test_a_str_value_reads_an_escaped_surrogate_pair_as_its_character():
    # as JavaScript's strings do (the paste page's literalEval): the two sides show the same value
    assert values.parse("str", "'\\ud800\\udc00'") == "\U00010000"
    assert values.parse("str", "'a\\ud83d' '\\ude00'") == "a\U0001f600"  # joined across pieces
    assert values.parse("str", "'\\ud83d\\ude00', '\\ud800'") == ("\U0001f600", "\ud800")  # a lone one stays


_FORMS = [values._scalar(values._INT), values._scalar(values._FLOAT), values._TRACER, values._PLACEHOLDER]


@pytest.mark.parametrize("form", _FORMS)
@given(data=st.data())
def test_every_number_form_shows_a_mark(form, data):
    """Each way a number is printed besides its digits (a scalar's repr, a tracer, a placeholder)
    holds one of NUMBER_FORM_MARKS, whatever it reads: a text holding none is matched exactly by
    the regexes without them (values.without_number_forms)."""
    text = data.draw(st.from_regex(form, fullmatch=True))
    assert values.shows_number_forms(text.encode("utf-8"))


def _wordings_with_forms():
    from errkit.explain.matching.index import Index

    index = Index.load()
    return [w for w in index.wordings if values.without_number_forms(w["regex"]) != w["regex"]]


_WITH_FORMS = _wordings_with_forms()


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_a_wordings_regex_without_number_forms_matches_alike_where_none_is_shown(data):
    """On a text that holds no NUMBER_FORM_MARKS, every wording's regex (over bytes, as the matcher
    runs it) and the same without the number forms find the same match, groups and span, whole, at
    the start and anywhere: texts generated from the regex itself, then cut, extended or joined to
    another wording's."""
    from errkit.core.regex import engine

    wording = data.draw(st.sampled_from(_WITH_FORMS))
    source = wording["regex"]
    text = data.draw(st.from_regex(values.without_number_forms(source), fullmatch=True)).replace("\n", " ")  # (a line)
    edit = data.draw(st.sampled_from(["as is", "cut", "longer", "prefixed"]))
    if edit == "cut":
        text = text[:data.draw(st.integers(0, len(text)))]
    elif edit == "longer":
        text += data.draw(st.sampled_from([" 12", "x", " and 3", ", got 4."]))
    elif edit == "prefixed":
        text = data.draw(st.sampled_from(["ValueError: ", "E1126 13:04:33 x.py:9] ", "  "])) + text
    raw = text.encode("utf-8")
    if values.shows_number_forms(raw):
        return  # (those are read with the forms)
    full, plain = engine().compile(source.encode()), engine().compile(values.without_number_forms(source).encode())
    for how in ("fullmatch", "match", "search"):
        a, b = getattr(full, how)(raw), getattr(plain, how)(raw)
        assert (a is None) == (b is None)
        if a is not None:
            assert a.span() == b.span() and a.groups() == b.groups()


def _str_by_literal_eval(text: str):
    """A quoted str value read the way parse read every one before its plain fast path."""
    import ast
    import warnings

    text = text.strip()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return tuple(map(values._paired, value)) if isinstance(value, tuple) else values._paired(value)


_QUOTED_INNER = st.lists(st.one_of(st.sampled_from(["\\", "'", '"', "\n", "\r", "\0", "\\n", "\\x41",
                                                    "\\u00e9", ",", " ", "\t", "\x0c", "\u2028", "é"]),
                                   st.characters(exclude_categories=("Cs",))), max_size=12).map("".join)


@settings(max_examples=1000, deadline=None)
@given(inner=_QUOTED_INNER, quote=st.sampled_from(["'", '"']), pad=st.sampled_from(["", " ", "\t "]))
def test_a_quoted_str_reads_as_literal_eval_reads_it(inner, quote, pad):
    """A quoted value without escapes is read without ast (what a paste's start saves): the same
    value as literal_eval gives, for every text, escapes, quotes inside, line ends, null bytes,
    and tuples (`'a', 'b'`) included."""
    text = pad + quote + inner + quote + pad
    got, want = values.parse("str", text), _str_by_literal_eval(text)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("text", ["'a\ud800b'", '"\udc00"', "'\ud83d\ude00'"])
def test_a_quoted_str_with_a_lone_surrogate_stays_as_written(text):
    """A surrogate in a quoted value (a paste decoded with surrogateescape) is no literal to
    literal_eval: the text is kept as written, quotes and all (the property above draws no
    surrogates: a failing example with one cannot be sent back by pytest-xdist)."""
    got = values.parse("str", text)
    assert got == text == _str_by_literal_eval(text), ascii(got)

"""Param types: how a value of each type is written in a message, found in text and read back.

Kept free of heavy imports: `errkit explain` uses it (its regexes are compiled by errkit/core/regex.py's
engine, so they are written for both RE2 and Python's `re`).
"""

from errkit.core.regex import Lazy

TYPES = ("int", "float", "bool", "str", "dtype", "shape", "bytes")  # a param's type: how its values are written and read

DTYPE_NAMES = (
    "bfloat16", "float16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
    "int4", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "complex64",
)

_NAME = r"[A-Za-z][A-Za-z0-9_]*"
_STR_REPR = r"""'[^'\\\n]*(?:\\.[^'\\\n]*)*'|"[^"\\\n]*(?:\\.[^"\\\n]*)*\""""
_FORMATTED_NUMBER = r"[-+ ]?(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|[0-9][0-9,_]*(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|0*inf|0*nan)%?"  # format(x, spec), x an int or float

_INT = r"-?[0-9]+"
_INT_TEXT = Lazy(_INT)
_NAME_TEXT = Lazy(_NAME)
# A size in bytes as compilers print it: 1048576, 19.85M, 16.00M, 512B, 96.00K, 1.5GiB (XLA's
# HumanReadableNumBytes and friends: binary multiples, whatever the letter says).
_BYTES = r"[0-9]+(?:\.[0-9]+)?(?: ?(?:[KMGT]i?B?|B|bytes))?"
_BYTE_UNITS = {"": 1, "B": 1, "BYTES": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_BYTES_TEXT = Lazy(r"([0-9]+(?:\.[0-9]+)?) ?([A-Za-z]*)")
_FLOAT = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?|inf|nan)"


def _scalar(number: str) -> str:
    """A number as repr() prints a NumPy or JAX scalar holding it: np.float32(0.125),
    numpy.int64(128), Array(0.25, dtype=float32, weak_type=True)."""
    return (rf"(?:np|numpy)\.(?:u?int|float)[0-9]+\((?:{number})\)"
            rf"|Array\((?:{number}), dtype=[a-z0-9]+(?:, weak_type=True)?\)")


# repr() of a JAX tracer where a number was expected (a value computed under jit): jax 0.10 prints
# JitTracer(~float32[]), jax 0.4.36-0.6 Traced<float32[]>with<DynamicJaxprTrace>, jax 0.4.30-0.4.35
# Traced<ShapedArray(float32[], weak_type=True)>with<DynamicJaxprTrace(level=1/0)>. Read as its text:
# it holds no number.
_TRACER = r"[A-Za-z]*Tracer[(<][^()<>\n]*[)>]|Traced<[^<>\n]*>with<[^<>\n]*>"
_TRACER_TEXT = Lazy(_TRACER)

# What people write for a number they left out when they paste a message (`head dim <V>.`,
# `head dim ....`): matched where a number is, read as no value (matching/index.py captured).
_PLACEHOLDER = r"<[A-Z]>|\.\.\."
_PLACEHOLDER_TEXT = Lazy(_PLACEHOLDER)

_SCALAR_TEXT = Lazy(r"(?:np|numpy)\.[a-z0-9]+\((?P<a>[^()]*)\)|Array\((?P<b>[^(),]*),[^()]*\)")

# The forms a number is printed in besides its digits (a NumPy or JAX scalar, a tracer, a
# placeholder) as they follow the digits in PATTERNS: each holds one of NUMBER_FORM_MARKS, so on a
# text holding none a wording's regex matches exactly as it does without them (no path through them
# can succeed), and RE2 compiles that in a fifth of the time (without_number_forms).
NUMBER_FORMS = tuple(f"|{_scalar(number)}|{_TRACER}|{_PLACEHOLDER}" for number in (_INT, _FLOAT))
NUMBER_FORM_MARKS = (b"np.", b"numpy.", b"Array(", b"Tracer", b"Traced", b"<", b"...")


def without_number_forms(regex: str) -> str:
    """A wording's regex without the number forms (NUMBER_FORMS): the same matches on a text holding
    none of NUMBER_FORM_MARKS."""
    for form in NUMBER_FORMS:
        regex = regex.replace(form, "")
    return regex


def shows_number_forms(data: bytes) -> bool:
    """Whether a text (UTF-8 bytes) holds one of NUMBER_FORM_MARKS."""
    return any(mark in data for mark in NUMBER_FORM_MARKS)


# Every pattern is built from character classes and bounded alternations, so matching stays linear.
PATTERNS = {
    "int": rf"{_INT}|{_scalar(_INT)}|{_TRACER}|{_PLACEHOLDER}",
    "float": rf"{_FLOAT}|{_scalar(_FLOAT)}|{_TRACER}|{_PLACEHOLDER}",
    "bool": r"True|False",
    "str": r"[^\n]*?",
    # repr() of a str, or of a tuple of them where a caller passed one (batch_axis=('data', 'fsdp'))
    "str_repr": rf"{_STR_REPR}|\((?:{_STR_REPR})(?:, (?:{_STR_REPR}))*,?\)",
    "dtype": rf"dtype\(['\"]?{_NAME}['\"]?\)|(?:jnp\.|np\.|numpy\.|jax\.numpy\.)?{_NAME}|'{_NAME}'"
             rf"|<class '(?:jax\.numpy\.|numpy\.|jnp\.|np\.)?{_NAME}'>",  # jax 0.5-0.6 printed the scalar type
    "shape": r"\((?:-?[0-9]+(?:, ?-?[0-9]+)*,?)?\)",
    "bytes": _BYTES,
}


# One token of a printed value: a quoted string, or a run of characters that are not space,
# brackets, quotes or sentence punctuation and of bracketed parts (which may hold spaces and quotes:
# `slice(None, 2)`, `<class 'list'>`, `dtype('int32')`); pieces joined by punctuation (`jax.Array`,
# `1.5`, `a:b`) stay one token, punctuation that ends it (`got bshd.`) does not belong to it.
# (One character or one bracketed part per repetition: no nested quantifier for a backtracking
# engine to explode. Spaces are named: \s differs between RE2, re and JS.)
_UNIT = (r"""(?:[^ \t\n\r\f\v()<>\[\]{}'"`.,;:!?]"""
         r"|\((?:[^()\n]|\([^()\n]*\))*\)|\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]"  # two levels: ((a, b), c)
         r"|<(?:[^<>\n]|<[^<>\n]*>)*>|\{(?:[^{}\n]|\{[^{}\n]*\})*\})+")
# A "{" that does not open an f-string field as source code writes one ({name}, {name=}, {name!r},
# {name:spec}): a traceback's source line `msg = f"Not supported on {device}"` is no message, while
# printed values keep their braces (MLIR's `{offsets = [0, 0]}`, a dict's `{'a': 1}`, `{}`). A "{"
# that ends the value is not read. The identifier's run starts at its "{" and cannot end on an
# identifier character: one way to match, linear on a backtracking engine (the paste page's) too.
_BRACE_NOT_FIELD = r"\{(?:[^\nA-Za-z_]|[A-Za-z_][A-Za-z0-9_.]*[^\nA-Za-z0-9_.}=!:])"
# What people type for a value they left out is a token too (read as gone, matching/index.py): `...`,
# and a bracketed list cut short, never closed (`(..., ...`).
_TOKEN = rf"""(?:'[^'\n]*'|"[^"\n]*"|\.\.\.|[(\[][^()\[\]\n]*?, \.\.\.|{_UNIT}(?:[.,;:!?]+{_UNIT})*)"""
STR_FORMS = {
    "token": _TOKEN,
    "list": rf"{_TOKEN}(?:,[ \t]*{_TOKEN})*",  # 'data', 'model' / float32, bfloat16
    "text": rf"(?:[^\n{{]|{_BRACE_NOT_FIELD})+?",  # anything up to the wording's next fixed text, but an f-string {field}
    # a device kind as jax prints it (`TPU v5 lite`, `NVIDIA H100 80GB HBM3`, `cpu`): a token, then
    # words that name a model or version (a capital or a digit first, `v5e`, `lite`), so that prose
    # after it (`cpu on TPU v5e`) is not read in
    "device": rf"{_TOKEN}(?: (?:[A-Z0-9][A-Za-z0-9_.()+-]*|v[0-9][A-Za-z0-9_.-]*|lite))*",
    # free text within one sentence: up to the line's end or a stop that ends a sentence (a stop,
    # spaces and a capital: `rank. Retrying in 5s`), which is not read; a stop at the line's end is
    "sentence": rf"(?:[^\n{{.]|{_BRACE_NOT_FIELD}|\.+[^ \t\n.{{]|\.+[ \t]+[^A-Z \t\n.{{])+(?:\.+$)?",
}


# Whitespace by name, for every regex the matcher and the paste page run: \s means other things in
# RE2 (no \v), Python's re on str (Unicode spaces) and JavaScript (Unicode spaces).
SPACE = r"[ \t\n\r\f\v]"


class ValueTypeError(ValueError):
    pass


def coerce(type_: str, raw: object) -> object:
    """A YAML value as the runtime value of a param of `type_`; ValueTypeError when it cannot be."""
    import re  # authoring time, not explain's

    if raw is None:
        return None
    if type_ == "int":
        if isinstance(raw, int) and not isinstance(raw, bool):
            return int(raw)
    elif type_ == "float":
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            return float(raw)
    elif type_ == "bool":
        if isinstance(raw, bool):
            return raw
    elif type_ == "str":
        if isinstance(raw, str):
            return str(raw)
    elif type_ == "dtype":
        if isinstance(raw, str) and re.fullmatch(_NAME, raw):
            return str(raw)
    elif type_ == "shape":
        if isinstance(raw, (list, tuple)) and all(isinstance(x, int) and not isinstance(x, bool) for x in raw):
            return tuple(int(x) for x in raw)
    elif type_ == "bytes":
        if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0:
            return int(raw)
        if isinstance(raw, str) and re.fullmatch(_BYTES, raw.strip()):
            return parse("bytes", raw)
    else:
        raise ValueTypeError(f"unknown param type {type_!r}")
    raise ValueTypeError(f"{raw!r} is not a valid {type_}")


def format_field(value: object, self_doc: bool, conversion: str | None, spec: str) -> str:
    """Exactly what an f-string replacement field writes for `value`."""
    if conversion == "r" or (self_doc and conversion is None and not spec):
        value = repr(value)
    elif conversion == "s":
        value = str(value)
    elif conversion == "a":
        value = ascii(value)
    return format(value, spec)


def pattern(type_: str, optional: bool, conversion: str | None, self_doc: bool, spec: str, form: str | None = None) -> str:
    """The regex (no groups of its own) for a field of this type written this way.

    A str value is bounded by what a raise site prints (`form`): one token by default, so that a
    placeholder at the edge of a wording never swallows the prose or the log prefix around it.
    """
    as_repr = conversion in ("r", "a") or (self_doc and conversion is None and not spec)
    if spec and type_ in ("int", "float", "bool") and conversion is None:
        body = _FORMATTED_NUMBER  # format(True, ">4") writes "   1": a bool with a spec is a number
    elif type_ == "str" and as_repr:
        body = PATTERNS["str_repr"]
    elif type_ == "str":
        body = STR_FORMS[form or "token"]
    else:
        body = PATTERNS[type_]
    if optional:
        body = f"None|{body}"
    if spec:
        body = rf"{SPACE}*(?:{body}){SPACE}*"  # width and alignment pad with spaces, on either side
    return body


def parse(type_: str, text: str) -> object:
    """The typed value written as `text` (which matched `pattern`)."""
    text = text.strip()
    if text == "None":
        return None
    if type_ in ("int", "float") and "Trace" in text and _TRACER_TEXT.fullmatch(text):
        return text  # ("Trace": every tracer's repr has it; no regex compiled for a plain number)
    if type_ in ("int", "float") and text[:1] in ("<", ".") and _PLACEHOLDER_TEXT.fullmatch(text):
        return text  # a number left out: its text, which matching/index.py gone() drops
    if type_ in ("int", "float") and text.endswith(")"):
        scalar = _SCALAR_TEXT.fullmatch(text)
        if scalar:
            text = (scalar.group("a") if scalar.group("a") is not None else scalar.group("b")).strip()
    if type_ == "int":
        digits = text.replace(",", "").replace("_", "")
        # written with a spec before a full stop ("{n:>4}." -> "   0."): the stop is the wording's
        digits = digits[:-1] if digits.endswith(".") else digits
        if digits.lstrip("+-").isdigit():
            return int(digits)
        if digits.lstrip("+-")[:2].lower() in ("0x", "0b", "0o"):
            return int(digits, 0)  # format(255, "#x") is "0xff"
        # written with a float spec: format(3, "e") is "3.000000e+00", format(3, "%") "300.000000%"
        number = float(_number(text)) / (100 if text.endswith("%") else 1)
        if not number.is_integer():
            raise ValueError(f"{text!r} is not an int")
        return int(number)
    if type_ == "float":
        return float(_number(text))
    if type_ == "bool":
        if text in ("True", "False"):
            return text == "True"
        return float(_number(text)) != 0  # written with a spec: 1, +1, 1.00, 100%
    if type_ == "str":
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            inner = text[1:-1]
            if _plain_literal(inner, text[0]):
                return inner  # what literal_eval gives, without importing ast (a paste's start)
            import ast  # only for quoted strings with escapes, to undo them exactly
            import warnings

            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # "invalid escape sequence": pasted text, not code to warn about
                    value = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                return text
            return tuple(map(_paired, value)) if isinstance(value, tuple) else _paired(value)
        return text
    if type_ == "dtype":
        names = _NAME_TEXT.findall(text)
        names = [n for n in names if n not in ("dtype", "jnp", "np", "numpy", "jax")]
        return names[-1] if names else text
    if type_ == "shape":
        return tuple(int(x) for x in _INT_TEXT.findall(text))
    if type_ == "bytes":
        number, unit = _BYTES_TEXT.fullmatch(text).groups()
        unit = unit.upper()
        scale = _BYTE_UNITS.get(unit) or _BYTE_UNITS[unit[:1]]
        return int(float(number) * scale + 0.5)  # JavaScript's port rounds the same way
    raise ValueTypeError(f"unknown param type {type_!r}")


def _plain_literal(inner: str, quote: str) -> bool:
    """Whether `quote + inner + quote` is a string literal that stands for `inner` itself: no
    escape, no quote of its kind, no line end or null byte, no surrogate (each of those is read,
    or refused, by ast.literal_eval)."""
    if "\\" in inner or quote in inner or "\n" in inner or "\r" in inner or "\0" in inner:
        return False
    try:
        inner.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _paired(text):
    """A string with each escaped surrogate pair (`\\ud800\\udc00`) made the one character it
    encodes, as JavaScript's strings read it (the paste page's twin); a lone surrogate stays."""
    if not isinstance(text, str):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _number(text: str) -> str:
    """A number as format() wrote it with a spec, as float() reads it: no grouping, no %, no zero
    padding before inf or nan."""
    text = text.rstrip("%").replace(",", "").replace("_", "")
    sign = text[:1] if text[:1] in ("-", "+") else ""
    digits = text[len(sign):].lstrip("0")
    return sign + digits if digits.startswith(("inf", "nan")) and digits != text[len(sign):] else text


def same(a: object, b: object) -> bool:
    """Whether two values read from one message are one value (nan shown twice is)."""
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


def sample(type_: str, seed: int, form: str | None = None) -> object:
    """A deterministic, plausible value of the type, and for a str of its form (used where no
    example gives one)."""
    if type_ == "int":
        return 3 + seed * 7
    if type_ == "float":
        return 0.5 + seed
    if type_ == "bool":
        return seed % 2 == 1
    if type_ == "str" and form == "device":
        return ("TPU v5 lite", "NVIDIA H100 80GB HBM3", "cpu")[seed % 3]
    if type_ == "str" and form == "sentence":
        return f"'tpu.op{seed}' op operand {seed} has the wrong layout"
    if type_ == "str":
        return f"value{seed}"
    if type_ == "dtype":
        return DTYPE_NAMES[seed % len(DTYPE_NAMES)]
    if type_ == "shape":
        return tuple(2 + seed + i for i in range(1 + seed % 4))
    if type_ == "bytes":
        return (3 + seed) << 20
    raise ValueTypeError(f"unknown param type {type_!r}")

"""The catalogue file format, defined once.

The loader validates raw YAML against these definitions and the JSON Schema shipped for editors is
produced from them (`errkit generate` writes it), so the two can never disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from errkit.core import values
from errkit.core.expr import did_you_mean

EXCEPTIONS = ("ValueError", "NotImplementedError", "TypeError")
# Upstream kernels also raise these; only explain-only entries and variants may say so.
VARIANT_EXCEPTIONS = EXCEPTIONS + ("AssertionError", "RuntimeError", "AttributeError", "ExceptionGroup")
PARAM_TYPES = values.TYPES
IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"
PARAM_LIST = r"^[A-Za-z_][A-Za-z0-9_]*(, [A-Za-z_][A-Za-z0-9_]*)*$"  # params set together: `block_q, block_kv`
CODE = r"^[A-Z]{2,4}[0-9]{3}$"
SLUG = r"^[a-z0-9]+(-[a-z0-9]+)*$"
TAG = r"^[a-z0-9][a-z0-9-]*$"
# `jax>=0.4.31,<0.5.3`: a distribution and release bounds (lint's bad-releases rule says the rest)
_BOUND = r"\s*(==|!=|<=|>=|<|>)\s*[0-9]+(\.[0-9]+)*\s*"
RELEASES = rf"^\s*[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?{_BOUND}(,{_BOUND})*$"
RELEASES_DOC = ("Upstream releases that raise this wording: a distribution and a PEP 440 range of release numbers "
                "(>=, >, <=, <, ==, !=), e.g. 'jax>=0.4.31,<0.5.3'; scripts/harvest.py records which releases raise what.")


@dataclass(frozen=True)
class Kind:
    description: str = ""

    def json_schema(self) -> dict:
        raise NotImplementedError


@dataclass(frozen=True)
class Str(Kind):
    pattern: str | None = None
    max_length: int = 10_000
    min_length: int = 1

    def json_schema(self) -> dict:
        out: dict[str, Any] = {"type": "string", "minLength": self.min_length, "maxLength": self.max_length}
        if self.pattern:
            out["pattern"] = self.pattern
        return out


@dataclass(frozen=True)
class Hinted(Str):
    """A string whose full check is a lint rule (with its own message); the JSON Schema gives
    editors a pattern as a first hint."""

    hint: str = ""

    def json_schema(self) -> dict:
        out = super().json_schema()
        out["pattern"] = self.hint
        return out


@dataclass(frozen=True)
class Bool(Kind):
    def json_schema(self) -> dict:
        return {"type": "boolean"}


@dataclass(frozen=True)
class Int(Kind):
    minimum: int | None = None

    def json_schema(self) -> dict:
        out: dict[str, Any] = {"type": "integer"}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        return out


@dataclass(frozen=True)
class Enum(Kind):
    values: tuple[str, ...] = ()

    def json_schema(self) -> dict:
        return {"enum": list(self.values)}


@dataclass(frozen=True)
class AnyValue(Kind):
    """A parameter value in an example: checked later against the parameter's declared type."""

    def json_schema(self) -> dict:
        return {}


@dataclass(frozen=True)
class ListOf(Kind):
    item: Kind = field(default_factory=Kind)
    min_items: int = 0

    def json_schema(self) -> dict:
        out = {"type": "array", "items": self.item.json_schema()}
        if self.min_items:
            out["minItems"] = self.min_items
        return out


@dataclass(frozen=True)
class MapOf(Kind):
    """A mapping whose keys are names chosen by the author (parameter names, suggestion labels)."""

    value: Kind = field(default_factory=Kind)
    key_pattern: str | None = None
    key_what: str = "key"

    def json_schema(self) -> dict:
        out: dict[str, Any] = {"type": "object", "additionalProperties": self.value.json_schema()}
        if self.key_pattern:
            out["propertyNames"] = {"pattern": self.key_pattern}
        return out


@dataclass(frozen=True)
class Field:
    name: str
    kind: Kind
    required: bool = False
    description: str = ""


@dataclass(frozen=True)
class Record(Kind):
    fields: tuple[Field, ...] = ()

    def field_named(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    def json_schema(self) -> dict:
        props = {}
        for f in self.fields:
            schema = dict(f.kind.json_schema())
            if f.description:
                schema["description"] = f.description
            props[f.name] = schema
        out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
        required = [f.name for f in self.fields if f.required]
        if required:
            out["required"] = required
        return out


PARAM = Record(
    fields=(
        Field("type", Enum(values=PARAM_TYPES), True, "Value type; shape is a tuple of ints, dtype a dtype name, bytes a size in bytes (an int; read from 1048576, 19.85M, 96.00K, 1.5GiB)."),
        Field("description", Str(max_length=300), True, "One line saying what the value is."),
        Field("optional", Bool(), description="The value may be None."),
        Field(
            "form",
            Enum(values=("token", "list", "text", "device", "sentence")),
            description="How a str value prints, which bounds what a match may take: one token (the default: a name, a "
            "number, a repr, a bracketed value such as {4, 8} or slice(None, 2), a <...>), a comma-separated list of "
            "tokens, free text, a device kind as jax prints it (TPU v5 lite, NVIDIA H100 80GB HBM3: words that name a "
            "model or version, not the prose after them), or free text within one sentence (a stop, spaces and a "
            "capital after it begin text that is not the value's).",
        ),
    )
)

KERNEL_ID = SLUG

# A value a message may not show, with what it may be: each case's value and its words.
VALUE_CASE = Record(
    fields=(
        Field("value", AnyValue(), True, "One value it may take (a bool, number or string)."),
        Field("when", Str(max_length=200), True, "The case in words, as explain shows it before the case's values ('with bfloat16 kv_pages')."),
    )
)

KERNEL_VALUE = Record(
    fields=PARAM.fields + (
        Field("from", Str(max_length=500),
              description="How it follows from the kernel's other values (`2 * num_kv_heads`): a rule reading it, when a "
                          "message does not show it, reads this instead."),
        Field("cases", ListOf(item=VALUE_CASE, min_items=1),
              description="What it may be when a message does not show it (the kv dtype's packing, segment_ids, jax.grad): "
                          "a suggestion satisfies the rules reading it in every case, and explain gives the values per case "
                          "where they differ."),
    )
)
FRAMEWORKS = ("jax", "pytorch", "triton")  # errkit/explain/context.py reads which one a text shows
FIX_SITES = ("xla-fusion", "pallas-call")

RULE = Record(
    fields=(
        Field("name", Str(pattern=SLUG), True, "Short kebab-case name."),
        Field("check", Str(max_length=2000), True, "Expression over the kernel's values: true for values the kernel accepts."),
        Field("says", Str(max_length=500), True, "The rule in words."),
        Field("enforced", Enum(values=("check", "lowering", "runtime")),
              description="Where the kernel enforces it: a Python check (an entry's message, the default), its lowering, or only when it runs."),
    )
)

KERNEL = Record(
    fields=(
        Field("kernel", Str(pattern=KERNEL_ID), True, "Stable id, what entries name in `kernel`."),
        Field("title", Str(max_length=200), True, "The kernel, as users know it."),
        Field("source", Str(max_length=300), True, "Where its code lives."),
        Field("values", MapOf(value=KERNEL_VALUE, key_pattern=IDENTIFIER, key_what="value"), True,
              "The values its rules are about: what a user chooses and the sizes it depends on."),
        Field("rules", ListOf(item=RULE, min_items=1), True, "Every rule on those values, its lowering's included."),
        Field("names", ListOf(item=Str(pattern=IDENTIFIER)),
              description="Names the kernel goes by in compiler output (a pallas_call's name, `%splash_mha_fwd`, a jitted "
                          "function's name): an error raised by several kernels whose lines (from its message to the next "
                          "traceback) hold a word starting with one of them, and with no other kernel's, is attributed to this kernel."),
        Field("framework", Enum(values=FRAMEWORKS),
              description="The framework whose users call it (default jax): explain leaves out this kernel's fixes when the "
                          "text shows another framework raised the error (errkit/explain/context.py)."),
    )
)

CASE = Record(
    fields=(
        Field("when", Str(max_length=200), True,
              "The case in words, as explain shows it before the case's values ('with segment_ids, under jax.grad')."),
        Field("assume", MapOf(value=AnyValue(), key_pattern=IDENTIFIER, key_what="name"), True,
              "What the case assumes that the message cannot show: name -> value, given to the case's expressions "
              "(and to the fix-verification suite's runner). The case is shown when the message printed none of these names."),
        Field("suggest", MapOf(value=Str(max_length=500), key_what="suggestion label"), True,
              "Label (one of the fix's suggestions) -> the expression computing its value in this case."),
    )
)

FIX = Record(
    fields=(
        Field("summary", Str(max_length=500), True, "What to change, in one sentence."),
        Field(
            "suggest",
            MapOf(value=Str(max_length=500), key_what="suggestion label"),
            description="Label -> expression computing a concrete value from the params.",
        ),
        Field("before", Str(), description="Code before the fix."),
        Field("after", Str(), description="Code after the fix."),
        Field("alternative", Bool(), description="The fix leaves the library that raised the error (e.g. for this project's "
              "kernel): offered after the fixes within it, labelled as an alternative."),
        Field("sets", MapOf(value=Str(pattern=PARAM_LIST), key_what="suggestion label"),
              description="Suggestion label -> the param its value replaces (the fix-verification suite applies it); "
                          "several params, comma-separated, for a value that is one configuration of them (a list of "
                          "their values in that order), set together."),
        Field("setup", Str(), description="Code run before `before` and `after`, instead of the entry's setup."),
        Field("then", Str(), description="Code run after `before` and `after` (what exercises them), instead of the entry's."),
        Field("unverified", Str(max_length=500), description="Why the fix cannot be run on a CPU (shown on its page and in --json)."),
        Field("kernel", Str(pattern=KERNEL_ID), description="The kernel this fix is for, when the entry's wordings are raised by several: "
              "`valid()` applies its rules; explain offers the fix when that kernel raised the error, or says it is for it when that cannot be told."),
        Field("site", Enum(values=FIX_SITES),
              description="The raise site this fix is for, when the entry's error is raised in several: xla-fusion (XLA's own "
                          "fusions), pallas-call (a user's own pallas_call): explain offers it first when the text shows that site."),
        Field("cases", ListOf(item=CASE),
              description="Values that depend on what the message cannot show (query shards, segment ids, the backward pass): "
                          "explain gives each suggestion's value per case, after the value the printed values alone give."),
    )
)

VARIANT = Record(
    fields=(
        Field("message", Str(max_length=2000, min_length=0), True,
              "Another wording of the same condition, as an f-string template ('' for an exception raised without text)."),
        Field("source", Str(max_length=300), True, "Where users meet this wording."),
        Field("exception", Enum(values=VARIANT_EXCEPTIONS), description="Exception class, when it differs from the entry's."),
        Field(
            "aliases",
            MapOf(value=Str(pattern=IDENTIFIER), key_what="placeholder expression"),
            description="Placeholder expression in this wording -> the param it carries (e.g. 'self.block_q': block_q).",
        ),
        Field("location", Str(max_length=500),
              description="Raise site: 'path/to/file.py[:line][ in function]'. Required for an empty message: explain then recognises it by the traceback's last frame."),
        Field("releases", Hinted(max_length=300, hint=RELEASES), description=RELEASES_DOC),
        Field("kernel", Str(pattern=KERNEL_ID), description="The kernel raising this wording, when it is not the entry's."),
        Field("raised_by", ListOf(item=Str(pattern=KERNEL_ID), min_items=2),
              description="The kernels raising this wording verbatim, when several do (then the traceback's paths tell which, if they can)."),
        Field("located_only", Bool(), description="Recognised only in a traceback whose last frame is its `location` (a wording "
              "too general to look for anywhere, such as Python's own \"'str' object has no attribute 'name'\")."),
        Field("note", Str(max_length=1000), description="Anything a reader should know about this wording."),
    )
)

EXAMPLES = Record(
    fields=(
        Field("bad", ListOf(item=MapOf(value=AnyValue(), key_pattern=IDENTIFIER, key_what="param")), description="Param sets that violate the check."),
        Field("good", ListOf(item=MapOf(value=AnyValue(), key_pattern=IDENTIFIER, key_what="param")), description="Param sets that satisfy the check."),
    )
)

ORIGIN = Record(
    fields=(
        Field("record_id", Str(), description="Id of the dataset record this entry was imported from."),
        Field("dataset_version", Str()),
        Field("repo", Str(), description="Repository of the original raise site."),
        Field("path", Str(), description="File of the original raise site."),
        Field("line", Int(minimum=1)),
        Field("url", Str(), description="Permalink to the original raise site."),
        Field("sha", Str(), description="Commit the original was analysed at."),
        Field("analyzed_at", Str()),
        Field("source_code", Str(max_length=20_000), description="The code around the original raise."),
        Field("message_pattern", Str(), description="The dataset's own regex for the message (informative)."),
        Field("error_type", Str()),
        Field("error_code", Str()),
        Field("http_status", Int()),
        Field("handling_strategy", Str()),
        Field("background_tag", Str()),
        Field("validation_code", Str(), description="The dataset's validation snippet, verbatim."),
        Field("type_guard", Str()),
        Field("try_catch", Str(), description="A try/except pattern for callers."),
        Field("schema_version", Int()),
    )
)

ENTRY = Record(
    fields=(
        Field("code", Str(pattern=CODE), True, "Stable code, never reused: the catalogue's prefix and three digits (e.g. ABC105)."),
        Field("slug", Str(pattern=SLUG), True, "Short kebab-case name."),
        Field("title", Str(max_length=200), True, "One-line title."),
        Field("exception", Enum(values=VARIANT_EXCEPTIONS), True,
              "Builtin class the raised exception subclasses (ValueError, NotImplementedError or TypeError unless explain_only)."),
        Field("severity", Enum(values=("error", "warning")), description="Default error."),
        Field("message", Str(max_length=2000, min_length=0), True,
              "The exact template the kernel raises (f-string semantics); '' only for an explain_only entry with a location."),
        Field("source", Str(max_length=300), description="Who raises `message` (explain_only entries: the upstream kernel); default: this kernel."),
        Field("location", Str(max_length=500), description="Raise site of `message`, as for variants."),
        Field("releases", Hinted(max_length=300, hint=RELEASES), description="Upstream releases that raise `message`, as for variants."),
        Field(
            "aliases",
            MapOf(value=Str(pattern=IDENTIFIER), key_what="placeholder expression"),
            description="Placeholder expression in `message` -> the param it carries (explain_only entries).",
        ),
        Field("kernel", Str(pattern=KERNEL_ID), description="The kernel whose rules its values follow (catalog/kernels/<kernel>.yaml)."),
        Field("raised_by", ListOf(item=Str(pattern=KERNEL_ID), min_items=2),
              description="The kernels raising `message` verbatim, when several do (then the traceback's paths tell which, if they can)."),
        Field("params", MapOf(value=PARAM, key_pattern=IDENTIFIER, key_what="param"), description="Typed values in the message."),
        Field("implies", MapOf(value=AnyValue(), key_pattern=IDENTIFIER, key_what="kernel value"),
              description="Values of its kernel's (catalog/kernels/) that the error implies and no message prints (an "
                          "error raised only under jax.grad with segment_ids: {backward: true, segment_ids: true}): its "
                          "fixes' values are solved for them, not for every case the kernel declares."),
        Field("reads", ListOf(item=Str(max_length=500, min_length=3)),
              description="Templates of lines that follow the message (a compiler's MLIR or allocation dump): explain reads "
                          "the params they hold from the first line each one matches, after the message, before the next traceback "
                          "or the next log record from another logger, level or source line."),
        Field("needs_context", Bool(),
              description="The message is printed by other compilers too (MLIR's `failed to legalize operation`, cuDNN's "
                          "frontend): explain answers it exact only when the text around it shows JAX, XLA, Pallas, Mosaic or a "
                          "kernel of the catalogue; otherwise approximate, saying why."),
        Field("check", Str(max_length=2000), description="Invariant that must hold; the error is raised when it is false."),
        Field("explain_only", Bool(), description="Upstream-only condition: recognised by explain, no validator is generated."),
        Field("traced", Enum(values=("checkify",)),
              description="checkify: the check also runs on traced array values (under jit) as a jax.experimental.checkify check with the same code and message."),
        Field("explanation", Str(), True, "What it means (markdown)."),
        Field("triggers", ListOf(item=Str(max_length=1000), min_items=1), True, "Concrete inputs that raise it."),
        Field("situations", ListOf(item=Str(max_length=1000)), description="Common situations in which people meet it."),
        Field("setup", Str(), description="Code run before each fix's before/after snippet: the inputs they use."),
        Field("then", Str(), description="Code run after each fix's before/after snippet: the call that exercises it."),
        Field("fixes", ListOf(item=FIX, min_items=1), True, "Ways to fix it."),
        Field("prevention", ListOf(item=Str(max_length=1000)), description="How to avoid it in the first place."),
        Field("tags", ListOf(item=Str(pattern=TAG, max_length=40))),
        Field("variants", ListOf(item=VARIANT), description="Other wordings of the same condition."),
        Field("examples", EXAMPLES, description="Param sets that violate / satisfy the check."),
        Field("related", ListOf(item=Str(pattern=CODE)), description="Codes of related entries."),
        Field("origin", ORIGIN, description="Provenance of an imported entry."),
    )
)

GROUP = Record(
    fields=(
        Field("description", Str(max_length=500), True),
        Field("args", ListOf(item=Str(pattern=IDENTIFIER), min_items=1), True, "Arguments of the generated validate function."),
        Field("bindings", MapOf(value=Str(max_length=500), key_pattern=IDENTIFIER, key_what="param"),
              description="Param -> expression over the args (none needed when the checks read the args alone)."),
        Field("checks", ListOf(item=Str(pattern=CODE), min_items=1), True, "Entry codes, in the order they run."),
    )
)

PREFIX = r"^[A-Z]{2,4}$"
# A project-relative path, written with forward slashes: not absolute, no `.` or `..` part (what
# generate writes stays inside the project), no backslash, control character or NUL.
PATH = r"^(?!/)(?!(.*/)?\.\.?(/|$))[^\\\x00-\x1f\x7f]*$"
MODULE_PATH = r"^[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*\.py$"  # a PATH naming an importable module

SETTINGS = Record(
    fields=(
        Field("project", Str(), True, "Catalogue name: shown on the site, in `errkit explain` answers and in the docs-URL variable."),
        Field("name", Str(max_length=200), description="What raises the catalogue's own errors, in generated text "
              "(e.g. 'the foo attention kernel'); default: the project."),
        Field("version", Str(), True, "Catalogue version: part of every docs URL."),
        Field("docs_url", Str(), True, "The published site: a base URL (pages at <base>/<version>/errors/<CODE>/) "
              "or a pattern with {version} and {code}."),
        Field("repo_url", Str(), description="Repository URL, for edit links."),
        Field("install", Str(max_length=300), description="The command that installs what the own entries' Reproduce "
              "snippets import (e.g. `pip install \"foo[kernel]\"`): shown above each of them."),
        Field("branch", Str(max_length=200), description="Branch of the repository the edit links open (default: main)."),
        Field("prefix", Str(pattern=PREFIX), description="Code prefix of this catalogue's entries, 2-4 capital letters (default: ERR)."),
        Field("validators", Str(pattern=MODULE_PATH), description="Path of the generated validators module, relative to the project root "
              "(needed when there are groups)."),
        Field("index", Str(pattern=PATH), description="Path of the compiled index `errkit explain` reads, relative to the "
              "project root, inside the package that ships it (none: no index is written)."),
        Field("site", Str(pattern=PATH, min_length=0), description="Folder of the troubleshooting site (mkdocs.yml, docs/), "
              "relative to the project root (default: site; an empty string: no site pages are written)."),
        Field("groups", MapOf(value=GROUP, key_pattern=IDENTIFIER, key_what="group"),
              description="Validate functions of the generated module (none: an explain-and-docs-only catalogue)."),
        Field("retired", ListOf(item=Str(pattern=CODE)), description="Codes no longer in use: never to be reused."),
    )
)


@dataclass(frozen=True)
class Problem:
    path: tuple  # key path inside the document
    rule: str
    message: str


_TYPE_NAMES = ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
               (dict, "a mapping"), (list, "a list"), (type(None), "empty (null)"))  # bool before int


def _type_name(value: Any) -> str:
    return next((name for kind, name in _TYPE_NAMES if isinstance(value, kind)), type(value).__name__)


def validate(kind: Kind, value: Any, path: tuple = ()) -> list[Problem]:
    """All problems of `value` against `kind`, each with its key path."""
    out: list[Problem] = []
    _validate(kind, value, path, out)
    return out


def _wrong(path, what, value, out):
    out.append(Problem(path, "wrong-type", f"expected {what}, got {_type_name(value)}"))


def _validate(kind: Kind, value: Any, path: tuple, out: list[Problem]) -> None:
    if isinstance(kind, Str):
        if not isinstance(value, str):
            return _wrong(path, "a string", value, out)
        if len(value) < kind.min_length:
            out.append(Problem(path, "wrong-type", "must not be empty"))
        elif len(value) > kind.max_length:
            out.append(Problem(path, "wrong-type", f"is {len(value)} characters long; at most {kind.max_length}"))
        elif kind.pattern and not re.fullmatch(kind.pattern, value):  # fullmatch: `$` alone lets a final newline through
            out.append(Problem(path, "wrong-type", f"{value!r} does not match {kind.pattern}"))
    elif isinstance(kind, Bool):
        if not isinstance(value, bool):
            _wrong(path, "true or false", value, out)
    elif isinstance(kind, Int):
        if not isinstance(value, int) or isinstance(value, bool):
            _wrong(path, "an integer", value, out)
        elif kind.minimum is not None and value < kind.minimum:
            out.append(Problem(path, "wrong-type", f"must be at least {kind.minimum}"))
    elif isinstance(kind, Enum):
        if not isinstance(value, str) or value not in kind.values:
            hint = did_you_mean(value, kind.values) if isinstance(value, str) else ""
            out.append(Problem(path, "wrong-type", f"must be one of {', '.join(kind.values)}; got {value!r}{hint}"))
    elif isinstance(kind, ListOf):
        if not isinstance(value, list):
            return _wrong(path, "a list", value, out)
        if len(value) < kind.min_items:
            out.append(Problem(path, "missing-field", f"needs at least {kind.min_items} item(s)"))
        for i, item in enumerate(value):
            _validate(kind.item, item, path + (i,), out)
    elif isinstance(kind, MapOf):
        if not isinstance(value, dict):
            return _wrong(path, "a mapping", value, out)
        for key, item in value.items():
            if not isinstance(key, str) or (kind.key_pattern and not re.fullmatch(kind.key_pattern, key)):
                out.append(Problem(path + (key,), "wrong-type", f"{kind.key_what} name {key!r} is not a valid identifier"))
                continue
            _validate(kind.value, item, path + (key,), out)
    elif isinstance(kind, Record):
        if not isinstance(value, dict):
            return _wrong(path, "a mapping", value, out)
        names = [f.name for f in kind.fields]
        for key in value:
            if key not in names:
                out.append(Problem(path + (key,), "unknown-key", f"unknown key {key!r}{did_you_mean(str(key), names)}"))
        for f in kind.fields:
            if f.name not in value:
                if f.required:
                    out.append(Problem(path, "missing-field", f"missing required field {f.name!r}"))
                continue
            _validate(f.kind, value[f.name], path + (f.name,), out)


def empty(kind: Kind) -> Any:
    """A stand-in value of `kind` for a field that is missing or broken."""
    if isinstance(kind, Enum):
        return kind.values[0]
    if isinstance(kind, ListOf):
        return []
    if isinstance(kind, (MapOf, Record)):
        return {}
    if isinstance(kind, Bool):
        return False
    if isinstance(kind, Int):
        return 0
    return ""


def json_schema(kind: Record, title: str, extra: Callable[[dict], None] | None = None) -> dict:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title}
    schema.update(kind.json_schema())
    if extra:
        extra(schema)
    return schema

"""Lint is the gate: whatever text a catalogue's fields hold, a catalogue that lints clean generates,
its generated validators import, and their examples behave (the bad example raises the entry's
message, the good one passes), and `errkit explain --catalog` finds the entry, exactly, in the message
its bad example raises.

Hypothesis fills the fields of a one-entry catalogue (tests/fixtures/gate) with hostile text:
quotes, backslashes, line breaks, braces, NUL, lone surrogates, Unicode, `{x:spec}` fields, names
that are keywords, builtins or not names at all. Everything runs in this process: lint, the
producers of `errkit generate`, the import of the generated module, explain. HYPOTHESIS_PROFILE=thorough
runs 1000 examples (a minute); by default 40, the attacks found before among them (`@example`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import json
import sys
from pathlib import Path

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from errkit.catalogue import wordings
from errkit.catalogue.lint import lint
from errkit.generate.outputs import render_all
from support import FIXTURES

GATE = FIXTURES / "gate" / "catalog"
ENTRY_FILE = "area/XX101-first.yaml"
EXAMPLES = max(40, settings.default.max_examples)  # the `ci` profile's 12 are too few here; `thorough` 1000


def _base(name: str) -> dict:
    return YAML(typ="safe").load((GATE / name).read_text())


BASE_SETTINGS, BASE_ENTRY = _base("errkit.yaml"), _base(ENTRY_FILE)


# -- writing any text as YAML, exactly ----------------------------------------------------------

def quoted(text: str) -> str:
    """`text` as a double-quoted YAML scalar of printable ASCII: every other character escaped
    (\\uXXXX, \\UXXXXXXXX), so the loader reads back exactly `text`, lone surrogates included."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def flow(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quoted(str(k))}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, (int, float)):
        return repr(value)
    return quoted(value)


def document(data: dict) -> str:
    """One top-level key a line (so findings name a line of their own), each value in flow style."""
    return "".join(f"{quoted(key)}: {flow(value)}\n" for key, value in data.items())


# -- hostile text ----------------------------------------------------------------------------------

SPECIALS = ['"', "'", '"""', "\\", "\\N", "\n", "\r", "\t", "{", "}", "{{", "}}", "\x00", "\x85", "\u2028",
            "\ufeff", "\ud800", "é", "😀", "</script>", "-->", "`", "$", "%", "#", "*", ":", "!r"]
TEXT = st.lists(st.one_of(st.sampled_from(SPECIALS), st.text(st.characters(codec="utf-8"), max_size=4),
                          st.sampled_from(["a", "b", "word", " "])), min_size=1, max_size=8).map("".join)
SPECS = st.one_of(st.sampled_from(["", ">5", "int", ".2f", "d", "x", ",", "^10", "010", ">1000000000", "s", "c",
                                   "e", "%", "z", "#x", "=+8", "_", "'", "\\n"]), TEXT)
NAMES = st.one_of(st.sampled_from(["a", "b", "q_len", "class", "None", "type", "getattr", "divisors", "_x",
                                   "a\n", "ERRORS", "FirstError", "é", "x y", "1a", ""]),
                  st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True))


@st.composite
def messages(draw, names):
    """A message template: text, and fields naming the params (or not), with conversions and specs."""
    pieces = []
    for _ in range(draw(st.integers(1, 4))):
        pieces.append(draw(TEXT))
        name = draw(st.sampled_from(names + ["zz"]))
        how = draw(st.sampled_from(["{%s}", "{%s!r}", "{%s=}", "{%s:%s}", "{%s!r:%s}"]))
        pieces.append(how % ((name, draw(SPECS)) if how.count("%s") == 2 else (name,)))
    pieces.append(draw(st.one_of(st.just(" must be divisible"), TEXT)))
    return "".join(pieces)


@st.composite
def catalogues(draw):
    """(settings, entry) of the gate catalogue, some of its fields replaced by hostile text."""
    entry, config = dict(BASE_ENTRY), dict(BASE_SETTINGS)
    a, b = "a", "b"
    if draw(st.integers(0, 2)) == 0:
        a, b = draw(NAMES), draw(NAMES)
    def maybe(default, strategy=TEXT):
        """The field as the fixture has it, or (one time in three) hostile text."""
        return draw(strategy) if draw(st.integers(0, 2)) == 0 else default

    entry["title"] = maybe(entry["title"])
    entry["slug"] = maybe(entry["slug"], st.sampled_from(["value", "a-1b", "catalogue", "first\n", "x"]))
    entry["params"] = {a: {"type": "int", "description": maybe("First value.")},
                       b: {"type": "int", "description": "Second value.", "optional": draw(st.booleans())}}
    entry["message"] = maybe(f"{{{a}=}} must be divisible by {{{b}=}}", messages([a, b]))
    entry["check"] = f"{a} % {b} == 0"
    entry["explanation"] = maybe(entry["explanation"])
    entry["triggers"] = [maybe(entry["triggers"][0])]
    fix = dict(entry["fixes"][0])
    fix["summary"] = maybe(fix["summary"])
    fix["suggest"] = {maybe("valid b"): f"divisors({a})"}
    fix["before"], fix["after"] = maybe(fix["before"]), maybe(fix["after"])
    entry["fixes"] = [fix]
    entry["examples"] = {"bad": [{a: 3, b: 2}], "good": [{a: 4, b: 2}]}
    group = dict(config["groups"]["pair"])
    group["description"] = maybe(group["description"])
    group["args"] = [a, b]
    config["groups"] = {maybe("pair", NAMES): group}
    config["project"] = maybe(config["project"])
    return config, entry


# -- the gate --------------------------------------------------------------------------------------

_modules = itertools.count()


def import_module(path: Path):
    name = f"gate_validators_{next(_modules)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses in the carried helpers look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def behaves(loaded, project: Path) -> None:
    """A clean catalogue generates, its validators import and their examples behave, and explain
    answers a message it raises."""
    files = render_all(loaded.catalogue)  # every producer of `errkit generate`, in memory
    for rel, data in files.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_bytes(data)
    module = import_module(project / loaded.catalogue.settings.validators)
    entry = loaded.catalogue.entries[0]
    check = module.CHECKS[entry.code]
    validates = [getattr(module, f"validate_{group.name}") for group in loaded.catalogue.settings.groups.values()]
    wording = next(w for w in wordings.wordings(entry) if w.index == 0)
    for bad in entry.bad_examples:
        values = entry.typed(bad)
        for call in [lambda: check(**values)] + [lambda v=v: v(**values) for v in validates]:
            try:
                call()
            except module.CatalogueError as err:
                assert err.code == entry.code and type(err) is module.ERRORS[entry.code]
                assert err.args[0] == wording.render(values), "the validator raises the entry's message"
            else:
                raise AssertionError(f"the bad example {values} passed")
    for good in entry.good_examples:
        assert check(**entry.typed(good)) is None and all(v(**entry.typed(good)) is None for v in validates)
    from errkit.cli import main

    raised = f"{entry.exception}: {wording.render(entry.typed(entry.bad_examples[0]))}"
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(["--catalog", str(project / "catalog"), "explain", "--json", raised])
    assert code == 0, err.getvalue()
    answer = json.loads(out.getvalue().split("\n")[0])  # JSON lines: U+0085 in a value is no line break
    assert (answer["code"], answer["confidence"]) == (entry.code, "exact"), raised


def changed(settings_changes: dict | None = None, **entry_changes) -> tuple[dict, dict]:
    """(settings, entry) of the gate catalogue with these fields changed: the attacks found before."""
    return {**BASE_SETTINGS, **(settings_changes or {})}, {**BASE_ENTRY, **entry_changes}


@example(changed(title='b does not "divide"'))  # ended the validator's docstring
@example(changed(message='"{a:e} must be divisible'))  # 3.000000e+00: a float rendering of an int
@example(changed(message='{a:#x} must be divisible'))  # 0x3: a base with its prefix
@example(changed(message='"{a:?X} must be divisible'))  # not a spec at all, ending like a base's (found by a draw)
@example(changed({"project": 'gate \\N """'}, title="\\ \x00 \u2028"))  # an escape, a NUL, a line separator
@example(changed(message="\U000e0001{a=} must be divisible by {b=}"))  # written \u{e0001} in JavaScript
@example(changed(message="{a=} must be\x00 divisible by {b=}"))  # explain refuses a NUL as binary
@example(changed(message="{a=} must be divisible by {b:int}"))  # 'Invalid format specifier'
@example(changed(message='"""{a} '))  # ends with a space, which the pasted line no longer has
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(catalogues())
def test_a_catalogue_that_lints_clean_generates_and_its_validators_behave(tmp_path_factory, case):
    config, entry = case
    project = tmp_path_factory.mktemp("gate")
    (project / "catalog" / "area").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.errkit]\ncatalog = "catalog"\n')
    (project / "catalog" / "errkit.yaml").write_text(document(config))
    (project / "catalog" / ENTRY_FILE).write_text(document(entry))
    loaded, findings = lint(project / "catalog")  # never raises: a crash of a check is a finding
    assert not [f for f in findings if f.rule == "internal-lint-error"], findings
    assert all("\n" not in str(f) for f in findings), "a finding is one line"
    errors = sorted({f.rule for f in findings if f.severity == "error"})
    event("lint: " + (", ".join(errors) or "clean"))
    if not errors:
        behaves(loaded, project)


def test_the_unchanged_gate_catalogue_lints_clean_and_behaves(tmp_path):
    """The fixture itself passes the gate (else the property would test only refusals)."""
    import shutil

    shutil.copytree(GATE.parent, tmp_path, dirs_exist_ok=True)
    (tmp_path / "catalog" / ENTRY_FILE).write_text(document(BASE_ENTRY))  # as the property writes it
    loaded, findings = lint(tmp_path / "catalog")
    assert findings == []
    behaves(loaded, tmp_path)

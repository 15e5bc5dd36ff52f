"""Hostile catalogues, hostile input, faults, and property-based guarantees."""

import errno
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from errkit.core.regex import engine
from errkit.explain.matching.index import Index
from errkit.explain.matching.blocks import scan
from errkit.explain.matching.line import match_line
from errkit.core import expr
from errkit.catalogue import wordings
from errkit.catalogue.writing import formatted
from errkit.generate.outputs import render_all
from errkit.catalogue.load import load, plain, yaml
from support import CATALOG, ROOT, adversarial_lines, bundled_catalogue, errkit_subprocess

CATALOGUE = bundled_catalogue()
WORDINGS = [w for e in CATALOGUE.entries for w in wordings.wordings(e) if w.variant.message]


# -- regex safety ---------------------------------------------------------------------------------


def test_wordings_run_on_a_linear_time_engine():
    assert engine().__name__ == "re2", "google-re2 is a dependency: explain must not fall back to backtracking"


@pytest.mark.parametrize("wording", WORDINGS, ids=lambda w: f"{w.entry.code}-v{w.index}")
def test_adversarial_lines_finish(wording):
    index = Index.load()
    for line in adversarial_lines(wording, 64 * 1024):
        list(scan(index, line + "\n"))  # completes: a catastrophic pattern would hang here


@pytest.mark.parametrize("wording", WORDINGS, ids=lambda w: f"{w.entry.code}-v{w.index}")
def test_python_re_fallback_is_equivalent_on_the_corpus(wording):
    """The fallback engine gives the same matches and values as re2 on renderings and hostile lines."""
    import re2

    corpus = [wording.render(p) for p in wordings.sample_params(wording.entry)]
    corpus += [line for line in adversarial_lines(wording, 2048)]
    corpus += [f"ValueError: {text} (raised at step 3)" for text in corpus[:3]]
    for source in (wording.pattern, f"(?:{wording.pattern})\\s*$"):
        ours, theirs = re.compile(source), re2.compile(source)
        for text in corpus:
            for how in ("fullmatch", "search"):
                a, b = getattr(ours, how)(text), getattr(theirs, how)(text)
                assert (a is None) == (b is None), (how, source, text[:200])
                if a is not None:
                    assert a.span() == b.span()
                    assert [a.group(c.group) for c in wording.captures] == [b.group(c.group) for c in wording.captures]


# -- the catalogue as untrusted input -------------------------------------------------------------

HOSTILE_TEXT = "quote ' double \" triple ''' and \"\"\" back\\slash {{ 7*7 }} {% if x %}jinja{% endif %} </script><script>alert(1)</script> ünïcødé ✓"


def hostile_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "catalog" / "inputs").mkdir(parents=True)
    (project / "kernel").mkdir()
    (project / "errkit").mkdir()
    (project / "catalog" / "errkit.yaml").write_text(
        "project: hostile\nversion: '1'\ndocs_url: https://example.invalid/docs\nvalidators: kernel/_validators.py\nindex: errkit/_index.json\n"
        "groups:\n  g:\n    description: |\n      " + HOSTILE_TEXT + "\n    args: [x]\n    bindings: {}\n    checks: [XX101]\n"
    )
    entry = {
        "code": "XX101",
        "slug": "hostile",
        "title": HOSTILE_TEXT,
        "exception": "ValueError",
        "message": "x={x!r} ''' \"\"\" \\ {{literal}} </script> ünï ✓ {{{{ 7*7 }}}}",
        "params": {"x": {"type": "str", "description": HOSTILE_TEXT}},
        "check": "x != '\\'\"'",
        "explanation": HOSTILE_TEXT + "\n\nsecond paragraph",
        "triggers": [HOSTILE_TEXT],
        "fixes": [{"summary": HOSTILE_TEXT, "suggest": {HOSTILE_TEXT: "len(x)"}, "before": HOSTILE_TEXT, "after": HOSTILE_TEXT}],
        "variants": [{"message": "bad x: {x}", "source": HOSTILE_TEXT, "note": HOSTILE_TEXT}],
        "examples": {"bad": [{"x": "'\""}], "good": [{"x": "fine"}]},
    }
    buffer = io.StringIO()
    yaml().dump(entry, buffer)
    (project / "catalog" / "inputs" / "XX101-hostile.yaml").write_text(buffer.getvalue())
    return project


def test_hostile_text_cannot_inject_into_generated_code(tmp_path, run_cli):
    project = hostile_project(tmp_path)
    code, out, err = run_cli("--catalog", project / "catalog", "generate")
    assert code == 0, out + err
    source = (project / "kernel" / "_validators.py").read_text()
    namespace: dict = {}
    exec(compile(source, "hostile_validators.py", "exec"), namespace)  # compiles: nothing broke out of its string
    with pytest.raises(namespace["ERRORS"]["XX101"]) as info:
        namespace["validate_g"]("'\"")
    entry = load(project / "catalog").catalogue.entries[0]
    assert str(info.value) == wordings.compile_wording(entry, 0).render({"x": "'\""})
    assert "{literal}" in str(info.value) and "{{ 7*7 }}" in str(info.value)  # f-string braces, never evaluated
    assert "49" not in str(info.value)
    index = json.loads((project / "errkit" / "_index.json").read_text())
    matcher = Index(index)
    assert matcher.entries["XX101"]["title"] == HOSTILE_TEXT  # JSON-escaped, round trips exactly
    found = match_line(matcher, "ValueError: " + str(info.value))
    assert found is not None and found.code == "XX101" and found.params == {"x": "'\""}


@pytest.mark.parametrize(
    "field, value, rule",
    [
        ("message", "{__import__('os').system('touch pwned')}", "undeclared-placeholder"),
        ("message", "{x!r:'>5}", "bad-template"),
        ("message", "{x} }", "bad-template"),
        ("check", "x.__class__", "forbidden-expression"),
        ("check", "__import__('os').system('touch pwned')", "forbidden-expression"),
    ],
)
def test_hostile_fields_are_lint_errors_and_never_run(tmp_path, run_cli, field, value, rule):
    project = hostile_project(tmp_path)
    path = project / "catalog" / "inputs" / "XX101-hostile.yaml"
    data = yaml().load(path.read_text())
    data[field] = value
    buffer = io.StringIO()
    yaml().dump(data, buffer)
    path.write_text(buffer.getvalue())
    code, out, _ = run_cli("lint", project / "catalog", cwd=tmp_path)
    assert code == 1 and f": {rule}: " in out, out
    code, _, err = run_cli("--catalog", project / "catalog", "generate", cwd=tmp_path)
    assert code == 1 and "nothing written" in err
    assert not (tmp_path / "pwned").exists() and not (project / "kernel" / "_validators.py").exists()


# -- faults ---------------------------------------------------------------------------------------


def _project_copy(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(CATALOG, project / "catalog")
    for rel in render_all(CATALOGUE):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, project / rel)
    return project


@pytest.mark.parametrize("failure", [errno.ENOSPC, errno.EROFS, errno.EACCES])
@pytest.mark.parametrize("failing", ["journal", "target"])
def test_full_or_read_only_output_folder_leaves_files_intact(tmp_path, run_cli, monkeypatch, failure, failing):
    project = _project_copy(tmp_path)
    entry = project / "catalog" / "inputs" / "RA105-gqa-head-count.yaml"
    entry.write_text(entry.read_text().replace("title: Query heads", "title: Changed query heads"))
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    real_replace = os.replace
    calls = []

    def failing_replace(src, dst):
        if (failing == "journal") == str(dst).endswith(".errkit-journal.json"):
            calls.append(dst)
        if len(calls) == 2:  # the journal's second state, or the second file: a failure halfway through
            raise OSError(failure, os.strerror(failure), str(dst))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    code, _, err = run_cli("--catalog", project / "catalog", "generate")
    assert code == 1
    assert os.strerror(failure) in err and "Traceback" not in err
    after = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    assert after == before  # the file renamed before the failure was put back: all or nothing
    assert len(calls) >= 2


def test_unreadable_entry_file_is_a_finding(tmp_path, run_cli, monkeypatch):
    project = _project_copy(tmp_path)
    target = project / "catalog" / "inputs" / "RA105-gqa-head-count.yaml"
    real = Path.read_bytes

    def read_bytes(self):
        if self == target:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    code, out, _ = run_cli("lint", project / "catalog")
    assert code == 1
    assert "RA105-gqa-head-count.yaml:1:1: unreadable: Permission denied" in out


_READ = {"x86_64": 0, "aarch64": 63}.get(os.uname().machine)  # the read system call's number


def _wait_until_reading_stdin(proc, timeout: float = 60) -> None:
    """Until the process waits in read(0, ...) (Linux's /proc/PID/syscall): a signal sent while it
    still starts (a loaded CI took over a second) lands before errkit handles it. Elsewhere, a second."""
    deadline = time.monotonic() + timeout
    while _READ is not None and time.monotonic() < deadline and proc.poll() is None:
        try:
            fields = Path(f"/proc/{proc.pid}/syscall").read_text().split()
        except OSError:
            break
        if len(fields) > 1 and fields[0] == str(_READ) and int(fields[1], 16) == 0:
            return
        time.sleep(0.05)
    time.sleep(1.0)


def test_interrupted_stdin_exits_cleanly():
    # Ctrl-C as a terminal sends it: to a process whose SIGINT is not ignored (a suite started in the
    # background of a non-interactive shell inherits SIG_IGN, and so would the child)
    proc = subprocess.Popen([sys.executable, "-m", "errkit.cli", "explain", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    proc.stdin.write(b"some log line\n")
    proc.stdin.flush()
    _wait_until_reading_stdin(proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert b"interrupted" in err and b"Traceback" not in err


def test_non_utf8_locale():
    env = dict(os.environ, LC_ALL="C", LANG="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0")
    env.pop("PYTHONIOENCODING", None)
    proc = errkit_subprocess("explain", "-", input="ValueError: num_q_heads=12 must be divisible by num_kv_heads=8 — ünï\n".encode(), env=env)
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr and b"RA105" in proc.stdout


@pytest.mark.parametrize("flag", [None, "--json"])
def test_an_escaped_lone_surrogate_is_printed_escaped(flag):
    """A str value whose escapes undo to a lone surrogate (no UTF-8 text holds one) is shown as its
    escape, never an internal error (it was: exit 70, UnicodeEncodeError)."""
    text = "ValueError: implementation must be 'pallas', 'xla' or None, got '\\ud800'\n"
    proc = errkit_subprocess("explain", *([flag] if flag else []), "-", input=text.encode(),
                             env=dict(os.environ, PYTHONIOENCODING="utf-8"))
    assert proc.returncode == 0, proc.stderr
    assert b"RA201" in proc.stdout and b"\\ud800" in proc.stdout


# -- property-based guarantees --------------------------------------------------------------------

YAML_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\x85\u2028\u2029\ufeff"), max_size=40)


@given(title=YAML_TEXT, explanation=st.lists(YAML_TEXT, min_size=1, max_size=3).map("\n".join), comment=YAML_TEXT)
def test_fmt_is_idempotent_and_keeps_data(title, explanation, comment):
    doc = {"code": "RA105", "slug": "x", "title": title or "t", "explanation": explanation or "e", "triggers": [title or "t"]}
    buffer = io.StringIO()
    yaml().dump(doc, buffer)
    text = "# " + comment.replace("\n", " ") + "\n" + buffer.getvalue()
    once = formatted(text)
    assert formatted(once) == once
    assert plain(yaml().load(once)) == plain(yaml().load(text))


VALIDATED = [e for e in CATALOGUE.entries if not e.explain_only]
SMALL = {
    "int": st.integers(-3, 300),
    "float": st.floats(allow_nan=True, allow_infinity=True, width=32),
    "bool": st.booleans(),
    "str": st.sampled_from(["tanh", "soft_sign", "none", "pallas", "xla", "data", "model", "BlockSizes", "NoneType",
                            "Mesh", "bool", "int", "float32", "bfloat16", "int32", "list", ""]),
    "dtype": st.sampled_from(["float32", "bfloat16", "float16", "float64", "int32", "int8"]),
    "shape": st.lists(st.integers(0, 64), min_size=0, max_size=5).map(tuple),
}


@pytest.mark.parametrize("entry", VALIDATED, ids=lambda e: e.code)
def test_generated_validator_agrees_with_the_check_expression(entry):
    from errkit_attention import _validators

    function = _validators.CHECKS[entry.code]
    names = function.__code__.co_varnames[: function.__code__.co_argcount]

    @given(st.fixed_dictionaries({n: (st.none() | SMALL[entry.params[n].type]) if entry.params[n].optional else SMALL[entry.params[n].type]
                                  for n in names}))
    def agree(params):
        try:
            expected = ("holds" if expr.evaluate(entry.check, params) else "raises")
        except Exception as err:  # the expression itself fails on these values: so must the validator
            expected = type(err).__name__
        try:
            function(*(params[n] for n in names))
            got = "holds"
        except _validators.ERRORS[entry.code]:
            got = "raises"
        except Exception as err:
            got = type(err).__name__
        assert got == expected, params

    agree()

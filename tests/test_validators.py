"""The generated validators: every example behaves, exceptions carry code/params/link, files stay in sync."""

import ast
import importlib
import pickle
import shutil
from pathlib import Path

import pytest

from support import CATALOG, ROOT
from errkit import patterns
from errkit.generate import render_all
from errkit.load import load

CATALOGUE = load(CATALOG).catalogue
VALIDATED = [e for e in CATALOGUE.entries if not e.explain_only]
validators = importlib.import_module("kernel._validators")


def _cases(kind):
    for entry in VALIDATED:
        rows = entry.bad_examples if kind == "bad" else entry.good_examples
        for i, raw in enumerate(rows):
            yield pytest.param(entry, entry.typed(raw), id=f"{entry.code}-{kind}{i}")


def _call(entry, params):
    function = validators.CHECKS[entry.code]
    names = function.__code__.co_varnames[: function.__code__.co_argcount]
    return function(*(params[name] for name in names))


@pytest.mark.parametrize("entry, params", list(_cases("bad")))
def test_bad_example_raises_its_code_with_the_rendered_message(entry, params):
    with pytest.raises(validators.ERRORS[entry.code]) as info:
        _call(entry, params)
    error = info.value
    assert error.code == entry.code
    assert isinstance(error, __builtins__[entry.exception] if isinstance(__builtins__, dict) else getattr(__builtins__, entry.exception))
    assert str(error) == patterns.compile_wording(entry, 0).render(params)
    assert {k: error.params[k] for k in error.params} == {k: params[k] for k in error.params}
    assert any(entry.code in note and f"/errors/{entry.code}/" in note for note in error.__notes__)


@pytest.mark.parametrize("entry, params", list(_cases("good")))
def test_good_example_raises_nothing(entry, params):
    _call(entry, params)


def test_every_validated_entry_has_a_class_and_check():
    assert set(validators.ERRORS) == {e.code for e in VALIDATED}
    assert set(validators.CHECKS) == {e.code for e in VALIDATED}
    grouped = {code for group in CATALOGUE.settings.groups.values() for code in group.checks}
    assert grouped == {e.code for e in VALIDATED}


def test_docs_url_is_versioned_and_configurable(monkeypatch):
    entry = VALIDATED[0]
    error = validators.ERRORS[entry.code]("message", {})
    assert error.docs_url == f"{CATALOGUE.settings.docs_url}/{CATALOGUE.settings.version}/errors/{entry.code}/"
    monkeypatch.setenv("ERRKIT_DOCS_URL", "http://127.0.0.1:8000/")
    assert validators.ERRORS[entry.code]("m", {}).docs_url == f"http://127.0.0.1:8000/{CATALOGUE.settings.version}/errors/{entry.code}/"


def test_exceptions_pickle_round_trip():
    entry = VALIDATED[0]
    error = validators.ERRORS[entry.code]("the message", {"x": 1})
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and str(again) == "the message" and dict(again.params) == {"x": 1}


def test_generation_is_deterministic():
    assert render_all(CATALOGUE) == render_all(load(CATALOG).catalogue)


def test_generated_files_are_in_sync(run_cli):
    code, _, err = run_cli("--catalog", CATALOG, "generate", "--check")
    assert code == 0, err


def _project_copy(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(CATALOG, project / "catalog")
    for rel in render_all(CATALOGUE):
        target = project / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, target)
    return project


def test_check_fails_after_a_hand_edit_of_a_generated_file(tmp_path, run_cli):
    project = _project_copy(tmp_path)
    target = project / CATALOGUE.settings.validators
    target.write_text(target.read_text().replace("must", "should", 1))
    code, _, err = run_cli("--catalog", project / "catalog", "generate", "--check")
    assert code == 1
    assert f"stale: {CATALOGUE.settings.validators}" in err
    code, _, _ = run_cli("--catalog", project / "catalog", "generate")
    assert code == 0
    assert target.read_bytes() == (ROOT / CATALOGUE.settings.validators).read_bytes()


def test_a_failure_halfway_leaves_previous_files_intact(tmp_path, run_cli, monkeypatch):
    from errkit.generate import outputs

    project = _project_copy(tmp_path)
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    entry = project / "catalog" / "inputs" / "RA105-gqa-head-count.yaml"
    entry.write_text(entry.read_text().replace("title: Query heads", "title: Changed query heads"))
    before[entry] = entry.read_bytes()

    def exploding(catalogue):
        raise RuntimeError("template failed halfway")

    monkeypatch.setattr(outputs, "PRODUCERS", outputs.PRODUCERS + (exploding,))
    code, _, err = run_cli("--catalog", project / "catalog", "generate")
    assert code == 70 and "template failed halfway" in err
    after = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    assert after == before


def _kernel_sources():
    for path in sorted((ROOT / "kernel").rglob("*.py")):
        if path.name != "_validators.py":
            yield path


def test_kernel_has_no_hand_written_raise_or_assert():
    offenders = []
    for path in _kernel_sources():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Raise, ast.Assert)):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert not offenders, "kernel/ must raise only through the generated validators:\n" + "\n".join(offenders)


def test_the_kernel_scan_would_catch_a_raise(tmp_path):
    # the walker above is only worth something if it sees a raise where there is one
    sample = "def f(x):\n    if x:\n        raise ValueError('no')\n    assert x, 'msg'\n"
    kinds = [type(n).__name__ for n in ast.walk(ast.parse(sample)) if isinstance(n, (ast.Raise, ast.Assert))]
    assert sorted(kinds) == ["Assert", "Raise"]

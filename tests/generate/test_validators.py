"""The generated validators: every example behaves through check_<code> and through validate_<group>,
exceptions carry code/params/link, files stay in sync and do not depend on the hash seed."""

import ast
import importlib
import inspect
import itertools
import os
import pickle
import shutil
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from support import CATALOG, ROOT, bundled_catalogue, errkit_subprocess
from errkit.core import expr, values
from errkit.catalogue import wordings
from errkit.generate.outputs import render_all

CATALOGUE = bundled_catalogue()
VALIDATED = [e for e in CATALOGUE.entries if not e.explain_only]
validators = importlib.import_module("errkit_attention._validators")


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
    assert str(error) == wordings.compile_wording(entry, 0).render(params)
    assert {k: error.params[k] for k in error.params} == {k: params[k] for k in error.params}
    assert any(entry.code in note and f"/errors/{entry.code}/" in note for note in error.__notes__)


@pytest.mark.parametrize("entry, params", list(_cases("good")))
def test_good_example_raises_nothing(entry, params):
    _call(entry, params)


# -- the same examples and property through validate_<group>, which is what the kernel calls -------
#
# Examples are written in params (q_shape, has_bound, ...), not in the raw arguments a validate
# function reads them off. So each validate function is run as generated with only the right-hand
# side of its bindings swapped for a lookup of the param: its tests, their order and nesting, its
# raises and messages are the generated ones. (Bindings are exercised on real arrays in
# tests/kernel/test_validation.py.)

GROUPS = CATALOGUE.settings.groups.values()
GROUP_OF = {code: group for group in GROUPS for code in group.checks}
BY_CODE = {e.code: e for e in VALIDATED}


def _with_params(group):
    """validate_<group> with each `binding = ...` read from a trailing `params_` argument instead."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(getattr(validators, f"validate_{group.name}"))))
    function = tree.body[0]
    swapped = 0
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id in group.bindings:
            node.value = ast.Subscript(ast.Name("params_", ast.Load()), ast.Constant(node.targets[0].id), ast.Load())
            swapped += 1
    assert swapped or not group.bindings, f"validate_{group.name} binds nothing?"  # (a group may take its params as args)
    function.args.args.append(ast.arg("params_"))
    namespace = dict(vars(validators))  # the generated classes and helpers, not copies
    exec(compile(ast.fix_missing_locations(tree), validators.__file__, "exec"), namespace)
    return namespace[function.name]


VALIDATE = {group.name: _with_params(group) for group in GROUPS}


def _validate(group, params):
    """The outcome of validate_<group> on these params: None, the code raised, or another exception's class."""
    try:
        VALIDATE[group.name](*(params.get(arg) for arg in group.args), params)
    except validators.CatalogueError as err:
        return err.code, err
    except Exception as err:  # noqa: BLE001 - compared with what the catalogue expression does
        return type(err).__name__, err
    return None, None


def _verdict(entry, params):
    """What the catalogue says: True when `check` holds, else False or the exception it raises."""
    names = expr.check(entry.check, entry.params.keys()).names
    try:
        return bool(expr.evaluate(entry.check, {n: params[n] for n in names}))
    except Exception as err:  # noqa: BLE001
        return type(err).__name__


def _expected(group, params):
    """The first check of the group, in its order, that the catalogue says fails (None: all hold)."""
    for code in group.checks:
        verdict = _verdict(BY_CODE[code], params)
        if verdict is not True:
            return code if verdict is False else verdict
    return None


def _context(entry, params):
    """`params` laid over good examples of the group's other checks: the first combination of them
    that every other check passes, else the first that the checks before `entry`'s pass, else the first."""
    group = GROUP_OF[entry.code]
    others = [BY_CODE[code] for code in group.checks if code != entry.code]
    before = group.checks.index(entry.code)
    fallback = []
    for combination in itertools.product(*([e.typed(raw) for raw in e.good_examples] for e in others)):
        candidate = {k: v for good in combination for k, v in good.items()} | params
        passing = [_verdict(other, candidate) is True for other in others]
        if all(passing):
            return candidate
        fallback.append((not all(passing[:before]), candidate))
    return min(fallback, key=lambda f: f[0])[1] if fallback else dict(params)


@pytest.mark.parametrize("entry, params", list(_cases("bad")))
def test_bad_example_raises_its_code_through_its_validate_function(entry, params):
    group = GROUP_OF[entry.code]
    code, error = _validate(group, _context(entry, params))
    assert code == entry.code, f"validate_{group.name}: {code}: {error}"
    with pytest.raises(validators.ERRORS[entry.code]) as direct:
        _call(entry, params)
    assert str(error) == str(direct.value) and dict(error.params) == dict(direct.value.params)


@pytest.mark.parametrize("entry, params", list(_cases("good")))
def test_good_example_passes_its_validate_function(entry, params):
    group = GROUP_OF[entry.code]
    code, error = _validate(group, _context(entry, params))
    assert code is None, f"validate_{group.name}: {code}: {error}"


def _both_failing():
    """For each two checks of a group, the first pair of their bad examples that, together, fail both."""
    for group in GROUPS:
        for i, code in enumerate(group.checks):
            first = BY_CODE[code]
            for later in map(BY_CODE.get, group.checks[i + 1:]):
                for a, b in itertools.product(first.bad_examples, later.bad_examples):
                    params = first.typed(a) | later.typed(b)
                    if _verdict(first, params) is False and _verdict(later, params) is False:
                        yield pytest.param(first, params, id=f"{first.code}-before-{later.code}")
                        break


@pytest.mark.parametrize("first, params", list(_both_failing()))
def test_validate_function_raises_the_first_failing_check_in_group_order(first, params):
    group = GROUP_OF[first.code]
    params = _context(first, params)
    assert _expected(group, params) == first.code  # the checks before it pass
    code, error = _validate(group, params)
    assert code == first.code, f"validate_{group.name}: {code}: {error}"


def _seen(name):
    """Every value `name` takes in any example of the catalogue: the boundaries its authors chose."""
    return [v for e in VALIDATED for rows in (e.bad_examples, e.good_examples) for raw in rows
            for n, v in e.typed(raw).items() if n == name]


ANY = {
    "int": st.integers(-3, 2048),
    "float": st.floats(allow_nan=True, allow_infinity=True),
    "bool": st.booleans(),
    "str": st.text(max_size=3),
    "dtype": st.sampled_from(values.DTYPE_NAMES),
    "shape": st.lists(st.integers(0, 9), max_size=5).map(tuple),
}


@pytest.mark.parametrize("entry", VALIDATED, ids=lambda e: e.code)
def test_validate_function_agrees_with_the_check_expressions(entry):
    """validate_<group> raises the first check of its group that the catalogue says fails, or none,
    with the entry's params drawn (from every value the catalogue's examples give them, or any value
    of their type) and the rest of the group passing by its own good examples."""
    group = GROUP_OF[entry.code]
    names = inspect.signature(validators.CHECKS[entry.code]).parameters  # what the check and its message read
    draws = {n: st.sampled_from(_seen(n) or [None]) | ANY[entry.params[n].type]
             | (st.none() if entry.params[n].optional else st.nothing()) for n in names}

    @given(st.fixed_dictionaries(draws))
    def agree(drawn):
        params = _context(entry, drawn)
        assert _validate(group, params)[0] == _expected(group, params), params

    agree()


def test_every_validated_entry_has_a_class_and_check():
    assert set(validators.ERRORS) == {e.code for e in VALIDATED}
    assert set(validators.CHECKS) == {e.code for e in VALIDATED}
    grouped = {code for group in CATALOGUE.settings.groups.values() for code in group.checks}
    assert grouped == {e.code for e in VALIDATED}


def test_docs_url_is_versioned_and_configurable(monkeypatch):
    entry = VALIDATED[0]
    error = validators.ERRORS[entry.code]("message", {})
    assert error.docs_url == f"{CATALOGUE.settings.docs_url}/{CATALOGUE.settings.version}/errors/{entry.code}/"
    monkeypatch.setenv("ERRKIT_DOCS_URL", "http://127.0.0.1:9999/")  # the old process-wide name: no effect now
    assert validators.ERRORS[entry.code]("m", {}).docs_url == error.docs_url
    monkeypatch.setenv("ERRKIT_DOCS_URL_ERRKIT", "http://127.0.0.1:8000/")  # this catalogue's (project errkit)
    assert validators.ERRORS[entry.code]("m", {}).docs_url == f"http://127.0.0.1:8000/{CATALOGUE.settings.version}/errors/{entry.code}/"


def test_exceptions_pickle_round_trip():
    entry = VALIDATED[0]
    error = validators.ERRORS[entry.code]("the message", {"x": 1})
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and str(again) == "the message" and dict(again.params) == {"x": 1}


def test_generation_is_deterministic_across_hash_seeds(tmp_path):
    """Two `errkit generate` processes with different PYTHONHASHSEED (so a different order of every
    set of strings) write byte-identical files, the same files this process renders."""
    expected = render_all(CATALOGUE)

    def generate(seed):
        project = tmp_path / seed
        shutil.copytree(CATALOG, project / "catalog")
        for rel in expected:
            (project / rel).unlink(missing_ok=True)  # catalog/entry.schema.json is an output too
        proc = errkit_subprocess("--catalog", project / "catalog", "generate", env=dict(os.environ, PYTHONHASHSEED=seed))
        assert proc.returncode == 0, proc.stderr.decode()
        return {rel: (project / rel).read_bytes() for rel in expected}

    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(generate, ["0", "12345"])
    assert len(expected) > 100
    assert sorted(rel for rel in expected if first[rel] != second[rel]) == []
    assert sorted(rel for rel in expected if first[rel] != expected[rel]) == []


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
    for path in sorted((ROOT / "errkit_attention").rglob("*.py")):
        if path.name != "_validators.py":
            yield path


def test_kernel_has_no_hand_written_raise_or_assert():
    offenders = []
    for path in _kernel_sources():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Raise, ast.Assert)):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert not offenders, "errkit_attention/ must raise only through the generated validators:\n" + "\n".join(offenders)


def test_the_kernel_scan_would_catch_a_raise(tmp_path):
    # the walker above is only worth something if it sees a raise where there is one
    sample = "def f(x):\n    if x:\n        raise ValueError('no')\n    assert x, 'msg'\n"
    kinds = [type(n).__name__ for n in ast.walk(ast.parse(sample)) if isinstance(n, (ast.Raise, ast.Assert))]
    assert sorted(kinds) == ["Assert", "Raise"]


# -- traced: checkify: value checks on traced arrays ----------------------------------------------

TRACED = [e for e in VALIDATED if e.traced == "checkify"]


def test_the_bound_value_checks_are_traced():
    assert {e.code for e in TRACED} >= {"RA305", "RA306"}


@pytest.mark.parametrize("entry", TRACED, ids=lambda e: e.code)
def test_a_traced_check_has_the_code_and_message_of_its_validator(entry):
    """The checkify template, formatted with a bad example's values, is `[code] ` + the message the
    validator raises for them; the generated checkify function stages exactly that template."""
    from errkit.generate import validators as gen

    template = gen.format_template(gen.check_code(entry))
    group = next(g for g in CATALOGUE.settings.groups.values() if entry.code in g.checks)
    source = inspect.getsource(getattr(validators, f"checkify_{group.name}"))
    assert repr(template) in source
    for raw in entry.bad_examples:
        params = entry.typed(raw)
        args = [params[p] for p in inspect.signature(validators.CHECKS[entry.code]).parameters]
        with pytest.raises(validators.ERRORS[entry.code]) as info:
            validators.CHECKS[entry.code](*args)
        assert template.format(**params) == f"[{entry.code}] {info.value}"


@pytest.mark.parametrize("failing, predicate", [
    ("not (bound_min >= 0)", "bound_min >= 0"),
    ("has_bound", "_tr_not(has_bound)"),
    ("not (0 <= x <= 5)", "_tr_and(0 <= x, x <= 5)"),
    ("not (a > 0 and (b < 1 or not c))", "_tr_and(a > 0, _tr_or(b < 1, _tr_not(c)))"),
])
def test_traced_predicates_use_jnp_logic(failing, predicate):
    from errkit.generate.validators import traced_predicate

    assert traced_predicate(failing) == predicate


def test_a_traced_message_may_show_only_traced_values():
    import dataclasses

    from errkit.generate import validators as gen

    entry = next(e for e in TRACED if e.code == "RA305")
    shows_has_bound = dataclasses.replace(entry, message="bound must be >= 0 ({has_bound}), got {bound_min}")
    group = next(g for g in CATALOGUE.settings.groups.values() if entry.code in g.checks)
    with pytest.raises(ValueError, match="traced values only"):
        gen.traced_steps(group, [gen.check_code(shows_has_bound)])


@pytest.mark.parametrize("n, valid", [
    (2**61 - 1, [1, 2**61 - 1]),  # a prime past the old walk's 10**12, whose note said nothing
    (4294967279 * 4294967291, [1, 4294967279, 4294967291, 4294967279 * 4294967291]),
])
def test_the_kernels_note_factors_large_head_counts(n, valid):
    """The kernel's own divisors (helpers.divisors carried into errkit_attention/_validators.py) on a large
    prime and a product of two large primes: the raise's note names the valid values."""
    from errkit.core.helpers import divisors

    assert validators._fx_divisors(n) == divisors(n) == valid
    with pytest.raises(ValueError) as raised:
        validators.check_ra105(n, 8 if n % 8 else 3)
    (note,) = raised.value.__notes__
    assert f"valid num_kv_heads: {', '.join(map(str, valid))} - see" in note, note

"""Generated validators need only the standard library: imported in a child Python (`-I -S`, so no
site-packages) that refuses errkit, ruamel, jinja2, re2, numpy and jax, they still raise their
catalogued exceptions with the same message, `.code`, `.params` and docs note. The docs URL
override is per catalogue. And errkit/generate/carry.py, which copies the helpers, copies exactly
what they use and refuses what it cannot copy faithfully."""

import importlib.util
import json
import os
import pickle
import re
import subprocess
import sys
import textwrap

import pytest

from support import bundled_catalogue, errkit_subprocess
from errkit.core.index_format import NOTE
from errkit.explain.matching.index import Index
from errkit.catalogue import wordings
from errkit.core import runtime
from errkit.core import suggest
from errkit.explain.render import first_suggestion
from errkit.core.runtime import query_string
from errkit.generate.carry import carry
from errkit.generate.validators import validators

CATALOGUE = bundled_catalogue()
INDEX = Index.load()
VALIDATED = [e for e in CATALOGUE.entries if not e.explain_only]
BY_CODE = {e.code: e for e in VALIDATED}

# Run first in the child: refuse every third-party package a generated module could reach for.
PRELUDE = """
import importlib.abc, json, sys
BLOCKED = {"errkit", "ruamel", "jinja2", "re2", "numpy", "jax", "yaml", "kernel"}
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"refused by the test: {name}")
        return None
sys.meta_path.insert(0, Refuse())
sys.path[:0] = DIRS
def outside_stdlib(own):
    return sorted(m for m in sys.modules if m.split(".")[0] not in sys.stdlib_module_names and m not in own | {"__main__"})
class Array:  # duck-typed like a jax or numpy array: `.shape` and `.dtype` on the class
    shape = ()
    dtype = "float32"
    def __init__(self, shape, dtype="float32"):
        self.shape, self.dtype = shape, dtype
def outcome(call):
    try:
        call()
    except Exception as err:
        return {"class": type(err).__name__, "builtins": [c.__name__ for c in type(err).__mro__ if c.__module__ == "builtins"],
                "message": str(err), "code": getattr(err, "code", None), "params": {k: repr(x) for k, x in getattr(err, "params", {}).items()},
                "notes": getattr(err, "__notes__", []), "catalogued": isinstance(err, sys.modules[type(err).__module__].CatalogueError)}
    return None
"""


def isolated(script: str, dirs, env_extra=None, stdin=b""):
    """Run `script` (after PRELUDE) in `python -I -S`; its stdout's last line, parsed as JSON."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ERRKIT_DOCS_URL")}
    env.update(env_extra or {})
    source = f"DIRS = {[str(d) for d in dirs]!r}\n" + PRELUDE + textwrap.dedent(script)
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", source], input=stdin, capture_output=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout.decode().splitlines()[-1])


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    """This repository's generated validators, as `errkit generate` renders them, as module ra_validators."""
    folder = tmp_path_factory.mktemp("ours")
    (text,) = validators(CATALOGUE).values()
    (folder / "ra_validators.py").write_text(text, encoding="utf-8")
    return folder


OTHER_SETTINGS = """\
project: Other-Lib 2
version: "2.0"
docs_url: https://other.example/docs
validators: otherlib/_validators.py
retired: []
groups:
  widgets:
    description: A widget's size and count.
    args: [widget, count]
    bindings:
      size: dim(widget, 0)
    checks: [RA101, RA102]
"""

OTHER_ENTRY = """\
code: {code}
slug: {slug}
title: {title}
exception: ValueError
message: "{message}"
params:
  {param}:
    type: int
    description: The widget's {param}.
check: {check}
explanation: |
  Widgets have a positive size and come in powers of two.
triggers:
  - A widget built from an empty list.
fixes:
  - summary: Pass a valid {param}.
tags: [widgets]
examples:
  bad:
    - {{{param}: {bad}}}
  good:
    - {{{param}: {good}}}
"""


@pytest.fixture(scope="module")
def other(tmp_path_factory):
    """A second, small catalogue of another project, generated with the real `errkit generate`."""
    project = tmp_path_factory.mktemp("other")
    (project / "catalog" / "widgets").mkdir(parents=True)
    (project / "catalog" / "errkit.yaml").write_text(OTHER_SETTINGS, encoding="utf-8")
    for code, slug, title, message, param, check, bad, good in (
        ("RA101", "size-not-positive", "size is not positive", "size must be positive, got {size!r}", "size", "size > 0", 0, 3),
        ("RA102", "count-not-power-of-two", "count is not a power of two", "count must be a power of two, got {count}",
         "count", "is_power_of_two(count)", 3, 4),
    ):
        (project / "catalog" / "widgets" / f"{code}-{slug}.yaml").write_text(OTHER_ENTRY.format(
            code=code, slug=slug, title=title, message=message, param=param, check=check, bad=bad, good=good), encoding="utf-8")
    proc = errkit_subprocess("--catalog", "catalog", "generate", cwd=project)
    assert proc.returncode == 0, proc.stderr.decode()
    assert (project / "otherlib" / "_validators.py").is_file()
    return project


def test_generated_module_imports_only_the_standard_library(ours, other):
    found = isolated("""
        import ra_validators, otherlib._validators
        print(json.dumps(outside_stdlib({"ra_validators", "otherlib", "otherlib._validators"})))
    """, [ours, other])
    assert found == []


def test_every_example_behaves_without_errkit(ours):
    """Every bad example raises its class (a subclass of its builtin and of the module's
    CatalogueError) with the catalogue's message, .code, .params and the note explain parses; every
    good example raises nothing."""
    cases = [(e.code, e.typed(raw), kind) for e in VALIDATED for kind in ("bad", "good")
             for raw in (e.bad_examples if kind == "bad" else e.good_examples)]
    results = isolated("""
        import pickle
        import ra_validators as v
        out = []
        for code, params, kind in pickle.loads(sys.stdin.buffer.read()):
            check = v.CHECKS[code]
            args = [params[n] for n in check.__code__.co_varnames[: check.__code__.co_argcount]]
            out.append(outcome(lambda: check(*args)))
        print(json.dumps(out))
    """, [ours], stdin=pickle.dumps([(code, params, kind) for code, params, kind in cases]))
    assert len(results) == len(cases) > 100
    hinted = 0
    for (code, params, kind), got in zip(cases, results):
        if kind == "good":
            assert got is None, (code, params, got)
            continue
        entry = BY_CODE[code]
        assert got["class"] == entry.class_name and got["code"] == code and got["catalogued"], got
        assert entry.exception in got["builtins"], got
        assert got["message"] == wordings.compile_wording(entry, 0).render(params)
        assert got["params"] == {k: repr(params[k]) for k in got["params"]} and got["params"], got
        # the note: the first suggestion explain's evaluator computes from the raised values (the
        # generated module's own compiled copy must agree), the page with the values
        raised = {k: params[k] for k in got["params"]}
        fixes = [{"suggestions": suggest.suggestions(fix, raised, kernel=INDEX.entries[code]["kernel"])}  # our kernel raised it
                     for fix in INDEX.entries[code]["fixes"]]
        hint = first_suggestion({"fixes": fixes})
        link = CATALOGUE.settings.page_url(code) + "?" + query_string(raised)
        assert got["notes"] == [f"[{code}] {entry.title}" + (f" - {hint}" if hint else "") + f" - see {link}"]
        assert NOTE.search(got["notes"][0])["code"] == code
        hinted += hint is not None
    assert hinted >= 41, "the bad examples whose entry computes a fix from the raised values carry it in their note"


def test_validate_functions_read_duck_typed_arrays_without_errkit(ours, other):
    """The carried binding helpers (is_array, shape, dim, dtype_name) work on an array-like object."""
    results = isolated("""
        import ra_validators as v, otherlib._validators as w
        print(json.dumps([
            outcome(lambda: v.validate_options("bogus", None, 30.0, "tanh", False, "bshd")),
            outcome(lambda: v.validate_qkv(Array((2, 8, 4, 64)), Array((2, 8, 2, 32)), Array((2, 8, 2, 32)), "xla", "bshd")),
            outcome(lambda: v.validate_qkv(Array((2, 8, 4, 64)), Array((2, 8, 2, 64)), Array((2, 8, 2, 64)), "xla", "bshd")),
            outcome(lambda: w.validate_widgets(Array((0, 4)), 4)),
            outcome(lambda: w.validate_widgets("not an array", 4)),
            outcome(lambda: w.validate_widgets(Array((2,)), 3)),
            outcome(lambda: w.validate_widgets(Array((2,)), 4)),
        ]))
    """, [ours, other])
    implementation, head_dim, fine, empty, not_array, count, widget_fine = results
    assert (implementation["code"], implementation["class"]) == ("RA201", BY_CODE["RA201"].class_name)
    assert implementation["message"] == wordings.compile_wording(BY_CODE["RA201"], 0).render({"implementation": "bogus"})
    assert head_dim["code"] == "RA102"
    assert head_dim["message"] == "k must share q's batch and head_dim: q_shape=(2, 8, 4, 64), k_shape=(2, 8, 2, 32)"
    assert fine is None and widget_fine is None
    assert (empty["class"], empty["message"], empty["params"]) == ("SizeNotPositiveError", "size must be positive, got 0", {"size": "0"})
    assert not_array["message"] == "size must be positive, got -1"  # dim() of a non-array
    assert (count["code"], count["message"]) == ("RA102", "count must be a power of two, got 3")
    assert count["notes"] == ["[RA102] count is not a power of two - see https://other.example/docs/2.0/errors/RA102/?count=3"]


def _notes(ours, other, env):
    return isolated("""
        import pickle
        import ra_validators as v, otherlib._validators as w
        a = outcome(lambda: v.validate_options("bogus", None, 30.0, "tanh", False, "bshd"))
        b = outcome(lambda: w.validate_widgets(Array((2,)), 3))
        again = pickle.loads(pickle.dumps(w.ERRORS["RA102"]("m", {"count": 3})))
        print(json.dumps([a["notes"][0], b["notes"][0], again.__notes__[0], w.DOCS_URL_ENV]))
    """, [ours, other], env)


def test_docs_url_override_is_per_catalogue(ours, other):
    hint = ""  # 'bogus' is close to no valid implementation: no computed fix to show
    ours_default = f"[RA201] {BY_CODE['RA201'].title}{hint} - see {CATALOGUE.settings.page_url('RA201')}?implementation=bogus"
    other_default = "[RA102] count is not a power of two - see https://other.example/docs/2.0/errors/RA102/?count=3"
    other_local = "[RA102] count is not a power of two - see http://127.0.0.1:8000/2.0/errors/RA102/?count=3"
    assert _notes(ours, other, {}) == [ours_default, other_default, other_default, "ERRKIT_DOCS_URL_OTHER_LIB_2"]
    # the other project's variable moves only its links; the old process-wide name moves nothing
    assert _notes(ours, other, {"ERRKIT_DOCS_URL_OTHER_LIB_2": "http://127.0.0.1:8000/", "ERRKIT_DOCS_URL": "http://x.invalid/"}) == [
        ours_default, other_local, other_local, "ERRKIT_DOCS_URL_OTHER_LIB_2"]
    ours_local = (f"[RA201] {BY_CODE['RA201'].title}{hint} - see http://127.0.0.1:8000/{CATALOGUE.settings.version}"
                  "/errors/RA201/?implementation=bogus")
    assert _notes(ours, other, {"ERRKIT_DOCS_URL_ERRKIT": "http://127.0.0.1:8000"}) == [
        ours_local, other_default, other_default, "ERRKIT_DOCS_URL_OTHER_LIB_2"]


def test_docs_url_variable_name():
    assert runtime.docs_url_variable("errkit") == "ERRKIT_DOCS_URL_ERRKIT"
    assert runtime.docs_url_variable("my-lib.v2") == "ERRKIT_DOCS_URL_MY_LIB_V2"


def test_generated_text_names_its_project(ours, other):
    text = (other / "otherlib" / "_validators.py").read_text(encoding="utf-8")
    assert '"""Input validators of Other-Lib 2, generated from its errkit catalogue.' in text
    assert "ERRKIT_DOCS_URL_OTHER_LIB_2" in text
    assert "ranker" not in text.lower() and not re.search(r"^\s*(import|from) errkit", text, re.M)
    assert "Input validators of errkit," in (ours / "ra_validators.py").read_text(encoding="utf-8")


# -- errkit/generate/carry.py -------------------------------------------------------------------


def _defined(source: str) -> set[str]:
    """The top-level names the source defines."""
    return {a or b for a, b in re.findall(r"^(?:def|class) (\w+)|^(\w+)\s*[:=]", source, re.M)}


def test_carry_copies_the_closure_and_nothing_more():
    carried = carry(runtime, ["concrete_min"], "_rt_")
    assert _defined(carried.source) == {"_rt_concrete_min", "_rt__concrete", "_rt_is_array", "_rt__ARRAY_TYPES", "_rt__numpy",
                                        "_rt__last_read", "_rt__FEW"}
    assert carried.imports == ()  # numpy is imported inside _concrete, when an array is read
    namespace = {}
    exec(compile(carried.source, "<carried>", "exec"), namespace)  # noqa: S102 - our own helpers
    assert namespace["_rt_concrete_min"](None) is None and namespace["_rt_concrete_min"]("not an array") is None
    assert carry(runtime, [], "_rt_").source == ""


def _probe(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_carry_refuses_what_it_cannot_copy_faithfully(tmp_path):
    third_party = _probe(tmp_path, "probe_third_party", """
        import json
        import pytest

        def uses_json(x):
            return json.dumps(x)

        def uses_pytest():
            return pytest.fail
    """)
    assert carry(third_party, ["uses_json"], "_p_").imports == ("import json as _p_json",)
    with pytest.raises(ValueError, match="not the standard library"):
        carry(third_party, ["uses_pytest"], "_p_")
    shadowing = _probe(tmp_path, "probe_shadowing", """
        def helper(x):
            return x

        def caller(helper):
            return helper(1)
    """)
    with pytest.raises(ValueError, match=r"binds \['helper'\] locally"):
        carry(shadowing, ["caller"], "_p_")


def test_carry_renames_what_the_tree_says_and_keeps_the_text(tmp_path):
    """Only names that refer to the module's definitions are renamed (not attributes, keywords,
    strings or comments), at the tree's byte offsets (a non-ASCII character earlier on the line)."""
    probe = _probe(tmp_path, "probe_rename", """
        import math

        LIMIT = 3  # the LIMIT


        def helper(obj, **kw):
            return obj


        def uses(obj):
            \"\"\"LIMIT and helper, in words.\"\"\"
            global LIMIT
            return helper(obj.LIMIT, LIMIT=1), "±é LIMIT", f"±é {LIMIT}", math.pi
    """)
    assert carry(probe, ["uses"], "_p_").source == textwrap.dedent("""\
        _p_LIMIT = 3  # the LIMIT


        def _p_helper(obj, **kw):
            return obj


        def _p_uses(obj):
            \"\"\"LIMIT and helper, in words.\"\"\"
            global _p_LIMIT
            return _p_helper(obj.LIMIT, LIMIT=1), "±é LIMIT", f"±é {_p_LIMIT}", _p_math.pi""")

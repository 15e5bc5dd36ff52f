"""Every expression and template of a catalogue is vetted once, when it is loaded
(errkit/catalogue/vetting.py): lint and every generator read the verdict the model carries."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from errkit.catalogue import kernels, lint
from errkit.catalogue.load import load
from errkit.catalogue.vetting import Verdicts
from errkit.core import expr, template
from errkit.generate.outputs import render_all
from support import CATALOG, FIXTURES, ROOT


def test_errkit_vets_expressions_in_one_place():
    """Outside errkit/core/expr.py, only vetting.vet calls expr.check."""
    callers = []
    for path in sorted((ROOT / "errkit").rglob("*.py")):
        if path.name == "expr.py" and path.parent.name == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "check" \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "expr":
                callers.append(str(path.relative_to(ROOT)))
    assert callers == ["errkit/catalogue/vetting.py"]


@pytest.mark.parametrize("catalogue", [CATALOG, FIXTURES / "kernels"], ids=["bundled", "kernels"])
def test_lint_and_the_generators_read_the_verdicts_of_load(catalogue, monkeypatch):
    """Loading vets each expression once; lint vets nothing more; generating everything vets only
    the suggestions solved for the kernels' rules (solved when first asked for, not at load: lint
    never reads them), each once."""
    vetted, parsed = [], []
    original_check, original_parse = expr.check, template.parse
    monkeypatch.setattr(expr, "check", lambda source, *a, **k: vetted.append(source) or original_check(source, *a, **k))
    monkeypatch.setattr(template, "parse", lambda text, *a, **k: parsed.append(text) or original_parse(text, *a, **k))
    loaded = load(catalogue)
    assert vetted and len(vetted) == len(loaded.verdicts._expressions)  # each once
    at_load = len(vetted)
    vetted.clear()
    findings = [f for f in lint.run(loaded) if f.severity == "error"]
    assert findings == []
    assert vetted == [], "lint reads the verdicts of load"
    solved = set()  # solving vets what it reads and writes, in the table
    for entry in loaded.entries:
        for only in (None, entry.kernel or ""):
            for fix in kernels.solutions(entry, loaded.kernels, only):
                solved |= set(fix["suggest"].values()) | {s for case in fix["cases"] for s in case["suggest"].values()}
    solving = len(vetted)
    render_all(loaded.catalogue)  # then the generators vet no more than the solutions, in their scopes
    assert set(vetted[solving:]) <= solved, set(vetted[solving:]) - solved
    after = sum(1 for key in loaded.verdicts._expressions if key[0] != "compiled")
    assert len(vetted) == after - at_load, "each vetted once"


def test_a_refused_expression_is_refused_from_the_verdict_alone():
    verdicts = Verdicts()
    assert verdicts.refusal("x +", ["x"]).rule == "bad-expression"
    with pytest.raises(expr.ExprError):
        verdicts.expression("x +", ["x"])
    assert verdicts.expression("x + 1", ["x"]).names == {"x"}
    assert verdicts.refusal("y", ["x"]).rule == "unknown-name"  # the scope is part of the verdict
    assert verdicts.expression("y", ["y"]).names == {"y"}
    assert verdicts.refused_template("{x") is not None and verdicts.template("a {x}").fields[0].name == "x"


def test_the_catalogue_its_entries_and_kernels_share_one_table():
    loaded = load(FIXTURES / "kernels")
    tables = {id(loaded.catalogue.verdicts)} | {id(e.verdicts) for e in loaded.entries} | {id(k.verdicts) for k in loaded.kernels.values()}
    assert tables == {id(loaded.verdicts)}

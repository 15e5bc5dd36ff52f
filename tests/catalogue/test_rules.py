"""The lint rules' registry (errkit/catalogue/rules.py): every rule name errkit reports is registered
and decided where the registry says; each rule's fixture breaks it; the README's list is the registry's."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest

from errkit.catalogue import entry_rules, lint, rules
from errkit.catalogue.load import load
from errkit.catalogue.model import Finding
from errkit.core import UsageError
from errkit.generate import readme
from support import FIXTURES, ROOT

PACKAGE = ROOT / "errkit"

# The calls that carry a rule name, and the position of that argument (or its keyword, `rule`).
RULE_ARGUMENT = {"Finding": 3, "Problem": 1, "ExprError": 0, "WordingError": 0}
LINT_HELPERS = {"at": 2, "finding": 1}  # lint's own constructors of Findings (entry_rules.at, lint.groups' finding)
LINT_MODULES = ("catalogue.lint", "catalogue.entry_rules")


def _callee(call: ast.Call) -> str | None:
    return call.func.id if isinstance(call.func, ast.Name) else call.func.attr if isinstance(call.func, ast.Attribute) else None


def _rule_argument(call: ast.Call, position: int) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == "rule":
            return kw.value
    return call.args[position] if len(call.args) > position else None


def _written(arg: ast.expr) -> list[str]:
    """The rule names an argument writes: a string, or either branch of `a if cond else b`."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    if isinstance(arg, ast.IfExp):
        return _written(arg.body) + _written(arg.orelse)
    return []


def rule_names_in_source() -> tuple[list[tuple[str, str, str, int]], list[str]]:
    """(rule name, "module.function" that decides it, file, line) for every rule name written as the
    rule of a Finding, Problem, ExprError or WordingError anywhere in errkit/. A rule argument that
    writes no name is a relay (`err.rule`, `p.rule`: decided where the error was made) or the pass-through
    parameter of lint's `at` and `finding`; anything else is returned as unreadable (file:line)."""
    found, unreadable = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        module = ".".join(rel.with_suffix("").parts)
        calls = dict(RULE_ARGUMENT, **(LINT_HELPERS if module in LINT_MODULES else {}))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for top in tree.body:
            owner = top.name if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else "<module>"
            passing_through = set()  # functions whose parameter `rule` is passed on: their callers are scanned
            for node in ast.walk(top):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in calls and module in LINT_MODULES:
                    passing_through.add(node)
            for node in ast.walk(top):
                if not (isinstance(node, ast.Call) and _callee(node) in calls):
                    continue
                arg = _rule_argument(node, calls[_callee(node)])
                if arg is None:
                    continue
                names = _written(arg)
                if names:
                    found += [(name, f"{module}.{owner}", str(rel), node.lineno) for name in names]
                    continue
                relay = isinstance(arg, ast.Attribute) and arg.attr == "rule"
                passed_on = isinstance(arg, ast.Name) and arg.id == "rule" and any(
                    node in ast.walk(fn) for fn in passing_through)
                if not (relay or passed_on):
                    unreadable.append(f"errkit/{rel}:{node.lineno}")
    return found, unreadable


SOURCE, UNREADABLE = rule_names_in_source()


def test_every_rule_name_is_written_where_it_is_decided():
    assert UNREADABLE == [], "write the rule's name in the call (a string, or `a if cond else b`)"


def test_the_scan_sees_the_rules_of_every_module_that_reports_them():
    modules = {where.rpartition(".")[0] for _, where, _, _ in SOURCE}
    assert {"catalogue.lint", "catalogue.entry_rules", "catalogue.load", "catalogue.spec", "catalogue.wordings", "catalogue.kernels",
            "core.expr"} <= modules
    assert len(SOURCE) > 60


def test_every_rule_name_written_in_errkit_is_registered():
    unknown = [f"errkit/{file}:{line}: {name}" for name, _, file, line in SOURCE if name not in rules.BY_NAME]
    assert unknown == [], "register these in errkit/catalogue/rules.py"


def test_each_rule_is_decided_where_the_registry_says():
    decided: dict[str, set[str]] = {}
    for name, where, _, _ in SOURCE:
        decided.setdefault(name, set()).add(where)
    wrong = {rule.name: (sorted(rule.reported_by), sorted(decided.get(rule.name, ())))
             for rule in rules.RULES if set(rule.reported_by) != decided.get(rule.name, set())}
    assert wrong == {}, "rule: (the registry's reported_by, where the source decides it)"


def test_the_registry_is_well_formed():
    names = [rule.name for rule in rules.RULES]
    assert len(names) == len(set(names)) == len(rules.BY_NAME)
    for rule in rules.RULES:
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.name), rule.name
        assert rule.summary and "\n" not in rule.summary and not rule.summary.endswith("."), rule.name
        assert all(callable(check) for check in rule.checks), rule.name


def test_a_finding_of_an_unregistered_rule_is_refused():
    assert rules.known("unknown-kernel") == "unknown-kernel"
    with pytest.raises(ValueError, match="no-such-rule"):
        Finding("area/XX101-first.yaml", 1, 1, "no-such-rule", "a rule nobody registered")


# -- one small broken fixture per rule ------------------------------------------------------------

FIXTURE_FOLDERS = sorted(p.parent for p in FIXTURES.glob("*/*/expect.txt"))


def lint_fixture(fixture: Path, run_cli) -> tuple[int, str]:
    """`errkit lint --json` as an author runs it there: in a project folder (a pyproject.toml naming
    the catalogue) with no path, else on the fixture folder itself."""
    args = ("lint", "--json") if (fixture / "pyproject.toml").is_file() else ("lint", "--json", ".")
    code, out, _ = run_cli(*args, cwd=fixture)
    return code, out


def expected(fixture: Path) -> tuple[str, str]:
    location, rule = (fixture / "expect.txt").read_text().strip().rsplit(": ", 1)  # "file:line: rule"
    return location, rule


def test_every_rule_names_a_fixture_that_expects_it():
    by_fixture = {str(p.relative_to(FIXTURES)): expected(p)[1] for p in FIXTURE_FOLDERS}
    wrong = {rule.name: by_fixture.get(rule.fixture) for rule in rules.RULES
             if rule.fixture is not None and by_fixture.get(rule.fixture) != rule.name}
    assert wrong == {}, "rule: what its fixture's expect.txt names (None: no such fixture)"
    # No catalogue is meant to reach a failing check: tests/catalogue/test_lint_never_crashes.py plants one
    assert [rule.name for rule in rules.RULES if rule.fixture is None] == ["internal-lint-error"]


@pytest.mark.parametrize("fixture", FIXTURE_FOLDERS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_each_fixture_is_reported_with_its_rule_at_its_line(fixture: Path, run_cli):
    location, rule = expected(fixture)
    assert rule in rules.BY_NAME
    code, out = lint_fixture(fixture, run_cli)
    found = [json.loads(line) for line in out.splitlines()]
    assert code == 1, out
    assert {f["rule"] for f in found} <= set(rules.BY_NAME)
    assert [f for f in found if f"{f['path']}:{f['line']}" == location and f["rule"] == rule], out


# -- the rules read what they are given, not a module global ----------------------------------------

def test_entry_rules_read_the_kernels_they_are_given():
    entry = load(FIXTURES / "lint" / "unknown-kernel").entries[0]
    tiles = load(FIXTURES / "kernels").kernels["tiles"]
    assert [f.rule for f in entry_rules.kernel_use(entry, entry_rules.Context(kernels={}))] == ["unknown-kernel"]
    assert list(entry_rules.kernel_use(entry, entry_rules.Context(kernels={"tiles": tiles}))) == []
    assert [f.rule for f in entry_rules.kernel_use(entry, entry_rules.Context(kernels={}))] == ["unknown-kernel"]  # nothing left behind
    for module in (lint, entry_rules):
        assert not [name for name, value in vars(module).items() if isinstance(value, (dict, list, set)) and not name.startswith("__")]


# -- the README's list -----------------------------------------------------------------------------

def test_the_sites_list_of_rules_is_the_registry():
    text = (ROOT / "site" / "docs" / "guide" / "writing-entries.md").read_text(encoding="utf-8")
    assert text.count(readme.START) == text.count(readme.END) == 1
    block = text.partition(readme.START)[2].partition(readme.END)[0]
    assert block == "\n" + readme.lint_rules() + "\n", "run `errkit generate`"
    listed = re.findall(r"^\| `([a-z-]+)` \|", block, re.M)
    assert listed == [rule.name for rule in rules.RULES]


def test_only_a_readme_with_the_markers_gets_the_block(tmp_path):
    assert readme.blocks(tmp_path) == {}
    (tmp_path / "README.md").write_text("# A project\n\nNo list here.\n")
    assert readme.blocks(tmp_path) == {}
    (tmp_path / "README.md").write_bytes(f"# A project\r\n\r\n{readme.START}\r\nold\r\n{readme.END}\r\nafter\r\n".encode())
    written = readme.blocks(tmp_path)[Path("README.md")].decode()
    assert written == f"# A project\r\n\r\n{readme.START}\n{readme.lint_rules()}\n{readme.END}\r\nafter\r\n"
    (tmp_path / "README.md").write_text(f"{readme.START}\nno end\n")
    with pytest.raises(UsageError, match="lint-rules:end"):
        readme.blocks(tmp_path)


def test_a_hand_written_site_page_gets_the_block_and_a_generated_one_never(tmp_path):
    from errkit.generate.render import HEADER

    docs = tmp_path / "site" / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "rules.md").write_text(f"# Rules\n\n{readme.START}\nold\n{readme.END}\n")
    (docs / "generated.md").write_text(f"<!-- {HEADER} -->\n{readme.START}\nold\n{readme.END}\n")
    written = readme.blocks(tmp_path, "site/docs")
    assert set(written) == {Path("site/docs/guide/rules.md")}
    assert readme.lint_rules() in written[Path("site/docs/guide/rules.md")].decode()
    assert readme.blocks(tmp_path) == {}, "without a site folder only README.md is looked at"


def test_generate_check_reports_a_stale_readme_block(tmp_path, run_cli):
    shutil.copytree(FIXTURES / "kernels", tmp_path / "catalog")
    (tmp_path / "README.md").write_text(f"# Kernels\n\n{readme.START}\n| `a-rule-no-more` | gone |\n{readme.END}\n")
    code, _, err = run_cli("--catalog", tmp_path / "catalog", "generate", "--check")
    assert code == 1 and "stale: README.md" in err, err
    code, _, err = run_cli("--catalog", tmp_path / "catalog", "generate")
    assert code == 0, err
    written = (tmp_path / "README.md").read_text()
    assert "a-rule-no-more" not in written and "| `unknown-kernel` |" in written
    code, _, err = run_cli("--catalog", tmp_path / "catalog", "generate", "--check")
    assert code == 0, err

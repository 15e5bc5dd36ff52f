"""errkit's import rules, enforced: the contracts in pyproject.toml's [tool.importlinter] (each side
imports only the sides below it, imports inside functions counted; the explain side reaches no YAML,
template or packaging library), no import cycle between modules, and every module saying what it
owns."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "errkit"


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """import-linter over the errkit package under `root`, with the contracts of its pyproject.toml."""
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True))"
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


def test_every_import_contract_holds():
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout and "7 kept" in done.stdout, done.stdout


@pytest.mark.slow
def test_a_forbidden_import_inside_a_function_breaks_the_contract(tmp_path):
    """The contracts see what a newcomer might add: a function-level import of the generate side
    (and so jinja2) in the matcher."""
    shutil.copytree(PACKAGE, tmp_path / "errkit", ignore=shutil.ignore_patterns("__pycache__", "_index.json"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    matcher = tmp_path / "errkit" / "explain" / "matching" / "line.py"
    matcher.write_text(matcher.read_text() + "\n\ndef _planted():\n    from errkit.generate import render\n")
    done = lint_imports(tmp_path)
    assert done.returncode == 1, done.stdout
    assert "errkit.explain is not allowed to import errkit.generate" in done.stdout
    assert "errkit.explain.matching.line -> errkit.generate" in done.stdout


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], 0
    for start in modules:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            for j in range(i, len(edges[node])):
                nxt = edges[node][j]
                if nxt not in index:
                    work.append((node, j + 1))
                    work.append((nxt, 0))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return out


def test_no_import_cycle_between_modules():
    graph = grimp.build_graph("errkit")  # imports inside functions included
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    class Graph:
        modules = {"a", "b", "c", "d"}
        imports = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

        def find_modules_directly_imported_by(self, module):
            return self.imports[module]

    assert _cycles(Graph()) == [["a", "b", "c"]]


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "templates" not in p.parts)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_says_what_it_owns(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert doc and len(doc.split()) >= 6, f"{path.relative_to(ROOT)}: a docstring saying what the module owns"


def test_no_dead_code():
    """vulture finds nothing unused in errkit/ beyond tests/dead_code_allowlist.py (each with its reason)."""
    done = subprocess.run([sys.executable, "-m", "vulture", "errkit", "tests/dead_code_allowlist.py", "--min-confidence", "60",
                           "--exclude", "errkit/generate/templates"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_module_over_600_lines_and_no_class_over_250():
    """Small modules with one job each (issue 50): planted, a 601-line module or a 251-line class fails."""
    long = {}
    for path in MODULES:
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 600:
            long[str(path.relative_to(ROOT))] = text.count("\n")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > 250:
                long[f"{path.relative_to(ROOT)}:{node.name}"] = node.end_lineno - node.lineno + 1
    assert not long, long


def test_importing_a_generator_runs_no_command():
    """errkit/generate/__init__.py holds no code: importing one producer imports neither the generate
    command nor the other producers (planted: the command back in __init__ -> fails)."""
    code = "import sys, errkit.generate.js; print(sorted(m for m in sys.modules if m.startswith('errkit.generate')))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert eval(done.stdout) == ["errkit.generate", "errkit.generate.js"]  # noqa: S307 - our own print of a list

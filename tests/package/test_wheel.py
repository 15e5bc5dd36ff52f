"""errkit as a user gets it: the sdist and the wheel built from it, the wheel
installed into a fresh virtual environment, every subcommand run from a folder outside the
repository through the installed `errkit` script and through `python -m errkit`.

One module-scoped fixture builds and installs once (15 to 30 seconds: a build environment with
the setuptools pyproject.toml asks for, the sdist, the wheel built from the sdist, a fresh venv
whose pip installs the wheel's dependencies from the package index and the machine's pip cache);
the tests are small. The wheel is built from the sdist, not from the checkout: a file the sdist
misses then breaks the wheel, and a stale build/ folder of the checkout cannot leak into it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
import tomllib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from support import ROOT
from wheelhouse import clean_env, run

MESSAGE = "num_q_heads=12 must be divisible by and num_kv_heads=8"
# Tracked files the sdist leaves out: the hosting's CI configuration, which only drives runs on a
# clone (MANIFEST.in says the same).
NOT_IN_SDIST = (".ci/", ".github/", ".gitignore")
# Files setuptools writes into every sdist.
SDIST_METADATA = ("PKG-INFO", "setup.cfg", "errkit.egg-info/")


@dataclass(frozen=True)
class Install:
    sdist: Path
    wheel: Path
    python: Path  # the fresh venv's interpreter
    script: Path  # its `errkit` console script
    site_packages: Path
    outside: Path  # a working folder outside the repository, holding no errkit/ of its own
    env: dict = field(repr=False)


def _check(cmd: list, cwd: Path, env: dict) -> str:
    return run(cmd, cwd=cwd, env=env).stdout


@pytest.fixture(scope="module")
def install(errkit_dists, errkit_venv, tmp_path_factory) -> Install:
    """The session's sdist and wheel (tests/wheelhouse.py), and its fresh venv holding the wheel."""
    env = clean_env()
    python = errkit_venv.python
    site_packages = Path(_check([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], ROOT, env).strip())
    outside = tmp_path_factory.mktemp("work")
    assert ROOT not in outside.parents
    return Install(errkit_dists.sdist, errkit_dists.wheel, python, errkit_venv.bin / "errkit", site_packages, outside, env)


def _run(cmd: list, install: Install, input: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd or install.outside, env=install.env, input=input,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(params=["script", "module"])
def errkit(request, install):
    """Run the installed errkit (`errkit ARGS` or `python -m errkit ARGS`) from outside the repository."""
    prefix = [install.script] if request.param == "script" else [install.python, "-m", "errkit"]

    def run(*args, input: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return _run([*prefix, *args], install, input=input, cwd=cwd)

    return run


def _one_line_error(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("errkit"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


# -- what the wheel, the sdist and the venv hold --------------------------------------------------


def _git_files(*args: str) -> set[str] | None:
    try:
        proc = subprocess.run(["git", "ls-files", "-z", *args], cwd=ROOT, capture_output=True, timeout=60)
    except FileNotFoundError:
        proc = None
    if proc is None or proc.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail("CI runs on a git clone: `git ls-files` must work there")
        pytest.skip("not a git checkout (the tests of an unpacked sdist)")
    return {p for p in proc.stdout.decode().split("\0") if p and (ROOT / p).is_file()}


def _some(paths: set[str], shown: int = 12) -> str:
    listed = sorted(paths)
    return ", ".join(listed[:shown]) + (f" and {len(listed) - shown} more" if len(listed) > shown else "")


def _sdist_files(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as tar:
        names = [m.name for m in tar.getmembers() if m.isfile()]
    top = {n.split("/", 1)[0] for n in names}
    assert top == {sdist.name.removesuffix(".tar.gz")}, top
    return {n.split("/", 1)[1] for n in names}


def test_the_sdist_holds_every_tracked_file_but_the_ci_configuration(install):
    tracked = _git_files()
    untracked = _git_files("--others", "--exclude-standard")  # a developer's new files, not yet added
    shipped = {p for p in _sdist_files(install.sdist) if not p.startswith(SDIST_METADATA)}
    expected = {p for p in tracked if not p.startswith(NOT_IN_SDIST)}
    assert not expected - shipped, f"tracked files missing from the sdist: {_some(expected - shipped)}"
    assert not shipped - expected - untracked, f"files in the sdist git does not track: {_some(shipped - expected - untracked)}"
    for required in ("LICENSE", "README.md", "pyproject.toml", "catalog/errkit.yaml", "site/mkdocs.yml",
                     "tests/support.py", "tests/fixtures/site/harness.js", "errkit/scan/__init__.py", "errkit_attention/__init__.py",
                     "benchmarks/run.py", "scripts/harvest.py"):
        assert required in shipped, required
    assert not [p for p in shipped if p.startswith(NOT_IN_SDIST)]


def _wheel_files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return {n for n in zf.namelist() if not n.endswith("/")}


def test_the_wheel_holds_errkit_whole_and_nothing_else(install):
    files = _wheel_files(install.wheel)
    dist_info = {p.split("/", 1)[0] for p in files if ".dist-info/" in p}
    assert len(dist_info) == 1
    # errkit, its attention kernel under a name no user's module has (issue 52: a top-level `kernel`
    # would overwrite one), and the one-line errkit-hook.pth that turns on `ERRKIT_EXPLAIN=1`
    # (setup.py, errkit/integrations/excepthook.py)
    assert {p.split("/", 1)[0] for p in files} == {"errkit", "errkit_attention", "errkit-hook.pth"} | dist_info, \
        "only errkit and errkit_attention go into site-packages"
    # Every file of errkit/ the sdist holds is in the wheel: modules, subpackages, the index, templates.
    package = {p for p in _sdist_files(install.sdist) if p.startswith(("errkit/", "errkit_attention/")) and not p.endswith(".md")}
    assert not package - files, f"missing from the wheel: {_some(package - files)}"
    (info,) = dist_info
    assert f"{info}/licenses/LICENSE" in files
    with zipfile.ZipFile(install.wheel) as zf:
        metadata = zf.read(f"{info}/METADATA").decode()
        assert "License-Expression: Apache-2.0" in metadata.splitlines()
        assert "License-File: LICENSE" in metadata.splitlines()
        assert zf.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        assert zf.read(f"{info}/top_level.txt").decode().split() == ["errkit", "errkit_attention"]


def test_the_license_is_apache_2_0():
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]


def test_the_venv_has_errkit_and_no_kernel_package(install):
    sp = install.site_packages
    assert not (sp / "kernel").exists() and not (sp / "kernel.py").exists()
    for rel in ("errkit/scan/__init__.py", "errkit/generate/templates/validators.py.j2",
                "errkit/generate/templates/skeleton/mkdocs.yml.j2", "errkit/generate/templates/site/entry.md.j2"):
        assert (sp / rel).is_file(), rel
    assert (sp / "errkit" / "_index.json").read_bytes() == (ROOT / "errkit" / "_index.json").read_bytes()
    proc = _run([install.python, "-c", "import errkit; print(errkit.__file__)"], install)
    assert Path(proc.stdout.strip()).is_relative_to(sp), proc.stdout + proc.stderr
    assert (sp / "errkit_attention" / "attention.py").is_file() and (sp / "errkit_attention" / "_validators.py").is_file()
    # without the `kernel` extra (jax) the kernel says what it lacks
    proc = _run([install.python, "-c", "import errkit_attention"], install)
    assert proc.returncode == 1 and "No module named 'jax'" in proc.stderr, proc.stderr[-2000:]


def test_the_checkout_imports_its_kernel_from_the_repository():
    """The tests import errkit_attention/ from the checkout (pytest's pythonpath, pyproject.toml; an
    editable install points there too), not from an installed copy."""
    import importlib.util

    spec = importlib.util.find_spec("errkit_attention")
    assert spec is not None and Path(spec.origin).resolve() == ROOT / "errkit_attention" / "__init__.py"


def test_pytest_finds_the_kernel_from_any_working_folder(tmp_path):
    """`python -m pytest` in the repository root has the root on sys.path anyway; `pytest` run
    elsewhere, or from its script, needs pyproject.toml's pythonpath."""
    name = "test_the_checkout_imports_its_kernel_from_the_repository"
    proc = subprocess.run([sys.executable, "-c", "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))",
                           f"{ROOT / 'tests' / 'package' / 'test_wheel.py'}::{name}", "-q", "-p", "no:cacheprovider",
                           "-n", "0"],  # one test: no workers
                          cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]


# -- every subcommand, from outside the repository ------------------------------------------------


def test_version(errkit, install):
    expected = _run([install.python, "-c", "from importlib.metadata import version; print(version('errkit'))"], install)
    proc = errkit("--version")
    assert proc.returncode == 0, proc.stderr
    assert expected.stdout.strip() in proc.stdout


def test_explain_text(errkit):
    proc = errkit("explain", MESSAGE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("RA105 ")
    assert "num_q_heads=12, num_kv_heads=8" in proc.stdout


def test_explain_a_file(errkit, install):
    log = install.outside / "trace.txt"
    log.write_text(f'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\nValueError: {MESSAGE}\n')
    proc = errkit("explain", log.name)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("RA105 ")


def test_explain_standard_input(errkit):
    proc = errkit("explain", "-", input=f"step 1 ok\nValueError: {MESSAGE}\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("RA105 ")


def test_explain_json(errkit):
    proc = errkit("explain", "--json", MESSAGE)
    assert proc.returncode == 0, proc.stderr
    (answer,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert answer["code"] == "RA105" and answer["confidence"] == "exact"
    assert answer["params"] == {"num_q_heads": 12, "num_kv_heads": 8}


def test_explain_a_code(errkit):
    proc = errkit("explain", "RA105")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("RA105 ")


def test_explain_text_no_entry_matches(errkit):
    proc = errkit("explain", "the weather is fine today")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "no catalogued error" in proc.stderr


def test_list(errkit, install):
    proc = errkit("list")
    assert proc.returncode == 0, proc.stderr
    codes = [line.split()[0] for line in proc.stdout.splitlines()]
    index = json.loads((install.site_packages / "errkit" / "_index.json").read_text())
    assert set(index["entries"]) <= set(codes) and "RA105" in codes


def test_show(errkit):
    proc = errkit("show", "RA105")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("RA105 ") and "num_kv_heads" in proc.stdout
    proc = errkit("show", "--json", "gqa-head-count")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["code"] == "RA105"
    _one_line_error(errkit("show", "XX999"))


def test_scan(errkit, install):
    (install.outside / "ops.py").write_text(textwrap.dedent("""\
        def pad(n):
            if n % 8:
                raise ValueError(f"n={n} must be a multiple of 8")
            return n
    """))
    proc = errkit("scan", "ops.py")
    assert proc.returncode == 0, proc.stderr
    assert "ops.py:3" in proc.stdout and "n={n} must be a multiple of 8" in proc.stdout
    proc = errkit("scan", "--json", "ops.py")
    (site,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert (site["path"], site["line"], site["function"], site["exception"]) == ("ops.py", 3, "pad", "ValueError")
    assert site["template"] == "n={n} must be a multiple of 8" and site["params"] == {"n": "int"}
    proc = errkit("scan", "--fail-on-uncatalogued", "ops.py")
    assert proc.returncode == 1 and "ops.py:3: ValueError: n={n} must be a multiple of 8" in proc.stderr


# A small project of a user's own, built with the commands: settings, `new`, `lint`, `fmt`,
# `generate`, `docs`, `import`.
SETTINGS = """\
project: mylib
version: "1.0"
docs_url: https://example.invalid/mylib
repo_url: https://example.invalid/mylib/repo
validators: mylib/_validators.py
retired: []
groups: {}
"""
GROUPED = SETTINGS.replace("groups: {}", """groups:
  values:
    description: The value argument.
    args: [value]
    bindings: {}
    checks: [XX110]""")


@pytest.fixture
def project(install, tmp_path) -> Path:
    """An empty catalogue of a project outside the repository (named from the working folder)."""
    root = tmp_path / "mylib-project"
    (root / "catalog").mkdir(parents=True)
    (root / "catalog" / "errkit.yaml").write_text(SETTINGS)
    return root


def test_new_lint_fmt_generate_docs(errkit, install, project):
    catalog = os.path.relpath(project / "catalog", install.outside)
    proc = errkit("--catalog", catalog, "new", "values", "positive-value", "--code", "XX110")
    assert proc.returncode == 0, proc.stderr
    entry = install.outside / proc.stdout.strip()
    assert entry.resolve() == project / "catalog" / "values" / "XX110-positive-value.yaml"
    assert "code: XX110" in entry.read_text()

    proc = errkit("--catalog", catalog, "lint")  # no groups: valid (its check_XX110 function is the API)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (project / "catalog" / "errkit.yaml").write_text(GROUPED.replace("checks: [XX110]", "checks: [XX111]"))
    proc = errkit("--catalog", catalog, "lint")  # with groups, every entry must be in one
    assert proc.returncode == 1
    assert "XX110-positive-value.yaml:" in proc.stdout and "entry-not-in-group" in proc.stdout
    (project / "catalog" / "errkit.yaml").write_text(GROUPED)
    proc = errkit("--catalog", catalog, "lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr

    scaffolded = entry.read_text()
    entry.write_text(scaffolded.replace("title: One line", "title:   One line"))
    proc = errkit("--catalog", catalog, "fmt", "--check")
    assert proc.returncode == 1 and "XX110-positive-value.yaml" in proc.stdout
    proc = errkit("--catalog", catalog, "fmt")
    assert proc.returncode == 0 and "reformatted" in proc.stdout
    assert entry.read_text() == scaffolded

    proc = errkit("--catalog", catalog, "generate")
    assert proc.returncode == 0, proc.stderr
    assert errkit("--catalog", catalog, "generate", "--check").returncode == 0
    validators = project / "mylib" / "_validators.py"
    call = ("import sys; sys.path.insert(0, sys.argv[1]); from mylib import _validators\n"
            "try:\n    _validators.validate_values(0)\nexcept ValueError as err:\n    print(type(err).__name__, err)")
    raised = _run([install.python, "-c", call, project], install)
    assert raised.returncode == 0, raised.stderr
    assert raised.stdout.split(" ", 1)[1].strip() == "value=0 must be positive", raised.stdout
    assert validators.read_text().startswith("#")

    proc = errkit("--catalog", catalog, "docs")
    assert proc.returncode == 0, proc.stderr
    assert errkit("--catalog", catalog, "docs", "--check").returncode == 0
    pages = [p for p in project.rglob("XX110*.md")]
    assert pages and "must be positive" in pages[0].read_text()


def test_import(errkit, install, project):
    record = install.outside / f"record-{os.getpid()}.json"
    record.write_text(json.dumps({"errorMessage": "block_size={block_size} must divide seq_len={seq_len}",
                                  "errorClass": "ValueError", "slug": "block-divides-length"}))
    catalog = os.path.relpath(project / "catalog", install.outside)
    proc = errkit("--catalog", catalog, "import", record.name)
    assert proc.returncode == 0, proc.stderr
    (written,) = [install.outside / line for line in proc.stdout.splitlines()]
    assert written.resolve().parent == project / "catalog" / "imported"
    text = written.read_text()
    assert "block_size={block_size} must divide seq_len={seq_len}" in text and "explain_only: true" in text
    proc = errkit("--catalog", catalog, "import", record.name)  # the catalogue covers the wording now
    assert proc.returncode == 1 and "already covered by" in proc.stderr


def test_bad_input_is_one_line_and_exit_2(errkit, install, project):
    _one_line_error(errkit("--catalog", install.outside / "no-such-folder", "new", "values", "x"))
    _one_line_error(errkit("--catalog", project / "catalog", "import", "no-such-record.json"))
    proc = errkit("no-such-command")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr

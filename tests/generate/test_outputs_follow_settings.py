"""`[tool.errkit]` settings: found walking up, the documented precedence, and a second catalogue
rendered with other settings than this repository's."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from errkit.core import settings
from errkit.generate.outputs import render_all
from errkit.catalogue.load import load

from support import FIXTURES, errkit_subprocess

SITE_FIXTURE = FIXTURES / "site" / "catalog"
ADOPT = FIXTURES / "adopt"  # the tutorial's entry (TA100), raised by a generated check  # a small catalogue (prefix XX) with its own errkit.yaml

PYPROJECT = """\
[project]
name = "other"

[tool.errkit]
catalog = "errors"
index = "pkg/_idx.json"
site = "handbook"
validators = "pkg/checks.py"
branch = "trunk"
prefix = "XX"
project = "other"
name = "the other library"
docs_url = "https://docs.example.org/other/{version}/e/{code}.html"
"""


def other_project(tmp_path: Path, pyproject: str = PYPROJECT) -> Path:
    root = tmp_path / "other"
    shutil.copytree(SITE_FIXTURE, root / "errors")
    (root / "pkg").mkdir()
    (root / "pyproject.toml").write_text(pyproject)
    return root


def test_tool_table_wins_over_errkit_yaml_and_places_every_output(tmp_path):
    root = other_project(tmp_path)
    catalogue = load(root / "errors").catalogue
    s = catalogue.settings
    assert (s.project, s.name, s.branch, s.prefix, s.site, s.index) == ("other", "the other library", "trunk", "XX", "handbook", "pkg/_idx.json")
    assert s.version == "9.9", "what [tool.errkit] does not set comes from errkit.yaml"
    assert catalogue.project_root == root.resolve()
    assert s.page_url("XX101") == "https://docs.example.org/other/9.9/e/XX101.html"
    files = {str(p) for p in render_all(catalogue)}
    assert {"pkg/_idx.json", "pkg/checks.py", "errors/entry.schema.json", "handbook/docs/errors/XX101.md",
            "handbook/docs/assets/errkit/match.js"} <= files
    assert not [f for f in files if f.startswith(("site/", "errkit/", "errkit_attention/", "catalog/"))], files


def test_generated_text_follows_the_settings_not_this_repository(tmp_path):
    root = other_project(tmp_path.joinpath("a"), PYPROJECT.replace('repo_url', 'x') + 'repo_url = "https://git.example.org/other"\n')
    done = errkit_subprocess("generate", cwd=root / "errors")  # found walking up from a subfolder
    assert done.returncode == 0, done.stderr.decode()
    page = (root / "handbook" / "docs" / "errors" / "XX101.md").read_text()
    assert "https://git.example.org/other/edit/trunk/errors/" in page and "/main/" not in page
    assert "by the other library" in (root / "handbook" / "docs" / "by-exception.md").read_text()
    for path in [*root.joinpath("handbook").rglob("*.md"), root / "pkg" / "_idx.json"]:
        text = path.read_text()
        assert "ranker" not in text and "RA1" not in text and "catalog/" not in text, path


def test_a_catalogue_elsewhere_ignores_the_projects_table(tmp_path):
    """A copy of a catalogue inside the project (a test's, a fixture) never writes the project's files."""
    root = other_project(tmp_path)
    shutil.copytree(SITE_FIXTURE, root / "tests" / "copy")
    copy = load(root / "tests" / "copy").catalogue
    assert copy.settings.project == "evil" and copy.settings.index is None and copy.settings.site == "site"
    assert copy.project_root == (root / "tests").resolve()


def test_settings_in_pyproject_alone(tmp_path):
    root = tmp_path / "only"
    shutil.copytree(SITE_FIXTURE, root / "catalog")
    (root / "catalog" / "errkit.yaml").unlink()
    (root / "pyproject.toml").write_text('[tool.errkit]\nproject = "only"\nversion = "2"\ndocs_url = "https://x.example"\n')
    catalogue = load(root / "catalog").catalogue
    assert catalogue is not None and catalogue.settings.project == "only" and not catalogue.settings.groups
    files = {str(p) for p in render_all(catalogue)}
    assert not [f for f in files if f.endswith((".py", "_index.json"))], "no validators, no index: none written"
    assert "site/docs/errors/XX101.md" in files


def test_a_bad_tool_table_is_a_lint_error_naming_pyproject(tmp_path):
    root = other_project(tmp_path, PYPROJECT + 'colour = "blue"\n')
    done = errkit_subprocess("lint", cwd=root)
    assert done.returncode == 1
    assert b"pyproject.toml:1:1: bad-settings: [tool.errkit]" in done.stdout and b"colour" in done.stdout
    broken = other_project(tmp_path / "b", "[tool.errkit\n")
    done = errkit_subprocess("lint", cwd=broken)
    assert done.returncode == 2 and b"pyproject.toml: cannot read" in done.stderr and b"Traceback" not in done.stderr


def test_index_path_is_found_walking_up(tmp_path):
    root = other_project(tmp_path)
    assert settings.index_path(str(root / "errors")) is None, "named but not generated yet"
    (root / "pkg" / "_idx.json").write_text("{}")
    assert settings.index_path(str(root / "errors" / "evil")) == str(root / "pkg" / "_idx.json")
    assert settings.index_path(str(tmp_path)) is None


# Where an adopter's generated module may live, and the name Python imports it by once installed.
LAYOUTS = {
    "flat": ("pkg/_errors.py", ["pkg"], "pkg._errors"),
    "src": ("src/pkg/_errors.py", ["src/pkg"], "pkg._errors"),
    "src, a namespace package": ("src/ns/pkg/_errors.py", ["src/ns/pkg"], "ns.pkg._errors"),
    "src, a subpackage": ("src/pkg/sub/_errors.py", ["src/pkg", "src/pkg/sub"], "pkg.sub._errors"),
    "src, itself a package": ("src/pkg/_errors.py", ["src", "src/pkg"], "src.pkg._errors"),
    "another source folder": ("python/pkg/_errors.py", ["python/pkg"], "pkg._errors"),
    "a folder that is no package": ("tools/_errors.py", [], "tools._errors"),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_pages_name_the_module_as_python_imports_it(tmp_path, layout):
    """The entry page's exception (`pkg._errors.HeadsNotGroupedError`) and its Reproduce call
    (`from pkg._errors import check_ta100`) use the installed package's import name, in any layout."""
    validators, packages, module = LAYOUTS[layout]
    root = tmp_path / "project"
    (root / "catalog" / "inputs").mkdir(parents=True)
    (root / "catalog" / "inputs" / "TA100-heads-not-grouped.yaml").write_text((ADOPT / "entry.yaml").read_text())
    (root / "catalog" / "errkit.yaml").write_text('project: tinyattn\nversion: "0.1"\ndocs_url: https://example.org/ta\n')
    (root / "pyproject.toml").write_text(f'[tool.errkit]\nvalidators = "{validators}"\n')
    for package in packages:
        (root / package).mkdir(parents=True, exist_ok=True)
        (root / package / "__init__.py").write_text("")
    files = render_all(load(root / "catalog").catalogue)
    page = files[Path("site/docs/errors/TA100.md")].decode()
    raised_as = re.search(r"Raised by tinyattn as `([\w.]+)`", page)
    assert raised_as and raised_as.group(1) == f"{module}.HeadsNotGroupedError", page
    assert f"from {module} import check_ta100\n" in page, page
    assert Path(validators) in files

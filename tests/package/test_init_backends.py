"""`errkit init` leaves a project buildable whatever its layout and build backend: after init and
generate, `pip wheel .` (the backend as pip's build isolation installs it) builds a wheel holding
the package with its compiled index, registering it in the `errkit.catalogues` entry-point group,
and nothing else at the top level (not the catalogue, not the site)."""

from __future__ import annotations

import configparser
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from support import errkit_subprocess

pytestmark = pytest.mark.slow

PROJECT = '''[project]
name = "toyattn"
version = "0.1.0"
description = "A toy attention package."
requires-python = ">=3.11"
'''
POETRY_1 = '''[tool.poetry]
name = "toyattn"
version = "0.1.0"
description = "A toy attention package."
authors = ["A. Author <author@example.com>"]
'''
BACKENDS = {
    "setuptools": ('["setuptools>=77"]', "setuptools.build_meta", PROJECT),
    "hatchling": ('["hatchling>=1.26"]', "hatchling.build", PROJECT),
    "flit": ('["flit_core>=3.9,<4"]', "flit_core.buildapi", PROJECT),
    "pdm": ('["pdm-backend>=2.3"]', "pdm.backend", PROJECT),
    "poetry": ('["poetry-core>=2.0"]', "poetry.core.masonry.api", PROJECT),
    "poetry-1": ('["poetry-core>=1.9"]', "poetry.core.masonry.api", POETRY_1),
    "uv": ('["uv_build>=0.9,<0.14"]', "uv_build", PROJECT),
}
# What a flat project tells its backend when the backend looks under src/ by default.
FLAT = {"uv": '\n[tool.uv.build-backend]\nmodule-root = ""\n'}


def _project(where: Path, backend: str, layout: str) -> Path:
    requires, module, metadata = BACKENDS[backend]
    project = where / f"{backend}-{layout}"
    package = project / ("src/toyattn" if layout == "src" else "toyattn")
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A toy attention package."""\n__version__ = "0.1.0"\n')
    flat = FLAT.get(backend, "") if layout == "flat" else ""
    (project / "pyproject.toml").write_text(f"[build-system]\nrequires = {requires}\nbuild-backend = {module!r}\n\n{metadata}{flat}")
    return project


@pytest.mark.parametrize("layout", ["flat", "src"])
@pytest.mark.parametrize("backend", list(BACKENDS))
def test_init_packaging_for_every_backend(tmp_path, backend, layout):
    project = _project(tmp_path, backend, layout)
    init = errkit_subprocess("init", "--prefix", "TOY", cwd=project)
    assert init.returncode == 0, init.stderr
    assert b"by hand" not in init.stderr, init.stderr  # every backend here is written for, none left to the author
    generate = errkit_subprocess("generate", cwd=project)
    assert generate.returncode == 0, generate.stderr
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check",
                            "-w", str(tmp_path / "dist"), str(project)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = next((tmp_path / "dist").glob("toyattn-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "toyattn/_errkit_index.json" in names, names
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"toyattn"}, tops  # nothing new became a top-level package
    entry_points = configparser.ConfigParser(delimiters=("=",))
    entry_points.read_string(zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode())
    assert dict(entry_points["errkit.catalogues"]) == {"toyattn": "toyattn:_errkit_index.json"}


def test_an_unknown_backend_is_told_what_to_add_by_hand(tmp_path):
    project = tmp_path / "other"
    (project / "toyattn").mkdir(parents=True)
    (project / "toyattn" / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text(f'[build-system]\nrequires = ["maturin"]\nbuild-backend = "maturin"\n\n{PROJECT}')
    init = errkit_subprocess("init", "--prefix", "TOY", cwd=project)
    assert init.returncode == 0
    assert b"to do by hand: make the build backend 'maturin' ship toyattn/_errkit_index.json" in init.stderr, init.stderr

"""errkit installs the three ways the docs give, each into a fresh virtual environment and run from
outside the checkout: from a clone (`pip install .`, the README's first command), from a built
wheel (tests/package/test_wheel.py), and from a git URL with the `site` extra that building a
catalogue's site needs (`pip install "errkit[site] @ git+..."`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from support import ROOT
from wheelhouse import _not_source, clean_env, fresh_venv, run

pytestmark = pytest.mark.slow

RA105 = "num_q_heads=12 must be divisible by and num_kv_heads=8"


def _explains(venv, where: Path) -> None:
    done = subprocess.run([venv.bin / "errkit", "explain", RA105], capture_output=True, text=True, cwd=where,
                          env=clean_env(), timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("RA105"), done.stdout + done.stderr


def _source(tmp_path: Path) -> Path:
    source = tmp_path / "clone"
    shutil.copytree(ROOT, source, ignore=_not_source)
    return source


def test_from_a_clone(tmp_path):
    venv = fresh_venv(tmp_path / "venv", _source(tmp_path))
    _explains(venv, tmp_path)


def test_from_a_git_url_with_the_site_extra(tmp_path):
    repo = _source(tmp_path)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "x"]):
        run(["git", *args], cwd=repo)
    venv = fresh_venv(tmp_path / "venv", "--upgrade", "pip")  # as `python3 -m venv --upgrade-deps`: pip 23 refuses the URL
    run([venv.python, "-m", "pip", "install", "-q", f"errkit[site] @ git+{repo.as_uri()}"], cwd=tmp_path)
    _explains(venv, tmp_path)
    project = tmp_path / "toy"
    (project / "toy").mkdir(parents=True)
    (project / "toy" / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools>=77"]\nbuild-backend = "setuptools.build_meta"\n\n'
                                            '[project]\nname = "toy"\nversion = "0.1.0"\n')
    run([venv.bin / "errkit", "init", "--prefix", "TOY"], cwd=project)
    run([venv.bin / "errkit", "generate"], cwd=project)
    run([venv.bin / "mkdocs", "build", "--strict", "-f", project / "site" / "mkdocs.yml", "-d", tmp_path / "out"], cwd=project)
    assert (tmp_path / "out" / "paste" / "index.html").is_file()

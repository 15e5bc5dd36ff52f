"""Building errkit's sdist and wheel and installing them into fresh virtual environments, as users do.

Shared by the wheel, adoption and hook tests: built once per test session (conftest's
`errkit_dists`). The wheel is built from the sdist, not from the checkout: a file the sdist misses
then breaks the wheel, and a stale build/ folder of the checkout cannot leak into it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import venv
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 900


def clean_env() -> dict:
    """This process's environment without what would let the checkout leak into the children."""
    drop = ("PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "VIRTUAL_ENV", "ERRKIT_DEBUG")
    return {k: v for k, v in os.environ.items() if k not in drop}


def run(args, **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("env", clean_env())
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=TIMEOUT, **kwargs)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


# Build outputs and environments of the checkout, never sources (.gitignore's list, and any venv).
_BUILD_OUTPUTS = shutil.ignore_patterns(".git", "*.egg-info", "build", "dist", "__pycache__", "*.py[cod]", ".pytest_cache",
                                        ".hypothesis", "artifacts")


def _not_source(folder: str, names: list[str]) -> set[str]:
    """What the sdist is not built from. An old errkit.egg-info/SOURCES.txt in particular: setuptools
    adds every file it lists to the next sdist, so a file MANIFEST.in no longer takes would stay."""
    return set(_BUILD_OUTPUTS(folder, names)) | {n for n in names if os.path.isfile(os.path.join(folder, n, "pyvenv.cfg"))}


@dataclass(frozen=True)
class Dists:
    sdist: Path
    wheel: Path


def build_dists(tmp: Path) -> Dists:
    """The sdist of a clean copy of the checkout, and the wheel built from that sdist."""
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    build = fresh_venv(tmp / "build-env", *requires)  # what pip's build isolation would install, once
    dist, source = tmp / "dist", tmp / "source"
    shutil.copytree(ROOT, source, ignore=_not_source)
    backend = "import sys, setuptools.build_meta as m; print(m.build_sdist(sys.argv[1]))"
    name = run([build.python, "-c", backend, dist], cwd=source).stdout.strip().splitlines()[-1]
    sdist = dist / name
    run([build.python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", dist, sdist], cwd=tmp)
    return Dists(sdist, next(dist.glob("errkit-*.whl")))


@dataclass(frozen=True)
class Venv:
    root: Path

    @property
    def bin(self) -> Path:
        return self.root / ("Scripts" if sys.platform == "win32" else "bin")

    @property
    def python(self) -> Path:
        return self.bin / ("python.exe" if sys.platform == "win32" else "python")


def fresh_venv(where: Path, *install) -> Venv:
    """A new virtual environment (no system packages) with `install` pip-installed into it."""
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    env = Venv(where)
    if install:
        run([env.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *install], cwd=where)
    return env

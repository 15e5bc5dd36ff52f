"""Building errkit's wheel and installing it into fresh virtual environments, as users do.

Shared by the wheel test and the adoption test: the wheel is built once per test session
(conftest's `errkit_wheel`), each test that needs an environment makes its own.
"""

from __future__ import annotations

import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 900


def run(args, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=TIMEOUT, **kwargs)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def build_wheel(out: Path) -> Path:
    """errkit's wheel, built from this checkout the way `pip install .` builds it."""
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", out, ROOT])
    (wheel,) = out.glob("errkit-*.whl")
    return wheel


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
        run([env.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *install])
    return env

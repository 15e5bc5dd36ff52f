"""Shared test helpers (imported as `support`: a `conftest` module name is not unique across folders)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "catalog"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def errkit_subprocess(*args, input=None, cwd=ROOT, env=None, timeout=120):
    """Run the real `errkit` entry point in a child process (for stdin/stdout/exit-code behaviour)."""
    return subprocess.run(
        [sys.executable, "-m", "errkit.cli", *map(str, args)],
        input=input, capture_output=True, cwd=cwd, env=env, timeout=timeout,
    )

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "catalog"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def run_cli(capsys):
    """Run `errkit ARGS` in-process; returns (exit code, stdout, stderr)."""
    from errkit.cli import main

    def run(*args, cwd=None):
        old = os.getcwd()
        if cwd:
            os.chdir(cwd)
        try:
            code = main([str(a) for a in args])
        finally:
            os.chdir(old)
        out, err = capsys.readouterr()
        return code, out, err

    return run


def errkit_subprocess(*args, input=None, cwd=ROOT, env=None, timeout=120):
    """Run the real `errkit` entry point in a child process (for stdin/stdout/exit-code behaviour)."""
    return subprocess.run(
        [sys.executable, "-m", "errkit.cli", *map(str, args)],
        input=input, capture_output=True, cwd=cwd, env=env, timeout=timeout,
    )


from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

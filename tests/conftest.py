import os
import tempfile

import pytest
from hypothesis import HealthCheck, settings


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


# errkit explain caches what it discovers (errkit/explain/registry.py): the tests' children and in-process
# runs use a cache of their own, never the user's ~/.cache/errkit.
os.environ["ERRKIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="errkit-test-cache-")

settings.register_profile("ci", max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def errkit_dists(tmp_path_factory):
    """errkit's sdist and the wheel built from it, once per session (tests/wheelhouse.py)."""
    from wheelhouse import build_dists

    return build_dists(tmp_path_factory.mktemp("dists"))


@pytest.fixture(scope="session")
def errkit_wheel(errkit_dists):
    return errkit_dists.wheel


@pytest.fixture(scope="session")
def errkit_venv(errkit_wheel, tmp_path_factory):
    """A fresh virtual environment with only the errkit wheel (and its dependencies) installed."""
    from wheelhouse import fresh_venv

    return fresh_venv(tmp_path_factory.mktemp("errkit-venv"), errkit_wheel)

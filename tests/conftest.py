import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# The paste page's node harness (tests/site/test_paste_page_js.py) serves the JavaScript comparisons of
# other folders' tests too (kernel attribution, values read from other lines).
sys.path.insert(0, str(Path(__file__).parent / "site"))

# Folders whose every test is slow: browsers, built wheels and fresh venvs, the kernels run through
# the Pallas interpreter, fixes applied to real upstream kernels. `pytest -m "not slow"` leaves them
# out (a contributor's loop); CI runs everything. Single slow tests elsewhere carry the marker.
SLOW_FOLDERS = ("advice", "kernel", "package", "site")
SLOW_FIXTURES = {"errkit_dists", "errkit_wheel", "errkit_venv"}  # a wheel built, a venv made


def pytest_collection_modifyitems(config, items):
    tests = Path(__file__).parent
    for item in items:
        folder = Path(str(item.fspath)).relative_to(tests).parts[0]
        if folder in SLOW_FOLDERS or SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def catalogue():
    """The repository's catalogue, loaded once per session (support.bundled_catalogue)."""
    from support import bundled_catalogue

    return bundled_catalogue()


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

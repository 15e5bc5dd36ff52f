import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import quiet_cpu

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
    slow_modules = set()
    for item in items:
        relative = Path(str(item.fspath)).relative_to(tests)
        if relative.parts[0] in SLOW_FOLDERS or SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
            slow_modules.add(relative)
    # pytest-xdist hands out whole modules (--dist loadfile, pyproject.toml) in this order: the long
    # ones first, so the many short ones even out the workers at the end.
    items.sort(key=lambda item: Path(str(item.fspath)).relative_to(tests) not in slow_modules)


@pytest.fixture(autouse=True)
def _cpu_shared_with_quiet_runs(request, tmp_path_factory, worker_id):
    """Every test runs holding tests/quiet_cpu.py's shared lock, but those marked quiet_cpu, which
    take it whole: no other test starts while Lighthouse measures this machine's CPU."""
    if request.node.get_closest_marker("quiet_cpu"):
        yield
        return
    with quiet_cpu.shared(quiet_cpu.lock_folder(tmp_path_factory, worker_id)):
        yield


@pytest.fixture(scope="module")  # one per module: nothing of a module's pages outlives it
def chromium():
    """Debian's chromium driven by playwright (tests/site/site_build.py: CHROMIUM, its flags); a
    test that needs it fails in CI when it is missing, and is skipped elsewhere."""
    from site_build import CHROMIUM, CHROMIUM_FLAGS

    reason = None
    if CHROMIUM is None:
        reason = "Debian's chromium is not installed (apt-get install -y chromium)"
    else:
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            reason = "playwright is not installed (pip install -e '.[test]')"
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the browser test: {reason}")
        pytest.skip(reason)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()


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


# The kernels run here on tiny inputs, on XLA's CPU backend, where compiling is most of a test's
# time: the backend's optimisations (LLVM's) make that code faster, not different, so they are off
# for this process and its children (a fifth less CPU time for the kernel and fix-verification
# tests, the same results). A flag already set in XLA_FLAGS is kept.
_XLA_FAST_COMPILE = ("--xla_backend_optimization_level=0", "--xla_llvm_disable_expensive_passes=true")
_xla_flags = os.environ.get("XLA_FLAGS", "")
os.environ["XLA_FLAGS"] = " ".join([_xla_flags] + [f for f in _XLA_FAST_COMPILE if f.split("=")[0] not in _xla_flags]).strip()

# errkit explain caches what it discovers (errkit/explain/registry.py): the tests' children and in-process
# runs use a cache of their own, never the user's ~/.cache/errkit. One per test process (each xdist
# worker makes its own), removed when that process ends.
os.environ["ERRKIT_CACHE_DIR"] = _cache = tempfile.mkdtemp(prefix="errkit-test-cache-")
atexit.register(shutil.rmtree, _cache, ignore_errors=True)

settings.register_profile("ci", max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def errkit_dists(tmp_path_factory, worker_id):
    """errkit's sdist and the wheel built from it, once per test run (tests/wheelhouse.py)."""
    from support import made_once
    from wheelhouse import build_dists, Dists

    def build(folder):
        dists = build_dists(folder)
        return {"sdist": str(dists.sdist), "wheel": str(dists.wheel)}

    paths = made_once(tmp_path_factory, worker_id, "dists", build)
    return Dists(sdist=Path(paths["sdist"]), wheel=Path(paths["wheel"]))


@pytest.fixture(scope="session")
def errkit_wheel(errkit_dists):
    return errkit_dists.wheel


@pytest.fixture(scope="session")
def errkit_venv(errkit_wheel, tmp_path_factory):
    """A fresh virtual environment with only the errkit wheel (and its dependencies) installed."""
    from wheelhouse import fresh_venv

    return fresh_venv(tmp_path_factory.mktemp("errkit-venv"), errkit_wheel)

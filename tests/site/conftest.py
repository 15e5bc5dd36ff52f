"""The site tests' shared fixtures: the built site and the built fixture catalogue, made once per
test run and shared by every module and xdist worker (support.made_once: each build took its module
ten seconds or more), a local server, and Debian's chromium for each module."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_build import evil_copy, fresh_copy, mkdocs_build, serve
from support import made_once


@pytest.fixture(scope="session")
def _site_build(tmp_path_factory, worker_id) -> dict:
    def make(folder: Path) -> dict:
        fresh = fresh_copy(folder / "project")
        mkdocs_build(fresh / "mkdocs.yml", folder / "mkdocs-build")
        return {"site": str(fresh), "built": str(folder / "mkdocs-build")}

    return made_once(tmp_path_factory, worker_id, "site-build", make)


@pytest.fixture(scope="session")
def fresh_site(_site_build) -> Path:
    """A copy of site/ with the pages generated from the catalogue as it is now (shared: a test
    that writes into it writes elsewhere, as the Zensical build does with its `build` folder)."""
    return Path(_site_build["site"])


@pytest.fixture(scope="session")
def built_site(_site_build) -> Path:
    """fresh_site built by `mkdocs build --strict`."""
    return Path(_site_build["built"])


@pytest.fixture(scope="session")
def evil_site(tmp_path_factory, worker_id) -> Path:
    """The fixture catalogue full of injections, generated and built with the real site's config
    (the built site in its `out` folder)."""
    def make(folder: Path) -> dict:
        evil_copy(folder)
        mkdocs_build(folder / "site" / "mkdocs.yml", folder / "out")
        return {"project": str(folder)}

    return Path(made_once(tmp_path_factory, worker_id, "evil-site", make)["project"])


@pytest.fixture(scope="session")
def served(built_site):
    yield from serve(built_site)


@pytest.fixture(scope="module")
def browser(chromium):
    """The site tests' name for Debian's chromium (tests/conftest.py)."""
    return chromium

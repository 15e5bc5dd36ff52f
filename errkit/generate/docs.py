"""`errkit docs [--check]`: the site's generated files alone (errkit/generate/site.py's `pages`),
written or checked by the loop every generating command shares (errkit/generate/files.py), with
the site's orphaned pages deleted (or, with --check, reported)."""

from __future__ import annotations

from pathlib import Path

from errkit.generate import site
from errkit.generate.files import linted_catalogue, orphans, write_or_check


def run(root: Path, check: bool) -> int:
    """Write (or with `check`, check) the site's generated files of the catalogue under `root`, and
    delete the pages no entry produces; the exit code."""
    catalogue = linted_catalogue(Path(root), "docs")
    if catalogue is None:
        return 1
    project = catalogue.project_root
    files = {Path(rel): text.encode("utf-8") for rel, text in site.pages(catalogue).items()}
    return write_or_check("docs", project, files, check, orphans=orphans(project, site.docs_folder(catalogue), files))

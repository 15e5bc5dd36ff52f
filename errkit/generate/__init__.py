"""`errkit generate`: render every derived file from the catalogue, or check that none is stale."""

from __future__ import annotations

import sys
from pathlib import Path

from errkit.catalogue.model import Catalogue
from errkit.generate import outputs, readme, site
from errkit.generate.files import linted_catalogue, orphans, write_or_check


def render_all(catalogue: Catalogue) -> dict[Path, bytes]:
    """Project-root-relative path -> exact bytes, for every generated file."""
    files: dict[Path, bytes] = {}
    for produce in outputs.PRODUCERS:
        for rel, text in produce(catalogue).items():
            files[Path(rel)] = text.encode("utf-8")
    return files


def compiled_index(folder) -> dict | None:
    """The matcher index of the catalogue under `folder`, compiled in memory; None (its errors
    printed) when it does not lint clean. What `--catalog DIR` reads when DIR's index is stale."""
    from errkit.generate.index import build

    catalogue = linted_catalogue(Path(folder), "explain")
    return None if catalogue is None else build(catalogue)


def run(root: Path, check: bool) -> int:
    """`errkit generate [--check]`: the exit code."""
    catalogue = linted_catalogue(root, "generate")
    if catalogue is None:
        return 1
    files = render_all(catalogue) | readme.blocks(catalogue.project_root, site.docs_folder(catalogue))  # hand-written pages' generated blocks
    for rel in orphans(catalogue.project_root, site.docs_folder(catalogue), files):
        print(f"errkit: {rel} was generated for an entry that no longer exists; `errkit docs` deletes it", file=sys.stderr)
    return write_or_check("generate", catalogue.project_root, files, check)

"""`errkit generate`: render every derived file from the catalogue, or check that none is stale."""

from __future__ import annotations

import sys
from pathlib import Path

from errkit.generate import readme, site
from errkit.generate.files import linted_catalogue, orphans, write_or_check
from errkit.generate.outputs import render_all


def run(root: Path, check: bool) -> int:
    """`errkit generate [--check]`: the exit code."""
    catalogue = linted_catalogue(root, "generate")
    if catalogue is None:
        return 1
    files = render_all(catalogue) | readme.blocks(catalogue.project_root, site.docs_folder(catalogue))  # hand-written pages' generated blocks
    for rel in orphans(catalogue.project_root, site.docs_folder(catalogue), files):
        print(f"errkit: {rel} was generated for an entry that no longer exists; `errkit docs` deletes it", file=sys.stderr)
    return write_or_check("generate", catalogue.project_root, files, check)

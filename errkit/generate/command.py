"""`errkit generate`: render every derived file from the catalogue, or check that none is stale."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from errkit.core import settings
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
    rc = write_or_check("generate", catalogue.project_root, files, check)
    if rc == 0 and not check:
        return _index_marked_current(catalogue, root)
    return rc


def _index_marked_current(catalogue, catalog_dir: Path) -> int:
    """The compiled index's modification time set to now, or to its catalogue's newest file's if
    that is later. explain takes an index older than any file of its catalogue as stale
    (errkit/explain/registry.py), and an edit that changes nothing compiled (a comment, a fix's
    setup) leaves the index's bytes as they were, so the write skips it."""
    index = catalogue.settings.index
    path = catalogue.project_root / index if index else None
    if path is None or not path.exists():
        return 0
    now = max(time.time_ns(), settings.newest_mtime_ns(str(catalog_dir)))
    try:
        os.utime(path, ns=(now, now))
    except OSError as err:
        print(f"errkit generate: cannot mark {index} as current: {err.strerror or err}", file=sys.stderr)
        return 1
    return 0

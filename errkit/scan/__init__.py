"""`errkit scan`: find every raise site in a Python tree, audit catalogue coverage, draft entries.

The flow, one direction:

    paths ─▶ files ─▶ ast ─▶ raw sites (+ class bases) ─▶ sites (exception known, params typed)
                                                        ├─▶ coverage (matcher index) ─▶ table / JSON Lines
                                                        └─▶ drafts (ruamel.yaml, lint-shaped) for the gaps

A site is `raise X(...)` / `raise X` where X is ValueError, NotImplementedError, TypeError,
AssertionError or a class of the scanned tree deriving from one of them, or `assert cond, msg`.
Its message becomes an f-string template (template.py's syntax): f-strings (`{x=}`, `{a * b=}`,
format specs), `%` and `.format` formatting, implicit and `+` concatenation, and a message built
in a variable before the raise. A file that cannot be read or parsed is reported and skipped.

Modules: files (finding, reading, parsing), messages (expression -> template), sites (raise sites,
their conditions, params and types; scan_paths), coverage (against the matcher index), drafts
(draft entries). This module is the command and the names other code imports.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from errkit.scan.coverage import Coverage, load_index, render, renderings
from errkit.scan.drafts import Draft, DraftWriter, empty_messages_allowed
from errkit.scan.files import Skip, python_files
from errkit.scan.sites import RawSite, ScanResult, Site, scan_paths

__all__ = [
    "Coverage", "Draft", "DraftWriter", "EXIT_GAPS", "EXIT_NOTHING", "EXIT_OK", "RawSite", "ScanResult", "Site", "Skip",
    "empty_messages_allowed", "gap_lines", "load_index", "python_files", "render", "renderings", "run", "scan_paths", "table",
]

EXIT_OK, EXIT_GAPS, EXIT_NOTHING = 0, 1, 2


# -- output -----------------------------------------------------------------------------------------


def table(sites: list[Site], catalogue_of=lambda site: None) -> list[str]:
    """One row per site; `catalogue_of(site)`: the catalogue of the entry covering it, if any."""
    rows = [("path:line", "function", "exception", "covered-by", "catalogue", "template")]
    for s in sites:
        shown = s.template.replace("\n", "\\n").replace("\t", "\\t") if s.template else "(no message)"
        rows.append((f"{s.path}:{s.line}", s.function, s.exception, s.covered_by or "-", catalogue_of(s) or "-", shown))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r[:5], widths)) + "  " + r[5] for r in rows]


def _catalogue_of(coverage: Coverage):
    """The catalogue of the entry covering a site (errkit/explain/registry.py); None when uncovered or generated."""
    def of(site: Site):
        return (coverage.index.catalogue(site.covered_by) or None) if site.covered_by not in (None, "generated") else None
    return of


def gap_lines(sites: list[Site]) -> list[str]:
    return [f"{s.path}:{s.line}: {s.exception}: {s.template or '(no message)'}" for s in sites if not s.covered_by]


# -- the command ------------------------------------------------------------------------------------


def run(args, index_loader=None) -> int:
    """The command; `index_loader()`: the index to audit against when `--index` names none (the
    command line's catalogues); without one, errkit's own index."""
    def report(line: str) -> None:
        print(line, file=sys.stderr)

    result = scan_paths(args.paths, report)
    if result.files == 0:
        report("errkit scan: nothing could be scanned")
        return EXIT_NOTHING
    given = getattr(args, "index", None)
    coverage = Coverage(load_index(given) if given or index_loader is None else index_loader())
    for site in result.sites:
        site.covered_by = coverage.covered_by(site)
    catalogue_of = _catalogue_of(coverage)
    if args.json:
        for site in result.sites:
            print(json.dumps({**site.as_json(), "catalogue": catalogue_of(site)}, ensure_ascii=False))
    else:
        for line in table(result.sites, catalogue_of):
            print(line)
    gaps = [s for s in result.sites if not s.covered_by]
    if args.emit:
        written = DraftWriter(Path(args.emit), report).write(gaps)
        report(f"errkit scan: {len(written)} draft(s) written under {Path(args.emit) / DraftWriter.AREA}")
    skipped = f", {len(result.problems)} skipped" if result.problems else ""
    report(f"errkit scan: {result.files} file(s){skipped}, {len(result.sites)} site(s), {len(gaps)} uncatalogued")
    if args.fail_on_uncatalogued and gaps:
        report(f"errkit scan: {len(gaps)} uncatalogued site(s):")
        for line in gap_lines(result.sites):
            report("  " + line)
        return EXIT_GAPS
    return EXIT_OK

"""What every generating command shares: the linted catalogue it reads, and one check-and-write loop
over the files it renders (stale ones found, written all or nothing, orphans deleted: generated
files that nothing produces any more), so that `errkit generate` and `errkit docs` report and fail
the same way."""

import sys
from pathlib import Path

from errkit.core.atomic import JournalError, interrupted, recover, write_all
from errkit.core import UsageError
from errkit.catalogue.lint import lint
from errkit.catalogue.model import Catalogue
from errkit.generate.render import HEADER

JOURNAL = ".errkit-journal.json"  # beside the catalogue's project: what an interrupted write was switching


def linted_catalogue(root: Path, command: str) -> Catalogue | None:
    """The catalogue under `root` if it lints clean; otherwise None, with every error printed."""
    loaded, findings = lint(root)
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        for f in errors:
            print(f, file=sys.stderr)
        print(f"errkit {command}: the catalogue has {len(errors)} lint error(s); nothing written", file=sys.stderr)
        return None
    if loaded.catalogue is None:
        raise UsageError(f"{root}: no {root / 'errkit.yaml'}; {command} needs the catalogue settings")
    return loaded.catalogue


def stale_files(project: Path, files: dict[Path, bytes]) -> list[Path]:
    """The project-relative paths whose bytes on disk differ from `files` (or are missing)."""
    stale = []
    for rel, data in sorted(files.items()):
        target = project / rel
        try:
            current = target.read_bytes()
        except OSError:
            current = None
        if current != data:
            stale.append(rel)
    return stale


def orphans(project: Path, folder: str | None, expected) -> list[Path]:
    """The generated files under `folder` (project-relative; None: no folder) that are not among
    `expected` (project-relative paths): pages, data, scripts and stylesheets holding the
    generated-file header that nothing produces any more (their entry is gone)."""
    if folder is None:
        return []
    top = project / folder
    if not top.is_dir():
        return []
    expected = {Path(p) for p in expected}
    found = []
    for path in sorted(top.rglob("*")):
        if not path.is_file() or path.suffix not in (".md", ".json", ".js", ".css"):
            continue
        rel = path.relative_to(project)
        if rel in expected:
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                head = handle.read(2000)
        except OSError:
            continue
        if HEADER in head:
            found.append(rel)
    return found


def write_or_check(command: str, project: Path, files: dict[Path, bytes], check: bool,
                   orphans: list[Path] | None = None) -> int:
    """Write the stale `files` under `project` all at once (and delete `orphans`: generated files no
    longer produced), or with `check` report them and exit 1; the exit code."""
    if check and interrupted(project / JOURNAL):
        print(f"errkit {command} --check: an interrupted generation was found ({project / JOURNAL}): "
              f"run `errkit {command}` to finish it", file=sys.stderr)
        return 1
    if not check:
        try:
            settled = recover(project / JOURNAL)
        except JournalError as err:
            print(f"errkit {command}: {err}", file=sys.stderr)
            return 1
        except OSError as err:
            print(f"errkit {command}: cannot settle the interrupted generation in {project / JOURNAL}: "
                  f"{err.strerror or err}", file=sys.stderr)
            return 1
        if settled:
            print(f"errkit {command}: an interrupted generation was {settled} first", file=sys.stderr)
    stale = stale_files(project, files)
    extra = orphans or []
    if check:
        for rel in stale:
            print(f"stale: {rel}", file=sys.stderr)
        for rel in extra:
            print(f"orphan: {rel}", file=sys.stderr)
        if stale or extra:
            found = (f"{len(stale)} generated file(s) differ from the catalogue" if orphans is None
                     else f"{len(stale)} stale and {len(extra)} orphaned page(s)")
            print(f"errkit {command} --check: {found}; run `errkit {command}`", file=sys.stderr)
            return 1
        kind = "generated files" if orphans is None else "site files"
        print(f"errkit {command} --check: {len(files)} {kind} up to date", file=sys.stderr)
        return 0
    try:
        write_all({project / rel: files[rel] for rel in stale}, journal=project / JOURNAL,
                  delete=[project / rel for rel in extra])
    except JournalError as err:
        print(f"errkit {command}: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"errkit {command}: cannot write {getattr(err, 'filename', '') or ''}: {err.strerror or err}; "
              "previous files left intact", file=sys.stderr)
        return 1
    deleted = "" if orphans is None else f", {len(extra)} orphan(s) deleted"
    print(f"errkit {command}: {len(stale)} file(s) written, {len(files) - len(stale)} unchanged{deleted}", file=sys.stderr)
    return 0

"""`errkit generate`: render every derived file from the catalogue, or check that none is stale."""

from __future__ import annotations

import sys
from pathlib import Path

from errkit.core.atomic import write_all
from errkit.core.errors import UsageError
from errkit.catalogue.lint import lint
from errkit.catalogue.model import Catalogue
from errkit.generate import outputs, readme


def render_all(catalogue: Catalogue) -> dict[Path, bytes]:
    """Project-root-relative path -> exact bytes, for every generated file."""
    files: dict[Path, bytes] = {}
    for produce in outputs.PRODUCERS:
        for rel, text in produce(catalogue).items():
            files[Path(rel)] = text.encode("utf-8")
    return files


def stale_files(project: Path, files: dict[Path, bytes]) -> list[Path]:
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


def run(root: Path, check: bool) -> int:
    catalogue = linted_catalogue(root, "generate")
    if catalogue is None:
        return 1
    project = catalogue.project_root
    files = render_all(catalogue) | readme.blocks(project)  # and the README's generated block, if it has one
    stale = stale_files(project, files)
    if check:
        for rel in stale:
            print(f"stale: {rel}", file=sys.stderr)
        if stale:
            print(f"errkit generate --check: {len(stale)} generated file(s) differ from the catalogue; run `errkit generate`",
                  file=sys.stderr)
            return 1
        print(f"errkit generate --check: {len(files)} generated files up to date", file=sys.stderr)
        return 0
    try:
        write_all({project / rel: files[rel] for rel in stale})
    except OSError as err:
        print(f"errkit generate: cannot write {getattr(err, 'filename', '') or ''}: {err.strerror or err}; "
              "previous files left intact", file=sys.stderr)
        return 1
    print(f"errkit generate: {len(stale)} file(s) written, {len(files) - len(stale)} unchanged", file=sys.stderr)
    return 0

"""`errkit fmt`: rewrite entry files in their canonical form (errkit/catalogue/writing.py), or with
`--check` list those that are not."""

from collections.abc import Iterable
from pathlib import Path

from ruamel.yaml.error import YAMLError

from errkit.core.atomic import write_text
from errkit.core import UsageError
from errkit.catalogue.load import entry_files, read_document
from errkit.catalogue.writing import formatted

def format_files(root: Path, paths: Iterable[Path] | None, check: bool) -> tuple[list[Path], list[str]]:
    changed, problems = [], []
    if paths is None and not root.is_dir():
        raise UsageError(f"{root}: no such catalogue folder")
    # a folder given is a catalogue: its entry files, as `errkit lint` reads them
    targets = [f for p in paths for f in (entry_files(p) if p.is_dir() else [p])] if paths is not None else entry_files(root)
    for path in targets:
        data, findings = read_document(path, str(path))
        if findings:
            problems.extend(str(f) for f in findings)
            continue
        text = path.read_text(encoding="utf-8")
        try:
            new = formatted(text)
        except YAMLError as err:
            problems.append(f"{path}:1:1: yaml-syntax: {err}")
            continue
        if new != text:
            changed.append(path)
            if not check:
                write_text(path, new)
    return changed, problems


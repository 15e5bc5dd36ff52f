"""Each producer turns the catalogue into {project-relative path: text}."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from errkit.catalogue import spec
from errkit.catalogue.load import SCHEMA_FILE
from errkit.catalogue.model import Catalogue
from errkit.generate.render import HEADER


def _json(data) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def schema(catalogue: Catalogue) -> dict[str, str]:
    """JSON Schema of entry files, from the same definition the loader validates with."""
    root = catalogue.root.name

    def header(doc: dict) -> None:
        doc["$comment"] = HEADER
        doc["description"] = "One errkit catalogue entry (catalog/<area>/<CODE>-<slug>.yaml)."

    return {f"{root}/{SCHEMA_FILE}": _json(spec.json_schema(spec.ENTRY, "errkit catalogue entry", header))}


from errkit.generate.index import index  # noqa: E402
from errkit.generate.site import pages  # noqa: E402
from errkit.generate.validators import validators  # noqa: E402

PRODUCERS: tuple[Callable[[Catalogue], dict[str, str]], ...] = (schema, validators, index, pages)


def render_all(catalogue: Catalogue) -> dict[Path, bytes]:
    """Project-root-relative path -> exact bytes, for every generated file."""
    files: dict[Path, bytes] = {}
    for produce in PRODUCERS:
        for rel, text in produce(catalogue).items():
            files[Path(rel)] = text.encode("utf-8")
    return files

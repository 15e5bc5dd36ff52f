"""The canonical text of an entry file, the one form `errkit fmt`, `new`, `import` and `scan --emit`
leave: the same data, comments and key order, ruamel.yaml's layout, the editor's schema modeline
first. Here, not in errkit/authoring/, because `scan --emit` writes drafts too and the scan side
may import the catalogue side only."""

import io

from errkit.catalogue.load import SCHEMA_FILE, yaml

MODELINE = f"# yaml-language-server: $schema=../{SCHEMA_FILE}"


def formatted(text: str) -> str:
    """The canonical form of an entry file: same data, comments and key order; our layout."""
    data = yaml().load(text)
    buffer = io.StringIO()
    yaml().dump(data, buffer)
    out = buffer.getvalue()
    if not out.startswith("# yaml-language-server:"):
        out = MODELINE + "\n" + out
    return out.rstrip("\n") + "\n"


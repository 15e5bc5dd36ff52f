"""Entry YAML, written once: the document `errkit new`, `import` and `scan --emit` build from plain
fields (`entry_document`), and the canonical text every entry file is left in (`entry_text`,
`formatted`: the same data, comments and key order, ruamel.yaml's layout, the editor's schema
modeline first; `errkit fmt` applies it). Here, not in errkit/authoring/, because `scan --emit`
writes drafts too and the scan side may import the catalogue side only."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

from errkit.catalogue import spec
from errkit.catalogue.load import SCHEMA_FILE, yaml

MODELINE = f"# yaml-language-server: $schema=../{SCHEMA_FILE}"


def _keys(record: spec.Record) -> tuple[str, ...]:
    return tuple(f.name for f in record.fields)


def _entry_keys() -> tuple[str, ...]:
    keys = [k for k in _keys(spec.ENTRY) if k != "explain_only"]
    keys.insert(keys.index("location") + 1, "explain_only")
    return tuple(keys)


# The order an entry's keys are written in: the entry format's (errkit/catalogue/spec.py), except
# that `explain_only` follows the message and where it is raised, where every writer has put it.
ENTRY_KEYS = _entry_keys()
FIX_KEYS = _keys(spec.FIX)
PARAM_KEYS = _keys(spec.PARAM)
VARIANT_KEYS = _keys(spec.VARIANT)
ORIGIN_KEYS = _keys(spec.ORIGIN)
EXAMPLE_KEYS = _keys(spec.EXAMPLES)

# Code and prose written as literal blocks (`|`) when they span lines; a message never is.
BLOCK_TEXT = frozenset({"explanation", "setup", "then", "before", "after"})


def quoted(text: str) -> str:
    """`text` written in double quotes (a scaffold's sample message), whatever it holds."""
    return DoubleQuotedScalarString(text)


def _block(value: Any) -> Any:
    """A literal block for text that spans lines; anything else as it is."""
    return LiteralScalarString(value) if isinstance(value, str) and "\n" in value else value


def _ordered(fields: Mapping[str, Any], keys: tuple[str, ...], what: str) -> list[tuple[str, Any]]:
    """`fields` in the format's key order, those that are None left out."""
    unknown = [k for k in fields if k not in keys]
    if unknown:
        raise ValueError(f"not a field of {what}: {', '.join(map(repr, unknown))}")
    return [(k, fields[k]) for k in keys if fields.get(k) is not None]


def _record(fields: Mapping[str, Any], keys: tuple[str, ...], what: str) -> CommentedMap:
    return CommentedMap((k, _block(v) if k in BLOCK_TEXT else v) for k, v in _ordered(fields, keys, what))


def params_block(params: Mapping[str, Mapping[str, Any]]) -> CommentedMap:
    """name -> {type, description, ...}: one mapping per param, in the caller's order."""
    return CommentedMap((name, CommentedMap(_ordered(param, PARAM_KEYS, "a param"))) for name, param in params.items())


def examples_block(examples: Mapping[str, list[Mapping[str, Any]]]) -> CommentedMap:
    """{bad: [rows], good: [rows]}, each row one flow-style line (`- {value: 0}`); tuples as lists."""
    block = CommentedMap()
    for key, rows in _ordered(examples, EXAMPLE_KEYS, "examples"):
        seq = CommentedSeq()
        for row in rows:
            flow = CommentedMap((name, list(v) if isinstance(v, tuple) else v) for name, v in row.items())
            flow.fa.set_flow_style()
            seq.append(flow)
        block[key] = seq
    return block


def fixes_block(fixes: list[Mapping[str, Any]]) -> CommentedSeq:
    """The fixes, keys in the format's order, snippets that span lines as literal blocks."""
    return CommentedSeq(_record(fix, FIX_KEYS, "a fix") for fix in fixes)


def variants_block(variants: list[Mapping[str, Any]]) -> CommentedSeq:
    """The other wordings, keys in the format's order, each one's aliases on one flow-style line."""
    out = CommentedSeq()
    for fields in variants:
        variant = _record(fields, VARIANT_KEYS, "a variant")
        if "aliases" in variant:
            variant["aliases"] = CommentedMap(variant["aliases"])
            variant["aliases"].fa.set_flow_style()
        out.append(variant)
    return out


def origin_block(origin: Mapping[str, Any]) -> CommentedMap:
    """Provenance of an imported entry; text that spans lines (its source code) as literal blocks."""
    return CommentedMap((k, _block(v)) for k, v in _ordered(origin, ORIGIN_KEYS, "an origin"))


_BLOCKS = {"params": params_block, "examples": examples_block, "fixes": fixes_block,
           "variants": variants_block, "origin": origin_block}


def entry_document(fields: Mapping[str, Any], comments: Mapping[str, str] | None = None) -> CommentedMap:
    """An entry as a ruamel.yaml document, from plain fields (str, int, bool, lists, dicts; None
    leaves a field out, an empty list stays `[]`): keys in ENTRY_KEYS order, the blocks above, a
    list as a block sequence, and `comments` (key -> text) written as `# text` lines above keys."""
    entry = CommentedMap()
    for key, value in _ordered(fields, ENTRY_KEYS, "an entry"):
        if key in _BLOCKS:
            entry[key] = _BLOCKS[key](value)
        elif isinstance(value, (list, tuple)):
            entry[key] = CommentedSeq(value)
        else:
            entry[key] = _block(value) if key in BLOCK_TEXT else value
    for key, text in (comments or {}).items():
        entry.yaml_set_comment_before_after_key(key, before=text)
    return entry


def entry_text(document: CommentedMap, header: str | None = None) -> str:
    """The file for `document`: the modeline, `header` as `#` lines, the canonical dump."""
    buffer = io.StringIO()
    yaml().dump(document, buffer)
    lines = [MODELINE, *(f"# {line}" for line in (header.splitlines() if header else []))]
    return formatted("\n".join(lines) + "\n" + buffer.getvalue())


def formatted(text: str) -> str:
    """The canonical form of an entry file: same data, comments and key order; our layout."""
    data = yaml().load(text)
    buffer = io.StringIO()
    yaml().dump(data, buffer)
    out = buffer.getvalue()
    if not out.startswith("# yaml-language-server:"):
        out = MODELINE + "\n" + out
    return out.rstrip("\n") + "\n"

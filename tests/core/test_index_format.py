"""errkit/core/index_format.py is the compiled index's one definition: the index is written with its
keys, the Python matcher reads its constants and patterns, the browser's matcher gets them written
into match.js by `errkit generate` (no copy by hand), and site/docs/contributing/index-format.md
describes the same format."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys

import pytest

from support import ROOT, bundled_catalogue
from errkit.core import index_format
from errkit.core.regex import Lazy
from errkit.explain.matching.index import Index
from errkit.generate import index as index_module
from errkit.generate import assets, site

CATALOGUE = bundled_catalogue()
SOURCE_JS = ROOT / "errkit" / "generate" / "site_assets" / "match.js"
PAGE = ROOT / "site" / "docs" / "contributing" / "index-format.md"
# what explain's index cache (errkit/explain/registry.py) adds to the records it reads
CACHE_KEYS = {"blob", "catalogues", "numbered", "plan", "vetted", "printed"}  # explain's index cache adds them (matching/index.py prepared)


# -- a light module of the core ---------------------------------------------------------------------


def test_index_format_imports_only_the_core_and_nothing_heavy():
    tree = ast.parse((ROOT / "errkit" / "core" / "index_format.py").read_text())
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imported and all(m.startswith("errkit.core") for m in imported), imported
    probe = ("import sys; before = set(sys.modules); import errkit.core.index_format; "
             "print(' '.join(sorted(set(sys.modules) - before)))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert "errkit.core.index_format" in loaded
    assert not {"re", "enum", "json"} & set(loaded), loaded
    assert [m for m in loaded if m.startswith("errkit") and m.split(".")[:2] not in (["errkit"], ["errkit", "core"])] == [], loaded


# Imports of the explain side left in generate (module, the function holding it): may only shrink.
GENERATE_READS_EXPLAIN = {("examples.py", "example_suggestions")}


def _imports(node: ast.AST, where: str | None = None):
    """(module imported, the function holding the import or None) of every import under `node`."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ImportFrom):
            yield child.module or "", where
        elif isinstance(child, ast.Import):
            yield from ((a.name, where) for a in child.names)
        else:
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else where
            yield from _imports(child, inner)


def test_generate_never_imports_the_explain_side():
    found = {(path.name, where) for path in sorted((ROOT / "errkit" / "generate").rglob("*.py"))
             for module, where in _imports(ast.parse(path.read_text())) if module.startswith("errkit.explain")}
    assert found <= GENERATE_READS_EXPLAIN, found - GENERATE_READS_EXPLAIN


# -- the Python matcher reads it ----------------------------------------------------------------------


def test_the_matcher_uses_the_formats_own_objects():
    import importlib

    rooms = [importlib.import_module(f"errkit.explain.matching.{path.stem}")
             for path in (ROOT / "errkit" / "explain" / "matching").glob("*.py")]
    shared = [(room, name) for room in rooms for name in index_format.JS_CONSTANTS[1:] + index_format.JS_PATTERNS
              if hasattr(room, name)]
    assert len(shared) > 10
    for room, name in shared:
        assert getattr(room, name) is getattr(index_format, name), (room.__name__, name)
    assert Index({"entries": {}, "wordings": [{"regex": "a b", "key": "b"}]}).regex(0, True).pattern == \
        index_format.at_line_end("a b")


def _record_keys() -> set[str]:
    f = index_format
    return set(f.TOP_KEYS + f.ENTRY_KEYS + f.ENTRY_OPTIONAL_KEYS + f.PARAM_KEYS + f.FIX_KEYS + f.FIX_OPTIONAL_KEYS + f.CASE_KEYS + f.CASE_OPTIONAL_KEYS + f.READ_KEYS
               + f.WORDING_KEYS + f.RELEASES_KEYS + f.KERNEL_KEYS + f.KERNEL_OPTIONAL_KEYS)


def test_the_matcher_reads_only_keys_of_the_format():
    read = set()
    for path in (ROOT / "errkit" / "explain" / "matching").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                read.add(node.slice.value)
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                read.add(node.args[0].value)
    assert read and read <= _record_keys() | CACHE_KEYS, read - _record_keys() - CACHE_KEYS


# -- generate writes it -------------------------------------------------------------------------------


def test_every_record_has_the_formats_keys():
    data = index_module.build(CATALOGUE)  # (build checks each record)
    assert tuple(data) == index_format.TOP_KEYS and data["format"] == index_format.VERSION
    wording = dict(data["wordings"][0], extra=1)
    with pytest.raises(ValueError, match="wording 0 .*'extra'"):
        index_module.checked({**data, "wordings": [wording]})
    entry = {k: v for k, v in next(iter(data["entries"].values())).items() if k != "docs_url"}
    with pytest.raises(ValueError, match="entry"):
        index_module.checked({**data, "entries": {"X": entry}})

    shown = assets.site_index(CATALOGUE)
    assert tuple(shown) == index_format.TOP_KEYS + index_format.SITE_TOP_KEYS
    for entry in shown["entries"].values():
        optional = tuple(k for k in index_format.ENTRY_OPTIONAL_KEYS if k in entry)
        assert tuple(entry) == index_format.ENTRY_KEYS + optional + index_format.SITE_ENTRY_KEYS


# -- the browser's matcher gets it written in -----------------------------------------------------------


def _match_js() -> str:
    return assets.static_assets()["match.js"]


def test_a_changed_constant_changes_the_javascript(monkeypatch):
    before = _match_js()
    assert "SHORTLIST: 40," in before and "FORMAT = {}" not in before
    monkeypatch.setattr(index_format, "SHORTLIST", 41)
    monkeypatch.setattr(index_format, "NEXT_TRACEBACK", "Traceback (most recent call first)")
    monkeypatch.setattr(index_format, "WORD", Lazy(r"[A-Za-z_][A-Za-z0-9_]*/x"))
    after = _match_js()
    assert after != before
    assert "SHORTLIST: 41," in after and "SHORTLIST: 40," not in after
    assert 'NEXT_TRACEBACK: "Traceback (most recent call first)",' in after
    assert r'WORD: "[A-Za-z_][A-Za-z0-9_]*\\\/x",' in after  # translated to JavaScript syntax, escaped as a string
    assert site.pages(CATALOGUE)["site/docs/assets/errkit/match.js"] == after  # what `errkit generate` writes


def test_match_js_reads_every_shared_name_from_format_and_copies_none():
    source = SOURCE_JS.read_text()
    read = set(re.findall(r"\bFORMAT\.([A-Z_]+)\b", source))
    shared = set(index_format.JS_CONSTANTS + index_format.JS_PATTERNS)
    assert read == shared - {"VERSION"}, (read ^ (shared - {"VERSION"}))
    assert assets.FORMAT_LINE in source
    # no hand copy of a constant: tagged copies (`// match.SHORTLIST`) and the values themselves
    assert not re.findall(r"// (?:match|matching|explain)\.[A-Z_]{2,}\b", source)
    for name in index_format.JS_CONSTANTS:
        value = getattr(index_format, name)
        if isinstance(value, int) and value > 9:
            assert not re.search(rf"(?<![\w.]){value}(?![\w.])", source), f"match.js holds {name}'s value {value}"
        if isinstance(value, str):
            assert json.dumps(value) not in source and repr(value) not in source, f"match.js holds {name}'s value"


def test_match_js_names_only_python_that_exists():
    """A `// matching.ROOM.X` comment says which Python of errkit/explain/matching/ a piece of
    match.js ports: X must exist there."""
    import importlib

    names = re.findall(r"//.*?\bmatching\.([a-z]+)\.([A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_])", SOURCE_JS.read_text())
    assert len(names) > 20
    for room, dotted in names:
        obj = importlib.import_module(f"errkit.explain.matching.{room}")
        for part in dotted.split("."):
            assert hasattr(obj, part), f"match.js names matching.{room}.{dotted}, which errkit/explain/matching/ does not have"
            obj = getattr(obj, part)


# -- the page that describes it -------------------------------------------------------------------------


def _sections() -> dict[str, str]:
    parts = re.split(r"^## (.+)$", PAGE.read_text(), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def _first_cells(text: str) -> list[str]:
    return re.findall(r"^\| `([^`]+)` \|", text, flags=re.M)


def test_the_format_page_lists_every_key():
    f = index_format
    sections = _sections()
    tables = {
        "Top level": f.TOP_KEYS, "Entry records": f.ENTRY_KEYS + f.ENTRY_OPTIONAL_KEYS, "Param records": f.PARAM_KEYS,
        "Fix records": f.FIX_KEYS + f.FIX_OPTIONAL_KEYS, "Read records": f.READ_KEYS, "Wording records": f.WORDING_KEYS,
        "Releases records": f.RELEASES_KEYS, "Kernel records": f.KERNEL_KEYS + f.KERNEL_OPTIONAL_KEYS,
        "The site's index.json": f.SITE_TOP_KEYS + f.SITE_ENTRY_KEYS,
    }
    for title, keys in tables.items():
        assert title in sections, f"{PAGE.name} has no section {title!r}"
        assert tuple(_first_cells(sections[title])) == keys, f"{PAGE.name}, {title}: the keys of index_format"
    assert f'`"format": {f.VERSION}`' in sections["Version"]
    assert f"`{f.REGEX_FLAVOUR}`" in sections["The site's index.json"]


def test_the_format_page_gives_every_limit_and_pattern():
    sections = _sections()
    rows = re.findall(r"^\| `([A-Z_]+)` \| `(.+?)` \|", sections["Limits and marks"], flags=re.M)
    want = [(name, json.dumps(getattr(index_format, name))) for name in index_format.JS_CONSTANTS if name != "VERSION"]
    assert rows == want, "\n".join(f"| `{n}` | `{v}` |" for n, v in want)
    (block,) = re.findall(r"```text\n(.*?)```", sections["Patterns"], flags=re.S)
    js = dict(assets.js_format())
    width = max(map(len, index_format.JS_PATTERNS))
    lines = [f"{name:<{width}}  /{source}/u" for name in index_format.JS_PATTERNS
             for source in ([js[name]] if isinstance(js[name], str) else js[name])]
    assert block.splitlines() == lines, "the page's patterns, as generated now:\n" + "\n".join(lines)


def test_the_format_page_is_in_the_sites_nav():
    nav = (ROOT / "site" / "mkdocs.yml").read_text().split("\nnav:\n", 1)[1]
    assert f": {PAGE.relative_to(ROOT / 'site' / 'docs').as_posix()}\n" in nav


def test_line_breaks_are_where_str_splitlines_cuts():
    """LINE_BREAKS is what the browser's matcher cuts a JSON string's text at, for Python's
    str.splitlines() (planted: U+2028 left out -> fails)."""
    cuts = tuple(c for c in map(chr, range(0x110000)) if len(f"a{c}b".splitlines()) == 2)
    assert cuts == index_format.LINE_BREAKS

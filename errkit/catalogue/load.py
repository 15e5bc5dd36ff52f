"""Catalogue files (ruamel.yaml) -> immutable model objects, with source positions kept for messages.

Loading never raises on bad content: every problem becomes a Finding, and an entry whose structure
is broken is left out of the model (the findings say why).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent

from errkit.catalogue import kernels as kernel_rules, spec
from errkit.catalogue.vetting import Verdicts
from errkit.catalogue.model import DEFAULT_BRANCH, DEFAULT_SITE, Case, Catalogue, Entry, Finding, Fix, Group, Kernel, KernelValue, Param, Positions, Rule, Settings, Variant

SETTINGS_FILE = "errkit.yaml"
SCHEMA_FILE = "entry.schema.json"
MAX_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class Loaded:
    root: Path
    settings: Settings | None
    entries: tuple[Entry, ...]
    findings: tuple[Finding, ...]
    kernels: Any = field(default_factory=lambda: MappingProxyType({}))
    verdicts: Verdicts = field(default_factory=Verdicts, compare=False, repr=False)

    @property
    def catalogue(self) -> Catalogue | None:
        """The whole catalogue, when its settings loaded (entries with broken structure left out)."""
        return Catalogue(self.root, self.settings, self.entries, self.kernels, self.verdicts) if self.settings else None


def yaml() -> YAML:
    y = YAML()  # round trip: keeps comments and key order
    y.preserve_quotes = True
    y.width = 4096  # never fold long lines: authors wrap prose themselves
    y.indent(mapping=2, sequence=4, offset=2)
    return y


class AnchorRefused(MarkedYAMLError):
    """An anchor (`&name`) or an alias (`*name`) in a catalogue file."""


class PlainComposer(Composer):
    """ruamel.yaml's composer, refusing the first anchor or alias the parser meets, before any node
    is built from it: an alias repeats a node, and aliases of aliases of a list ("billion laughs")
    make a document of a few hundred bytes hold billions of values, which walking it (positions,
    plain) would take minutes and all memory to expand. Catalogue files write each value out."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        if isinstance(event, AliasEvent):
            raise AnchorRefused(None, None, f"an alias (*{event.anchor})", event.start_mark)
        if getattr(event, "anchor", None) is not None:
            raise AnchorRefused(None, None, f"an anchor (&{event.anchor})", event.start_mark)
        return super().compose_node(parent, index)


def plain_yaml() -> YAML:
    """The loader of catalogue files: yaml(), refusing anchors and aliases (PlainComposer)."""
    y = yaml()
    y.Composer = PlainComposer
    return y


KERNELS_DIR = "kernels"  # catalog/kernels/<id>.yaml: one kernel and its rules each


def entry_files(root: Path) -> list[Path]:
    """Entry files: every *.yaml one folder below the catalogue root (kernels/ aside), sorted."""
    return sorted(p for p in root.glob("*/*.yaml") if p.parent.name != KERNELS_DIR)  # directories too: read_document reports them


def load_kernels(root: Path) -> tuple[dict, list[Finding]]:
    """Kernel id -> Kernel, from catalog/kernels/*.yaml (a broken file is a finding, left out)."""
    kernels: dict = {}
    findings: list[Finding] = []
    for path in sorted((root / KERNELS_DIR).glob("*.yaml")):
        display = display_path(path)
        data, found = read_document(path, display)
        findings += found
        if data is None:
            continue
        pos = positions(data, path)
        raw = plain(data)
        problems = spec.validate(spec.KERNEL, raw)
        findings += problems_to_findings(problems, pos, display)
        if problems or not isinstance(raw, dict):
            continue
        if raw["kernel"] in kernels:
            findings.append(Finding(display, 1, 1, "duplicate-code", f"kernel {raw['kernel']!r} is declared twice"))
            continue
        kernels[raw["kernel"]] = build_kernel(raw, pos)
    return kernels, findings


def read_document(path: Path, display: str) -> tuple[Any, list[Finding]]:
    """Parse one YAML file; (None, findings) when it cannot be read or parsed."""
    try:
        if path.is_dir():
            return None, [Finding(display, 1, 1, "unreadable", "is a directory, expected a YAML file")]
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return None, [Finding(display, 1, 1, "unreadable", f"file is {size} bytes; at most {MAX_FILE_BYTES}")]
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        return None, [Finding(display, 1, 1, "yaml-syntax", f"not UTF-8 text (byte {err.start})")]
    except OSError as err:
        return None, [Finding(display, 1, 1, "unreadable", err.strerror or str(err))]
    try:
        data = plain_yaml().load(text)
    except AnchorRefused as err:
        mark = err.problem_mark
        return None, [Finding(display, mark.line + 1, mark.column + 1, "yaml-anchor",
                              f"{err.problem}: catalogue files hold no anchors or aliases; write the value out where it is used")]
    except MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        what = " ".join(x for x in (err.context, err.problem) if x)
        return None, [Finding(display, line, col, "yaml-syntax", what or "invalid YAML")]
    except (YAMLError, ValueError, RecursionError) as err:
        return None, [Finding(display, 1, 1, "yaml-syntax", str(err).splitlines()[0] if str(err) else "invalid YAML")]
    if data is None:
        return None, [Finding(display, 1, 1, "missing-field", "file is empty")]
    lone = _lone_surrogate(data, ())
    if lone is not None:
        key_path, text = lone
        line, col = positions(data, path).of(key_path)
        return None, [Finding(display, line, col, "yaml-syntax",
                              f"{text!r} holds a lone surrogate (a \\ud800-\\udfff escape), which no UTF-8 file can hold")]
    return data, []


def _lone_surrogate(node: Any, key_path: tuple) -> tuple[tuple, str] | None:
    """(key path, text) of the first key or string value holding a lone surrogate (YAML's "\\ud800"
    escape makes one), else None."""
    if isinstance(node, dict):
        children = [(key_path + (key,), value) for key, value in node.items()]
        texts = [(key_path + (key,), key) for key in node] + children
    elif isinstance(node, list):
        children = texts = [(key_path + (i,), item) for i, item in enumerate(node)]
    else:
        return None
    for where, text in texts:
        if isinstance(text, str) and any("\ud800" <= ch <= "\udfff" for ch in text):
            return where, text
    for where, child in children:
        found = _lone_surrogate(child, where)
        if found:
            return found
    return None


def positions(data: Any, path: Path) -> Positions:
    table: dict[tuple, tuple[int, int]] = {(): (1, 1)}

    def walk(node: Any, key_path: tuple) -> None:
        if isinstance(node, CommentedMap):
            for key in node:
                try:
                    line, col = node.lc.key(key)
                    table[key_path + (key,)] = (line + 1, col + 1)
                except (KeyError, TypeError, AttributeError):
                    pass
                walk(node[key], key_path + (key,))
        elif isinstance(node, CommentedSeq):
            for i, item in enumerate(node):
                try:
                    line, col = node.lc.item(i)
                    table[key_path + (i,)] = (line + 1, col + 1)
                except (KeyError, TypeError, AttributeError, IndexError):
                    pass
                walk(item, key_path + (i,))

    walk(data, ())
    return Positions(path=path, table=MappingProxyType(table))


def plain(node: Any) -> Any:
    """ruamel's commented containers and scalars as plain Python values."""
    if isinstance(node, dict):
        return {str(k): plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


def problems_to_findings(problems: list[spec.Problem], pos: Positions, display: str) -> list[Finding]:
    out = []
    for p in problems:
        line, col = pos.of(p.path)
        where = ".".join(str(k) for k in p.path)
        prefix = f"{where}: " if where and p.rule != "unknown-key" else ""
        out.append(Finding(display, line, col, p.rule, prefix + p.message))
    return out


def _freeze_map(raw: dict | None) -> MappingProxyType:
    return MappingProxyType(dict(raw or {}))


def build_entry(raw: dict, area: str, pos: Positions) -> Entry:
    examples = raw.get("examples") or {}
    return Entry(
        code=raw["code"],
        slug=raw["slug"],
        title=raw["title"],
        area=area,
        exception=raw["exception"],
        message=raw["message"],
        explanation=raw["explanation"],
        params=MappingProxyType(
            {name: Param(name, p["type"], p["description"], bool(p.get("optional", False)), p.get("form"))
             for name, p in (raw.get("params") or {}).items()}
        ),
        check=raw.get("check"),
        explain_only=bool(raw.get("explain_only", False)),
        severity=raw.get("severity", "error"),
        triggers=tuple(raw["triggers"]),
        situations=tuple(raw.get("situations") or ()),
        fixes=tuple(
            Fix(f["summary"], _freeze_map(f.get("suggest")), f.get("before"), f.get("after"), bool(f.get("alternative", False)),
                _freeze_map(f.get("sets")), f.get("unverified"), f.get("setup"), f.get("then"), f.get("kernel"),
                f.get("site"), tuple(Case(c["when"], _freeze_map(c["assume"]), _freeze_map(c["suggest"])) for c in f.get("cases") or ()))
            for f in raw["fixes"]
        ),
        prevention=tuple(raw.get("prevention") or ()),
        tags=tuple(raw.get("tags") or ()),
        variants=tuple(
            Variant(v["message"], v["source"], v.get("exception"), _freeze_map(v.get("aliases")), v.get("location"), v.get("note"),
                    v.get("releases"), v.get("kernel"), tuple(v.get("raised_by") or ()), bool(v.get("located_only", False)))
            for v in raw.get("variants") or ()
        ),
        bad_examples=tuple(_freeze_map(x) for x in examples.get("bad") or ()),
        good_examples=tuple(_freeze_map(x) for x in examples.get("good") or ()),
        related=tuple(raw.get("related") or ()),
        origin=_freeze_map(raw.get("origin")),
        source=raw.get("source"),
        location=raw.get("location"),
        aliases=_freeze_map(raw.get("aliases")),
        releases=raw.get("releases"),
        kernel=raw.get("kernel"),
        raised_by=tuple(raw.get("raised_by") or ()),
        setup=raw.get("setup"),
        then=raw.get("then"),
        traced=raw.get("traced"),
        reads=tuple(raw.get("reads") or ()),
        implies=MappingProxyType(dict(raw.get("implies") or {})),
        needs_context=bool(raw.get("needs_context")),
        positions=pos,
    )


def build_kernel(raw: dict, pos: Positions) -> Kernel:
    return Kernel(
        id=raw["kernel"],
        title=raw["title"],
        source=raw["source"],
        values=MappingProxyType({name: KernelValue(name, p["type"], p["description"], bool(p.get("optional", False)), p.get("form"),
                                                   p.get("from"), tuple((c["value"], c["when"]) for c in p.get("cases") or ()))
                                 for name, p in raw["values"].items()}),
        rules=tuple(Rule(r["name"], r["check"], r["says"], r.get("enforced", "check")) for r in raw["rules"]),
        names=tuple(raw.get("names") or ()),
        framework=raw.get("framework", "jax"),
        positions=pos,
    )


def build_settings(raw: dict, pos: Positions, project_root: Path | None = None) -> Settings:
    groups = {
        name: Group(name, g["description"], tuple(g["args"]), MappingProxyType(dict(g.get("bindings") or {})), tuple(g["checks"]))
        for name, g in (raw.get("groups") or {}).items()
    }
    return Settings(
        project=raw["project"],
        version=raw["version"],
        docs_url=raw["docs_url"],
        validators=raw.get("validators"),
        groups=MappingProxyType(groups),
        repo_url=raw.get("repo_url"),
        install=raw.get("install"),
        retired=tuple(raw.get("retired") or ()),
        positions=pos,
        name=raw.get("name"),
        prefix=raw.get("prefix"),
        branch=raw.get("branch") or DEFAULT_BRANCH,
        index=raw.get("index"),
        site=raw.get("site", DEFAULT_SITE) or None,
        project_root=project_root,
    )


# What [tool.errkit] may set: every settings key but the catalogue's own content (groups, retired).
_TOOL_SETTINGS = spec.Record(fields=tuple(
    spec.Field(f.name, f.kind, False, f.description) for f in spec.SETTINGS.fields if f.name not in ("groups", "retired")
))


def load_settings(root: Path) -> tuple[Settings | None, list[Finding]]:
    """The catalogue's settings: its errkit.yaml overlaid by the project's [tool.errkit] table
    (errkit/core/settings.py says which table applies). Without either the folder is a bare set of
    entries (drafts, an import): linted, not generated."""
    from errkit.core import settings

    findings: list[Finding] = []
    try:
        project_root, pyproject, tool = settings.tool_table_for(str(root))
    except settings.SettingsError as err:
        return None, [Finding(str(err).partition(": ")[0], 1, 1, "bad-settings", str(err).partition(": ")[2])]
    if pyproject is not None:
        shown = display_path(Path(pyproject))
        for p in spec.validate(_TOOL_SETTINGS, tool):
            where = ".".join(str(k) for k in p.path)
            findings.append(Finding(shown, 1, 1, "bad-settings", f"[tool.errkit] {where + ': ' if where else ''}{p.message}"))
        if findings:
            return None, findings
    settings_path = root / SETTINGS_FILE
    data, found = read_document(settings_path, display_path(settings_path)) if settings_path.exists() else (None, [])
    findings += found
    if data is None and (found or not tool):
        return None, findings
    raw = plain(data) if data is not None else {}
    pos = positions(data, settings_path) if data is not None else Positions(path=settings_path, table=MappingProxyType({(): (1, 1)}))
    if not isinstance(raw, dict):
        return None, findings + problems_to_findings(spec.validate(spec.SETTINGS, raw), pos, display_path(settings_path))
    merged = {**raw, **tool}
    problems = spec.validate(spec.SETTINGS, merged)
    findings += problems_to_findings(problems, pos, display_path(settings_path))
    if problems:
        return None, findings
    if merged.get("groups") and not merged.get("validators"):
        line, col = pos.of(("groups",))
        findings.append(Finding(display_path(settings_path), line, col, "missing-field",
                                "groups need `validators`: the path of the module they are generated into"))
        return None, findings
    return build_settings(merged, pos, Path(project_root)), findings


def display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_entry_file(path: Path, area: str) -> tuple[Entry | None, list[Finding]]:
    display = display_path(path)
    data, findings = read_document(path, display)
    if data is None:
        return None, findings
    pos = positions(data, path)
    raw = plain(data)
    problems = spec.validate(spec.ENTRY, raw)
    findings = problems_to_findings(problems, pos, display)
    if not isinstance(raw, dict):
        return None, findings
    # Keep linting what is sound: a broken or missing field is replaced by an empty stand-in (its
    # own finding is already reported), so the other rules still run on the rest of the entry.
    broken = {p.path[0] for p in problems if p.path and p.rule != "unknown-key"}
    sound = {k: v for k, v in raw.items() if k not in broken}
    for f in spec.ENTRY.fields:
        if f.required and f.name not in sound:
            sound[f.name] = spec.empty(f.kind)
    return build_entry(sound, area, pos), findings


def load(root: Path) -> Loaded:
    """Load the catalogue under `root`: settings from errkit.yaml, one entry per area/*.yaml."""
    root = Path(root)
    findings: list[Finding] = []
    if not root.exists():
        return Loaded(root, None, (), (Finding(display_path(root), 1, 1, "unreadable", "no such catalogue folder"),))
    if not root.is_dir():
        return Loaded(root, None, (), (Finding(display_path(root), 1, 1, "unreadable", "is not a folder"),))
    settings, found = _guarded(load_settings, root / SETTINGS_FILE, None, root)
    findings += found
    entries = []
    for path in entry_files(root):
        entry, found = _guarded(load_entry_file, path, None, path, path.parent.name)
        findings += found
        if entry is not None:
            entries.append(entry)
    kernels, found = _guarded(load_kernels, root / KERNELS_DIR, {}, root)
    findings += found
    verdicts = Verdicts()  # one table, on the catalogue and on each of its entries and kernels
    entries = [replace(entry, verdicts=verdicts) for entry in entries]
    kernels = {name: replace(kernel, verdicts=verdicts) for name, kernel in kernels.items()}
    vet_all(verdicts, entries, kernels, settings)
    return Loaded(root, settings, tuple(entries), tuple(findings), MappingProxyType(kernels), verdicts)


def vet_all(verdicts: Verdicts, entries, kernels, settings) -> None:
    """Vet every expression and parse every template the catalogue holds, once, in the scope each is
    read in (errkit/catalogue/vetting.py): an entry's check over its params, each suggestion with
    `valid(...)` written out (over the params; a case's over them and what the case assumes), each
    message and variant, each kernel's rules over its values, each group's bindings over its
    arguments and bindings with the bindings' helpers. The suggestions solved for the kernels' rules
    (errkit/catalogue/kernels.py) are not: solving takes seconds and only the generators read them,
    so they are solved, and their expressions vetted, when first asked for."""
    from errkit.core import runtime
    from errkit.core.helpers import HELPERS

    for kernel in kernels.values():
        for rule in kernel.rules:
            verdicts.refusal(rule.check, kernel.values.keys())
    for entry in entries:
        if entry.check is not None:
            verdicts.refusal(entry.check, entry.params.keys())
        for variant in entry.wordings:
            verdicts.refused_template(variant.message)
        for fix in entry.fixes:
            kernel = kernel_rules.fix_kernel(entry, fix, kernels)
            for source in fix.suggest.values():
                verdicts.refusal(kernel_rules.expanded(source, kernel, entry.params.keys()), entry.params.keys())
            for case in fix.cases:
                names = set(entry.params) | set(case.assume)
                for source in case.suggest.values():
                    verdicts.refusal(kernel_rules.expanded(source, kernel, names), names)
    binding_helpers = set(HELPERS) | set(runtime.BINDINGS)
    for group in settings.groups.values() if settings is not None else ():
        for source in group.bindings.values():
            verdicts.refusal(source, set(group.args) | set(group.bindings), binding_helpers)


def _guarded(read, path: Path, nothing: Any, *args) -> tuple[Any, list[Finding]]:
    """`read(*args)`: what it loaded and its findings; when reading fails (a bug of errkit's that
    some file reaches), `nothing` loaded and an `internal-lint-error` at the file: loading never
    raises."""
    try:
        return read(*args)
    except Exception as err:  # noqa: BLE001 - a failure to read is a finding, never a crash
        return nothing, [Finding(display_path(path), 1, 1, "internal-lint-error",
                                 f"reading it failed ({type(err).__name__}: {err}): a bug of errkit's, please "
                                 "report it; until it is fixed, change what this file holds")]

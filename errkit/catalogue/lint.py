"""Lint: the rules of each entry (errkit/catalogue/entry_rules.py) and the rules across entries
(here), run over a loaded catalogue, its files, its kernels and its settings; a rule that fails is
a finding, never a crash. Each rule is a small named function yielding Findings; the rules' names,
what they report and their fixtures are registered in errkit/catalogue/rules.py."""

from __future__ import annotations

import builtins
import re
from collections import defaultdict
from pathlib import Path
from typing import Callable, Iterable, Iterator

from errkit.core import expr, helpers, runtime, template
from errkit.catalogue import wordings
from errkit.catalogue.load import Loaded, display_path, load
from errkit.catalogue.model import Entry, Finding, Kernel, Settings
from errkit.catalogue.vetting import Verdicts
from errkit.catalogue.entry_rules import ENTRY_RULES, MODULE_NAMES, Context, at, has_fixed_text, place, reserved_name, too_wide


# -- rules across entries, and a kernel's ------------------------------------------------------------


def kernel_rules(kernel: Kernel) -> Iterator[Finding]:
    """Each rule of a kernel is an expression over the kernel's values."""
    path = display_path(kernel.positions.path) if kernel.positions else kernel.id
    for i, rule in enumerate(kernel.rules):
        err = kernel.verdicts.refusal(rule.check, kernel.values.keys())
        if err is not None:
            line, col = kernel.positions.of(("rules", i, "check")) if kernel.positions else (1, 1)
            yield Finding(path, line, col, err.rule, f"{rule.check!r}: {err}")


def duplicates(entries: Iterable[Entry]) -> Iterator[Finding]:
    for attr in ("code", "slug"):
        seen: dict[str, Entry] = {}
        for entry in entries:
            key = getattr(entry, attr)
            if key in seen:
                first = seen[key]
                yield at(entry, (attr,), "duplicate-code" if attr == "code" else "duplicate-slug",
                         f"{attr} {key!r} is already used by {display_path(first.source_path)}")
            else:
                seen[key] = entry
    classes: dict[str, Entry] = {}  # the generated module's exception classes, named by the slugs
    for entry in entries:
        name = entry.class_name
        first = classes.setdefault(name, entry)
        if first is not entry and first.slug != entry.slug:
            yield at(entry, ("slug",), "duplicate-slug",
                     f"slug {entry.slug!r} makes the exception class {name}, as {first.slug!r} of {display_path(first.source_path)} does")
        elif name in dir(builtins) or name in MODULE_NAMES:
            yield at(entry, ("slug",), "duplicate-slug",
                     f"slug {entry.slug!r} makes the exception class {name}, the name of "
                     f"{'a Python builtin' if name in dir(builtins) else 'a class the generated module has'}, "
                     "which the generated module would shadow: choose another slug")


def retired_codes(settings: Settings, entries: Iterable[Entry]) -> Iterator[Finding]:
    for entry in entries:
        if entry.code in settings.retired:
            yield at(entry, ("code",), "retired-code", f"{entry.code} was retired and is never reused; take a new code")


def related(entries: Iterable[Entry]) -> Iterator[Finding]:
    codes = {e.code for e in entries}
    for entry in entries:
        for i, code in enumerate(entry.related):
            if code not in codes:
                yield at(entry, ("related", i), "unknown-related", f"related code {code!r} is not in the catalogue")


def apart_by_location(a, b) -> bool:
    """Two wordings raised in different files: explain tells them apart by a traceback's last frame."""
    def file_of(w):
        return (w.variant.location or "").partition(" in ")[0].partition(":")[0]
    return bool(file_of(a) and file_of(b) and file_of(a) != file_of(b))


def overlapping_wordings(entries: Iterable[Entry]) -> Iterator[Finding]:
    """Two entries whose wordings can match the same rendered message."""
    compiled = [(w, re.compile(w.pattern)) for e in entries for w in wordings.wordings(e)
                if not (w.variant.location and not has_fixed_text(w.variant.message))  # told apart by location
                and not any(too_wide(f) for f in w.template.fields)]  # reported by format_specs, never rendered
    reported: set[tuple[str, str]] = set()
    for wording, _ in compiled:
        renderings = []
        for params in wordings.sample_params(wording.entry):
            try:
                renderings.append(wording.render(params))
            except (KeyError, ValueError, TypeError):
                continue
        for other, regex in compiled:
            pair = tuple(sorted((wording.entry.code, other.entry.code)))
            if other.entry.code == wording.entry.code or pair in reported or apart_by_location(wording, other):
                continue
            hit = next((text for text in renderings if regex.fullmatch(text)), None)
            if hit is not None:
                reported.add(pair)
                yield at(wording.entry, wording.key_path, "overlapping-wording",
                         f"{hit!r} matches a wording of {other.entry.code} too ({other.variant.message!r}); "
                         "make the wordings distinct or merge the entries")


def groups(settings: Settings, entries: Iterable[Entry], verdicts: Verdicts) -> Iterator[Finding]:
    by_code = {e.code: e for e in entries}
    where: dict[str, list[str]] = defaultdict(list)
    path = display_path(settings.positions.path) if settings.positions else "errkit.yaml"

    def finding(key_path: tuple, rule: str, message: str) -> Finding:
        line, col = settings.positions.of(key_path) if settings.positions else (1, 1)
        return Finding(path, line, col, rule, message)

    binding_helpers = set(helpers.HELPERS) | set(runtime.BINDINGS)
    for name, group in settings.groups.items():
        base = ("groups", name)
        for i, arg in enumerate(group.args):  # the arguments of validate_<group>, its bindings its variables
            why = reserved_name(arg)
            if why or arg in group.args[:i]:
                yield finding(base + ("args", i), "bad-param-name",
                              f"argument {arg!r} is {why or 'listed twice'}; choose another name")
        for param in group.bindings:
            why = reserved_name(param)
            if why:
                yield finding(base + ("bindings", param), "bad-param-name", f"binding {param!r} is {why}; choose another name")
        for param, source in group.bindings.items():
            err = verdicts.refusal(source, set(group.args) | set(group.bindings), binding_helpers)
            if err is not None:
                yield finding(base + ("bindings", param), err.rule, f"{source!r}: {err}")
        for i, code in enumerate(group.checks):
            entry = by_code.get(code)
            if entry is None:
                yield finding(base + ("checks", i), "group-unknown-code", f"{code} is not in the catalogue")
                continue
            where[code].append(name)
            if entry.explain_only:
                yield finding(base + ("checks", i), "group-explain-only", f"{code} is explain_only: it has no validator")
                continue
            needed = set()
            try:
                needed |= entry.verdicts.expression(entry.check or "True", entry.params.keys()).names
                needed |= {f.name for f in entry.verdicts.template(entry.message).fields}
            except (expr.ExprError, template.TemplateError):
                pass
            for param in sorted(needed - set(group.bindings) - set(group.args)):
                yield finding(base + ("checks", i), "unbound-param", f"{code} needs {param!r}, which group {name!r} does not bind")
    for entry in by_code.values() if settings.prefix else ():
        if not entry.code.startswith(settings.prefix):
            yield at(entry, ("code",), "code-prefix", f"{entry.code} does not start with the catalogue's prefix {settings.prefix!r}")
    for entry in by_code.values() if settings.groups else ():  # no groups: the check_<CODE> functions are the API
        if not entry.explain_only and entry.code not in where:
            yield at(entry, ("code",), "entry-not-in-group",
                     f"{entry.code} is in no validate group of errkit.yaml (add it to one, or mark it explain_only)")
        if len(where.get(entry.code, ())) > 1:
            yield at(entry, ("code",), "entry-in-two-groups", f"{entry.code} is checked by groups {', '.join(where[entry.code])}")


def guarded(check: Callable[..., Iterable[Finding]], where: tuple[str, int, int], *args) -> list[Finding]:
    """The findings of `check(*args)`; when the check itself fails (a bug of errkit's that some
    catalogue text reaches), the findings it made so far and one `internal-lint-error` at `where`
    naming it: lint reports, it never crashes."""
    found: list[Finding] = []
    try:
        found.extend(check(*args))
    except Exception as err:  # noqa: BLE001 - any failure of a check is a finding, never a crash
        path, line, col = where
        found.append(Finding(path, line, col, "internal-lint-error",
                             f"lint's check {check.__name__!r} failed here ({type(err).__name__}: {err}): a bug of "
                             "errkit's, please report it; until it is fixed, change what this file holds near here"))
    return found


def run(loaded: Loaded) -> list[Finding]:
    findings = list(loaded.findings)
    ctx = Context(kernels=loaded.kernels)
    settings = loaded.settings
    whole = (display_path(settings.positions.path) if settings and settings.positions else display_path(loaded.root), 1, 1)
    for kernel in loaded.kernels.values():
        kernel_file = (display_path(kernel.positions.path) if kernel.positions else kernel.id, 1, 1)
        findings.extend(guarded(kernel_rules, kernel_file, kernel))
    for entry in loaded.entries:
        for rule in ENTRY_RULES:
            findings.extend(guarded(rule, place(entry, ("code",)), entry, ctx))
    findings.extend(guarded(duplicates, whole, loaded.entries))
    findings.extend(guarded(related, whole, loaded.entries))
    findings.extend(guarded(overlapping_wordings, whole, loaded.entries))
    if settings:
        findings.extend(guarded(groups, whole, settings, loaded.entries, loaded.verdicts))
        findings.extend(guarded(retired_codes, whole, settings, loaded.entries))
    return sorted(set(findings))


TOP_LEVEL_FILES = ("errkit.yaml",)  # the YAML a catalogue's top level may hold (areas hold the entries)


def stray_files(root: Path) -> Iterator[Finding]:
    """A YAML file at the catalogue's top level is neither settings nor an entry: never silently skipped."""
    if not root.is_dir():
        return
    for path in sorted(root.iterdir()):
        if path.suffix in (".yaml", ".yml") and path.name not in TOP_LEVEL_FILES and path.is_file():
            yield Finding(display_path(path), 1, 1, "stray-file",
                          "a YAML file at the catalogue's top level is not read; move an entry into an area folder")


def lint(root: Path) -> tuple[Loaded, list[Finding]]:
    loaded = load(root)
    return loaded, sorted(set(run(loaded)) | set(stray_files(Path(root))))


def catalogue_of(path: Path) -> Path:
    """The catalogue folder a file belongs to: its own folder for a top-level file (errkit.yaml is
    there), else its area folder's parent."""
    path = Path(path).resolve()
    return path.parent if (path.parent / "errkit.yaml").is_file() else path.parent.parent


def lint_files(paths: list[Path]) -> tuple[list[Loaded], list[Finding]]:
    """Lint the catalogues holding `paths` (as pre-commit passes them); findings of those files only."""
    by_catalogue: dict[Path, set[str]] = {}
    for path in paths:
        if not Path(path).is_file():
            by_catalogue.setdefault(Path(path), set())  # reported by load: no such folder / not a file
            continue
        by_catalogue.setdefault(catalogue_of(path), set()).add(display_path(Path(path)))
    loaded_all, findings = [], []
    for root, wanted in by_catalogue.items():
        if not wanted:
            findings.append(Finding(display_path(root), 1, 1, "unreadable", "no such file"))
            continue
        loaded, found = lint(root)
        loaded_all.append(loaded)
        findings += [f for f in found if f.path in wanted]
    return loaded_all, sorted(set(findings))

"""Rules over the whole catalogue. Each rule is a small named function yielding Findings; the rules'
names, what they report and their fixtures are registered in errkit/catalogue/rules.py."""

from __future__ import annotations

import builtins
import keyword
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Iterable, Iterator, Mapping

from errkit.core import bounds, expr, helpers, normalise, runtime, suggest, template, values
from errkit.catalogue import kernels, wordings, releases, spec
from errkit.catalogue.load import Loaded, display_path, load
from errkit.catalogue.model import Entry, Finding, Kernel, Settings
from errkit.catalogue.vetting import Verdicts, suggestion_code


@dataclass(frozen=True)
class Context:
    """What the entry rules read besides the entry itself: the catalogue's kernels, by id."""

    kernels: Mapping[str, Kernel]


EntryRule = Callable[[Entry, Context], Iterator[Finding]]


def place(entry: Entry, key_path: tuple) -> tuple[str, int, int]:
    """(path, line, column) of a key of the entry's file."""
    line, col = entry.positions.of(key_path) if entry.positions else (1, 1)
    return display_path(entry.source_path) if entry.source_path else entry.code, line, col


def at(entry: Entry, key_path: tuple, rule: str, message: str, severity: str = "error") -> Finding:
    path, line, col = place(entry, key_path)
    return Finding(path, line, col, rule, message, severity)


def _expressions(entry: Entry, ctx: Context) -> Iterator[tuple[tuple, str]]:
    if entry.check is not None:
        yield ("check",), entry.check
    for i, fix in enumerate(entry.fixes):
        for label, source in fix.suggest.items():
            yield ("fixes", i, "suggest", label), _expanded(entry, fix, source, ctx)


def _expanded(entry: Entry, fix, source: str, ctx: Context) -> str:
    """A suggestion with `valid(...)` written out (kernel_use reports what keeps it from being)."""
    return kernels.expanded(source, kernels.fix_kernel(entry, fix, ctx.kernels), entry.params.keys())


# -- per-entry rules ------------------------------------------------------------------------------


def templates(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Each wording parses, and every placeholder names a declared param."""
    for i in range(len(entry.wordings)):
        try:
            wordings.compile_wording(entry, i)
        except wordings.WordingError as err:
            key = ("message",) if i == 0 else ("variants", i - 1, "message")
            yield at(entry, key, err.rule, str(err))
    for i in range(len(entry.reads)):
        try:
            wordings.compile_read(entry, i)
        except wordings.WordingError as err:
            yield at(entry, ("reads", i), err.rule, str(err))


def own_message_fields(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """A validator raises its message as an f-string over its params, so fields must be bare param names."""
    if entry.explain_only:
        return
    try:
        tpl = entry.verdicts.template(entry.message)
    except template.TemplateError:
        return  # reported by `templates`
    for field in tpl.fields:
        if field.name not in entry.params and template.resolve(field, entry.params, {}) is not None:
            yield at(entry, ("message",), "undeclared-placeholder",
                     f"{{{field.name}}}: a validator's own message may only use declared param names")
        elif field.self_doc and field.doc != field.name + "=":
            yield at(entry, ("message",), "bad-template", f"write {{{field.name}=}} without spaces around the name")
        elif any(ch in field.spec for ch in "'\"\\\n"):
            yield at(entry, ("message",), "bad-template", f"{{{field.name}}}: quotes, backslashes and newlines are not allowed in a format spec")


def readable_wordings(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Explain finds a wording in text it reads normalised (errkit/core/normalise.py: curly quotes
    straightened, zero-width characters dropped, Unicode spaces made plain), refusing text with a
    NUL as binary, and the wording's regex reads a run of spaces as ASCII spaces: fixed text that any
    of these would change could never be read back."""
    texts = [(w.key_path, w.template) for w in wordings.wordings(entry)]
    texts += [(("reads", r.index), r.template) for r in wordings.reads(entry)]
    for key, tpl in texts:
        for run in tpl.literals:
            odd = _unreadable(run)
            if odd is not None:
                yield at(entry, key, "bad-template",
                         f"the fixed text {run!r} holds {odd!r}, which explain never reads as it is (a NUL, a space "
                         "other than ASCII's, a character copying changes: curly quotes, zero-width characters, an "
                         "HTML entity, a colour code); write it plainly")
                break


def _unreadable(run: str) -> str | None:
    """The character (or, for an HTML entity or a colour code, the text) of `run` explain cannot read."""
    for ch in run:
        if ch == "\x00" or (ch.isspace() and ch not in " \t\n\r\f\v") or normalise.normalise(ch)[0] != ch:
            return ch
    return run if normalise.normalise(run)[0] != run else None


# Values of each param type a message may be formatted with: what the generated validators pass
# (a float param may be given an int), every example's value of the param, and None when optional.
SPEC_SAMPLES: Mapping[str, tuple] = MappingProxyType({
    "int": (0, -7, 128), "float": (0.5, -2.0, 3, float("inf"), float("nan")), "bool": (True, False),
    "str": ("value", ""), "dtype": ("float32",), "shape": ((2, 3), ()), "bytes": (1 << 20,),
})
MAX_SPEC_NUMBER = 100  # the widest width or precision a format spec may ask for


def too_wide(field: template.Field) -> bool:
    """A format spec asking for a width or precision above MAX_SPEC_NUMBER: never rendered."""
    return any(len(n.lstrip("0")) > 3 or int(n) > MAX_SPEC_NUMBER for n in re.findall(r"[0-9]+", field.spec))


def format_specs(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Each `{name:spec}` of every wording formats every value of its param's type, as rendering
    will (format(value, spec): `{x:int}` is 'Invalid format specifier'), with no width or precision
    above MAX_SPEC_NUMBER (`{x:>1000000000}` would render a gigabyte)."""
    for wording in wordings.wordings(entry):
        for field in wording.template.fields:
            if not field.spec:
                continue
            shown = f"{{{field.expr}{'!' + field.conversion if field.conversion else ''}:{field.spec}}}"
            if too_wide(field):
                yield at(entry, wording.key_path, "bad-template",
                         f"{shown}: a width or precision above {MAX_SPEC_NUMBER} in a format spec")
                continue
            param = entry.params[wording.param_of(field)]
            kind = field.spec[-1:]
            if param.type in ("int", "bool") and (kind == "c" or (kind in "bBoxX" and "#" not in field.spec)):
                yield at(entry, wording.key_path, "bad-template",
                         f"{shown}: explain cannot read the value back from this format spec (10 is written "
                         f"{format(10, field.spec)!r}): write a base with its prefix ('#x', '#b', '#o')")
                continue
            samples = list(SPEC_SAMPLES.get(param.type, ()))
            for raw in (*entry.bad_examples, *entry.good_examples):
                try:
                    samples += [values.coerce(param.type, raw[param.name])] if param.name in raw else []
                except values.ValueTypeError:
                    continue  # reported by `examples`
            if param.optional:
                samples.append(None)
            for value in samples:
                try:
                    values.format_field(value, field.self_doc, field.conversion, field.spec)
                except Exception as err:  # noqa: BLE001 - whatever format() raises, rendering would
                    what = "None (the param is optional)" if value is None else f"the {param.type} {value!r}"
                    yield at(entry, wording.key_path, "bad-template",
                             f"{shown}: format spec {field.spec!r} cannot format {what}: {type(err).__name__}: {err}")
                    break


def exception_kind(entry: Entry, ctx: Context) -> Iterator[Finding]:
    if not entry.explain_only and entry.exception not in spec.EXCEPTIONS:
        yield at(entry, ("exception",), "wrong-type",
                 f"a validator raises {', '.join(spec.EXCEPTIONS)}; {entry.exception} is for explain_only entries")


def has_fixed_text(message: str) -> bool:
    try:
        return any(len(tok) >= 3 for run in template.parse(message).literals for tok in run.split())
    except template.TemplateError:
        return True  # reported by `templates`


def empty_messages(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """A message with no fixed text can only be recognised by where it was raised."""
    for i, wording in enumerate(entry.wordings):
        if not has_fixed_text(wording.message) and not wording.location:
            key = ("message",) if i == 0 else ("variants", i - 1, "message")
            what = "an empty message" if not wording.message.strip() else "a message with no fixed text"
            yield at(entry, key, "empty-message",
                     f"{what} would match anything: give it a `location` (file, optionally ' in function') so "
                     "explain tries it only for exceptions raised there")
    for i, variant in enumerate(entry.variants):
        if variant.located_only and not variant.location:
            yield at(entry, ("variants", i, "located_only"), "empty-message",
                     "a located_only wording needs a `location`: explain tries it only for exceptions raised there")
    if not entry.message.strip() and not entry.explain_only:
        yield at(entry, ("message",), "empty-message", "a validator must raise a message")


def _prose(entry: Entry) -> Iterator[tuple[tuple, str]]:
    """(key path, text) of every prose field a reader sees on the entry's page."""
    yield ("title",), entry.title
    yield ("explanation",), entry.explanation
    for name, param in entry.params.items():
        yield ("params", name, "description"), param.description
    for field_name in ("triggers", "situations", "prevention"):
        for i, text in enumerate(getattr(entry, field_name)):
            yield (field_name, i), text
    for i, fix in enumerate(entry.fixes):
        yield ("fixes", i, "summary"), fix.summary


def unfinished_drafts(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """A draft (`errkit scan --emit`) marks the prose a reviewer writes with TODO: it cannot be
    published until each is written."""
    for key, text in _prose(entry):
        if isinstance(text, str) and text.lstrip().upper().startswith("TODO"):
            yield at(entry, key, "unfinished-draft",
                     f"{'.'.join(map(str, key))} is still a draft's TODO: write it before the entry is published")


# Names of the generated validators module (errkit/generate/templates/validators.py.j2) besides its
# exception classes, its check_ and validate_ functions and its private `_rt_`, `_fx_`, `_tr_` ones.
MODULE_NAMES = frozenset({"CatalogueError", "ERRORS", "CHECKS", "DOCS_BASE", "DOCS_VERSION", "DOCS_URL_ENV"})


def reserved_name(name: str) -> str | None:
    """Why `name` cannot be a param, an argument or a binding of generated code, or None: it would
    not compile (a keyword), or would shadow what the generated code calls (a helper, a builtin
    such as getattr or type, a name of the module, a private helper's `_` prefix)."""
    if keyword.iskeyword(name):
        return "a Python keyword"
    if name in helpers.HELPERS or name in runtime.BINDINGS:
        return "a helper name"
    if name.startswith("_"):
        return "private (the generated module's helpers start with '_')"
    if name in vars(builtins):  # (dir() sorts a new list each call)
        return "a Python builtin"
    if name in MODULE_NAMES or name.endswith("Error"):
        return "a name of the generated module (its exception classes end in 'Error')"
    return None


def param_names(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Params become Python names in generated code: no keywords, helper names, builtins."""
    for name in entry.params:
        why = reserved_name(name)
        if why:
            yield at(entry, ("params", name), "bad-param-name", f"{name!r} is {why}; choose another name")


def unused_params(entry: Entry, ctx: Context) -> Iterator[Finding]:
    used: set[str] = set()
    for wording in wordings.wordings(entry):
        used.update(c.param for c in wording.captures)
    for read in wordings.reads(entry):
        used.update(c.param for c in read.captures)
    for _, source in _expressions(entry, ctx):
        if not entry.verdicts.refusal(source, entry.params.keys()):
            used |= entry.verdicts.expression(source, entry.params.keys()).names
    for name in entry.params:
        if name not in used:
            yield at(entry, ("params", name), "unused-param", f"param {name!r} is used by no wording, check or suggestion")


def expressions(entry: Entry, ctx: Context) -> Iterator[Finding]:
    for key, source in _expressions(entry, ctx):
        err = entry.verdicts.refusal(source, entry.params.keys())
        if err is not None:
            yield at(entry, key, err.rule, f"{source!r}: {err}")
    if entry.check is None and not entry.explain_only:
        yield at(entry, (), "missing-field", "missing required field 'check' (required unless explain_only)")


def fix_cases(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Each case of a fix gives values to suggestions of its fix, assumes plain values (a bool, number
    or string) of names the expressions may read, and its expressions read only the entry's params
    and those names."""
    for i, fix in enumerate(entry.fixes):
        for c, case in enumerate(fix.cases):
            for name, value in case.assume.items():
                if not isinstance(value, (bool, int, float, str)):
                    yield at(entry, ("fixes", i, "cases", c, "assume", name), "wrong-type",
                             f"assume {name}: {value!r} is not a bool, number or string")
            for label, source in case.suggest.items():
                key = ("fixes", i, "cases", c, "suggest", label)
                if label not in fix.suggest:
                    yield at(entry, key, "unknown-name", f"case {case.when!r}: the fix has no suggestion {label!r}"
                             f"{spec.did_you_mean(label, fix.suggest)}")
                    continue
                names = set(entry.params) | set(case.assume)
                try:  # as the index and the site ship it (kernels.case_sources)
                    written = kernels.expand(source, kernels.fix_kernel(entry, fix, ctx.kernels), names)
                    err = entry.verdicts.refusal(written, names)
                except expr.ExprError as refused:  # valid(...) cannot be written out
                    err = refused
                if err is not None:
                    yield at(entry, key, err.rule, f"{source!r}: {err}")


def examples(entry: Entry, ctx: Context) -> Iterator[Finding]:
    if entry.check is None:
        return
    if entry.verdicts.refusal(entry.check, entry.params.keys()):
        return  # reported by `expressions`
    checked = entry.verdicts.expression(entry.check, entry.params.keys())
    if not entry.bad_examples or not entry.good_examples:
        yield at(entry, ("examples",), "missing-examples", "an entry with a check needs at least one bad and one good example")
    for kind, rows, want in (("bad", entry.bad_examples, False), ("good", entry.good_examples, True)):
        for i, raw in enumerate(rows):
            key = ("examples", kind, i)
            missing = sorted(checked.names - raw.keys())
            unknown = sorted(raw.keys() - entry.params.keys())
            if unknown:
                yield at(entry, key + (unknown[0],), "example-param", f"{unknown[0]!r} is not a declared param")
                continue
            if missing:
                yield at(entry, key, "example-param", f"{kind} example lacks {', '.join(missing)} (used by the check)")
                continue
            try:
                env = entry.typed(raw)
            except values.ValueTypeError as err:
                yield at(entry, key, "example-param", str(err))
                continue
            for name, value in env.items():
                if value is None and not entry.params[name].optional:
                    yield at(entry, key + (name,), "example-param", f"{name} is not optional")
            try:
                holds = bool(helpers.evaluate_code(entry.verdicts.compiled(entry.check, entry.params.keys())[0], env))
            except bounds.OverBound as err:  # the check's cost on these values: the check is what to change
                yield at(entry, ("check",), "costly-expression",
                         f"{entry.check!r} on the {kind} example {dict(env)}: over a bound of an evaluation: {err}")
                continue
            except Exception as err:  # the check itself fails on these values: report, never crash
                yield at(entry, key, "example-error", f"check raised {type(err).__name__}: {err}")
                continue
            if holds != want:
                verdict = "satisfies" if holds else "violates"
                yield at(entry, key, "bad-example-passes" if kind == "bad" else "good-example-fails",
                         f"{kind} example {dict(env)} {verdict} the check {entry.check!r}")


def suggestion_bounds(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Every suggestion computes within the bounds of an evaluation (errkit/core/bounds.py) on
    each of the entry's sample values (its bad examples, then two made up: the values the site's
    pages compute them on), computed as explain computes them: the suggestions of all the fixes
    share one budget, as an answer's do."""
    fixes = [{"suggest": {label: _expanded(entry, fix, source, ctx) for label, source in fix.suggest.items()}}
             for fix in entry.fixes]
    if not any(fix["suggest"] for fix in fixes):
        return
    try:
        samples = wordings.sample_params(entry)
    except values.ValueTypeError:
        return  # reported by `examples`
    vetted = {}  # the suggestions' code, compiled from their verdicts (as explain's index cache holds it)
    for fix in fixes:
        vetted.update(suggestion_code(entry.verdicts, fix["suggest"], (), entry.params.keys()))
    reported = set()
    for params in samples:
        meter = bounds.Meter()
        for i, fix in enumerate(fixes):
            for found in suggest.suggestions(fix, params, vetted, meter=meter):
                if "not_computed" in found and (i, found["label"]) not in reported:
                    reported.add((i, found["label"]))
                    yield at(entry, ("fixes", i, "suggest", found["label"]), "costly-expression",
                             f"{fix['suggest'][found['label']]!r} on {params}: over a bound of an evaluation: "
                             f"{found['not_computed']} (explain would show it as not computed)")


def release_ranges(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Each wording's `releases` is a distribution and a non-empty range of release numbers that,
    when releases of that distribution were harvested, holds at least one of them."""
    root = entry.source_path.parent.parent if entry.source_path else None
    for i, wording in enumerate(entry.wordings):
        if wording.releases is None:
            continue
        key = ("releases",) if i == 0 else ("variants", i - 1, "releases")
        try:
            parsed = releases.parse(wording.releases)
        except releases.ReleasesError as err:
            yield at(entry, key, "bad-releases", str(err))
            continue
        known = releases.harvested(root, parsed.dist) if root else None
        if known and not releases.inside(parsed, known):
            yield at(entry, key, "bad-releases",
                     f"{wording.releases!r} holds none of the {len(known)} harvested {parsed.dist} releases "
                     f"({known[0]} to {known[-1]}, {releases.HARVEST}/{parsed.dist}.json)")


def kernel_use(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """The kernels an entry and its wordings name are declared, `valid(...)` can be written out,
    and each `sets` names a suggestion of its fix and a param of the entry."""
    named = [(("kernel",), entry.kernel)] + [(("raised_by", j), k) for j, k in enumerate(entry.raised_by)]
    for i, v in enumerate(entry.variants):
        named += [(("variants", i, "kernel"), v.kernel)] + [(("variants", i, "raised_by", j), k) for j, k in enumerate(v.raised_by)]
    named += [(("fixes", i, "kernel"), fix.kernel) for i, fix in enumerate(entry.fixes)]
    for key, name in named:
        if name and name not in ctx.kernels:
            yield at(entry, key, "unknown-kernel",
                     f"kernel {name!r} is not declared in catalog/kernels/{spec.did_you_mean(name, ctx.kernels)}")
    for i, fix in enumerate(entry.fixes):
        kernel_id = fix.kernel or entry.kernel
        for label, source in fix.suggest.items():
            if kernels.uses_valid(source) and (not kernel_id or kernel_id in ctx.kernels):
                try:
                    kernels.expand(source, kernels.fix_kernel(entry, fix, ctx.kernels), entry.params.keys())
                except expr.ExprError as err:
                    yield at(entry, ("fixes", i, "suggest", label), err.rule, f"{source!r}: {err}")
        for label, param in fix.sets.items():
            if label not in fix.suggest:
                yield at(entry, ("fixes", i, "sets", label), "unknown-name", f"sets {label!r}: the fix has no suggestion of that label")
            if param not in entry.params:
                yield at(entry, ("fixes", i, "sets", label), "unknown-name",
                         f"sets {param!r}: not a param of the entry{spec.did_you_mean(param, entry.params)}")


def kernel_rules(kernel: Kernel) -> Iterator[Finding]:
    """Each rule of a kernel is an expression over the kernel's values."""
    path = display_path(kernel.positions.path) if kernel.positions else kernel.id
    for i, rule in enumerate(kernel.rules):
        err = kernel.verdicts.refusal(rule.check, kernel.values.keys())
        if err is not None:
            line, col = kernel.positions.of(("rules", i, "check")) if kernel.positions else (1, 1)
            yield Finding(path, line, col, err.rule, f"{rule.check!r}: {err}")


def alternatives_last(entry: Entry, ctx: Context) -> Iterator[Finding]:
    """Fixes within the library that raised the error come first; alternatives (another library,
    `alternative: true`) after them, and never alone."""
    for i, fix in enumerate(entry.fixes):
        if not fix.alternative and any(f.alternative for f in entry.fixes[:i]):
            yield at(entry, ("fixes", i), "alternative-first",
                     "a fix within the library comes after an alternative: put alternatives (alternative: true) last")
    if entry.fixes and all(f.alternative for f in entry.fixes):
        yield at(entry, ("fixes", 0), "alternative-first", "every fix is an alternative: give a fix within the library first")


ENTRY_RULES: tuple[EntryRule, ...] = (templates, own_message_fields, readable_wordings, format_specs, param_names, exception_kind, empty_messages, unused_params, expressions,
                                      examples, suggestion_bounds, release_ranges, alternatives_last, kernel_use, fix_cases, unfinished_drafts)


# -- catalogue-wide rules -------------------------------------------------------------------------


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

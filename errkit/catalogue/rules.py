"""Every rule `errkit lint` reports, in one registry: its name, what it reports, the small broken
fixture that shows it, and the functions that decide it.

A Finding's rule is one of these names: `Finding` refuses any other (`known`), and
tests/catalogue/test_rules.py checks, by the source's syntax tree, that every rule name written in
errkit/ is registered here and reported where `reported_by` says. The README's list of lint rules
is generated from RULES (`errkit generate`, errkit/generate/readme.py).

This module imports nothing of errkit: the model (errkit/catalogue/model.py) reads it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Rule:
    name: str
    summary: str  # Markdown: what a finding of this rule says is wrong (the README's list)
    # a folder under tests/fixtures/ holding a catalogue that breaks it, and expect.txt; None for
    # internal-lint-error alone, which no catalogue is meant to reach (tests plant a failing check)
    fixture: str | None
    # The functions that decide this rule name, "module.function" under errkit/ (the outermost
    # function or class around it). A lint check relays some of them: `expressions` reports the
    # ExprError rules of core.expr, load the spec's Problems.
    reported_by: tuple[str, ...]

    @property
    def checks(self) -> tuple[Callable, ...]:
        """The functions of `reported_by` themselves (imported on demand)."""
        found = []
        for qualified in self.reported_by:
            module, _, name = qualified.rpartition(".")
            found.append(getattr(importlib.import_module(f"errkit.{module}"), name))
        return tuple(found)


RULES: tuple[Rule, ...] = (
    # -- reading the files ------------------------------------------------------------------------
    Rule("yaml-syntax", "a file that is not YAML, or not UTF-8 text, or holding a lone surrogate (`\\ud800`: no "
         "UTF-8 file can hold one)", "lint/yaml-syntax",
         ("catalogue.load.read_document",)),
    Rule("yaml-anchor", "a YAML anchor (`&name`) or alias (`*name`): refused as the file is read, before any alias "
         "is expanded (aliases of aliases blow a small file up into billions of values); write each value out",
         "lint/yaml-anchor", ("catalogue.load.read_document",)),
    Rule("unreadable", "a file that cannot be read: a folder where an entry file should be, a file over 1 MB, "
         "a missing catalogue folder", "lint/unreadable",
         ("catalogue.load.read_document", "catalogue.load.load", "catalogue.lint.lint_files")),
    Rule("stray-file", "a YAML file at the catalogue's top level other than `errkit.yaml`: it is never read "
         "(entries live in area folders)", "lint/stray-file", ("catalogue.lint.stray_files",)),
    Rule("bad-settings", "a `[tool.errkit]` table of pyproject.toml that cannot be read, or with a key or value "
         "the settings do not have", "settings/bad-settings", ("catalogue.load.load_settings",)),
    Rule("unknown-key", "a key the file's format does not have (with a did-you-mean)", "lint/unknown-key",
         ("catalogue.spec._validate",)),
    Rule("missing-field", "a required field missing: an empty file, a list needing items, `check` (unless "
         "`explain_only`), `validators` when there are groups", "lint/missing-field",
         ("catalogue.spec._validate", "catalogue.load.read_document", "catalogue.load.load_settings",
          "catalogue.entry_rules.expressions")),
    Rule("wrong-type", "a value of the wrong type, length, pattern or choice (a name that is not an identifier, a "
         "newline at its end included; a settings path leaving the project; a case assuming a list or mapping); a validator raising an exception "
         "class meant for `explain_only` entries", "lint/wrong-type",
         ("catalogue.spec._wrong", "catalogue.spec._validate", "catalogue.entry_rules.exception_kind", "catalogue.entry_rules.fix_cases")),
    # -- one entry ---------------------------------------------------------------------------------
    Rule("duplicate-code", "a code already used by another entry (or a kernel id declared twice)", "lint/duplicate-code",
         ("catalogue.lint.duplicates", "catalogue.load.load_kernels")),
    Rule("duplicate-slug", "a slug already used by another entry, or one making the same exception class as another "
         "(`a-1b` and `a1b`: A1bError) or a class a Python builtin or the generated module has (`value`: ValueError)",
         "lint/duplicate-slug", ("catalogue.lint.duplicates",)),
    Rule("retired-code", "a code listed under `retired`: retired codes are never reused", "lint/retired-code",
         ("catalogue.lint.retired_codes",)),
    Rule("code-prefix", "a code without the catalogue's `prefix`, when one is set", "lint/code-prefix",
         ("catalogue.lint.groups",)),
    Rule("bad-template", "a wording that does not parse as a template, a format spec with quotes, backslashes or "
         "newlines, one that cannot format a value of its param's type (`{x:int}`) or asks for a width over 100, "
         "fixed text explain cannot read as it is (a NUL, a non-ASCII space, curly quotes, zero-width characters), a read "
         "without a placeholder", "lint/bad-template",
         ("catalogue.wordings._parse", "catalogue.wordings.compile_read", "catalogue.entry_rules.own_message_fields",
          "catalogue.entry_rules.format_specs", "catalogue.entry_rules.readable_wordings")),
    Rule("undeclared-placeholder", "a placeholder that names no declared param", "lint/undeclared-placeholder",
         ("catalogue.wordings._parse", "catalogue.entry_rules.own_message_fields")),
    Rule("empty-message", "a wording with no fixed text, or `located_only`, and no `location` (explain recognises such a wording by the "
         "raise site of a traceback's last frame); a validator with an empty message", "lint/empty-message",
         ("catalogue.entry_rules.empty_messages",)),
    Rule("bad-param-name", "a param, a group's argument or binding named like a Python keyword, a helper, a builtin, "
         "a name of the generated module, or private; an argument listed twice", "lint/bad-param-name",
         ("catalogue.entry_rules.param_names", "catalogue.lint.groups")),
    Rule("unused-param", "a param that no wording, check or suggestion uses", "lint/unused-param",
         ("catalogue.entry_rules.unused_params",)),
    Rule("unfinished-draft", "prose a draft of `errkit scan --emit` left as `TODO: ...` (a title, an explanation, a "
         "param's description, a trigger, situation, prevention tip or fix): a draft is not published until it is written",
         "lint/unfinished-draft", ("catalogue.entry_rules.unfinished_drafts",)),
    Rule("bad-expression", "an expression that does not parse, or is too long", "lint/bad-expression",
         ("core.expr.parse", "catalogue.kernels.expand")),
    Rule("forbidden-expression", "an expression outside the allowed subset of Python (attribute access, other "
         "calls, lambdas, large powers, ...): reported, never run", "lint/forbidden-expression",
         ("core.expr._forbid", "core.expr._vet")),
    Rule("unknown-name", "an expression naming no declared param or helper, a `valid(...)` without a kernel or "
         "with a name the kernel lacks, a `sets` or a fix's case naming no suggestion or param", "lint/unknown-name",
         ("core.expr._vet", "catalogue.kernels.expand", "catalogue.entry_rules.kernel_use", "catalogue.entry_rules.fix_cases")),
    Rule("unknown-kernel", "a `kernel` or `raised_by` naming no kernel of catalog/kernels/", "lint/unknown-kernel",
         ("catalogue.entry_rules.kernel_use",)),
    Rule("missing-examples", "an entry with a check but without a bad and a good example", "lint/missing-examples",
         ("catalogue.entry_rules.examples",)),
    Rule("example-param", "an example naming an undeclared param, lacking one the check uses, or with a value of "
         "the wrong type", "lint/example-param", ("catalogue.entry_rules.examples",)),
    Rule("example-error", "a check that raises on an example's values", "lint/example-error", ("catalogue.entry_rules.examples",)),
    Rule("costly-expression", "a check or suggestion going over a bound of an evaluation on an example's values "
         "(the bits of an int, the items of a sequence, the steps: errkit/core/bounds.py); explain would show "
         "such a suggestion as not computed", "lint/costly-expression",
         ("catalogue.entry_rules.examples", "catalogue.entry_rules.suggestion_bounds")),
    Rule("bad-example-passes", "a bad example that satisfies the check", "lint/bad-example-passes",
         ("catalogue.entry_rules.examples",)),
    Rule("good-example-fails", "a good example that violates the check", "lint/good-example-fails",
         ("catalogue.entry_rules.examples",)),
    Rule("bad-releases", "a `releases` that does not parse, uses another operator or a pre-release, is an empty "
         "range, or holds none of the harvested releases of its distribution", "lint/bad-releases",
         ("catalogue.entry_rules.release_ranges",)),
    Rule("alternative-first", "a fix within the library after an `alternative` one, or only alternatives",
         "lint/alternative-first", ("catalogue.entry_rules.alternatives_last",)),
    # -- the catalogue as a whole ------------------------------------------------------------------
    Rule("overlapping-wording", "two entries' wordings reading the same text, unless they are raised in different "
         "files (a traceback's last frame tells them apart)", "lint/overlapping-wording",
         ("catalogue.lint.overlapping_wordings",)),
    Rule("unknown-related", "a `related` code that is not in the catalogue", "lint/unknown-related",
         ("catalogue.lint.related",)),
    # -- the validate groups of errkit.yaml --------------------------------------------------------
    Rule("group-unknown-code", "a group checking a code that is not in the catalogue", "lint/group-unknown-code",
         ("catalogue.lint.groups",)),
    Rule("group-explain-only", "a group checking an `explain_only` entry, which has no validator",
         "lint/group-explain-only", ("catalogue.lint.groups",)),
    Rule("entry-not-in-group", "an entry with a validator in no group (only when the catalogue has groups)",
         "lint/entry-not-in-group", ("catalogue.lint.groups",)),
    Rule("entry-in-two-groups", "an entry checked by two groups", "lint/entry-in-two-groups", ("catalogue.lint.groups",)),
    Rule("unbound-param", "a param an entry's check or message needs that its group does not bind",
         "lint/unbound-param", ("catalogue.lint.groups",)),
    # -- lint itself -----------------------------------------------------------------------------
    Rule("internal-lint-error", "a check of lint, or reading a file, that failed on what the file holds (a bug of "
         "errkit's, reported as a finding: lint never crashes); no catalogue is known to reach one", None,
         ("catalogue.lint.guarded", "catalogue.load._guarded")),
)

BY_NAME: dict[str, Rule] = {rule.name: rule for rule in RULES}


def known(name: str) -> str:
    """`name`, when it is a registered rule; ValueError otherwise."""
    if name not in BY_NAME:
        raise ValueError(f"{name!r} is not a lint rule of errkit/catalogue/rules.py")
    return name

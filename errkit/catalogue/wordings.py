"""Each wording of an entry as a compiled, typed regex, and renderings of it with sample values."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from errkit.core import template, values
from errkit.catalogue.model import Entry, Variant


@dataclass(frozen=True)
class Wording:
    entry: Entry
    index: int  # 0 = the entry's own message, i > 0 = variants[i - 1]
    variant: Variant
    template: template.Template
    pattern: str  # unanchored
    captures: tuple[template.Capture, ...]

    @property
    def key_path(self) -> tuple:
        return ("message",) if self.index == 0 else ("variants", self.index - 1, "message")

    @property
    def literal_chars(self) -> int:
        return sum(len(s.strip()) for s in self.template.literals)

    def param_of(self, field: template.Field) -> str:
        name = template.resolve(field, self.entry.params, self.variant.aliases)
        assert name is not None, "wordings are compiled only after lint resolved every placeholder"
        return name

    def render(self, params: Mapping[str, Any]) -> str:
        return self.template.render(lambda f: params[self.param_of(f)])

    def extract(self, match: "re.Match[str]") -> dict[str, Any] | None:
        return template.extract(self.captures, match)


class WordingError(ValueError):
    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule


def _parse(text: str, entry: Entry, aliases, hint: str = "") -> template.Template:
    """A template whose every placeholder names a declared param; WordingError otherwise."""
    try:
        tpl = template.parse(text)
    except template.TemplateError as err:
        raise WordingError("bad-template", f"{err} (column {err.column + 1})") from None
    unknown = [f.name for f in tpl.fields if template.resolve(f, entry.params, aliases) is None]
    if unknown:
        raise WordingError("undeclared-placeholder", f"placeholder {{{unknown[0]}}} is not a declared param" + hint)
    for f in tpl.fields:  # an alias names a param: one that is not declared is no param to carry it
        name = template.resolve(f, entry.params, aliases)
        if name not in entry.params:
            raise WordingError("undeclared-placeholder", f"placeholder {{{f.name}}} is an alias of {name!r}, which is not a declared param")
    return tpl


def _regex(tpl: template.Template, entry: Entry, aliases) -> tuple[str, tuple[template.Capture, ...]]:
    """The template's regex, each placeholder typed by the param it resolves to."""
    def typed(field: template.Field) -> tuple[str, str, bool, str | None]:
        p = entry.params[template.resolve(field, entry.params, aliases)]
        return p.name, p.type, p.optional, p.form

    return template.to_regex(tpl, typed)


def compile_wording(entry: Entry, index: int) -> Wording:
    """Compile one wording; WordingError names what is wrong with its template."""
    variant = entry.wordings[index]
    tpl = _parse(variant.message, entry, variant.aliases, " (add it to params, or map it with aliases)" if index else "")
    pattern, captures = _regex(tpl, entry, variant.aliases)
    return Wording(entry, index, variant, tpl, pattern, captures)


@dataclass(frozen=True)
class Read:
    """One of an entry's `reads`: a line after the message holding more of its params."""

    index: int
    template: template.Template
    pattern: str  # unanchored
    captures: tuple[template.Capture, ...]


def compile_read(entry: Entry, index: int) -> Read:
    """Compile `entry.reads[index]`; WordingError names what is wrong with it."""
    tpl = _parse(entry.reads[index], entry, {})
    if not tpl.fields:
        raise WordingError("bad-template", "a read holds at least one placeholder: the value it reads")
    pattern, captures = _regex(tpl, entry, {})
    return Read(index, tpl, pattern, captures)


def reads(entry: Entry) -> Iterator[Read]:
    """Every read that compiles (lint reports the others)."""
    for i in range(len(entry.reads)):
        try:
            yield compile_read(entry, i)
        except WordingError:
            continue


def wordings(entry: Entry) -> Iterator[Wording]:
    """Every wording that compiles (lint reports the others)."""
    for i in range(len(entry.wordings)):
        try:
            yield compile_wording(entry, i)
        except WordingError:
            continue


def sample_params(entry: Entry) -> list[dict[str, Any]]:
    """Param sets to render wordings with: each bad example, then two synthetic sets."""
    sets = []
    for raw in entry.bad_examples:
        try:
            typed = entry.typed(raw)
        except values.ValueTypeError:
            continue
        sets.append(typed)
    for seed in (0, 1):
        sets.append({})
    out = []
    for i, partial in enumerate(sets):
        full = dict(partial)
        for name, p in entry.params.items():
            if name not in full:
                full[name] = values.sample(p.type, i + len(name), p.form)
        out.append(full)
    return out

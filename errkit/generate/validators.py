"""kernel/_validators.py: one exception class and check function per entry, one validate function per group."""

from __future__ import annotations

import ast
import keyword
from dataclasses import dataclass

from .. import expr, fixes, runtime, template
from ..model import Catalogue, Entry, Group
from .render import render_template

_FIXES_FUNCTIONS = {name for name, fn in fixes.HELPERS.items() if getattr(fn, "__module__", "") == fixes.__name__}


def python_expression(source: str, names) -> str:
    """A vetted catalogue expression as Python source that calls helpers through the module aliases."""
    checked = expr.check(source, names, set(fixes.HELPERS) | set(runtime.BINDINGS))
    rename = {name: f"_fx.{name}" for name in _FIXES_FUNCTIONS}
    rename.update({name: f"_rt.{name}" for name in runtime.BINDINGS})
    for name in checked.names:
        rename.pop(name, None)  # a param shadows nothing: its own name wins
    return expr.to_python(checked, rename)


def fstring(message: str) -> str:
    """The message template as an f-string literal. Lint guarantees its fields are bare param names."""
    source = "f" + repr(message)
    parsed = template.parse(message)
    node = ast.parse(source, mode="eval").body
    names = [ast.unparse(v.value) for v in getattr(node, "values", []) if isinstance(v, ast.FormattedValue)]
    if names != [f.name for f in parsed.fields]:  # defence in depth: the literal must hold exactly these fields
        raise ValueError(f"message {message!r} does not survive as an f-string")
    return source


@dataclass(frozen=True)
class CheckCode:
    entry: Entry
    condition: str
    message: str
    params: tuple[str, ...]  # in the order the function takes them

    @property
    def function(self) -> str:
        return f"check_{self.entry.code.lower()}"


def check_code(entry: Entry) -> CheckCode:
    used = expr.check(entry.check, entry.params.keys()).names | {f.name for f in template.parse(entry.message).fields}
    params = tuple(name for name in entry.params if name in used)  # declaration order
    return CheckCode(entry, python_expression(entry.check, entry.params.keys()), fstring(entry.message), params)


@dataclass(frozen=True)
class Step:
    kind: str  # "bind" or "check"
    name: str = ""
    source: str = ""
    check: CheckCode | None = None


def group_steps(group: Group, checks: list[CheckCode]) -> list[Step]:
    """Bindings placed just before the first check that needs them (dependencies first)."""
    steps: list[Step] = []
    bound = set(group.args)
    binding_names = {name: expr.check(src, set(group.args) | set(group.bindings), set(fixes.HELPERS) | set(runtime.BINDINGS)).names
                     for name, src in group.bindings.items()}

    def bind(name: str, seen: tuple = ()) -> None:
        if name in bound or name not in group.bindings or name in seen:
            return
        for dep in sorted(binding_names[name]):
            bind(dep, seen + (name,))
        steps.append(Step("bind", name, python_expression(group.bindings[name], set(group.args) | set(group.bindings))))
        bound.add(name)

    for code in checks:
        for name in code.params:
            bind(name)
        steps.append(Step("check", check=code))
    return steps


def validators(catalogue: Catalogue) -> dict[str, str]:
    settings = catalogue.settings
    entries = [e for e in catalogue.entries if not e.explain_only]
    checks = {e.code: check_code(e) for e in entries}
    groups = [(g, group_steps(g, [checks[c] for c in g.checks])) for g in settings.groups.values()]
    for entry in entries:
        for name in (*entry.params, entry.class_name):
            if keyword.iskeyword(name):
                raise ValueError(f"{entry.code}: {name!r} is a Python keyword")
    text = render_template(
        "validators.py.j2",
        settings=settings,
        entries=sorted(entries, key=lambda e: e.code),
        checks=checks,
        groups=groups,
    )
    text = text.rstrip("\n") + "\n"
    compile(text, settings.validators, "exec")  # never write a module that does not compile
    return {settings.validators: text}

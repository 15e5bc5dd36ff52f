"""errkit_attention/_validators.py: one exception class and check function per entry, one validate function per group.

The module needs only the standard library: it carries its own copy of errkit.core.runtime's exception
base and of the runtime/fixes helpers its checks call (errkit/generate/carry.py), not an import."""

from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from errkit.core import expr, helpers, runtime, template
from errkit.catalogue import kernels
from errkit.catalogue.model import Catalogue, Entry, Group
from errkit.catalogue.vetting import Verdicts
from errkit.generate.carry import carry
from errkit.generate.render import render_template

_FIXES_FUNCTIONS = {name for name, fn in helpers.HELPERS.items() if getattr(fn, "__module__", "") == helpers.__name__}


def python_expression(checked: expr.Checked) -> str:
    """A vetted catalogue expression (its verdict: errkit/catalogue/vetting.py) as Python source that
    calls helpers by their imported aliases (`_rt_shape`, `_fx_divisors`: a module global, not an
    attribute lookup on every call)."""
    rename = {name: f"_fx_{name}" for name in _FIXES_FUNCTIONS}
    rename.update({name: f"_rt_{name}" for name in runtime.BINDINGS})
    for name in checked.names:
        rename.pop(name, None)  # a param shadows nothing: its own name wins
    return _inline_attr(expr.to_python(checked, rename))


def _inline_attr(source: str) -> str:
    """`_rt_attr(x, 'name')` with a literal public name is plain `getattr(x, 'name', None)`, and
    `_rt_type_name(x)` is `type(x).__name__` (a call fewer on every validation)."""
    tree = ast.parse(source, mode="eval")

    class Inline(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            func, args = node.func, node.args
            if (isinstance(func, ast.Name) and func.id == "_rt_attr" and len(args) == 2
                    and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str)
                    and args[1].value.isidentifier() and not args[1].value.startswith("_")):
                return ast.Call(ast.Name("getattr", ast.Load()), [args[0], args[1], ast.Constant(None)], [])
            if isinstance(func, ast.Name) and func.id == "_rt_type_name" and len(args) == 1 and not node.keywords:
                return ast.Attribute(ast.Call(ast.Name("type", ast.Load()), [args[0]], []), "__name__", ast.Load())
            return node

    return ast.unparse(Inline().visit(tree).body)


def fstring(message: str, parsed: template.Template) -> str:
    """The message template (`parsed`: its verdict) as an f-string literal. Lint guarantees its
    fields are bare param names."""
    source = "f" + repr(message)
    node = ast.parse(source, mode="eval").body
    names = [ast.unparse(v.value) for v in getattr(node, "values", []) if isinstance(v, ast.FormattedValue)]
    if names != [f.name for f in parsed.fields]:  # defence in depth: the literal must hold exactly these fields
        raise ValueError(f"message {message!r} does not survive as an f-string")
    return source


@dataclass(frozen=True)
class Operand:
    """One operand of a check's top-level `or` chain: the Python test that fails it, and the params it reads."""

    failing: str  # `not (operand)`, with a leading `not` cancelled
    names: frozenset[str]


@dataclass(frozen=True)
class CheckCode:
    entry: Entry
    message: str
    params: tuple[str, ...]  # in the order the function takes them (declaration order)
    operands: tuple[Operand, ...]  # `a or b or c` -> a, b, c (a condition without `or`: itself)

    @property
    def function(self) -> str:
        return f"check_{self.entry.code.lower()}"

    @property
    def condition_params(self) -> frozenset[str]:
        return frozenset().union(*(o.names for o in self.operands))

    @property
    def message_only(self) -> tuple[str, ...]:
        return tuple(p for p in self.params if p not in self.condition_params)


def module_name(catalogue: Catalogue) -> str:
    """The import name of the catalogue's generated module; "" for a catalogue without one."""
    settings = catalogue.settings
    return import_name(settings.validators, settings.project_root) if settings.validators else ""


def import_name(path: str, project_root: Path | None) -> str:
    """The name Python imports the module at `path` (project-relative) by, once the project is
    installed: its path under the folder its top package sits in. In a src layout that folder is
    `src/` (src/tinyattn/_errors.py is tinyattn._errors, a namespace package under src/ too);
    otherwise it is the folder above the outermost package (a folder with `__init__.py`) holding
    the module (python/mylib/_errors.py is mylib._errors), and the project root when the module's
    folder is no package (errkit_attention/_validators.py is errkit_attention._validators)."""
    parts = PurePosixPath(path.removesuffix(".py")).parts
    root = project_root or Path(".")
    if len(parts) > 1 and parts[0] == "src" and not (root / "src" / "__init__.py").is_file():
        return ".".join(parts[1:])
    if project_root is not None:
        top = len(parts) - 1  # the module's folder is parts[:top]
        while top > 0 and (root.joinpath(*parts[:top]) / "__init__.py").is_file():
            top -= 1
        if top < len(parts) - 1:  # inside a package: from the folder above its outermost one
            return ".".join(parts[top:])
    return ".".join(parts)


def check_code(entry: Entry) -> CheckCode:
    checked = entry.verdicts.expression(entry.check, entry.params.keys())
    message = entry.verdicts.template(entry.message)
    used = checked.names | {f.name for f in message.fields}
    params = tuple(name for name in entry.params if name in used)  # declaration order
    body = checked.tree.body
    parts = body.values if isinstance(body, ast.BoolOp) and isinstance(body.op, ast.Or) else [body]
    operands = []
    for part in parts:
        negated = isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.Not)
        operand = _part(checked, part.operand if negated else part)
        python = python_expression(operand)
        operands.append(Operand(python if negated else f"not ({python})", operand.names))
    return CheckCode(entry, fstring(entry.message, message), params, tuple(operands))


def _part(checked: expr.Checked, node: ast.AST) -> expr.Checked:
    """A part of a vetted expression, vetted with it: the names it reads are those of the whole it
    holds (a helper called, or a loop name, is none)."""
    read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return expr.Checked(ast.unparse(node), ast.Expression(node), frozenset(read & checked.names))


@dataclass(frozen=True)
class Step:
    kind: str  # "bind", "unless" (an operand that, when true, passes the check), "raise"
    indent: int
    name: str = ""
    source: str = ""
    check: CheckCode | None = None


def group_steps(group: Group, checks: list[CheckCode], verdicts: Verdicts | None = None) -> list[Step]:
    """The body of a validate function.

    A check `a or b or c` becomes nested `if not a:` blocks, and each param is read just before the
    first operand that needs it, so short-circuiting skips the reads too (no bound: nothing about
    bound is read). Params only the message shows are read in the failing branch. A param read
    inside a branch is not reused outside it.
    """
    steps: list[Step] = []
    names = set(group.args) | set(group.bindings)
    callable_names = set(helpers.HELPERS) | set(runtime.BINDINGS)
    verdicts = verdicts or (checks[0].entry.verdicts if checks else Verdicts())
    bound = {name: verdicts.expression(src, names, callable_names) for name, src in group.bindings.items()}

    def bind(name: str, indent: int, done: set, seen: tuple = ()) -> None:
        if name in done or name not in group.bindings or name in seen:
            return
        for dep in sorted(bound[name].names):
            bind(dep, indent, done, seen + (name,))
        steps.append(Step("bind", indent, name, python_expression(bound[name])))
        done.add(name)

    outer = set(group.args)
    for code in checks:
        done = outer
        for depth, operand in enumerate(code.operands):
            for name in code.params:
                if name in operand.names:
                    bind(name, 1 + depth, done)
            steps.append(Step("unless", 1 + depth, source=operand.failing))
            done = set(done)  # what the next, nested operand reads stays inside this branch
        for name in code.message_only:
            bind(name, 1 + len(code.operands), done)
        steps.append(Step("raise", 1 + len(code.operands), check=code))
    return steps


def check_steps(code: CheckCode) -> list[Step]:
    """The body of check_<code>: the steps a validate function runs for this check, its params its arguments.

    One code path renders both, so a check function and the validate functions that run it cannot differ.
    """
    return group_steps(Group(code.function, "", code.params, {}, (code.entry.code,)), [code])


# Value bindings of a group and their traced counterparts in the checkify functions: the concrete
# helper answers None for a tracer (the validator then skips the check); the traced one answers a
# traced value for a tracer and None for a concrete array (the validator has checked it already).
TRACED_BINDINGS = {"_rt_concrete_min(": "_tr_min(", "_rt_concrete_max(": "_tr_max("}


class _TracedPredicate(ast.NodeTransformer):
    """A check operand on traced values: `and`/`or`/`not` and chained comparisons as jnp calls."""

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        name = "_tr_and" if isinstance(node.op, ast.And) else "_tr_or"
        out = node.values[0]
        for value in node.values[1:]:
            out = ast.Call(ast.Name(name, ast.Load()), [out, value], [])
        return out

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.Call(ast.Name("_tr_not", ast.Load()), [node.operand], [])
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        lefts = [node.left, *node.comparators[:-1]]
        parts = [ast.Compare(a, [op], [b]) for a, op, b in zip(lefts, node.ops, node.comparators)]
        return self.visit_BoolOp(ast.BoolOp(ast.And(), parts))


def traced_predicate(failing: str) -> str:
    """The passing condition of an operand (given as the test that fails it) on traced values."""
    body = ast.parse(failing, mode="eval").body
    if isinstance(body, ast.UnaryOp) and isinstance(body.op, ast.Not):  # `not x` fails: x passes
        body = body.operand
    else:
        body = ast.UnaryOp(ast.Not(), body)
    return ast.unparse(ast.fix_missing_locations(_TracedPredicate().visit(body)))


def format_template(code: CheckCode) -> str:
    """The message as a str.format template (checkify formats it with the traced values), prefixed
    by the code: `[RA305] bound must be >= 0 ..., got min(bound)={bound_min}`."""
    node = ast.parse(code.message, mode="eval").body
    parts = [f"[{code.entry.code}] "]
    for value in getattr(node, "values", [node]):
        if isinstance(value, ast.Constant):
            parts.append(str(value.value).replace("{", "{{").replace("}", "}}"))
        else:
            if value.format_spec is not None:
                raise ValueError(f"{code.entry.code}: a traced message field takes no format spec")
            conversion = "" if value.conversion == -1 else "!" + chr(value.conversion)
            parts.append("{" + ast.unparse(value.value) + conversion + "}")
    return "".join(parts)


def traced_steps(group: Group, checks: list[CheckCode], verdicts: Verdicts | None = None) -> list[Step]:
    """The body of checkify_<group>: the group's steps for its `traced: checkify` checks, with value
    bindings read off tracers and each `raise` (with the operand that guards it) turned into a
    `check` step, `_tr_check(predicate, template, values)`. Only the last operand of such a check may
    read a traced value; the ones before it stay Python tests (`has_bound`, `bound_min is None`)."""
    out: list[Step] = []
    traced_names: set[str] = set()
    for step in group_steps(group, checks, verdicts):
        if step.kind == "bind":
            source = step.source
            for concrete, traced in TRACED_BINDINGS.items():
                source = source.replace(concrete, traced)
            if source != step.source:
                traced_names.add(step.name)
            out.append(Step("bind", step.indent, step.name, source))
        elif step.kind == "unless":
            out.append(step)
        else:
            last = max(i for i, s in enumerate(out) if s.kind == "unless" and s.indent == step.indent - 1)
            guard = out.pop(last)
            moved = [Step(s.kind, guard.indent, s.name, s.source) for s in out[last:]]  # message-only reads
            del out[last:]
            out += moved
            shown = [f.name for f in step.check.entry.verdicts.template(step.check.entry.message).fields]
            if not set(shown) <= traced_names:
                raise ValueError(f"{step.check.entry.code}: a traced check's message may show traced values only, not {sorted(set(shown) - traced_names)}")
            values = ", ".join(f"{name!r}: {name}" for name in dict.fromkeys(shown))
            call = f"{traced_predicate(guard.source)}, {format_template(step.check)!r}, {{{values}}}"
            out.append(Step("check", guard.indent, source=call, check=step.check))
    return out


def suggestion_lambdas(entry: Entry, kernel_map) -> list[tuple[str, str]]:
    """(label, `lambda <names>, **_: <expression>`) of every suggestion of the entry's fixes, in
    order, that Python can compute from the entry's params: the exception's note shows the first
    one that yields a value. Those needing more than the params (`needs` in explain) are left out."""
    out = []
    for sources in kernels.suggestion_sources(entry, kernel_map, only=entry.kernel or ""):  # the values our own kernel takes
        for label, source in sources.items():
            try:
                checked = entry.verdicts.expression(source, entry.params.keys())
            except expr.ExprError:
                continue
            names, body = sorted(checked.names), python_expression(checked)
            out.append((label, f"lambda {', '.join([*names, '**_'])}: {body}"))
    return out


def validators(catalogue: Catalogue) -> dict[str, str]:
    settings = catalogue.settings
    if not settings.validators:  # an explain-and-docs-only catalogue
        return {}
    entries = [e for e in catalogue.entries if not e.explain_only]
    checks = {e.code: check_code(e) for e in entries}
    groups = [(g, group_steps(g, [checks[c] for c in g.checks], catalogue.verdicts)) for g in settings.groups.values()]
    for entry in entries:
        for name in (*entry.params, entry.class_name):
            if keyword.iskeyword(name):
                raise ValueError(f"{entry.code}: {name!r} is a Python keyword")
    traced_groups = [(g, traced_steps(g, [checks[c] for c in g.checks if checks[c].entry.traced == "checkify"], catalogue.verdicts))
                     for g in settings.groups.values() if any(checks[c].entry.traced == "checkify" for c in g.checks)]
    check_bodies = {code: check_steps(check) for code, check in checks.items()}
    suggestions = {e.code: suggestion_lambdas(e, catalogue.kernels) for e in entries}
    sources = [step.source for _, steps in groups for step in steps] + [s.source for b in check_bodies.values() for s in b]
    sources += [source for found in suggestions.values() for _, source in found]
    used = sorted(set(re.findall(r"\b_(rt|fx)_(\w+)", " ".join(sources))))
    runtime_helpers = [name for side, name in used if side == "rt"]
    fixes_helpers = [name for side, name in used if side == "fx"]
    project = settings.project  # named in the docstring and the docs URL variable
    text = render_template(
        "validators.py.j2",
        settings=settings,
        entries=sorted(entries, key=lambda e: e.code),
        checks=checks,
        check_bodies=check_bodies,
        suggestions=suggestions,
        groups=groups,
        traced_groups=traced_groups,
        project=project,
        docs_url_env=runtime.docs_url_variable(project),
        carried=[carry(runtime, ["CatalogueError", *runtime_helpers], "_rt_"), carry(helpers, fixes_helpers, "_fx_")],
    )
    text = text.rstrip("\n") + "\n"
    compile(text, settings.validators, "exec")  # never write a module that does not compile
    return {settings.validators: text}

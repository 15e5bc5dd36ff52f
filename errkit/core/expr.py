"""The restricted expression language of `check`, `suggest` and group bindings.

A small subset of Python expressions, parsed with `ast` and checked against a whitelist before
anything runs: literals, declared names, arithmetic, comparisons, boolean logic, `in`, subscripts,
conditional expressions, calls of a named set of helpers, and one-level list comprehensions that
filter a list (`[b for b in divisors(n) if b % 128 == 0]`: what a kernel's rules need). Everything else is rejected with a
reason and never executed. Checked expressions compile to Python source (for generated code) or to
a code object (for `errkit explain`).

Cost is bounded twice. Vetting refuses what is costly whatever the values: an expression nested
deeper than MAX_DEPTH, powers of powers whose literal exponents multiply past MAX_POWER, long
sources and constants. The code object runs every operation whose cost grows with its values
through the guarded operations of errkit/core/bounds.py (`guarded`), which stop an evaluation
before an int, a sequence or the work it does goes over the bounds (bounds.OverBound). Python
source for generated validators (`to_python`) is the expression as written, unguarded: see
`to_python`.
"""

from __future__ import annotations

import functools
import _ast as ast  # the C node classes only: `import ast` (enum, contextlib, ...) is too slow for explain

from errkit.core.helpers import HELPERS, evaluate_code

PyCF_ONLY_AST = 0x400

MAX_POWER = 64
MAX_CONSTANT = 2**64
MAX_STRING = 200
MAX_LENGTH = 4000  # a suggestion solved against a kernel's rules in every case takes up to 2,225 (RA231)
MAX_DEPTH = 32  # expressions inside one another: `a` is 1 deep, `-a` 2, `f(a + 1)` 3


class ExprError(ValueError):
    def __init__(self, rule: str, message: str, column: int = 0):
        super().__init__(message)
        self.rule = rule  # bad-expression | forbidden-expression | unknown-name
        self.column = column


_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_UNARY = (ast.UAdd, ast.USub, ast.Not)
_COMPARE = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot)
_DESCRIBE = {
    ast.Attribute: "attribute access",
    ast.Lambda: "lambda",
    ast.SetComp: "comprehension",
    ast.DictComp: "comprehension",
    ast.GeneratorExp: "generator expression",
    ast.NamedExpr: "assignment expression",
    ast.JoinedStr: "f-string",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Starred: "star expression",
    ast.Dict: "dict display",
    ast.Set: "set display",
}


class Checked:
    """A vetted expression: its source, syntax tree, the free names it reads (helpers excluded) and
    the loop names of its comprehension."""

    __slots__ = ("source", "tree", "names", "loops")

    def __init__(self, source: str, tree, names: frozenset, loops: frozenset = frozenset()):
        self.source, self.tree, self.names, self.loops = source, tree, names, loops


def walk(node):
    """Every node below `node`, itself included (what ast.walk does, without importing ast)."""
    todo = [node]
    while todo:
        node = todo.pop()
        yield node
        for name in node._fields:
            child = getattr(node, name, None)
            if isinstance(child, list):
                todo.extend(c for c in child if isinstance(c, ast.AST))
            elif isinstance(child, ast.AST):
                todo.append(child)


def parse(source: str) -> ast.Expression:
    if not isinstance(source, str) or not source.strip():
        raise ExprError("bad-expression", "empty expression")
    if len(source) > MAX_LENGTH:
        raise ExprError("bad-expression", f"expression is longer than {MAX_LENGTH} characters")
    try:
        return compile(source.strip(), "<catalogue expression>", "eval", PyCF_ONLY_AST)
    except SyntaxError as err:
        raise ExprError("bad-expression", f"does not parse: {err.msg}", max((err.offset or 1) - 1, 0)) from None
    except (RecursionError, MemoryError):  # the parser's own limits on nesting
        raise ExprError("bad-expression", "does not parse: nested too deeply") from None


def _too_deep(tree):
    """The first expression node found deeper than MAX_DEPTH, else None (iterative: no recursion
    before the depth is known to be small)."""
    todo = [(tree, 0)]
    while todo:
        node, above = todo.pop()
        here = above + isinstance(node, ast.expr)
        if here > MAX_DEPTH:
            return node
        for name in node._fields:  # (a parsed tree has every field set)
            child = getattr(node, name)
            if isinstance(child, list):
                todo.extend((c, here) for c in child if isinstance(c, ast.AST))
            elif isinstance(child, ast.AST):
                todo.append((child, here))
    return None


def _compounded(node) -> int:
    """The power its operands may be raised to by nested '**' (the product of their literal
    exponents along a chain of powers; 1 without any): refused above MAX_POWER."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        power = node.right.value * _compounded(node.left)
        if power > MAX_POWER:
            raise _forbid(node, f"a power of a power (its exponents multiply to {power}, above {MAX_POWER})")
        return power
    out = 1
    for name in node._fields:
        child = getattr(node, name)
        for part in child if isinstance(child, list) else [child]:
            if isinstance(part, ast.AST):
                out = max(out, _compounded(part))
    return out


def check(source: str, names, functions=HELPERS) -> Checked:
    """Parse and vet `source`; names are the variables it may read, functions the helpers it may call."""
    tree = parse(source)
    deep = _too_deep(tree)
    if deep is not None:
        raise _forbid(deep, f"an expression nested deeper than {MAX_DEPTH} levels")
    allowed, helpers = frozenset(names), frozenset(functions)
    local = _comprehension_names(tree, allowed, helpers)
    callees = frozenset(id(node.func) for node in walk(tree) if isinstance(node, ast.Call))
    used: set[str] = set()
    for node in walk(tree):
        _vet(node, allowed | local, helpers, used, callees)
    _compounded(tree)
    return Checked(source=source.strip(), tree=tree, names=frozenset(used - local), loops=local)


def compiled(source: str, names, functions=HELPERS) -> tuple:
    """(code object, the names it reads, its loop names) of `source` vetted against `names`: what
    explain's index cache keeps (errkit/explain/registry.py), so that answering needs no `ast`. Run it
    with `fixes.evaluate_code` when the values at hand include every name it reads and none of its
    loop names; otherwise `evaluate` vets it against them (the same verdict, vetted again)."""
    checked = check(source, names, functions)
    code = compile(guarded(checked.tree), "<catalogue expression>", "eval")
    return code, tuple(sorted(checked.names)), tuple(sorted(checked.loops))


def _comprehension_names(tree, allowed: frozenset, helpers: frozenset) -> frozenset:
    """The loop names of the expression's comprehensions, each of the one allowed form: a single
    `for NAME in ...` with at most one `if`, not nested, NAME new (no param's or helper's name)."""
    out = set()
    for node in walk(tree):
        if not isinstance(node, ast.ListComp):
            continue
        if len(node.generators) != 1:
            raise _forbid(node, "a comprehension with more than one 'for'")
        gen = node.generators[0]
        if not isinstance(gen.target, ast.Name) or gen.is_async or len(gen.ifs) > 1:
            raise _forbid(node, "a comprehension other than [x for NAME in ITEMS if CONDITION]")
        name = gen.target.id
        if name.startswith("_") or name in allowed or name in helpers or name in out:
            raise _forbid(node, f"the loop name {name!r} (it must be new, and not start with '_')")
        if any(isinstance(inner, ast.ListComp) for part in [node.elt, gen.iter, *gen.ifs] for inner in walk(part)):
            raise _forbid(node, "a comprehension inside a comprehension")
        out.add(name)
    return frozenset(out)


@functools.lru_cache(maxsize=1024)
def _vetted_code(source: str, names: frozenset, helpers: frozenset):
    """`source` vetted and compiled (once per source and names: explain computes the same
    suggestions for every match of an entry)."""
    return compile(guarded(check(source, names, helpers).tree), "<catalogue expression>", "eval")


GUARDED_OPS = {ast.Pow: "_pow", ast.Mult: "_mul", ast.Add: "_add", ast.Mod: "_mod"}


def guarded(tree):
    """A vetted tree made what compiled code runs (changed in place): each `**`, `*`, `+` and `%`
    a call of its guarded operation, each helper call `_call(helper, ...)`, each comparison's
    operands and each sliced value read through `_v`, each comprehension's items through
    `_each(items, steps of one pass)` (errkit/core/bounds.py; helpers.evaluate_code provides them)."""
    if isinstance(tree, ast.ListComp):  # (counted before its parts are guarded)
        weight = pass_steps(tree)
    for name in tree._fields:
        child = getattr(tree, name)
        if isinstance(child, list):  # (of a vetted expression, only nodes: no dict display's None keys)
            setattr(tree, name, [guarded(c) for c in child])
        elif isinstance(child, ast.AST):
            setattr(tree, name, guarded(child))
    if isinstance(tree, ast.BinOp) and type(tree.op) in GUARDED_OPS:
        return _guard(GUARDED_OPS[type(tree.op)], [tree.left, tree.right], tree)
    if isinstance(tree, ast.Call):
        return _guard("_call", [tree.func, *tree.args], tree)
    if isinstance(tree, ast.Compare):
        tree.left = _read_whole(tree.left)
        tree.comparators = [_read_whole(c) for c in tree.comparators]
    elif isinstance(tree, ast.Subscript) and isinstance(tree.slice, ast.Slice):
        tree.value = _read_whole(tree.value)
    elif isinstance(tree, ast.ListComp):
        loop = tree.generators[0]
        loop.iter = _guard("_each", [loop.iter, _located(ast.Constant(weight), loop.iter)], loop.iter)
    return tree


def pass_steps(tree) -> int:
    """The steps one pass of a comprehension is charged: its element and condition, as written
    (each expression node one step, and one for the pass)."""
    return 1 + sum(isinstance(n, ast.expr) for part in [tree.elt, *tree.generators[0].ifs] for n in walk(part))


def _located(node, where):
    node.lineno, node.col_offset = where.lineno, where.col_offset
    node.end_lineno, node.end_col_offset = where.end_lineno, where.end_col_offset
    return node


def _guard(name: str, args: list, where):
    return _located(ast.Call(_located(ast.Name(name, ast.Load()), where), args, []), where)


def _read_whole(node):
    return node if isinstance(node, ast.Constant) else _guard("_v", [node], node)


def _forbid(node: ast.AST, what: str) -> ExprError:
    return ExprError("forbidden-expression", f"{what} is not allowed", getattr(node, "col_offset", 0))


def _vet(node: ast.AST, allowed: frozenset, helpers: frozenset, used: set, callees: frozenset) -> None:
    if isinstance(node, ast.Expression):
        return
    if type(node) in _DESCRIBE:
        raise _forbid(node, _DESCRIBE[type(node)])
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, int):
            if abs(value) > MAX_CONSTANT:
                raise _forbid(node, "an integer constant above 2**64")
            return
        if isinstance(value, float):
            return
        if isinstance(value, str):
            if len(value) > MAX_STRING:
                raise _forbid(node, f"a string constant longer than {MAX_STRING} characters")
            return
        raise _forbid(node, f"a {type(value).__name__} constant")
    if isinstance(node, ast.Name):
        if node.id.startswith("_"):
            raise _forbid(node, f"the name {node.id!r} (names starting with '_')")
        if node.id in allowed:
            used.add(node.id)
            return
        if node.id in helpers:
            if id(node) in callees:
                return
            raise _forbid(node, f"the helper {node.id!r} named without calling it")
        raise ExprError("unknown-name", f"unknown name {node.id!r}{did_you_mean(node.id, allowed | helpers)}", node.col_offset)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id.startswith("_"):
            raise _forbid(node, f"a call of {node.func.id!r} (names starting with '_')")
        if not isinstance(node.func, ast.Name) or node.func.id not in helpers:
            target = node.func.id if isinstance(node.func, ast.Name) else _unparse(node.func)
            raise ExprError("unknown-name" if isinstance(node.func, ast.Name) else "forbidden-expression",
                            f"call of {target!r}: only the helpers {', '.join(sorted(helpers))} may be called", node.col_offset)
        if node.keywords:
            raise _forbid(node, "a keyword argument")
        return
    if isinstance(node, ast.BinOp):
        if not isinstance(node.op, _BINOPS):
            raise _forbid(node, f"the operator {type(node.op).__name__}")
        if isinstance(node.op, ast.Mult) and any(
            isinstance(side, (ast.List, ast.Tuple)) or (isinstance(side, ast.Constant) and isinstance(side.value, str))
            for side in (node.left, node.right)
        ):
            raise _forbid(node, "repeating a string or sequence with '*'")
        if isinstance(node.op, ast.Pow):
            exp = node.right
            if not (isinstance(exp, ast.Constant) and isinstance(exp.value, int) and not isinstance(exp.value, bool)
                    and 0 <= exp.value <= MAX_POWER):
                raise _forbid(node, f"'**' with an exponent other than a literal 0..{MAX_POWER}")
        return
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, _UNARY):
            raise _forbid(node, f"the operator {type(node.op).__name__}")
        return
    if isinstance(node, ast.Compare):
        for op, right in zip(node.ops, node.comparators):
            if not isinstance(op, _COMPARE):
                raise _forbid(node, f"the comparison {type(op).__name__}")
            if isinstance(op, (ast.Is, ast.IsNot)) and not (isinstance(right, ast.Constant) and right.value is None):
                raise _forbid(node, "'is' with anything but None")
        return
    if isinstance(node, (ast.BoolOp, ast.IfExp, ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.ListComp,
                         ast.comprehension, ast.Store, ast.Load, ast.And, ast.Or) + _BINOPS + _UNARY + _COMPARE):
        return
    raise _forbid(node, type(node).__name__)


def did_you_mean(word: str, choices) -> str:
    """` (did you mean 'x'?)` for the closest of `choices`, else "": the hint of every unknown name,
    in an expression and in an entry file alike (errkit/catalogue/spec.py)."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""



def _unparse(node) -> str:
    import ast as full_ast  # generate time only

    return full_ast.unparse(node)


def to_python(checked: Checked, rename: dict[str, str] | None = None) -> str:
    """Python source of a vetted expression; `rename` maps names (params, helpers) to others. The
    expression as written, without the guarded operations: generated validators run it inside the
    kernel, on the values of the kernel's own call, where a check costs microseconds; what bounds
    it there is the vetting (depth, powers, constants) and lint's evaluation of the examples."""
    import ast as full_ast  # generate time only

    if not rename:
        return full_ast.unparse(checked.tree.body)

    class _Rename(full_ast.NodeTransformer):
        def visit_Name(self, node):
            return full_ast.copy_location(full_ast.Name(id=rename.get(node.id, node.id), ctx=node.ctx), node)

    tree = _Rename().visit(full_ast.parse(checked.source, mode="eval"))
    return full_ast.unparse(tree.body)


def evaluate(source: str, env, functions=None, meter=None):
    """Vet, then evaluate with no builtins: only `env` and the helpers are visible; within the bounds
    of `meter` (a new one by default: errkit/core/bounds.py), bounds.OverBound past them."""
    helpers = HELPERS if functions is None else functions
    return evaluate_code(_vetted_code(source, frozenset(env), frozenset(helpers)), env, helpers, meter)

"""A kernel's rules, declared once (catalog/kernels/*.yaml), applied where suggestions compute values.

In a `suggest` expression, `valid(NAME, ITEMS)` is the items for which every rule of the entry's
kernel on NAME holds, the other values those rules read being the ones the message shows. It is
written out as `[candidate_ for candidate_ in ITEMS if RULE and ...]` before the expression is
vetted, compiled for `errkit explain` and translated for the paste page: the rule is stated once,
and every suggestion that picks a value of NAME satisfies all of it. A rule that reads a value the
message does not show cannot be applied there, and is left out of that suggestion.

Catalogue side: imports the full `ast` (never on the explain path).
"""

from __future__ import annotations

import ast
import operator
from typing import Iterable

from errkit.core import expr
from errkit.catalogue import refused_cases
from errkit.catalogue.model import Kernel

LOOP = "candidate_"


def uses_valid(source: str) -> bool:
    return "valid(" in source


def expand(source: str, kernel: Kernel | None, params: Iterable[str]) -> str:
    """`source` with each `valid(NAME, ITEMS)` written out; ExprError names what is wrong."""
    if not uses_valid(source):
        return source
    shown = set(params)
    expr.parse(source)  # a syntax error is an ExprError with its column

    class Expand(ast.NodeTransformer):
        count = 0  # each valid(...) gets its own loop name: two in one expression do not clash

        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            if not (isinstance(node.func, ast.Name) and node.func.id == "valid"):
                return node
            if kernel is None:
                raise expr.ExprError("unknown-name", "valid() needs the entry's kernel: add `kernel: <id>` (catalog/kernels/)",
                                     node.col_offset)
            if len(node.args) != 2 or node.keywords or not isinstance(node.args[0], ast.Name):
                raise expr.ExprError("bad-expression", "valid(NAME, ITEMS) takes the name of a kernel value and a list",
                                     node.col_offset)
            name = node.args[0].id
            if name not in kernel.values:
                raise expr.ExprError("unknown-name", f"{name!r} is not a value of kernel {kernel.id!r} "
                                     f"(its values: {', '.join(sorted(kernel.values))})", node.col_offset)
            loop = LOOP if not self.count else f"{LOOP}{self.count}"
            self.count += 1
            conditions = [f"({_rename(rule.check, name, loop)})" for rule in applicable(kernel, name, shown)]
            items = ast.unparse(node.args[1])
            written = f"[{loop} for {loop} in {items} if {' and '.join(conditions) or 'True'}]"
            return ast.parse(written, mode="eval").body

    return ast.unparse(Expand().visit(ast.parse(source.strip(), mode="eval")).body)


def applicable(kernel: Kernel, name: str, shown: set[str]) -> list:
    """The kernel's rules on `name` whose other values are all shown."""
    out = []
    for rule in kernel.rules:
        names = kernel.verdicts.expression(rule.check, kernel.values.keys()).names
        if name in names and names - {name} <= shown:
            out.append(rule)
    return out


def _rename(source: str, name: str, loop: str) -> str:
    class Rename(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return ast.copy_location(ast.Name(id=loop if node.id == name else node.id, ctx=node.ctx), node)

    return ast.unparse(Rename().visit(ast.parse(source.strip(), mode="eval")).body)


def suggestion_sources(entry, kernels, only: str | None = None) -> list[dict[str, str]]:
    """Each fix's suggestions written out to satisfy the rules of the kernels that may raise it (of
    kernel `only`, when given: the generated validators' note is our own kernel's): see `solutions`."""
    return [fix["suggest"] for fix in solutions(entry, kernels, only)]


def case_sources(entry, kernels) -> list[list[dict]]:
    """Each fix's cases as the index holds them (when, assume, suggest): see `solutions`."""
    return [fix["cases"] for fix in solutions(entry, kernels)]


def fix_kernel(entry, fix, kernels) -> Kernel | None:
    """The kernel whose rules a fix's `valid(...)` applies: the fix's own, else the entry's."""
    name = fix.kernel or entry.kernel
    return kernels.get(name) if name else None


# -- suggestions that solve the raising kernel -------------------------------------------------------
#
# A suggestion's value for a param (`sets`) must satisfy every rule of the kernel that raised the
# error, not only the check that failed: each suggestion whose param is a value of that kernel is
# written out as its values restricted to those that satisfy every rule on it (`solve`), the other
# values the rules read being the ones the message shows; what the message cannot show is read from
# the kernel (`from`: a value that follows from others) or taken in every case it may be (`cases`:
# the kv dtype's packing, segment_ids, jax.grad), the values per case given where they differ
# (and where no value holds in every case, errkit/core/suggest.py offers the one valid wherever
# any is when each case left without one refuses every value: refused_cases.py). A rule the value
# does not enter, on cased values the message does not show, is said rather than applied. The
# rules on the other values the suggestion reads hold too: a value cannot make up for another shown
# value the kernel refuses (then none is offered; a fix that sets both offers them together). A rule
# on a value the message does not show and the kernel does not declare is left out and said
# (`requires`). A fix whose error several kernels raise gets the values valid for all of them, and
# each kernel's own values as a case assuming RAISED_BY (errkit/core/suggest.py picks the told one).

RAISED_BY = "raised_by"  # the name a kernel's case assumes: the kernel that raised the error
MAX_CASES = 16  # combinations of unknown values a suggestion is given per kernel
LIST_HELPERS = frozenset({"divisors", "aligned_divisors", "common_divisors"})


class Unsolvable(ValueError):
    """A suggestion the rules cannot be written into (a list built in a way `_as_list` does not read)."""


def fix_kernels(entry, fix, kernels) -> list[Kernel]:
    """The kernels a fix's values must satisfy: the fix's own, else every kernel raising one of the
    entry's wordings (the entry's own message's first)."""
    if fix.kernel:
        return [kernels[fix.kernel]] if fix.kernel in kernels else []
    out: dict[str, Kernel] = {}
    for variant in entry.wordings:
        for name in entry.raising_kernels(variant):
            if name in kernels:
                out.setdefault(name, kernels[name])
    return list(out.values())


_SOLVED: dict = {}  # (id(entry), its kernels' ids, only) -> (entry, the kernels, solutions): each solved once a run, when first asked for (not at load: lint never reads them)


def solutions(entry, kernels, only: str | None = None) -> list[dict]:
    """Per fix: {"suggest": label -> source, "cases": [...], "requires": label -> [rule refs]}: the
    fix's suggestions written out to satisfy every rule of every kernel that may have raised the
    error (kernel `only`, when given), its cases (the entry's own, the unknown values', each
    kernel's: see the section's note) likewise; what the index holds and the site computes."""
    held = tuple(kernels.values())  # (the kernels themselves: each generator of a run reads the same solutions)
    key = (id(entry), tuple(map(id, held)), only)
    known = _SOLVED.get(key)
    if known is not None and known[0] is entry and len(known[1]) == len(held) and all(map(operator.is_, known[1], held)):
        return known[2]
    out = []
    for fix in entry.fixes:
        ks = fix_kernels(entry, fix, kernels)
        if only is not None:
            ks = [k for k in ks if k.id == only]
        out.append(_solve_fix(entry, fix, ks, kernels))
    if len(_SOLVED) > 4096:
        _SOLVED.clear()
    _SOLVED[key] = (entry, held, out)
    return out


def _solve_fix(entry, fix, ks: list[Kernel], kernels) -> dict:
    base_kernel = fix_kernel(entry, fix, kernels)
    expanded = {label: expand(source, base_kernel, entry.params.keys()) for label, source in fix.suggest.items()}
    own_cases = [{"when": case.when, "assume": dict(case.assume),
                  "suggest": {label: expand(source, base_kernel, set(entry.params) | set(case.assume))
                              for label, source in case.suggest.items()}}
                 for case in fix.cases]
    if not ks:
        return {"suggest": expanded, "cases": own_cases, "requires": {}}
    suggest, requires, unknown = {}, {}, {}
    for label, source in expanded.items():
        solved = _solve_label(entry, fix, label, source, ks, {})
        suggest[label] = solved.source
        if solved.requires:
            requires[label] = solved.requires
        unknown[label] = solved.unknown
    cases = []
    for case in own_cases:  # the entry's own cases, their assumptions given to the rules
        cases.append({**case, "suggest": {label: _solve_label(entry, fix, label, source, ks, case["assume"]).source
                                          for label, source in case["suggest"].items()}})
    # the cases of what the messages cannot show, for all the kernels at once (assuming raised_by "":
    # whichever raised it; shown when which did is not told) or for the one kernel
    cases += _unknown_cases(entry, fix, expanded, ks, unknown, {RAISED_BY: ""} if len(ks) > 1 else {}, "")
    if len(ks) > 1:  # each kernel's own values, and its unknown values' cases
        for kernel in ks:
            own, own_unknown = {}, {}
            for label, source in expanded.items():
                solved = _solve_label(entry, fix, label, source, [kernel], {})
                own[label] = solved.source
                own_unknown[label] = solved.unknown
            raised = f"raised by {kernel.title}"
            cases.append({"when": raised, "assume": {RAISED_BY: kernel.id}, "suggest": own})
            cases += _unknown_cases(entry, fix, expanded, [kernel], own_unknown, {RAISED_BY: kernel.id}, raised + ", ")
    return {"suggest": suggest, "cases": cases, "requires": requires}


def _unknown_cases(entry, fix, expanded: dict, ks: list, unknown: dict, assumed: dict, prefix: str) -> list[dict]:
    """The cases of what the messages cannot show, each label's by the values its own rules read
    (at most MAX_CASES combinations a label): one case record per combination, holding the
    suggestions of every label it is a case of. Together a label's records cover every combination
    (`partition`): where no value holds in all of them, errkit/core/suggest.py offers the values
    that hold in every one where any does, and names those where none does."""
    by: dict = {}
    for label, source in expanded.items():
        for assume, when in _combinations(unknown[label]):
            key = tuple(sorted(assume.items(), key=repr))
            record = by.setdefault(key, {"when": prefix + when, "assume": {**assumed, **assume}, "suggest": {},
                                         "partition": True})
            solved = _solve_label(entry, fix, label, source, ks, {**assumed, **assume})
            record["suggest"][label] = solved.source
            targets = tuple(name.strip() for name in (fix.sets.get(label) or "").split(",") if name.strip())
            if refused_cases.fits_nowhere(entry.verdicts, solved.conditions, targets, refused_cases.cased_values(ks)):
                record.setdefault("regardless", []).append(label)
    return list(by.values())


def _combinations(unknown: dict) -> list[tuple[dict, str]]:
    """(assume, when) of each combination of the unknown values' cases, at most MAX_CASES."""
    combos: list[tuple[dict, list[str]]] = [({}, [])]
    for name, choices in unknown.items():
        combos = [({**assume, name: value}, words + [when]) for assume, words in combos for value, when in choices]
        if len(combos) > MAX_CASES:
            return []
    return [(assume, ", ".join(words)) for assume, words in combos if assume]


class _Solved:
    __slots__ = ("source", "requires", "unknown", "conditions")

    def __init__(self, source: str, requires: list, unknown: dict, conditions: tuple = ()):
        self.source, self.requires, self.unknown, self.conditions = source, requires, unknown, conditions


def _solve_label(entry, fix, label: str, source: str, ks: list[Kernel], assume: dict) -> _Solved:
    """`source` restricted to the values of its param (`sets`) that satisfy the rules of `ks`, the
    values the entry's error implies (`implies`) taken as given."""
    param = fix.sets.get(label)
    if not param:
        return _Solved(source, [], {})
    supposed = set(assume)  # (a case's values, unlike what the entry's error implies, are supposed)
    assume = {**entry.implies, **assume}
    targets = tuple(name.strip() for name in param.split(","))
    conditions, requires, unknown = [], [], {}
    # the message's values a rule may read: those the suggestion reads (a wording that shows it shows
    # them; explain says what a suggestion needs that the message does not show) and the targets
    reads = entry.verdicts.expression(source, set(entry.params) | set(assume)).names | set(targets)
    shown = {name: p for name, p in entry.params.items() if name in reads}
    for kernel in ks:
        if not any(t in kernel.values for t in targets):
            continue
        for rule, atom in _atoms(kernel):
            condition = _condition(atom, kernel, targets, shown, assume, unknown, supposed)
            if condition is None:
                continue
            if condition is _REQUIRES:
                requires.append({"kernel": kernel.id, "rule": rule.name, "check": ast.unparse(atom), "says": rule.says})
                continue
            condition = _folded(condition)
            if isinstance(condition, ast.Constant) and condition.value is True:
                continue
            if not any(ast.dump(condition) == ast.dump(known) for known in conditions):  # (kernels share rules)
                conditions.append(condition)
    if not conditions:  # (a configuration is still given as a list of them, as where rules apply)
        return _Solved(f"[{source.strip()}]" if len(targets) > 1 else source, requires, unknown)
    try:
        tree = ast.parse(source.strip(), mode="eval")
        written = ast.unparse(_unique_loops(_Restrict(targets, conditions, set(entry.params) | set(assume)).top(tree.body)))
        if not entry.verdicts.expression(written, set(entry.params) | set(assume)).names <= reads | set(assume):
            raise Unsolvable("it would read a value the suggestion does not")
        expr.parse(written)  # (within the length a catalogue expression may have)
    except (Unsolvable, expr.ExprError) as err:
        requires.append({"kernel": ",".join(k.id for k in ks), "rule": "not-applied", "check": "",
                         "says": f"the kernel's rules could not be applied to this suggestion ({err})"})
        return _Solved(source, requires, unknown)
    return _Solved(written, requires, unknown, conditions)


_REQUIRES = object()  # a rule on the value that reads what neither the message nor the kernel shows


def _atoms(kernel: Kernel):
    """(rule, each conjunct of its check as a tree): a rule `a and b` is two atoms, so a part that
    reads a value the message does not show leaves the other part applied."""
    for rule in kernel.rules:
        tree = ast.parse(rule.check.strip(), mode="eval").body
        parts = tree.values if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And) else [tree]
        for part in parts:
            yield rule, part


def _condition(atom, kernel: Kernel, targets: tuple, params, assume: dict, unknown: dict, supposed: set = frozenset()):
    """The atom as a condition on `targets` (a tree reading them and the message's params), None
    when it does not read them, _REQUIRES when it reads a value nothing gives. A rule the value does
    not enter is taken alike with a case's `supposed` values as without them (said, not a filter):
    the value and its cases then agree."""
    tree = _derived(atom, kernel, targets, params, assume)
    names = refused_cases.names(tree)
    if not names & set(targets) and not names & set(params):
        return None  # neither the value nor what the message shows: nothing to check
    hidden = [n for n in names if n not in params and (n not in assume or n in supposed)]
    if not names & set(targets) and hidden:
        if any(not (n in kernel.values and kernel.values[n].cases) for n in hidden):
            # a rule on what the message shows, and on what nothing shows: no value of this one mends
            # it, but the value is offered on it (kv_seq_len=320 takes block_kv=64, and under jax.grad
            # needs block_kv_dkv * compute_wgs_bwd to divide it too): stated with the value
            return _REQUIRES
        # a rule the value does not enter, on values the message does not show but that have cases
        # (the forward's shared memory by head_dim, block_kv, steps, jax.grad): a condition of the rest
        # of the configuration, which no value of this one mends; stated with the value, not a filter
        # of it (a filter would leave no value wherever one case of the rest is refused)
        return None if _holds_in_every_case(tree, kernel) else _REQUIRES
    cased = []
    for name in sorted(names - set(targets)):
        if name in assume:
            tree = _substitute(tree, {name: _literal(assume[name])})
        elif name in params:
            if params[name].optional or kernel.values.get(name, None) is not None and kernel.values[name].cases:
                cased.append(name)
        elif name in kernel.values and kernel.values[name].cases:
            cased.append(name)
        else:
            return None if _holds_in_every_case(tree, kernel) else _REQUIRES
    for name in cased:  # a value the message may not show: in every case it may be
        choices = kernel.values[name].cases if name in kernel.values else ()
        if choices and name not in params:  # (one the suggestion reads is shown when it is computed: no case of it)
            unknown.setdefault(name, choices)
        every = ast.BoolOp(ast.And(), [_substitute(tree, {name: _literal(value)}) for value, _ in choices]) if choices else None
        if name in params:
            shown = tree
            missing = every if every is not None else ast.Constant(True)
            tree = ast.IfExp(ast.Compare(ast.Name(name, ast.Load()), [ast.IsNot()], [ast.Constant(None)]), shown, missing)
        else:
            tree = every
    return tree


def _holds_in_every_case(tree, kernel: Kernel) -> bool:
    """Whether the atom holds whatever the values nothing shows are, given the cases the kernel
    declares for the others (`not is_fp8 or ...` with is_fp8 False in every case): then it is no
    condition to state."""
    import itertools

    cased = sorted(n for n in refused_cases.names(tree) if n in kernel.values and kernel.values[n].cases)
    if not cased:
        return False
    for combo in itertools.islice(itertools.product(*(kernel.values[n].cases for n in cased)), 64):
        folded = _folded(_substitute(tree, {n: _literal(v) for n, (v, _) in zip(cased, combo)}))
        if not (isinstance(folded, ast.Constant) and folded.value is True):
            return False
    return True


def _derived(tree, kernel: Kernel, targets: tuple, params, assume: dict, done: frozenset = frozenset()):
    """`tree` with each value the message does not show, and the kernel derives from others (`from`),
    read from them; a value read so once is not derived back (block from block_q, block_q from block)."""
    if len(done) > 8:
        return tree
    swap = {}
    for name in refused_cases.names(tree) - set(targets) - set(assume) - done:
        value = kernel.values.get(name)
        if value is None or not value.derived or name in params:  # (a value the message shows is read as shown)
            continue
        formula = ast.parse(value.derived.strip(), mode="eval").body
        reads = refused_cases.names(formula)
        known = set(params) | set(targets) | set(assume) | {n for n, v in kernel.values.items() if v.cases}
        if reads <= known and not reads & (done | {name}):  # (a formula of what is known: no deriving in circles)
            swap[name] = formula
    if not swap:
        return tree
    return _derived(_substitute(tree, swap), kernel, targets, params, assume, done | frozenset(swap))


def _literal(value):
    return ast.Constant(value)


def _substitute(tree, swap: dict):
    """A copy of `tree` with each name of `swap` replaced by a copy of its tree."""
    import copy

    class Swap(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in swap:
                return copy.deepcopy(swap[node.id])
            return node

    return ast.fix_missing_locations(Swap().visit(copy.deepcopy(tree)))


class _Restrict:
    """A suggestion's tree with its values restricted to those satisfying `conditions` (trees
    reading the `targets`): lists filtered where they are made, a single value kept only if it
    satisfies them (else None)."""

    def __init__(self, targets: tuple, conditions: list, taken: set):
        self.targets, self.conditions, self.taken, self.count = targets, conditions, set(taken), 0

    def holds(self, candidate):
        if len(self.targets) == 1:
            swap = {self.targets[0]: candidate}
        else:
            swap = {t: ast.Subscript(candidate, ast.Constant(i), ast.Load()) for i, t in enumerate(self.targets)}
        parts = [_substitute(c, swap) for c in self.conditions]
        return _folded(parts[0] if len(parts) == 1 else ast.BoolOp(ast.And(), parts))

    def wrap(self, node):
        """A single value kept when it satisfies the conditions: `[v for v in [value] if ...]` (the
        value once, however many rules read it), or, when it is made by a comprehension (which may
        not sit in another), `value if ... else None`."""
        test = self.holds(node)
        if len(self.targets) > 1:  # a configuration: always a list of them (the one, or none)
            return self.as_list(ast.List([node], ast.Load())) if not isinstance(test, ast.Constant) else \
                ast.List([node] if test.value else [], ast.Load())
        if isinstance(test, ast.Constant):
            return node if test.value else ast.Constant(None)
        if isinstance(node, (ast.Name, ast.Constant)) or any(isinstance(n, ast.ListComp) for n in ast.walk(node)):
            return ast.IfExp(test, node, ast.Constant(None))
        return self.as_list(ast.List([node], ast.Load()))

    def loop(self) -> str:
        while True:
            name = f"value{self.count or ''}_"
            self.count += 1
            if name not in self.taken:
                self.taken.add(name)
                return name

    def top(self, node):
        if isinstance(node, ast.IfExp):
            return ast.IfExp(node.test, self.top(node.body), self.top(node.orelse))
        if isinstance(node, ast.Constant) and node.value is None:
            return node
        if len(self.targets) == 1 and _is_list(node):
            return self.as_list(node)
        if len(self.targets) > 1 and (isinstance(node, ast.ListComp) or (
                isinstance(node, ast.List) and node.elts and all(isinstance(e, ast.List) for e in node.elts))):
            return self.as_list(node)  # a list of configurations: each kept if it satisfies the rules
        return self.wrap(node)

    def as_list(self, node):
        if isinstance(node, ast.Constant) and node.value is None:
            return node
        if isinstance(node, ast.IfExp):
            return ast.IfExp(node.test, self.as_list(node.body), self.as_list(node.orelse))
        if isinstance(node, ast.ListComp):
            gen = node.generators[0]
            test = self.holds(node.elt)
            if isinstance(test, ast.Constant) and test.value:
                return node
            ifs = gen.ifs + [test]
            joined = ifs[0] if len(ifs) == 1 else ast.BoolOp(ast.And(), ifs)
            return ast.ListComp(node.elt, [ast.comprehension(gen.target, gen.iter, [joined], 0)])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("nearest", "sorted") and node.args:
            return ast.Call(node.func, [self.as_list(node.args[0]), *node.args[1:]], [])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return ast.BinOp(self.as_list(node.left), ast.Add(), self.as_list(node.right))
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            return ast.Subscript(self.as_list(node.value), node.slice, ast.Load())
        if any(isinstance(n, ast.ListComp) for n in ast.walk(node)):
            raise Unsolvable(f"a list made by {ast.unparse(node)!r}")
        loop = self.loop()
        name = ast.Name(loop, ast.Load())
        return ast.ListComp(name, [ast.comprehension(ast.Name(loop, ast.Store()), node, [self.holds(name)], 0)])


def _is_list(node) -> bool:
    """Whether a suggestion's tree makes a list of values (else one value)."""
    if isinstance(node, (ast.List, ast.ListComp)):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in LIST_HELPERS or node.func.id in ("nearest", "sorted")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _is_list(node.left) or _is_list(node.right)
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Slice) and _is_list(node.value)
    if isinstance(node, ast.IfExp):
        return _is_list(node.body) or _is_list(node.orelse)
    return False


def _unique_loops(tree):
    """`tree` with each comprehension's loop name its own (a value kept only if it satisfies the
    rules is written twice: its copies' loops are renamed)."""
    seen: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ListComp):
            loop = node.generators[0].target.id
            if loop in seen:
                fresh = next(f"{loop}{n}_" for n in range(1, 10_000) if f"{loop}{n}_" not in seen)
                for part in [node.elt, *node.generators[0].ifs]:
                    for name in ast.walk(part):
                        if isinstance(name, ast.Name) and name.id == loop:
                            name.id = fresh
                node.generators[0].target.id = loop = fresh
            seen.add(loop)
    return tree


def _folded(tree):
    """`tree` with each part that reads no name computed (a case's value put in: `'batch' != 'kv_head'`
    is True), and `and` / `or` / `if` over such parts reduced, so a written-out rule reads as short
    as it can."""
    tree = ast.fix_missing_locations(tree)

    def const(node):
        return isinstance(node, ast.Constant)

    def fold(node):
        for name, child in ast.iter_fields(node):
            if isinstance(child, list):
                setattr(node, name, [fold(c) if isinstance(c, ast.AST) else c for c in child])
            elif isinstance(child, ast.AST):
                setattr(node, name, fold(child))
        if isinstance(node, ast.BoolOp):
            decisive = isinstance(node.op, ast.Or)  # the value that decides it: True for or, False for and
            kept = []
            for value in node.values:
                if const(value):
                    if bool(value.value) == decisive:
                        return ast.Constant(decisive)
                    continue
                kept.append(value)
            if not kept:
                return ast.Constant(not decisive)
            return kept[0] if len(kept) == 1 else ast.BoolOp(node.op, kept)
        if isinstance(node, ast.IfExp) and const(node.test):
            return node.body if node.test.value else node.orelse
        if isinstance(node, ast.IfExp) and const(node.body) and const(node.orelse) and node.body.value is node.orelse.value:
            return node.body
        if isinstance(node, ast.BinOp) and const(node.right) and node.right.value == 1 and type(node.right.value) is int:
            if isinstance(node.op, (ast.FloorDiv, ast.Mult)):
                return node.left  # x // 1, x * 1
            if isinstance(node.op, ast.Mod):
                return ast.Constant(0)  # x % 1 (of an int)
        if isinstance(node, (ast.Compare, ast.BinOp, ast.UnaryOp)) and all(isinstance(n, _CONSTANT_NODES) for n in ast.walk(node)):
            try:
                return ast.Constant(_computed(node))
            except Exception:  # noqa: BLE001 - left as written (a division by zero is the kernel's to refuse)
                return node
        return node

    return fold(tree)


def expanded(source: str, kernel: Kernel | None, names: Iterable[str]) -> str:
    """A suggestion with `valid(...)` written out (expand); the source as written when it cannot be
    (lint's kernel rules say why)."""
    if not uses_valid(source):
        return source
    try:
        return expand(source, kernel, names)
    except expr.ExprError:
        return source


# what a part of a rule made only of constants may hold to be computed as it is written out: no name,
# call, attribute or comprehension, so nothing is left to vet (the catalogue's vetted expressions are
# vetting.py's alone); its `**`, `*`, `+` and `%` still run within the bounds (errkit/core/bounds.py)
_CONSTANT_NODES = (ast.Compare, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.IfExp, ast.Constant, ast.Tuple, ast.List,
                   ast.Subscript, ast.Slice, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def _computed(node):
    """The value of a part of a rule made only of constants (_CONSTANT_NODES)."""
    import copy
    import warnings

    from errkit.core.helpers import evaluate_code

    tree = ast.fix_missing_locations(ast.Expression(expr.guarded(copy.deepcopy(node))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # ('pallas' is None: a case's value put in)
        code = compile(tree, "<a kernel's rule, its values put in>", "eval")
    return evaluate_code(code, {})

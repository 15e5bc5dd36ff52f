"""Which cases of what a message cannot show refuse every value of a suggestion whatever the message
shows: there the rest of the configuration does not fit (under jax.grad with head_dim=128,
block_kv=128 and three steps, Mosaic GPU attention's forward takes no block_q), so a value valid in
every other case may be offered (errkit/core/suggest.py). Read by errkit/catalogue/kernels.py when
it writes a fix's cases; the names a rule's tree reads are told here too.

Catalogue side: imports the full `ast` (never on the explain path).
"""

from __future__ import annotations

import ast
import itertools
import math

from errkit.core import expr

CANDIDATES = range(1, 2049)  # the values a case is tried with to tell that none fits it, whatever the message shows
MAX_COMBINATIONS = 64  # of the cased values a rule reads: more are not tried, and the case is not told refused


def names(tree) -> set[str]:
    """The values a rule's tree reads (not the helpers it calls)."""
    from errkit.core.helpers import HELPERS

    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in HELPERS}


def cased_values(ks: list) -> dict:
    """Each value the kernels declare cases of -> the values of its cases."""
    out: dict = {}
    for kernel in ks:
        for name, value in kernel.values.items():
            if value.cases:
                out.setdefault(name, [v for v, _ in value.cases])
    return out


def fits_nowhere(verdicts, conditions: list, targets: tuple, cased: dict) -> bool:
    """Whether, in a case, no value of CANDIDATES meets the `conditions` (trees on the `targets`)
    that do not tie it to the data: then the rest of the configuration is refused there whatever
    the value is. A rule reading a value the message shows is one of these when that value has
    cases (the configuration's compute_wgs_bwd), tried in each; one reading a shown value without
    cases (a length) ties the value to the data, which some data meets, and is left out (a block
    under jax.grad a multiple of 128 fits no length of 32, but fits others: the case is not
    refused)."""
    if len(targets) != 1:
        return False
    own = [c for c in conditions if names(c) <= set(targets) | set(cased)]
    if not own:
        return False
    read = sorted(set().union(*map(names, own)) - set(targets))
    if math.prod(len(cased[n]) for n in read) > MAX_COMBINATIONS:
        return False
    try:
        codes = [verdicts.compiled(ast.unparse(c), set(targets) | set(read))[0] for c in own]
    except (expr.ExprError, ValueError, SyntaxError, RecursionError):
        return False
    from errkit.core.helpers import evaluate_code

    for combo in itertools.product(*(cased[n] for n in read)):
        env = dict(zip(read, combo))
        for value in CANDIDATES:
            try:
                if all(evaluate_code(code, {**env, targets[0]: value}) for code in codes):
                    return False
            except Exception:  # noqa: BLE001 - a value the rules cannot read: not one to tell by
                continue
    return True

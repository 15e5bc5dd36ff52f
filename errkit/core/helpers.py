"""Helpers that catalogue expressions (`check`, `suggest`) may call.

Pure Python, no imports but errkit/core/bounds.py (not even `math`, a shared library to load): the explain path uses them.
Each has a JavaScript twin in the site's paste page (`site/docs/assets/errkit/runtime.js`); keep the two in step
(tests/site/test_site_pages.py compares them). COSTS tells the evaluation's Meter what the helpers that loop cost.
"""

from errkit.core.bounds import MAX_ROUND_DIGITS, Meter, OverBound

_LIMIT = 10**12  # divisors() walks up to sqrt(n); keep it bounded on hostile values


def divisors(n: int) -> list[int]:
    """All positive divisors of n, ascending (empty for n < 1)."""
    n = int(n)
    if n < 1 or n > _LIMIT:
        return []
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d != n // d:
                large.append(n // d)
        d += 1
    return small + large[::-1]


def aligned_divisors(n: int, m: int, at_most: int) -> list[int]:
    """The divisors of n that are multiples of m and at most `at_most`, ascending: the block sizes a
    kernel that tiles n in blocks aligned to m accepts (empty when none does)."""
    found = divisors(n)
    m, cap = int(m), int(at_most)
    return [d for d in found if m > 0 and d % m == 0 and d <= cap]


def nearest(candidates: list, x: float) -> list:
    """The closest candidates on either side of x (x itself when it is one), ascending."""
    candidates = sorted(set(candidates))
    if x in candidates:
        return [x]
    below = [c for c in candidates if c < x]
    above = [c for c in candidates if c > x]
    return ([below[-1]] if below else []) + ([above[0]] if above else [])


def next_multiple(n: int, m: int) -> int:
    """The smallest multiple of m that is >= n."""
    return -(-int(n) // int(m)) * int(m) if m else int(n)


def prev_multiple(n: int, m: int) -> int:
    """The largest multiple of m that is <= n (at least m)."""
    return max(int(n) // int(m) * int(m), int(m)) if m else int(n)


def is_power_of_two(n: int) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n > 0 and n & (n - 1) == 0


def next_power_of_two(n: int) -> int:
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def prev_power_of_two(n: int) -> int:
    n = int(n)
    return 1 if n <= 1 else 1 << (n.bit_length() - 1)


def is_finite(x) -> bool:
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return False
    x = float(x)  # as math.isfinite reads it (OverflowError past the float range)
    return x - x == 0  # 0 for every finite number, nan for inf and nan


def gcd(a: int, b: int) -> int:
    """math.gcd: the greatest common divisor, never negative; gcd(0, 0) is 0."""
    a, b = abs(int(a)), abs(int(b))
    while b:
        a, b = b, a % b
    return a


def common_divisors(a: int, b: int) -> list[int]:
    """Positive divisors shared by a and b, ascending."""
    return divisors(gcd(a, b))


def clamp(x, low, high):
    return max(low, min(high, x))


def _walk(n) -> int:
    """The numbers divisors(n) tries: the d with d * d <= n; none past its bound (it answers [])."""
    try:
        n = int(n)
    except (TypeError, ValueError, OverflowError):
        return 0
    return int(n ** 0.5) if 1 <= n <= _LIMIT else 0  # (a float's square root is exact to 1 up to 10**12)


def _round_cost(x, ndigits=None) -> int:
    """round(x, -d) of an int computes 10**d: refused past MAX_ROUND_DIGITS digits."""
    if isinstance(ndigits, int) and -ndigits > MAX_ROUND_DIGITS:
        raise OverBound(f"round() to more than {MAX_ROUND_DIGITS} digits")
    return 0


HELPERS = {
    "divisors": divisors,
    "common_divisors": common_divisors,
    "aligned_divisors": aligned_divisors,
    "nearest": nearest,
    "next_multiple": next_multiple,
    "prev_multiple": prev_multiple,
    "is_power_of_two": is_power_of_two,
    "next_power_of_two": next_power_of_two,
    "prev_power_of_two": prev_power_of_two,
    "is_finite": is_finite,
    "gcd": gcd,
    "clamp": clamp,
    "min": min,
    "max": max,
    "abs": abs,
    "len": len,
    "int": int,
    "float": float,
    "round": round,
    "sorted": sorted,
}


# helper -> the steps it takes beyond reading its arguments (errkit/core/bounds.Meter.call)
COSTS = {
    divisors: _walk,
    aligned_divisors: lambda n, m, at_most: _walk(n),
    common_divisors: lambda a, b: _walk(gcd(a, b)),
    round: _round_cost,
}


def evaluate_code(code, env, helpers=None, meter=None):
    """Run a vetted expression's code object (errkit/core/expr.py) with no builtins: only `env`, the
    helpers and the guarded operations of `meter` (a new Meter: the bounds of one evaluation) are
    visible. bounds.OverBound when it would go over a bound."""
    scope = dict(HELPERS if helpers is None else helpers)
    scope.update(env)
    scope.update((Meter() if meter is None else meter).guards(COSTS))
    scope["__builtins__"] = {}  # globals, not locals: a comprehension reads its names from there
    return eval(code, scope)  # noqa: S307 - vetted by expr.check, no builtins

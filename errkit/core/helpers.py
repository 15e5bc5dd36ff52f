"""Helpers that catalogue expressions (`check`, `suggest`) may call.

Pure Python, no imports but errkit/core/bounds.py (not even `math`, a shared library to load): the explain path uses them.
Each has a JavaScript twin in the site's paste page (`site/docs/assets/errkit/runtime.js`); keep the two in step
(tests/site/test_site_pages.py compares them). COSTS tells the evaluation's Meter what the helpers that loop cost.
"""

from errkit.core.bounds import MAX_ROUND_DIGITS, Meter, OverBound

_LIMIT = 2**64  # divisors() factors n up to here (Miller-Rabin's bases below are exact to 3.3e24); past it, []
_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)  # Miller-Rabin: with these, exact for n < 3.3e24


def divisors(n: int) -> list[int]:
    """All positive divisors of n, ascending (empty for n < 1, and past _LIMIT: COSTS refuses those
    with a reason). n is factored (small primes, then Miller-Rabin and Pollard-Brent's rho for
    what is left), never walked: a prime near 2**64 answers in milliseconds."""
    n = int(n)
    if n < 1 or n > _LIMIT:
        return []
    factors: dict = {}
    for p in _BASES:
        while n % p == 0:
            factors[p] = factors.get(p, 0) + 1
            n //= p
    left = [n] if n > 1 else []
    while left:
        m = left.pop()
        if _is_prime(m):
            factors[m] = factors.get(m, 0) + 1
        else:
            f = _rho(m)
            left += [f, m // f]
    found = [1]
    for p in sorted(factors):
        found = [d * p**k for d in found for k in range(factors[p] + 1)]
    return sorted(found)


def _is_prime(n: int) -> bool:
    """Miller-Rabin with _BASES, for an n > 1 none of them divides (exact below 3.3e24)."""
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in _BASES:
        x = pow(a, d, n)
        if x == 1 or x == n - 1:
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _rho(n: int) -> int:
    """A factor of the composite n (no prime of _BASES divides it) other than 1 and n: Brent's
    variant of Pollard's rho, products of 64 differences per gcd; another constant when a cycle
    gives n. Expected about n**0.25 steps (2**16 for n near 2**64)."""
    c = 1
    while True:
        x = y = ys = 2
        g = r = q = 1
        while g == 1:
            x = y
            for _ in range(r):
                y = (y * y + c) % n
            k = 0
            while k < r and g == 1:
                ys = y
                for _ in range(min(64, r - k)):
                    y = (y * y + c) % n
                    q = q * abs(x - y) % n
                g = gcd(q, n)
                k += 64
            r *= 2
        if g == n:  # the batch overshot: step again one by one from its start
            g = 1
            while g == 1:
                ys = (ys * ys + c) % n
                g = gcd(x - ys, n)
        if g != n:
            return g
        c += 1


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
    """The steps divisors(n) is charged: 8 per n**0.25 (its rho's expected steps, and more), 400 for
    the small primes and Miller-Rabin; none for n < 1 (it answers []). Past _LIMIT it is refused:
    OverBound says why (the helper alone answers [])."""
    try:
        n = int(n)
    except (TypeError, ValueError, OverflowError):
        return 0
    if n > _LIMIT:
        raise OverBound("divisors of a number over 2**64 are not computed")
    return 8 * _root4(n) + 400 if n >= 1 else 0


def _root4(n: int) -> int:
    """The integer fourth root of 0 <= n <= _LIMIT (a float's, corrected to exact)."""
    r = int(n ** 0.25)
    while r**4 > n:
        r -= 1
    while (r + 1) ** 4 <= n:
        r += 1
    return r


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

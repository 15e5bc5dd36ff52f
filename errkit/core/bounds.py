"""The bounds of one evaluation of a catalogue expression: how big a value may grow (an int's bits,
a sequence's items) and how much work the evaluation may do (steps), checked by the guarded
operations that vetted expressions run.

errkit/core/expr.py compiles every `**`, `*`, `+` and `%`, every helper call, every comparison's
operands, every slice and every comprehension's loop into calls of a Meter's methods (the names
of GUARDS, which no catalogue expression can write: names starting with '_' are refused). Each
checks its operands before it does the work and raises OverBound when the result would go over a
bound, so no expression runs for more than about MAX_STEPS steps, whatever the values: ints stay
within MAX_BITS bits (a `+` or `-` adds one bit at most), sequences within MAX_ITEMS items, and
every loop (a comprehension, a helper walking a list or the divisors of a number) is charged
before it runs. A step is one operation on a small value: a comprehension's pass over its element
and condition, an item of a sequence read or written, a divisor tried.

No imports: `errkit explain` evaluates through it (errkit/core/helpers.evaluate_code).
"""

MAX_BITS = 4096  # an int computed by '**', '*' or a helper: (2**63)**64 fits, (2**64)**64 does not
MAX_ITEMS = 10_000  # a list, tuple or string computed (divisors() of a number up to 10**12 has 6,720 at most; past about 10**13 some have more)
MAX_STEPS = 2_000_000  # the work of one evaluation (explain: of one answer's suggestions together), about 0.4 s
MAX_ROUND_DIGITS = MAX_BITS // 4  # round(x, -d) computes 10**d: 1024 digits are 3,402 bits
MAX_SHOWN = 256 * 1024  # characters, about, of a result as explain shows it (6,720 divisors of 12 digits: 94,000)

# the limits the paste page's runtime.js holds too (errkit/generate/assets.py writes them in)
JS_BOUNDS = ("MAX_BITS", "MAX_ITEMS", "MAX_STEPS", "MAX_ROUND_DIGITS", "MAX_SHOWN")

GUARDS = ("_pow", "_mul", "_add", "_mod", "_v", "_call", "_each")  # the names compiled code calls

_SEQUENCES = (str, list, tuple)


class OverBound(Exception):
    """An operation whose result or work would go over a bound, stopped before it ran; the message
    says which bound ("the result would have more than 4096 bits")."""


def _bits() -> OverBound:
    return OverBound(f"an int of more than {MAX_BITS} bits")


def _items() -> OverBound:
    return OverBound(f"a sequence of more than {MAX_ITEMS} items")


def _steps() -> OverBound:
    return OverBound(f"more than {MAX_STEPS} steps")


_PLAIN = (bool, int, float, str, type(None))


def unshowable(value) -> str | None:
    """Why `value` is no result to show (None: it is one): a value other than a number, a string,
    None or lists and tuples of them; an int past MAX_BITS bits; more than about MAX_SHOWN
    characters in all (items counted as their digits or characters)."""
    todo, shown = [value], 0
    while todo:
        item = todo.pop()
        if isinstance(item, (list, tuple)):
            shown += len(item)
            todo.extend(item)
        elif isinstance(item, int):
            if item.bit_length() > MAX_BITS:
                return str(_bits())
            shown += 1 + item.bit_length() // 3
        elif isinstance(item, str):
            shown += len(item)
        elif not isinstance(item, _PLAIN):
            return f"not a value ({type(item).__name__})"
        else:
            shown += 1
        if shown > MAX_SHOWN:
            return f"a result of more than {MAX_SHOWN} characters"
    return None


class Meter:
    """The steps left to one evaluation, and the guarded operations charging them. One Meter may be
    shared by several evaluations (explain: the suggestions of one answer), which then share the
    budget. `costs`: helper -> function of the call's arguments giving the steps the helper takes
    beyond reading them (errkit/core/helpers.COSTS: divisors() tries up to sqrt(n) numbers)."""

    __slots__ = ("left", "costs", "_guards")

    def __init__(self, steps: int = MAX_STEPS):
        self.left = steps
        self.costs = {}
        self._guards = None

    def charge(self, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            raise _steps()

    def guards(self, costs=None) -> dict:
        """The guarded operations by the names compiled code calls them (GUARDS), made once."""
        if costs is not None:
            self.costs = costs
        if self._guards is None:
            self._guards = dict(zip(GUARDS, (self.pow, self.mul, self.add, self.mod, self.v, self.call, self.each)))
        return self._guards

    def pow(self, base, exponent):
        """`base ** exponent`; the exponent is a literal 0..64 (vetted)."""
        if isinstance(base, int) and base.bit_length() * exponent > MAX_BITS:
            raise _bits()
        return base ** exponent

    def mul(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            if a.bit_length() + b.bit_length() > MAX_BITS:
                raise _bits()
        elif isinstance(a, _SEQUENCES) or isinstance(b, _SEQUENCES):  # a repetition
            times = b if isinstance(a, _SEQUENCES) else a
            if isinstance(times, int):
                items = len(a if isinstance(a, _SEQUENCES) else b) * times
                if items > MAX_ITEMS:
                    raise _items()
                self.charge(max(items, 0))
        return a * b

    def add(self, a, b):
        if isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES):  # a concatenation
            items = len(a) + len(b)
            if items > MAX_ITEMS:
                raise _items()
            self.charge(items)
        return a + b

    def mod(self, a, b):
        if isinstance(a, str):  # printf-style formatting: '%0999999999d' % 1 writes a gigabyte
            raise OverBound("'%' formatting of a string (its width has no bound)")
        return a % b

    def v(self, value):
        """`value`, read whole by a comparison or a slice: its size charged."""
        if isinstance(value, _SEQUENCES):
            self.charge(len(value))
        return value

    def call(self, helper, *args):
        """`helper(*args)`: its arguments read (a sequence's items, an int's bits, else 1 step each)
        and its own cost charged first; OverBound for a result past MAX_BITS or MAX_ITEMS."""
        steps = 1
        for arg in args:
            if isinstance(arg, int):
                steps += arg.bit_length()
            elif isinstance(arg, _SEQUENCES):
                steps += len(arg)
            else:
                steps += 1
        cost = self.costs.get(helper)
        if cost is not None:
            steps += cost(*args)
        self.charge(steps)
        result = helper(*args)
        if isinstance(result, int):
            if result.bit_length() > MAX_BITS:
                raise _bits()
        elif isinstance(result, _SEQUENCES) and len(result) > MAX_ITEMS:
            raise _items()
        return result

    def each(self, items, weight: int):
        """The items a comprehension loops over; `weight`: the steps of one pass (its element and
        condition), all passes charged before the first."""
        if isinstance(items, _SEQUENCES):
            if len(items) > MAX_ITEMS:
                raise _items()
            self.charge(len(items) * weight)
        return items

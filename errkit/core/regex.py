"""The regex engine of the explain path: google-re2 when installed, else Python's `re`.

RE2 runs in linear time (no catastrophic backtracking on hostile input), and importing it leaves
Python's `re` (and `enum`, which `re` imports) unloaded: a few milliseconds of every `errkit explain`
start. The wordings' regexes always run on the engine; the matcher's own small patterns (Lazy) run
on whichever is loaded, so each must mean the same in both: no lookarounds or backreferences, and
whitespace written out (`\\s` is ASCII in RE2, Unicode in `re`): PY_SPACE is Python's `\\s`,
values.SPACE the ASCII one.
"""

import os
import sys

ENGINE_ENV = "ERRKIT_REGEX_ENGINE"  # "re" forces Python's engine (tests compare the two)

# Python's \s on str (str.isspace), for use inside a class: escapes both engines read, and the
# characters above U+00FF themselves (RE2 has no \u escape, `re` no \x{...})
PY_SPACE = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x20\\x85\\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"

_ENGINE = None


def engine():
    """The engine module: `re2` unless ERRKIT_REGEX_ENGINE=re or google-re2 is missing."""
    global _ENGINE
    if _ENGINE is None:
        if os.environ.get(ENGINE_ENV, "re2") != "re":
            try:
                import re2

                _ENGINE = re2
            except ImportError:
                pass
        if _ENGINE is None:
            import re

            _ENGINE = re
    return _ENGINE


def is_re2() -> bool:
    return engine().__name__ == "re2"


class Lazy:
    """A regex compiled on first use (compiling at import would slow every start): by Python's `re`
    when it is loaded (it runs these small patterns faster per call, and then costs nothing more
    to use), else by the engine. A pattern compiled by RE2 moves to `re` once `re` is loaded (a
    log: see errkit/explain/matching/blocks.py scan). `python`: always `re` (a pattern with
    lookarounds, off explain's common path). `numbered`: its named groups are compiled as plain ones (`number(name)` tells
    which): RE2's first named group costs a third of a millisecond of a start."""

    __slots__ = ("pattern", "python", "_source", "_numbers", "_compiled", "_by_re")

    def __init__(self, pattern: str, python: bool = False, numbered: bool = False):
        self.pattern, self.python, self._compiled, self._by_re = pattern, python, None, False
        self._source, self._numbers = numbered_groups(pattern) if numbered else (pattern, None)

    def number(self, name: str) -> int:
        """The number of the group `name` (a `numbered` pattern)."""
        return self._numbers[name]

    def __getattr__(self, name):
        if self._compiled is None or (not self._by_re and "re" in sys.modules):
            if self.python or "re" in sys.modules:
                import re

                self._compiled, self._by_re = re.compile(self._source), True
            else:
                self._compiled, self._by_re = engine().compile(self._source), not is_re2()
        return getattr(self._compiled, name)


def compile_small(pattern: str | bytes):
    """A small pattern the matcher builds from a text it read (escaped literals, ASCII classes,
    no nested repeat: linear on either engine), compiled now: by Python's `re` when it is loaded,
    as Lazy's are (a log: a tenth of RE2's wrapper's cost per search), else by the engine."""
    if "re" in sys.modules:
        import re

        return re.compile(pattern)
    return engine().compile(pattern)


def numbered_groups(pattern: str) -> tuple[str, dict[str, int]]:
    """`pattern` with each named group `(?P<name>...)` made a plain capturing group, and the number
    of each: the same matches, groups read by number. Escapes and character classes are skipped;
    every other `(` not followed by `?` captures too (and is counted)."""
    out, numbers, count, i, n = [], {}, 0, 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i:i + 2])
            i += 2
        elif ch == "[":  # a class: up to its closing ], which may come first (`[]a]`, `[^]a]`)
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            out.append(pattern[i:j + 1])
            i = j + 1
        elif ch == "(" and pattern.startswith("(?P<", i):
            end = pattern.index(">", i)
            count += 1
            numbers[pattern[i + 4:end]] = count
            out.append("(")
            i = end + 1
        else:
            if ch == "(" and not pattern.startswith("(?", i):
                count += 1
            out.append(ch)
            i += 1
    return "".join(out), numbers


# what re.escape escapes (Python 3.7 and later): the same pattern text whichever engine reads it
_SPECIAL = {c: "\\" + chr(c) for c in b"()[]{}?*+-|^$\\.&~# \t\n\r\v\f"}


def escape(text: str) -> str:
    """`text` as a pattern matching itself (re.escape's output, without importing re)."""
    return text.translate(_SPECIAL)

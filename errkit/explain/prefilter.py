"""The prefilter of a log's blocks: where the next line worth reading starts (the leftmost match of
the index's locator, errkit/explain/matching/keys.py Keys.locator, at or after a position).

Two engines give the same answers (tests/explain/test_prefilter_engines.py):

- `re2`: the locator regex searched from each position (one call per line read);
- `hyperscan` (installed with errkit on Linux x86-64, elsewhere by the `fast` extra: pip install
  'errkit[fast]'): every alternative of the locator scanned over the whole block in one call, the
  start of each match kept (leftmost start, HS_FLAG_SOM_LEFTMOST), the next one found by
  bisection. The block is scanned with the alternatives single-spaced (one whitespace character
  for each run) and, for each run, the piece before it followed by two whitespace characters; the
  alternatives themselves only around the runs found that way (Scanned): about 100 ms on a 1M-line
  English log and on one with tracebacks, against 150-200 ms for the alternatives themselves.
  Its database takes 0.2-0.6 s to compile, so it is compiled once per set of patterns and kept
  in explain's cache folder (serialised).

ERRKIT_PREFILTER=re2|hyperscan chooses; by default hyperscan where it is installed and compiles,
else re2. Measured on a 1M-line English log: benchmarks/bench_triage.py, site/docs/contributing/benchmarks.md.

Same answers because every alternative is context-free (escaped literals joined by runs of
SPACE, FRAME_MARK, MARKERS, LOOKUP_MARKS: no anchor, no word boundary) and has one start per
end, so "a match starts at p" does not depend on where the search began.
"""

import os
from bisect import bisect_left

ENV = "ERRKIT_PREFILTER"
ENGINES = ("re2", "hyperscan")
FORMAT = "4"  # of the cached databases: 3 has the single-spaced alternatives and the run patterns (Scanned); 4 is named by the alternatives they are made of


class Searched:
    """The locator regex searched from each position (RE2 or Python's re: the index's engine)."""

    name = "re2"

    def __init__(self, regex):
        self.regex = regex

    def over(self, data: bytes):
        search = self.regex.search

        def first(pos: int) -> int | None:
            hit = search(data, pos)
            return None if hit is None else hit.start()

        return first


class Scanned:
    """Every alternative scanned over a whole block at once (Hyperscan).

    With `split` (what `scanned` builds): `database` holds each alternative with one whitespace
    character in place of each run of SPACE (a 2-3x faster scan: no repeat to follow), and, with
    ids from `split` on, the run patterns (`run_patterns`): each piece of an alternative that a
    run follows, then a pair of whitespace characters (for a catalogue with more than
    MAX_RUN_PATTERNS of them, the PAIRS alone). A match of the alternatives with a run of two or
    more whitespace characters holds one of those where each such run begins; before its
    first such run, between two of them and after its last it has single separators only, at
    most `reach` bytes. So each run found is followed to its end (`_run_end`), the runs are
    gathered in clusters (under `reach` apart), and the alternatives themselves (`exact()`,
    compiled or loaded when first needed) are scanned over each cluster, `reach` bytes either
    side: every match with a longer run lies in one, every match found there is one, and the
    single-spaced matches are the alternatives' matches with no longer run. A block with more
    than MAX_PAIRS runs found is scanned with the alternatives themselves, and so are the
    EXACT_AFTER blocks after it."""

    name = "hyperscan"
    MAX_PAIRS = 2000
    EXACT_AFTER = 4

    def __init__(self, database, exact=None, split: int | None = None, reach: int = 0):
        self.database, self._exact, self.split, self.reach = database, exact, split, reach
        self._exact_for = 0  # blocks left to scan with the exact database directly

    def exact(self):
        """The database of the alternatives themselves."""
        if self.split is None:
            return self.database
        if callable(self._exact):
            self._exact = self._exact()
            if self._exact is None:  # it compiled the single-spaced ones: not seen
                raise RuntimeError("hyperscan refused the locator's alternatives; set ERRKIT_PREFILTER=re2")
        return self._exact

    def _exact_starts(self, data: bytes, low: int = 0, high: int | None = None) -> list[int]:
        found: list[int] = []
        add = found.append

        def seen(_id, start, _end, _flags, _context):
            add(start + low)

        self.exact().scan(data if low == 0 and high is None else data[low:high], match_event_handler=seen)
        return found

    def starts(self, data: bytes) -> list[int]:
        """The start of every match in `data`, sorted (duplicates possible)."""
        if self.split is None or self._exact_for:
            self._exact_for = max(0, self._exact_for - 1)
            return sorted(self._exact_starts(data))
        starts: list[int] = []
        runs: list[int] = []  # where each run found begins (its pattern ends with the run's first two characters)
        add, run, split, most = starts.append, runs.append, self.split, self.MAX_PAIRS

        def seen(id_, start, end, _flags, _context):
            if id_ < split:
                add(start)
                return False
            run(end - 2)
            return len(runs) > most  # True stops the scan

        try:
            self.database.scan(data, match_event_handler=seen)
        except self._terminated():
            self._exact_for = self.EXACT_AFTER
            return sorted(self._exact_starts(data))
        if runs:
            runs.sort()
            reach, low, high = self.reach, runs[0], _run_end(data, runs[0])
            for at in runs[1:] + [None]:
                if at is not None and at < high:  # in a run followed already
                    continue
                if at is not None and at - high <= reach:
                    high = _run_end(data, at)
                    continue
                starts += self._exact_starts(data, max(0, low - reach), min(len(data), high + reach))
                if at is not None:
                    low, high = at, _run_end(data, at)
        starts.sort()
        return starts

    @staticmethod
    def _terminated():
        import hyperscan

        return hyperscan.ScanTerminated

    def over(self, data: bytes):
        starts = self.starts(data)

        def first(pos: int) -> int | None:
            at = bisect_left(starts, pos)
            return starts[at] if at < len(starts) else None

        return first


WHITESPACE = " \t\n\r\f\v"  # SPACE's characters (errkit/core/values.py); bytes.strip's too
# each as a pattern (\v is a class of several characters in Hyperscan's syntax: \x0b is the one)
_ESCAPED = {" ": " ", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f", "\v": "\\x0b"}
PAIRS = ["".join(_ESCAPED[c] for c in (a, b)) for a in WHITESPACE for b in WHITESPACE]
MAX_RUN_PATTERNS = 25_000  # run patterns compiled at most, about 1 s (a 10,000-entry catalogue has 274,212: 13 s; PAIRS then)
SHORT = 3  # bytes: a piece this short (`,`, `=`, `of`: in any text) is looked for with the piece before it
REST = 256  # bytes of a run looked at at a time (_run_end)


def run_patterns(alternatives: list[str]) -> list[str]:
    """For each run of SPACE in the alternatives, the piece before it followed by each of the PAIRS:
    a match of the alternative with two or more whitespace characters there holds one, ending with
    the run's first two characters. A piece under SHORT bytes that is not the first is looked for
    with the piece before it and each one whitespace character between them (a run there is found
    by its own pattern, and _run_end goes on from it over the short piece)."""
    from errkit.core.index_format import SPACE

    out: set[str] = set()
    for alternative in alternatives:
        pieces = alternative.split(SPACE + "+")
        for i, piece in enumerate(pieces[:-1]):
            if i and len(_unescaped(piece).encode("utf-8")) < SHORT:
                heads = [pieces[i - 1] + _ESCAPED[c] + piece for c in WHITESPACE]
            else:
                heads = [piece]
            out.update(head + pair for head in heads for pair in PAIRS)
    return sorted(out)


def _unescaped(piece: str) -> str:
    """A piece of an alternative (errkit/core/regex.py escape's output) as the text it matches."""
    out, escaped = [], False
    for c in piece:
        if c == "\\" and not escaped:
            escaped = True
            continue
        out.append(c)
        escaped = False
    return "".join(out)


def _run_end(data: bytes, at: int) -> int:
    """Where the run of whitespace beginning at `at` ends, and past it every short piece (under
    SHORT bytes) followed by another run of two or more: one match may go on over them."""
    end = at
    while True:
        rest = data[end:end + REST]
        stripped = rest.lstrip()
        end += len(rest) - len(stripped)
        if not stripped:
            if len(rest) < REST:
                return end
            continue
        token = next((k for k in range(1, SHORT) if stripped[k:k + 1].isspace()), 0)
        gap = stripped[token:token + 2]
        if not token or len(gap) < 2 or not gap.isspace():
            return end
        end += token


def single_spaced(alternatives: list[str]) -> list[str]:
    """The alternatives with one whitespace character in place of each run (`SPACE+`)."""
    from errkit.core.index_format import SPACE

    return [a.replace(SPACE + "+", SPACE) for a in alternatives]


def scanned(alternatives: list[str], cache_dir: str | None = None):
    """The Hyperscan prefilter of the alternatives (see Scanned), or None where hyperscan is
    missing or refuses one."""
    fast = single_spaced(alternatives)
    if fast == alternatives:
        database = _hyperscan(alternatives, cache_dir)
        return None if database is None else Scanned(database)
    def patterns() -> list[str]:  # (built only when the database is compiled: 14,000 of them, 10 ms)
        runs = run_patterns(alternatives)
        if len(runs) > MAX_RUN_PATTERNS:  # a large catalogue: any pair of whitespace characters stands for a run
            runs = PAIRS
        return fast + runs

    # ("split" names it apart from the database of the alternatives themselves, `exact`)
    database = _hyperscan(["split", *alternatives], cache_dir, plain=len(fast), patterns=patterns)
    if database is None:
        return None
    reach = max(len(a.encode("utf-8")) for a in fast) + 2  # no single-spaced match is longer (bytes)
    return Scanned(database, lambda: _hyperscan(alternatives, cache_dir), split=len(fast), reach=reach)


def chosen(alternatives: list[str], regex, cache_dir: str | None = None):
    """The prefilter of the locator `regex` (the alternatives joined by `|`; or a function making it,
    called only when the re2 engine is chosen: 7 ms of a log's start), by ERRKIT_PREFILTER."""
    wanted = os.environ.get(ENV, "").strip().lower()
    if wanted not in ENGINES[:1]:  # hyperscan, or the default (an unknown name too)
        found = scanned(alternatives, cache_dir)
        if found is not None:
            return found
    return Searched(regex() if callable(regex) else regex)


def _hyperscan(alternatives: list[str], cache_dir: str | None, plain: int | None = None, patterns=None):
    """A block-mode Hyperscan database of the alternatives, from the cache folder when it was
    compiled before by this hyperscan version; None when hyperscan is missing or refuses one.
    Those from `plain` on are reported without their start of match (no HS_FLAG_SOM_LEFTMOST).
    `patterns()`: what is compiled, when it is not the alternatives themselves (`alternatives`
    then names what it is made of: the file's name and contents are checked against them)."""
    try:
        import hyperscan
    except ImportError:
        return None
    import marshal
    import zlib

    from errkit.explain import cache

    version = getattr(hyperscan, "__version__", "") or ""
    plain = len(alternatives) if plain is None else plain
    name = zlib.crc32("\0".join([version, FORMAT, str(plain), *alternatives]).encode("utf-8", "replace"))
    # the user's own cache folder only: Hyperscan's C code loads the database (errkit/explain/cache.py)
    file = f"prefilter-{name:08x}.hs"
    folder = cache.folder_of(os.path.join(cache_dir, file))[0] if cache_dir else cache.folder()
    payload = cache.unframed(folder.read(file)) if folder is not None else None
    try:
        if payload is not None:
            saved_version, saved, blob = marshal.loads(payload)
            if (saved_version, saved) == (version, [FORMAT, plain, *alternatives]):  # the same patterns: not a name's collision
                database = hyperscan.loadb(blob, mode=hyperscan.HS_MODE_BLOCK)
                setattr(database, "scratch", hyperscan.Scratch(database))  # (a loaded database has none)
                return database
    except (OSError, EOFError, hyperscan.error, TypeError, ValueError, AttributeError):
        pass  # not readable: compiled again
    compiled = [a.encode("utf-8") for a in (alternatives if patterns is None else patterns())]
    try:
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        database.compile(expressions=compiled, ids=list(range(len(compiled))), elements=len(compiled),
                         flags=[hyperscan.HS_FLAG_SOM_LEFTMOST] * plain + [0] * (len(compiled) - plain))
    except hyperscan.error:
        return None
    if folder is not None:
        folder.write(file, cache.framed(marshal.dumps((version, [FORMAT, plain, *alternatives], hyperscan.dumpb(database)))))
    return database

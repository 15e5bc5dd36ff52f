"""The prefilter of a log's blocks: where the next line worth reading starts (the leftmost match of
the index's locator, errkit/explain/match.py Index.locator, at or after a position).

Two engines give the same answers (tests/explain/test_prefilter_engines.py):

- `re2`: the locator regex searched from each position (one call per line read);
- `hyperscan` (the optional `fast` extra: pip install 'errkit[fast]'): every alternative of the
  locator scanned over the whole block in one call, the start of each match kept (leftmost start,
  HS_FLAG_SOM_LEFTMOST), the next one found by bisection. Its database takes 0.2-0.6 s to compile,
  so it is compiled once per set of patterns and kept in explain's cache folder (serialised).

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
    """Every alternative scanned over a whole block at once (Hyperscan)."""

    name = "hyperscan"

    def __init__(self, database):
        self.database = database

    def over(self, data: bytes):
        starts: list[int] = []
        add = starts.append

        def seen(_id, start, _end, _flags, _context):
            add(start)

        self.database.scan(data, match_event_handler=seen)
        starts.sort()

        def first(pos: int) -> int | None:
            at = bisect_left(starts, pos)
            return starts[at] if at < len(starts) else None

        return first


def chosen(alternatives: list[str], regex, cache_dir: str | None = None):
    """The prefilter of the locator `regex` (the alternatives joined by `|`), by ERRKIT_PREFILTER."""
    wanted = os.environ.get(ENV, "").strip().lower()
    if wanted not in ENGINES[:1]:  # hyperscan, or the default (an unknown name too)
        database = _hyperscan(alternatives, cache_dir)
        if database is not None:
            return Scanned(database)
    return Searched(regex)


def _hyperscan(alternatives: list[str], cache_dir: str | None):
    """A block-mode Hyperscan database of the alternatives, from the cache folder when it was
    compiled before by this hyperscan version; None when hyperscan is missing or refuses one."""
    try:
        import hyperscan
    except ImportError:
        return None
    import marshal
    import zlib

    patterns = [a.encode("utf-8") for a in alternatives]
    version = getattr(hyperscan, "__version__", "") or ""
    name = zlib.crc32("\0".join([version, *alternatives]).encode("utf-8", "replace"))
    path = os.path.join(cache_dir or _cache_dir(), f"prefilter-{name:08x}.hs")
    try:
        with open(path, "rb") as handle:
            saved_version, saved, blob = marshal.loads(handle.read())
        if (saved_version, saved) == (version, alternatives):  # the same patterns: not a name's collision
            database = hyperscan.loadb(blob, mode=hyperscan.HS_MODE_BLOCK)
            setattr(database, "scratch", hyperscan.Scratch(database))  # (a loaded database has none)
            return database
    except (OSError, EOFError, hyperscan.error, TypeError, ValueError, AttributeError):
        pass  # not there, or not readable: compiled again
    try:
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        database.compile(expressions=patterns, ids=list(range(len(patterns))), elements=len(patterns),
                         flags=[hyperscan.HS_FLAG_SOM_LEFTMOST] * len(patterns))
    except hyperscan.error:
        return None
    _write_whole(path, marshal.dumps((version, alternatives, hyperscan.dumpb(database))))
    return database


def _cache_dir() -> str:
    """explain's cache folder, as errkit/explain/registry.py finds it (imported from there, the
    matcher would import its own importer)."""
    where = os.environ.get("ERRKIT_CACHE_DIR")
    if where:
        return where
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "errkit")


def _write_whole(path: str, data: bytes) -> None:
    """`data` into `path`, whole or not at all; a cache that cannot be written is only slower."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass

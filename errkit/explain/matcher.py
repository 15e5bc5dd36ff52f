"""`errkit.Matcher`: errkit's matcher as a Python object, for a program or a map step of Dask or
Apache Beam. It loads the merged index of every installed catalogue once (the project's and
`catalog`'s first, as `errkit explain` does); it pickles small (where to read the index again:
explain's index cache file, else the index itself when it was compiled in memory), and the
Matchers a process unpickles from one cache share one index, so each worker of an engine reads the
index once however many tasks carry it; its methods may be called from several threads at once.

    from errkit import Matcher

    matcher = Matcher()
    matcher.explain_text("ValueError: num_q_heads=12 must be divisible by num_kv_heads=8")
    matcher.explain_lines(open("train.log", encoding="utf-8"))   # an iterable of lines
    matcher.triage(open("host-017.log", "rb"), "host-017.log")     # one file's summary (triage.py)

The answers are the dicts `errkit explain --all --json` prints, one per distinct match, most
recent first; a file's summary is what `errkit explain --all PATH...` merges into its report
(errkit/explain/report.py: `report(matcher, summaries)`)."""

import threading

from errkit.explain.matching.index import Index
from errkit.explain.reading import CHUNK


_UNPICKLED: dict = {}  # (cache file, stamp) -> (Index, its lock): what this process has unpickled
_UNPICKLED_LOCK = threading.Lock()


class Matcher:
    """The merged index of every catalogue, loaded once; see the module's docstring."""

    def __init__(self, catalog=None, registered: bool = True, warn=None, compile_catalogue=None, index: Index | None = None):
        if index is None:
            from errkit.explain import registry

            index = registry.load(catalog, registered, warn=warn, compile_catalogue=compile_catalogue or _stale)
        self.index = index
        self._lock = threading.Lock()

    # -- pickling: where the index is, not the index ------------------------------------------------

    def __getstate__(self) -> dict:
        from errkit.explain.registry import CacheFile

        blob = self.index.data.get("blob")
        if isinstance(blob, CacheFile):
            return {"cache": (blob.path, blob.stamp)}
        return {"data": self.index.data}

    def __setstate__(self, state: dict) -> None:
        if "data" in state:
            self.index, self._lock = Index(state["data"]), threading.Lock()
            return
        key = repr(state["cache"])
        with _UNPICKLED_LOCK:  # one index per process and cache: an engine unpickles a Matcher per task
            if key not in _UNPICKLED:
                from errkit.explain.registry import CacheFile

                path, stamp = state["cache"]
                saved = CacheFile.open(path, None, stamp)
                if saved is None:
                    raise RuntimeError(f"errkit's index cache {path} changed or went away since the Matcher was made; "
                                       "make a new errkit.Matcher()")
                _UNPICKLED[key] = (Index(saved[0]), threading.Lock())
            self.index, self._lock = _UNPICKLED[key]  # the lock with the index: they are shared together

    # -- answers -------------------------------------------------------------------------------------

    def explain_text(self, text: str) -> list[dict]:
        """The answers for a text (a message, a traceback, a whole log), as `errkit explain --all
        --json` prints them; [] when nothing catalogued is in it."""
        return self.explain_lines([text])

    def explain_lines(self, lines) -> list[dict]:
        """The answers for an iterable of lines (str or bytes, with or without their newlines), read
        as one text, streamed in blocks of about 1 MB."""
        from errkit.explain.answer import answers
        from errkit.explain.reading import line_chunks

        with self._lock:
            results, _, _ = answers(self.index, line_chunks(_blocks(lines)))
        return results

    def triage(self, blocks, name: str, host: str | None = None, warn=None) -> dict:
        """One log file's summary (errkit/explain/triage.py): `blocks` are its bytes (a binary file
        object, or an iterable of bytes), `name` its file name (the host is read from it unless
        `host` is given)."""
        from errkit.explain import triage

        if hasattr(blocks, "read"):
            from errkit.explain.reading import stream_blocks

            blocks = stream_blocks(blocks, name)
        with self._lock:
            return triage.triage(self.index, blocks, name, host, warn)


def _stale(folder):
    """`catalog` has no compiled index as new as its files, and no compiler was given (the explain
    side never compiles a catalogue: errkit/cli.py hands it errkit.generate's)."""
    from errkit.core import UsageError

    raise UsageError(f"{folder}: no compiled index as new as the catalogue (run `errkit generate` in its project, "
                     "or pass compile_catalogue=errkit.generate.index.compiled_index)")


def _blocks(lines, size: int = CHUNK):
    """Lines joined into blocks of about `size` bytes, each line ended by a newline."""
    pending: list[bytes] = []
    held = 0
    for line in lines:
        raw = line.encode("utf-8", "replace") if isinstance(line, str) else bytes(line)
        if not raw.endswith(b"\n"):
            raw += b"\n"
        pending.append(raw)
        held += len(raw)
        if held >= size:
            yield b"".join(pending)
            pending, held = [], 0
    if pending:
        yield b"".join(pending)

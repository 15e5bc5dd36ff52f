"""A compiled index read from a file, screened before explain uses it: an installed package's
catalogue is input errkit did not write, and explain merges every installed one, so one broken or
hostile index must cost a warning, not an answer. Screened: its size (MAX_INDEX), its JSON, the
shape and types of each record explain reads (the keys of errkit/core/index_format.py), each
suggestion vetted against its entry's params (errkit/core/expr.py: an expression that does not vet
is no errkit index's), and each regex compiled within bounds (RE2: MAX_PROGRAM; lengths). A
failure is Unusable, its message saying where and what; errkit/explain/registry.py skips that
catalogue with one warning line and answers from the others.

The same index passes or fails whichever errkit process reads it, so the verdict is kept in
explain's index cache with the rest (registry.merged_cached): only a new or changed index file is
screened. Suggestions that vet can still go over a bound for some values: those are bounded when
they run (errkit/core/bounds.py) and shown as not computed.
"""

import os

from errkit.core import index_format, values
from errkit.core.regex import engine, numbered_groups

MAX_INDEX = 64 << 20  # bytes of an index file (this repository's: under 1 MB, 186 entries)
MAX_PROGRAM = 5000  # RE2 instructions of one regex (this repository's largest wording: 1,626)
MAX_PATTERN = 4 * index_format.MAX_LINE  # characters of a regex's source
MAX_TEXT = index_format.MAX_LINE  # characters of a wording's template and skeleton (a longer one never matches a line)
MAX_KEY = 1000  # characters of a prefilter key

_OPTIONAL = type(None)
TOP = {"format": int, "project": str, "version": str, "entries": dict, "wordings": list, "kernels": dict}
ENTRY = {"slug": str, "title": str, "area": str, "exception": str, "explain_only": bool, "message": str, "params": dict,
         "check": (str, _OPTIONAL), "explanation": str, "fixes": list, "kernel": (str, _OPTIONAL), "tags": list,
         "related": list, "docs_url": str}
ENTRY_OPTIONAL = {"verified": list, "reads": list, "needs_context": bool}
PARAM = {"type": str, "description": str}
FIX = {"summary": str, "suggest": dict, "sets": dict, "before": (str, _OPTIONAL), "after": (str, _OPTIONAL),
       "alternative": bool, "unverified": (str, _OPTIONAL), "kernel": (str, _OPTIONAL)}
FIX_OPTIONAL = {"site": str, "cases": list, "requires": dict}
CASE = {"when": str, "assume": dict, "suggest": dict}
CASE_OPTIONAL = {"partition": bool, "regardless": list}
READ = {"regex": str, "captures": list}
WORDING = {"code": str, "variant": int, "template": str, "source": str, "exception": str, "location": (str, _OPTIONAL),
           "regex": str, "captures": list, "literal_chars": int, "skeleton": str, "key": (str, _OPTIONAL),
           "releases": (dict, _OPTIONAL), "kernels": list}
RELEASES = {"dist": str, "specifier": str, "bounds": list, "shown": str}
KERNEL = {"title": str, "source": (str, _OPTIONAL), "names": list}
KERNEL_OPTIONAL = {"framework": str}
OPERATORS = (">=", ">", "<=", "<", "==", "!=")


class Unusable(ValueError):
    """An index explain must not read; the message says where it fails and why."""


def read(path: str) -> dict:
    """The index in the file `path`, screened (`screened`); Unusable otherwise."""
    import json

    from errkit.core.regular import open_regular

    try:
        size = os.stat(path).st_size
        if size <= MAX_INDEX:
            with open_regular(path) as handle:  # (a FIFO or a device would never end)
                data = json.loads(handle.read(MAX_INDEX + 1))
    except OSError as err:
        raise Unusable(f"cannot be read ({err.strerror or err})") from None
    except (ValueError, RecursionError) as err:  # (UnicodeDecodeError is a ValueError)
        raise Unusable(f"not JSON ({str(err)[:200]})") from None
    if size > MAX_INDEX:
        raise Unusable(f"{size} bytes, over the {MAX_INDEX >> 20} MB an index may have")
    return screened(data)


def screened(data) -> dict:
    """`data` with each entry parsed (an index stores them as JSON strings) and "vetted" added (code
    -> each suggestion's expr.compiled, what explain's index cache keeps), when every record has
    the shape and types explain reads, every suggestion vets and every regex compiles within the
    bounds; Unusable naming the first record that does not."""
    import json

    from errkit.core import expr

    _record(data, TOP, "the index")
    if data["format"] != index_format.VERSION:
        raise Unusable(f"index format {data['format']!r}; this errkit reads format {index_format.VERSION}")
    entries, vetted = {}, {}
    for code, raw in data["entries"].items():
        where = f"entry {code!r}"
        try:
            entry = json.loads(raw) if isinstance(raw, str) else raw
        except (ValueError, RecursionError):
            raise Unusable(f"{where}: not JSON") from None
        _record(entry, ENTRY, where, ENTRY_OPTIONAL)
        for name, param in entry["params"].items():
            _record(param, PARAM, f"{where} param {name!r}")
            if param["type"] not in values.TYPES:
                raise Unusable(f"{where} param {name!r}: unknown type {param['type']!r}")
        _strings(entry["tags"], f"{where} tags")
        _strings(entry["related"], f"{where} related")
        compiled = {}
        for n, fix in enumerate(entry["fixes"]):
            _record(fix, FIX, f"{where} fix {n + 1}", FIX_OPTIONAL)
            for label, source in fix["suggest"].items():
                if not isinstance(source, str):
                    raise Unusable(f"{where} fix {n + 1} suggestion {label!r}: not a string")
                try:
                    compiled[source] = expr.compiled(source, entry["params"])
                except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError) as err:
                    raise Unusable(f"{where} fix {n + 1} suggestion {label!r}: {str(err)[:200]}") from None
            for label, param in fix["sets"].items():
                if not isinstance(param, str):
                    raise Unusable(f"{where} fix {n + 1} sets {label!r}: not a string")
            for c, case in enumerate(fix.get("cases", ())):
                _record(case, CASE, f"{where} fix {n + 1} case {c + 1}", CASE_OPTIONAL)
                names = {**entry["params"], **dict.fromkeys(case["assume"])}
                for label, source in case["suggest"].items():
                    if not isinstance(source, str) or label not in fix["suggest"]:
                        raise Unusable(f"{where} fix {n + 1} case {c + 1} suggestion {label!r}: not a string of a suggestion of the fix")
                    try:
                        compiled[source] = expr.compiled(source, names)
                    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError) as err:
                        raise Unusable(f"{where} fix {n + 1} case {c + 1} suggestion {label!r}: {str(err)[:200]}") from None
        for n, read_ in enumerate(entry.get("reads", ())):
            _record(read_, READ, f"{where} read {n + 1}")
            _regex(read_, f"{where} read {n + 1}")
        entries[code] = entry
        if compiled:
            vetted[code] = compiled
    for n, wording in enumerate(data["wordings"]):
        where = f"wording {n + 1}"
        _record(wording, WORDING, where)
        if wording["code"] not in entries:
            raise Unusable(f"{where}: code {wording['code']!r} is no entry of the index")
        for text in ("template", "skeleton"):
            if len(wording[text]) > MAX_TEXT:
                raise Unusable(f"{where}: a {text} longer than {MAX_TEXT} characters")
        if wording["key"] is not None and len(wording["key"]) > MAX_KEY:
            raise Unusable(f"{where}: a key longer than {MAX_KEY} characters")
        _strings(wording["kernels"], f"{where} kernels")
        if wording["releases"] is not None:
            _releases(wording["releases"], f"{where} releases")
        _regex(wording, where)
    for name, kernel in data["kernels"].items():
        _record(kernel, KERNEL, f"kernel {name!r}", KERNEL_OPTIONAL)
        _strings(kernel["names"], f"kernel {name!r} names")
    return {**data, "entries": entries, "vetted": vetted}


def _record(record, keys: dict, where: str, optional: dict | None = None) -> None:
    if not isinstance(record, dict):
        raise Unusable(f"{where}: of type {type(record).__name__}, not an object")
    for key, kind in [*keys.items(), *((optional or {}).items())]:
        if key not in record:
            if optional and key in optional:
                continue
            raise Unusable(f"{where}: no {key!r}")
        value = record[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            raise Unusable(f"{where}: {key!r} is of type {type(value).__name__}")


def _strings(items: list, where: str) -> None:
    if not all(isinstance(item, str) for item in items):
        raise Unusable(f"{where}: not a list of strings")


def _releases(record, where: str) -> None:
    _record(record, RELEASES, where)
    for bound in record["bounds"]:
        if not (isinstance(bound, list) and len(bound) == 2 and bound[0] in OPERATORS and isinstance(bound[1], list)
                and all(isinstance(part, int) and not isinstance(part, bool) for part in bound[1])):
            raise Unusable(f"{where}: a bound {str(bound)[:80]} other than [operator, [numbers]]")


def _regex(record: dict, where: str) -> None:
    """The record's regex compiles within the bounds, and names a group for each capture."""
    pattern = record["regex"]
    if len(pattern) > MAX_PATTERN:
        raise Unusable(f"{where}: a regex longer than {MAX_PATTERN} characters")
    for capture in record["captures"]:
        if not (isinstance(capture, list) and len(capture) == 3 and all(isinstance(part, str) for part in capture)
                and capture[2] in values.TYPES):
            raise Unusable(f"{where}: a capture {str(capture)[:80]} other than [group, param, type]")
    try:
        _, numbers = numbered_groups(pattern)
    except ValueError:  # a `(?P<` without its `>`
        raise Unusable(f"{where}: a regex that does not parse") from None
    missing = [group for group, _, _ in record["captures"] if group not in numbers]
    if missing:
        raise Unusable(f"{where}: no group {missing[0]!r} in its regex")
    try:
        regex = _compile(pattern)
    except Exception as err:  # noqa: BLE001 - re.error, re2.error: the engines' own
        why = err.args[0] if err.args else err
        why = why.decode("utf-8", "replace") if isinstance(why, bytes) else str(why)
        raise Unusable(f"{where}: a regex that does not compile ({why[:200]})") from None
    size = getattr(regex, "programsize", 0)
    if size > MAX_PROGRAM:
        raise Unusable(f"{where}: a regex of {size} RE2 instructions, over {MAX_PROGRAM} (its matching would be slow)")


_RE2_OPTIONS = []


def _compile(pattern: str):
    """`pattern` compiled by RE2 with a small memory budget and no logging (a pattern too large fails
    fast, and RE2 writes nothing on standard error), when RE2 is installed; else by the engine."""
    try:
        import re2
    except ImportError:
        return engine().compile(pattern)
    if not _RE2_OPTIONS:
        options = re2.Options()
        options.log_errors = False
        options.max_mem = 1 << 20  # enough for MAX_PROGRAM; a larger program fails at once, not after a second
        _RE2_OPTIONS.append(options)
    return re2.compile(pattern, _RE2_OPTIONS[0])

"""Which catalogues `explain`, `list`, `show` and `scan` read: the current project's, `--catalog`'s,
and every catalogue an installed package registers, merged into one matcher index.

Registering a catalogue: a package ships the compiled index `errkit generate` writes (its key
"project" names the catalogue) and declares it under the entry-point group `errkit.catalogues`,
the value being `"<top-level package>:<file inside it>"`:

    [project.entry-points."errkit.catalogues"]
    jax-attention = "errkit:_index.json"

The package's folder is found with `importlib.util.find_spec` (the package is never imported).

Order, first wins: `--catalog` (else the current project's `[tool.errkit] index`), then the
registered catalogues by entry-point name. The same catalogue seen twice (same "project" name:
this repository's index and the installed copy of it) is read once, the first one. Two different
catalogues holding the same code are a clash: the first one's entry is used, and the clash is
reported once on standard error.

Discovering entry points reads every installed package's metadata (slow), so the (name, path)
list is cached in the user's own cache folder (errkit/explain/cache.py: `$ERRKIT_CACHE_DIR`, else
`$XDG_CACHE_HOME/errkit`, else `~/.cache/errkit`, each used only when no other user can write it),
keyed by a fingerprint of the import path (each sys.path folder and its modification time, which
changes when a package is installed or removed there; the first folder, the script's or the
working directory, by name only). An unwritable cache folder or a corrupt
cache file is never an error: the entry points are then read again. The merged index itself is
cached there too (marshal, keyed by each index file's path, size, inode and modification time):
parsing the JSON is most of explain's start-up. That cache also holds the entries' suggest
expressions already vetted and compiled (code objects, as __pycache__ holds them), so explain's
start reads no JSON and imports neither `json`, `re` nor `ast`. Code objects are safe to keep
only because nothing another user could write is read, and each part of a cache file is checked
(CRC-32) before it is used.

This module is on `errkit explain`'s start-up path: os, sys, marshal and zlib only until discovery or
a change of the indexes needs more.
"""

import marshal
import os
import sys

from errkit.explain import cache

GROUP = "errkit.catalogues"
CACHE_ENV = cache.CACHE_ENV
CACHE_FORMAT = 7  # 7: checksums, the folder trusted only when it is the user's own (errkit/explain/cache.py); 6: the catalogues of several fingerprints; 5: printed params kept; 4: indexes screened (errkit/explain/screen.py); 3: guarded code objects; 2: marshal (1 was JSON)
_HEAD = 4096  # the bytes of an index read for its "project" name
SEEN_PATHS = 8  # fingerprints whose registered catalogues one cache file keeps (registered)


class LintFailed(Exception):
    """`--catalog` names a catalogue with lint errors (already printed): exit 1."""


# -- discovery ------------------------------------------------------------------------------------


def fingerprint() -> list:
    """What changes when packages are installed or removed: the import path and the modification
    time of each of its folders (a new or deleted dist-info changes its folder's)."""
    out: list = [sys.executable, sys.path[:1]]
    for entry in sys.path[1:]:  # the first is the script's folder or the working directory: not installed packages
        try:
            out.append([entry, os.stat(entry or ".").st_mtime_ns])
        except OSError:
            out.append([entry, None])
    return out


def _key(parts) -> str:
    """A stable short name for `parts` (FNV-1a, 64 bits): hash() differs between runs, and
    hashlib or zlib would cost start-up time."""
    value = 0xCBF29CE484222325
    for byte in "\0".join(parts).encode("utf-8", "replace"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def _cache_name(kind: str, parts) -> str:
    """The name of the cache file of `kind` for `parts` in the cache folder (virtual environments
    share the folder)."""
    return f"{kind}-{_key(parts)}"


def discover() -> list[tuple[str, str]]:
    """(entry-point name, index file) of every registered catalogue, by name; read from the
    installed packages' metadata (slow: see `registered`)."""
    from importlib.util import find_spec

    found: dict[str, str] = {}
    for ep in _entry_points():
        package, _, file = ep.value.partition(":")
        package = package.strip()
        if not package or not file.strip() or ep.name in found:
            continue
        try:
            spec = find_spec(package.split(".")[0])
        except (ImportError, ValueError):
            continue
        folders = list(spec.submodule_search_locations or ()) if spec else []
        if spec and not folders and spec.origin:
            folders = [os.path.dirname(spec.origin)]
        for folder in folders:
            path = os.path.join(folder, *package.split(".")[1:], file.strip())
            if os.path.isfile(path):
                found[ep.name] = os.path.abspath(path)
                break
    return sorted(found.items())


def _entry_points(warn=None) -> list:
    """The entry points of GROUP, as importlib.metadata.entry_points(group=GROUP) gives them (one
    distribution of each name, the first on the path), except that a distribution whose metadata
    cannot be read (a malformed entry_points.txt) is skipped with one warning through `warn` (else on
    standard error): before, it made every `explain` and `list` exit 70."""
    from importlib.metadata import distributions

    out, names = [], set()
    for dist in distributions():
        try:
            name = getattr(dist, "_normalized_name", None) or dist.metadata["Name"]
            if name in names:
                continue
            names.add(name)
            out += list(dist.entry_points.select(group=GROUP))
        except Exception as err:  # noqa: BLE001 - any malformed metadata: that distribution only
            where = getattr(dist, "_path", None) or getattr(dist, "name", "a distribution")
            (warn or stderr_warn)(f"errkit: skipped the entry points of {where}: {type(err).__name__}: {err}")
    return out


def registered() -> list[tuple[str, str]]:
    """The registered catalogues, from the cache when the import path has not changed."""
    # one per interpreter and installed packages' path; the first sys.path folder (the script's,
    # or the working directory under `python -m`) is left out of the name: the cache keeps the
    # answers of the last SEEN_PATHS fingerprints, so `errkit` and `python -m errkit` run in turn
    # do not read the entry points again each time
    folder = cache.folder()
    name = _cache_name("catalogues", [sys.executable, *sys.path[1:]])
    stamp = fingerprint()
    seen: list = []
    payload = cache.unframed(folder.read(name)) if folder is not None else None
    if payload is not None:
        try:
            data = marshal.loads(payload)
            if data.get("format") == CACHE_FORMAT:
                for fingerprint_, catalogues in data["seen"]:
                    if fingerprint_ == stamp:
                        return [(str(name), str(path)) for name, path in catalogues]
                seen = list(data["seen"][:SEEN_PATHS - 1])
        except (ValueError, EOFError, TypeError, KeyError, AttributeError):
            pass  # corrupt: read the entry points again (seen is set last: still [])
    found = discover()
    if folder is not None:
        seen = [[stamp, [list(f) for f in found]], *seen][:SEEN_PATHS]
        folder.write(name, cache.framed(marshal.dumps({"format": CACHE_FORMAT, "seen": seen})))
    return found


# -- reading indexes ------------------------------------------------------------------------------


def name_in_index(path: str) -> str | None:
    """The catalogue's name (the "project" key) of a compiled index, read from its first bytes (no parse of the whole file)."""
    from errkit.core.regular import open_regular

    try:
        with open_regular(path) as handle:
            head = handle.read(_HEAD)
    except OSError:
        return None
    return _json_string_after(head, b'"project"')


def _json_string_after(head: bytes, key: bytes) -> str | None:
    """The JSON string value of the first `key` followed by a colon in the first bytes of a JSON
    object, read by hand (`json` and `re` cost start-up time); None when there is none."""
    at = head.find(key)
    while at >= 0:
        rest = head[at + len(key):].lstrip(b" \t\r\n")
        if rest.startswith(b":"):
            return _json_string(rest[1:].lstrip(b" \t\r\n"))
        at = head.find(key, at + 1)
    return None


def _json_string(text: bytes) -> str | None:
    """The JSON string `text` starts with (None: it starts with no complete string)."""
    if not text.startswith(b'"'):
        return None
    end = text.find(b'"', 1)
    while end >= 0:
        raw = text[:end + 1]
        if b"\\" not in raw:
            try:
                return raw[1:-1].decode("utf-8")
            except UnicodeDecodeError:
                return None
        import json  # escapes (rare: a project name is a plain word)

        try:
            return json.loads(raw)
        except ValueError:
            end = text.find(b'"', end + 1)
    return None


def _read(path: str) -> dict:
    import json

    from errkit.core import UsageError

    from errkit.core.regular import open_regular

    try:
        with open_regular(path) as handle:
            data = json.loads(handle.read())
        if not isinstance(data.get("entries"), dict) or not isinstance(data.get("wordings"), list):
            raise ValueError("not a compiled errkit index")
        return data
    except (OSError, ValueError, AttributeError) as err:
        raise UsageError(f"cannot read the matcher index {path}: {err} (run `errkit generate`)") from None


def catalog_index(catalog_dir, compile_catalogue) -> dict:
    """The compiled index of the catalogue folder `catalog_dir` (see catalog_source)."""
    source = catalog_source(catalog_dir, compile_catalogue)
    return source.data if source.data is not None else _read(source.path)


def catalog_source(catalog_dir, compile_catalogue) -> "Source":
    """The catalogue folder `catalog_dir` as a Source: its project's `[tool.errkit] index` when
    that is newer than every file of the catalogue, else `compile_catalogue(folder)`'s index,
    compiled in memory (None when the catalogue does not lint clean: its errors are printed and
    LintFailed raised). The compiler is the caller's (errkit/cli.py hands errkit.generate's): the
    explain side never imports the catalogue or generate sides."""
    from errkit.core import settings
    from errkit.core import UsageError

    folder = os.path.abspath(str(catalog_dir))
    if not os.path.isdir(folder):
        raise UsageError(f"{catalog_dir}: no such catalogue folder")
    try:
        found = settings.find_pyproject(folder)
    except settings.SettingsError as err:
        raise UsageError(str(err)) from None
    if found is not None and isinstance(found[1].get("index"), str):
        compiled = os.path.join(found[0], found[1]["index"])
        catalog = found[1].get("catalog")
        owns = not isinstance(catalog, str) or os.path.abspath(os.path.join(found[0], catalog)) == folder
        try:
            fresh = owns and os.stat(compiled).st_mtime_ns >= settings.newest_mtime_ns(folder)
        except OSError:
            fresh = False
        if fresh:
            return Source(name_in_index(compiled) or str(catalog_dir), compiled)
    data = compile_catalogue(folder)
    if data is None:
        raise LintFailed(str(catalog_dir))
    return Source(str(data.get("project") or catalog_dir), None, data)


# -- merging --------------------------------------------------------------------------------------


class Source:
    """A catalogue to read: its name, its index file (or the index compiled in memory, `data`), and
    the entry point that registered it (`origin`: None for the project's own and --catalog's)."""

    __slots__ = ("name", "path", "data", "origin")

    def __init__(self, name: str, path: str | None, data: dict | None = None, origin: str | None = None):
        self.name, self.path, self.data, self.origin = name, path, data, origin

    def described(self) -> str:
        if self.origin is not None:
            return f"registered as {self.origin!r} ({self.path})"
        return self.path or self.name


def sources(catalog_dir=None, registered_too: bool = True, bundled=None, compile_catalogue=None) -> list[Source]:
    """The catalogues to read, first wins: `catalog_dir` (else the current project's index), then
    the registered ones by name; one of each "project" name. `bundled`: the index errkit ships, read
    last when no registered catalogue is it (a checkout run without installing errkit)."""
    out: list[Source] = []
    if catalog_dir is not None:
        out.append(catalog_source(catalog_dir, compile_catalogue))
    else:
        from errkit.core.settings import index_path

        path = index_path()
        if path:
            out.append(Source(name_in_index(path) or path, path))
    if registered_too:
        candidates = [(name_in_index(path) or name, path, name) for name, path in registered()]
        if bundled:  # skipped below when a registered catalogue is it
            candidates.append((name_in_index(bundled), bundled, None))
        seen = {s.name for s in out}
        paths = {os.path.realpath(s.path) for s in out if s.path}
        for name, path, origin in candidates:
            name = name or path
            if name in seen or os.path.realpath(path) in paths:
                continue
            seen.add(name)
            paths.add(os.path.realpath(path))
            out.append(Source(name, path, origin=origin))
    return out


def _bundled(path: str) -> bool:
    """Whether `path` is the index errkit ships (its own, tested with it: read without screening)."""
    from errkit.explain.matching.index import INDEX_FILE

    return os.path.realpath(path) == os.path.realpath(INDEX_FILE)


def _usable(found: list[Source], warn=None) -> list[tuple[Source, dict]]:
    """Each catalogue with its index, read; an index file other than errkit's own screened first
    (errkit/explain/screen.py): one that is unusable is left out, with one line through `warn`
    naming it and why. UsageError when none is left."""
    from errkit.explain import screen

    out, skipped = [], []
    for source in found:
        if source.data is not None:
            out.append((source, source.data))
            continue
        if _bundled(source.path):
            out.append((source, _read(source.path)))
            continue
        try:
            out.append((source, screen.read(source.path)))
        except screen.Unusable as err:
            line = f"errkit: skipped the catalogue {source.described()}: {err}"
            skipped.append(line)
            if warn is not None:
                warn(line)
    if not out:
        from errkit.core import UsageError

        raise UsageError(skipped[0].removeprefix("errkit: ") if len(skipped) == 1 else "no usable catalogue: "
                         + "; ".join(line.removeprefix("errkit: ") for line in skipped))
    return out


def merged(found: list[Source], warn=None) -> dict:
    """One index of several: entries and wordings of each catalogue, in order; a code already
    taken by an earlier catalogue is a clash, reported through `warn(line)`, the first one kept.
    Each code's catalogue is in "catalogues". A catalogue whose index is unusable is skipped,
    reported through `warn` too (`_usable`)."""
    usable = _usable(found, warn)
    if len(usable) == 1:
        source, data = usable[0]
        data["catalogues"] = source.name
        return data
    entries: dict = {}
    owner: dict[str, str] = {}
    wordings: list = []
    kernels: dict = {}
    vetted: dict = {}
    first: dict | None = None
    for source, data in usable:
        first = first or data
        clashed = set()
        for code, entry in data["entries"].items():
            if code in owner:
                clashed.add(code)
                if warn is not None:
                    warn(f"errkit: code {code} is in both catalogues {owner[code]} and {source.name}; using {owner[code]}")
                continue
            entries[code], owner[code] = entry, source.name
            if code in (data.get("vetted") or {}):
                vetted[code] = data["vetted"][code]
        wordings.extend(w for w in data["wordings"] if w.get("code") not in clashed)
        for kid, kernel in (data.get("kernels") or {}).items():
            kernels.setdefault(kid, kernel)
    return {"format": (first or {}).get("format"), "project": (first or {}).get("project"),
            "version": (first or {}).get("version"), "entries": entries, "wordings": wordings, "kernels": kernels,
            "catalogues": owner, "vetted": vetted}


def _stamp(found: list[Source]) -> list | None:
    """What tells that the compiled indexes read are unchanged (None: one was compiled in memory)."""
    out = []
    for source in found:
        if source.path is None:
            return None
        try:
            st = os.stat(source.path)
        except OSError:
            return None
        out.append([source.name, source.path, st.st_mtime_ns, st.st_size, st.st_ino])
    return out


def merged_cached(found: list[Source], warn=None) -> dict:
    """`merged(found)`, from a cache of it while every index file is unchanged (`CacheFile`):
    parsing the JSON costs most of explain's start-up. The clashes found when it was made are
    reported again."""
    stamp = _stamp(found)
    # one per set of index files and Python version (the cache holds code objects)
    folder = cache.folder(warn) if stamp else None
    name = _cache_name("index", [sys.version, *(s.path for s in found)]) if folder is not None else None
    saved = CacheFile.open(folder, name, stamp) if name else None
    if saved is None:
        warnings: list[str] = []
        data = merged(found, warnings.append)
        if not name:
            return _warned(data, warnings, warn)
        from errkit.explain.matching.index import prepared

        folder.write(name, CacheFile.encode(stamp, prepared(data), warnings))
        saved = CacheFile.open(folder, name, stamp)
        if saved is None:  # an unwritable cache folder: no error, only slower
            return _warned(data, warnings, warn)
    return _warned(*saved, warn)


def _warned(data: dict, warnings: list[str], warn) -> dict:
    for line in warnings:
        if warn is not None:
            warn(line)
    return data


class CacheFile:
    """explain's cache of a merged index: a header (the index with each entry, wording and table
    of vetted expressions replaced by its (offset, size, CRC-32) in the file) then those values,
    each marshalled on its own. A start reads the header and the few values its answer needs
    (match.stored); the file stays open meanwhile, so a cache rewritten by another process is
    never read half old, half new.

    The file is the user's own (errkit/explain/cache.py: nothing another user could write is
    read), and checked before use: the header's CRC-32 when it is opened, with the file's size the
    header gives, and each value's CRC-32 when it is read. A corrupt header is a missing cache
    (made again); a corrupt value is read from the index files instead (`_from_indexes`), and the
    cache is made again."""

    MAGIC = b"errkit-index-cache/7\n"
    LENGTH = 8  # bytes of the header's size, after MAGIC; then its CRC-32 (4 bytes)

    PIECES = 16  # values read one by one; past that (a log: hundreds), the rest is read at once

    def __init__(self, handle, base: int, stamp=None, path: str = "", header: bytes = b""):
        self.handle, self.base, self.stamp, self.path = handle, base, stamp, path
        self.pieces, self.whole = 0, None
        self.header = header  # the header as read (checked), to find what a corrupt value was
        self.rebuilt: dict | None = None  # offset -> the value's bytes, once one was corrupt

    def __del__(self):
        self.handle.close()

    def read(self, offset: int, size: int, crc: int) -> bytes:
        if self.rebuilt is not None:
            return self.rebuilt[offset]
        if self.whole is None:
            self.pieces += 1
            if self.pieces <= self.PIECES:
                raw = self._at(self.base + offset, size)
            else:
                self.whole = self._at(self.base, os.fstat(self.handle.fileno()).st_size - self.base)
        if self.whole is not None:
            raw = self.whole[offset:offset + size]
        if cache.crc32(raw) != crc:
            return self._from_indexes()[offset]
        return raw

    def _from_indexes(self) -> dict:
        """offset -> each value's bytes, made again from the index files (one value of the cache was
        corrupt: the values come from there from now on), and the cache file made again."""
        from errkit.explain.matching.index import prepared

        header = marshal.loads(self.header)
        fresh = prepared(merged([Source(name, path) for name, path, *_ in self.stamp]))
        rebuilt = {}
        for kind in ("entries", "vetted"):
            for key, (offset, _, _) in header["data"][kind].items():
                rebuilt[offset] = marshal.dumps(fresh[kind][key])
        for i, (offset, _, _) in enumerate(header["data"]["wordings"]):
            rebuilt[offset] = marshal.dumps(fresh["wordings"][i])
        self.rebuilt = rebuilt
        folder, name = cache.folder_of(self.path)
        if folder is not None and _stamp([Source(n, p) for n, p, *_ in self.stamp]) == self.stamp:
            folder.write(name, CacheFile.encode(self.stamp, fresh, list(header.get("warnings") or ())))
        return rebuilt

    def _at(self, pos: int, size: int) -> bytes:
        """`size` bytes from `pos`: os.pread where there is one, which moves no file offset (worker
        processes forked from this one share the handle's, errkit/explain/workers.py _context)."""
        pread = getattr(os, "pread", None)
        if pread is None:
            self.handle.seek(pos)
            return self.handle.read(size)
        parts, fd = [], self.handle.fileno()
        while size > 0:
            part = pread(fd, size, pos)
            if not part:
                break
            parts.append(part)
            pos, size = pos + len(part), size - len(part)
        return b"".join(parts)

    @classmethod
    def open(cls, folder, name: str, stamp) -> "tuple[dict, list[str]] | None":
        """(the index, the clashes reported when it was made) from the cache file `name` of the
        trusted cache `folder` (errkit/explain/cache.py; a path: the folder that holds it) when it
        is for `stamp`, else None (missing, stale, corrupt, or not the user's own). The index's
        "blob" is the open file."""
        if isinstance(folder, str):  # a cache file's path (errkit.Matcher's pickled state)
            folder, name = cache.folder_of(os.path.join(folder, name) if name else folder)
        handle = folder.open(name) if folder is not None else None
        if handle is None:
            return None
        try:
            start = len(cls.MAGIC) + cls.LENGTH + 4
            head = handle.read(start)
            size = int.from_bytes(head[len(cls.MAGIC):-4], "little")
            if head[:len(cls.MAGIC)] == cls.MAGIC and 0 < size <= cache.MAX_FILE:
                raw = handle.read(size)
                if cache.crc32(raw) == int.from_bytes(head[-4:], "little"):
                    saved = marshal.loads(raw)
                    if (isinstance(saved, dict) and saved.get("format") == CACHE_FORMAT and saved.get("stamp") == stamp
                            and isinstance(saved.get("data"), dict) and isinstance(saved.get("blob"), int)
                            and os.fstat(handle.fileno()).st_size == start + size + saved["blob"]):  # not cut short
                        data = saved["data"]
                        data["blob"] = cls(handle, start + size, stamp, os.path.join(folder.path, name), raw)
                        return data, list(saved.get("warnings") or ())
        except (OSError, ValueError, EOFError, TypeError):
            pass
        handle.close()
        return None

    @classmethod
    def encode(cls, stamp, data: dict, warnings: list[str]) -> bytes:
        """The cache file of the prepared index `data` (matching/index.py prepared) for `stamp`."""
        blob = bytearray()

        def put(value) -> tuple[int, int, int]:
            raw = marshal.dumps(value)
            blob.extend(raw)
            return len(blob) - len(raw), len(raw), cache.crc32(raw)

        header = {**data, "entries": {code: put(e) for code, e in data["entries"].items()},
                  "wordings": [put(w) for w in data["wordings"]],
                  "vetted": {code: put(v) for code, v in data["vetted"].items()}}
        head = marshal.dumps({"format": CACHE_FORMAT, "stamp": stamp, "data": header, "warnings": warnings,
                              "blob": len(blob)})
        return (cls.MAGIC + len(head).to_bytes(cls.LENGTH, "little") + cache.crc32(head).to_bytes(4, "little")
                + head + bytes(blob))


def load(catalog_dir=None, registered_too: bool = True, warn=None, compile_catalogue=None):
    """The matcher Index of every catalogue (see `sources`), clashes reported through `warn`;
    `compile_catalogue` compiles `catalog_dir` when its project's index is stale (catalog_source)."""
    from errkit.explain.matching.index import INDEX_FILE, Index

    found = sources(catalog_dir, registered_too, bundled=INDEX_FILE, compile_catalogue=compile_catalogue)
    if not found:
        from errkit.core import UsageError

        raise UsageError("no catalogue found: no [tool.errkit] index here, none registered, none given with --catalog")
    return Index(merged_cached(found, warn))


def stderr_warn(line: str) -> None:
    """A warning on standard error, its control characters shown (it may quote an installed catalogue)."""
    from errkit.core.escape import terminal

    print(terminal(line), file=sys.stderr)

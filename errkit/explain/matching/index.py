"""The compiled index as the matcher reads it: its entries and wordings (read from the JSON that
`errkit generate` writes, or from explain's index cache, each on first access: a start reads only
what its answer needs), how the wordings are looked for (`plan`), lookups by code, slug or class
name, and each wording's regex compiled once (`Index.regex`, `Index.bytes_regex`) with its captures
read as typed values (`captured`). The matching itself is in the other rooms of this folder, each
keeping what it remembers of an index through `Index.room`.

The explain path: imports only os and the regex engine (errkit/core/regex.py: RE2, Python's `re`
left unloaded).
"""

import os

from errkit.core.index_format import at_line_end, plan
from errkit.core.regex import engine, numbered_groups
from errkit.core.values import without_number_forms
from errkit.explain.matching.found import Match

INDEX_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "_index.json")


def stored(value, blob=None):
    """An entry, wording or table of vetted expressions as the index keeps it, read: a dict or list
    as is; bytes (marshal); an (offset, size) of explain's index cache file `blob`
    (catalogues.CacheFile); a JSON string (the compiled index as `errkit generate` writes it)."""
    if isinstance(value, tuple):
        value = blob.read(*value)
    if isinstance(value, bytes):
        import marshal

        return marshal.loads(value)
    if isinstance(value, str):
        import json  # only when the index was read from its JSON file (no cache)

        return json.loads(value)
    return value


class _ReadOnAccess:
    """A dict or list whose values are read (`stored`) on first access: a start reads only the
    entries and wordings its answer needs."""

    def __init__(self, values, blob=None):
        super().__init__(values)
        self.blob = blob

    def __getitem__(self, key):
        value = super().__getitem__(key)
        if not isinstance(value, dict):
            value = stored(value, self.blob)
            self[key] = value
        return value


class Entries(_ReadOnAccess, dict):
    """Code -> entry."""

    def get(self, code, default=None):
        return self[code] if code in self else default

    def items(self):
        return [(code, self[code]) for code in self]

    def values(self):
        return [self[code] for code in self]




class Wordings(_ReadOnAccess, list):
    """The index's wordings."""

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


def numbered(wording: dict) -> list | None:
    """[the wording's regex with plain groups, the group number of each capture] (what
    Index.bytes_regex compiles when explain's index cache holds it), or None when a capture's
    group is not found."""
    source, numbers = numbered_groups(wording["regex"])
    groups = [numbers.get(group) for group, _, _ in wording["captures"]]
    return None if None in groups else [source, groups]


def printed_params(wordings) -> dict[str, list[str]]:
    """Code -> the params its wordings print (kept in explain's index cache: reading every wording
    to answer one message cost a third of a cold start)."""
    table: dict[str, dict] = {}
    for wording in wordings:
        table.setdefault(wording["code"], {}).update(dict.fromkeys(c[1] for c in wording["captures"]))
    return {code: list(names) for code, names in table.items()}


def prepared(data: dict) -> dict:
    """The merged index as explain's cache keeps it (errkit/explain/registry.py CacheFile): entries
    parsed, the matcher's plan made (index_format.plan), the params each entry's wordings print
    kept in the entry (printed_params), each entry's suggest expressions vetted and compiled once
    (Index.vetted), so that answering needs neither `json` nor `ast`, and each wording's regex with
    its groups numbered (numbered: RE2 compiles a named group slowly once)."""
    import json

    from errkit.core import expr
    from errkit.core.index_format import plan

    entries, vetted = {}, dict(data.get("vetted") or {})  # (a screened index's: vetted already)
    for code, raw in data["entries"].items():
        entry = entries[code] = json.loads(raw) if isinstance(raw, str) else raw
        if code in vetted:
            continue
        declared = frozenset((entry.get("params") or {}))
        compiled = {}
        for fix in entry.get("fixes") or ():
            sources = [(source, declared) for source in (fix.get("suggest") or {}).values()]
            sources += [(source, declared | frozenset(case.get("assume") or ())) for case in fix.get("cases") or ()
                        for source in (case.get("suggest") or {}).values()]  # (a case's values: each kernel's, each case's)
            for source, names in sources:
                try:
                    compiled[source] = expr.compiled(source, names)
                except (ValueError, SyntaxError, TypeError):
                    continue  # vetted when run, as without the cache (its error is reported there)
        if compiled:
            vetted[code] = compiled
    for code, names in printed_params(data["wordings"]).items():
        entries[code] = {**entries[code], "printed": names}  # (read with the entry when it answers)
    wordings = [{**w, "numbered": numbered(w)} for w in data["wordings"]]
    return {**data, "entries": entries, "vetted": vetted, "wordings": wordings, "plan": plan(data["wordings"])}


class Index:
    """The compiled index of one catalogue or of several merged (errkit/explain/registry.py)."""

    def __init__(self, data: dict):
        self.data = data
        self._blob = data.get("blob")  # explain's index cache file, where stored values are read
        self.entries = Entries(data["entries"], self._blob)
        self.wordings = Wordings(data["wordings"], self._blob)
        self.keys, self.keyed, self.located, self.always = data.get("plan") or plan(self.wordings)
        self._compiled: dict = {}  # compiled regexes, by (wording, how) and by a bytes regex's source
        self._groups: dict[int, list[int]] = {}  # wording -> the group number of each capture (bytes regexes)
        self._printed: dict | None = None  # code -> the params its wordings print (printed_params)
        # the catalogue each code comes from (errkit/explain/registry.py): code -> name, or one name for all
        self._catalogues = data.get("catalogues") or data.get("project") or ""
        # code -> its fixes' suggest expressions already vetted and compiled (explain's index cache)
        self._vetted: dict = data.get("vetted") or {}
        self._rooms: dict = {}  # a room of the matcher -> what it keeps of this index (room)

    def room(self, kind):
        """What a room of the matcher keeps of this index (its caches: errkit/explain/matching/), made
        on first ask as `kind(index)`."""
        kept = self._rooms.get(kind)
        if kept is None:
            kept = self._rooms[kind] = kind(self)
        return kept

    def vetted(self, code: str) -> dict:
        """source -> (code object, the names it reads, its loop names) for entry `code`'s suggest
        expressions, when explain's index cache holds them (else {}: they are vetted when run)."""
        found = self._vetted.get(code)
        if found is not None and not isinstance(found, dict):
            found = self._vetted[code] = stored(found, self._blob)
        return found or {}

    def printed(self, code: str) -> frozenset:
        """The params some wording of entry `code` prints (or its reads read from the lines after it)."""
        entry = self.entries[code]
        found = entry.get("printed")  # explain's index cache keeps it in the entry
        if found is None:
            if self._printed is None:
                self._printed = printed_params(self.wordings)
            found = self._printed.get(code, ())
        reads = {c[1] for read in entry.get("reads", ()) for c in read["captures"]}
        return frozenset(found) | reads

    def catalogue(self, code: str) -> str:
        """The name of the catalogue entry `code` comes from."""
        owner = self._catalogues
        return owner.get(code, "") if isinstance(owner, dict) else owner

    @classmethod
    def load(cls, path: str = INDEX_FILE) -> "Index":
        with open(path, encoding="utf-8") as handle:
            import json

            return cls(json.load(handle))

    def regex(self, i: int, to_line_end: bool = False):
        """The wording's regex; `to_line_end` anchors it at the end of the line (for searching a log line)."""
        key = (i, to_line_end)
        pattern = self._compiled.get(key)
        if pattern is None:
            source = self.wordings[i]["regex"]
            pattern = self._compiled[key] = engine().compile(at_line_end(source) if to_line_end else source)
        return pattern

    def bytes_regex(self, i: int, to_line_end: bool = False, plain: bool = False):
        """The wording's regex over UTF-8 bytes: the same matches, and RE2's Python wrapper then
        skips re-encoding the text and mapping byte offsets back to characters on every call.
        `plain`: without the number forms, for a text that shows none (values.without_number_forms:
        the same matches there, and a fifth of the compile time)."""
        key = (i, to_line_end, bytes, plain)
        pattern = self._compiled.get(key)
        if pattern is None:
            wording = self.wordings[i]
            numbered = wording.get("numbered")  # explain's index cache: groups by number (see `numbered`)
            source = numbered[0] if numbered else wording["regex"]
            source = at_line_end(source) if to_line_end else source
            source = without_number_forms(source) if plain else source
            # one text raised at several sites is several wordings of one regex: compiled once
            pattern = self._compiled[key] = self._compiled.get(source) or engine().compile(source.encode("utf-8"))
            self._compiled[source] = pattern
            if numbered:
                self._groups[i] = numbered[1]
            else:
                self._groups[i] = group_numbers(pattern, wording["captures"])
        return pattern

    def lookup(self, key: str):
        """An entry by code, slug or exception class name (`GqaHeadCountError`, dotted or not),
        case-insensitive, or None."""
        key = key.strip()
        if key.upper() in self.entries:
            return key.upper()
        slug = key.lower()
        for code, entry in dict.items(self.entries):  # a cheap look at the raw JSON text first
            seen = f'"slug":"{slug}"' in entry if isinstance(entry, str) else True
            if seen and self.entries[code]["slug"] == slug:
                return code
        name = key.rsplit(".", 1)[-1].rstrip(":")
        if name.endswith("Error") and name.isidentifier():
            for code in self.entries:
                if class_name(self.entries[code]["slug"]).lower() == name.lower():
                    return code
        return None

    def named(self, code: str, text: str, line_no: int = 1) -> Match:
        """A lookup's answer: entry `code`, named by `text`, with no values."""
        wording = next((w for w in self.wordings if w["code"] == code and w["variant"] == 0), None)
        if wording is None:  # an entry whose own message did not compile: its first wording
            wording = next(w for w in self.wordings if w["code"] == code)
        return Match(code, wording, {}, line_no, text=text, weak=True)

    def captured(self, i: int, m) -> dict | None:
        """The typed values of wording `i`'s regex match `m` (its regex's, or its bytes regex's)."""
        numbers = self._groups.get(i) if isinstance(m.string, bytes) else None
        return captured(self.wordings[i]["captures"], m, numbers)


def class_name(slug: str) -> str:
    """The exception class generated for an entry (model.Entry.class_name, without importing it)."""
    return "".join(part.capitalize() for part in slug.split("-")) + "Error"


def group_numbers(pattern, captures: list) -> list[int]:
    """The number of each capture's group in a compiled bytes pattern (whose group names are bytes
    on RE2, text on `re`): what `captured` reads its match by."""
    numbers = {(k.decode() if isinstance(k, bytes) else k): n for k, n in pattern.groupindex.items()}
    return [numbers[group] for group, _, _ in captures]


def captured(captures: list, m, numbers: list[int] | None = None) -> dict | None:
    """The typed values of a regex match's captures (None when one is no value after all, or one
    param is captured twice with two values)."""
    from errkit.core import values

    out = {}
    for k, (group, param, type_) in enumerate(captures):
        raw = m.group(group) if numbers is None else m.group(numbers[k])
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        try:
            value = values.parse(type_, raw)
        except (ValueError, OverflowError):  # matched the shape of a value but is none (e.g. "1,,2")
            return None
        if gone(value):
            continue  # retyped: the text no longer shows the value (`<V>`, `...`: a str, or a number's place)
        if param in out and out[param] != value:
            return None
        out[param] = value
    return out


def gone(value) -> bool:
    """Whether a value read from a text (a str, or a number's placeholder: values._PLACEHOLDER) is
    what people write for a value they left out: `...`, `<V>`, a list cut short (`a, b, ...`) or an
    issue title's shortening (`{...9.4.0..}`)."""
    text = value.strip() if isinstance(value, str) else ""
    if text in ("...", "\u2026") or (len(text) == 3 and text[0] == "<" and text[2] == ">" and text[1].isupper()):
        return True
    return text.endswith((", ...", ", \u2026")) or (text.startswith("{...") and text.endswith("..}"))

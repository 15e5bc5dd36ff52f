"""Find catalogue wordings in pasted text or a log: a literal prefilter, then the wordings' typed regexes.

Each wording has a key, the piece of its fixed text least likely to appear elsewhere (chosen by
`errkit generate`). One regex of every key, searched over the raw bytes of the input at C speed,
picks the lines to read; per line, a set match of the keys tells which wordings to try (a log
line read before but for the digits of its stamp is answered from memory: matching/memory.py). Over a
whole input (`explain_chunks`): every exact match, counted and deduplicated, most recent first;
when none matched, the closest wordings to its last error lines (`approximate`).

The explain path: imports only os and the regex engine (errkit/core/regex.py: RE2, Python's `re` left
unloaded); reads the index that `errkit generate` compiled.
"""

import os

from errkit.core.index_format import (  # noqa: F401 - re-exported: the matcher's API
    ANSI, APPROXIMATE_MAX, BLOCK_GAP, DOCS_LINK, QUOTE_COVERAGE, QUOTE_WORDS, QUOTED, FRAME, FRAME_MARK, FRAME_REACH, HEADER, LOOKUP_MARKS, MARKERS, MAX_LINE, NEXT_TRACEBACK, NOTE,
    PASTE_SIZE, POSTINGS_BUDGET, READ_WINDOW, RELEASE_SEEN, SHORTLIST, SPACE, TAIL, TIE_CONTEXT, TRACEBACK_LINES, TRACEBACK_NOTES, WORD,
    at_line_end,
)
from errkit.explain.matching.around import captured
from errkit.explain.matching.blocks import scan
from errkit.explain.matching.found import Match
from errkit.explain.matching.together import same_block
from errkit.core.regex import ENGINE_ENV, engine, numbered_groups  # noqa: F401 - ENGINE_ENV, engine: the matcher's API

INDEX_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_index.json")

FRAME_BYTES = FRAME_MARK.encode()  # (the matcher reads bytes)
NEXT_TRACEBACK_BYTES = NEXT_TRACEBACK.encode()


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


def plan(wordings) -> tuple[list[str], list[list[int]], list[int], list[int]]:
    """(keys, the wordings of each key, wordings found by their raise site, wordings tried on every
    line): how the matcher looks for the wordings (kept in explain's index cache)."""
    keyed: dict[str, list[int]] = {}
    located: list[int] = []
    always: list[int] = []
    for i, wording in enumerate(wordings):
        key = wording.get("key")
        if key:
            keyed.setdefault(key, []).append(i)
        elif wording["location"]:
            located.append(i)  # no fixed text to find it by: tried for exceptions raised there
        elif wording["template"]:
            always.append(i)  # fixed text too short to look for: tried on every line read
    keys = sorted(keyed)
    return keys, [keyed[k] for k in keys], located, always


def printed_params(wordings) -> dict[str, list[str]]:
    """Code -> the params its wordings print (kept in explain's index cache: reading every wording
    to answer one message cost a third of a cold start)."""
    table: dict[str, dict] = {}
    for wording in wordings:
        table.setdefault(wording["code"], {}).update(dict.fromkeys(c[1] for c in wording["captures"]))
    return {code: list(names) for code, names in table.items()}


class Index:
    def __init__(self, data: dict):
        self.data = data
        self._blob = data.get("blob")  # explain's index cache file, where stored values are read
        self.entries = Entries(data["entries"], self._blob)
        self.wordings = Wordings(data["wordings"], self._blob)
        self.keys, self.keyed, self.located, self.always = data.get("plan") or plan(self.wordings)
        self._compiled: dict = {}  # compiled regexes, by (wording, how) and by a bytes regex's source
        self._groups: dict[int, list[int]] = {}  # wording -> the group number of each capture (bytes regexes)
        self._printed: dict | None = None  # code -> the params its wordings print (match.printed_params)
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

    def bytes_regex(self, i: int, to_line_end: bool = False):
        """The wording's regex over UTF-8 bytes: the same matches, and RE2's Python wrapper then
        skips re-encoding the text and mapping byte offsets back to characters on every call."""
        key = (i, to_line_end, bytes)
        pattern = self._compiled.get(key)
        if pattern is None:
            wording = self.wordings[i]
            numbered = wording.get("numbered")  # explain's index cache: groups by number (see `numbered`)
            source = numbered[0] if numbered else wording["regex"]
            source = at_line_end(source) if to_line_end else source
            # one text raised at several sites is several wordings of one regex: compiled once
            pattern = self._compiled[key] = self._compiled.get(source) or engine().compile(source.encode("utf-8"))
            self._compiled[source] = pattern
            if numbered:
                self._groups[i] = numbered[1]
            else:
                numbers = {(k.decode() if isinstance(k, bytes) else k): n for k, n in pattern.groupindex.items()}
                self._groups[i] = [numbers[group] for group, _, _ in wording["captures"]]
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

    # -- exact matching ---------------------------------------------------------------------------

    def captured(self, i: int, m) -> dict | None:
        """The typed values of wording `i`'s regex match `m` (errkit/explain/matching/around.py captured)."""
        numbers = self._groups.get(i) if isinstance(m.string, bytes) else None
        return captured(self.wordings[i]["captures"], m, numbers)

def class_name(slug: str) -> str:
    """The exception class generated for an entry (model.Entry.class_name, without importing it)."""
    return "".join(part.capitalize() for part in slug.split("-")) + "Error"


# -- a whole input: every exact match, or the closest wordings --------------------------------------


class Tail(str):
    """The end of the input (what the approximate pass reads), knowing its first line's number."""

    first_line: int = 1


class Found:
    __slots__ = ("match", "count", "last_line")

    def __init__(self, match: Match):
        self.match, self.count, self.last_line = match, 0, match.line


LONGEST_CARRY = 32 << 20  # bytes of one line kept unscanned while waiting for its end (scan_chunks)
GATHER = 4 * READ_WINDOW  # bytes of small chunks gathered before they are scanned (scan_chunks)


class Reading:
    """What reading a whole input saw besides its matches: the lines read so far, its tail (what
    the approximate pass reads) and whether it held any text."""

    __slots__ = ("line", "tail", "seen_text")

    def __init__(self):
        self.line, self.tail, self.seen_text = 1, b"", False


def scan_chunks(index: Index, chunks, warn=None, reading: Reading | None = None):
    """Every match of a whole input, in order, with the block holding it (`match.offset`: where its
    line starts there: a chunk with the end of the one before, see below). `chunks` are bytes (or
    str), best cut on line boundaries (the windows read around a match are the same wherever the
    input is cut; one small chunk alone is read as a paste, see Index.scan): `warn(message)` hears
    once of input that is not UTF-8 where it mattered: in the first 8 KB or on a line read
    further; `reading` keeps the line count, tail and whether text was seen."""
    reading = Reading() if reading is None else reading
    warned = []

    def undecodable():
        if not warned and warn is not None:
            warn("errkit: the input is not valid UTF-8; undecodable bytes were replaced")
        warned.append(True)

    chunks = iter(chunks)
    upcoming = next(chunks, None)
    i = -1
    carry, begin = b"", 0  # the end of what was read: lines for the windows before the next ones, then the lines not scanned yet
    base = 0  # where `carry` starts in the input
    gathered: list[bytes] = []  # small chunks held until GATHER bytes are (a chunk per line is not copied again for each)
    held = 0
    while upcoming is not None:
        chunk, upcoming, i = upcoming, next(chunks, None), i + 1
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8", "replace")
        paste = i == 0 and upcoming is None and len(chunk) <= PASTE_SIZE  # the whole input, and small
        if paste:
            chunk = unprefixed(chunk)
        if i == 0:
            try:
                chunk[:8192].decode("utf-8")
            except UnicodeDecodeError as err:
                if err.start < min(8192, len(chunk)) - 4:  # not a character cut where the block ends
                    undecodable()
        if not reading.seen_text and not chunk.isspace() and chunk:
            reading.seen_text = True
        reading.tail = (reading.tail + chunk[-TAIL:])[-TAIL:]
        if upcoming is not None and held + len(chunk) < GATHER:
            gathered.append(chunk)
            held += len(chunk)
            continue
        if gathered:
            chunk = b"".join(gathered + [chunk])
            gathered, held = [], 0
        # The lines scanned now start in begin:stop of `data`: the lines kept from the chunk
        # before, then this one's, less its last READ_WINDOW bytes (scanned with the next chunk),
        # so that the windows a match reads around its line (TIE_CONTEXT before, READ_WINDOW
        # after) are never cut short by where a chunk ends
        data = carry + chunk if carry else chunk
        stop = len(data) if upcoming is None else data.rfind(b"\n", begin, max(begin, len(data) - READ_WINDOW)) + 1
        if stop <= begin and len(data) - begin > LONGEST_CARRY:  # no line's end for that long: scanned as it is
            stop = len(data)
        if stop > begin:
            counted, reached = begin, [stop]  # the scan counted the lines up to its last match; count the rest once
            for match in scan(index, data, first_line=reading.line, undecodable=undecodable, paste=paste,
                                    begin=begin, end=stop, reached=reached):
                reading.line, counted = match.line, match.offset
                match.at = base + match.offset
                yield match, data
            reading.line += data.count(b"\n", counted, reached[0])
            low = max(0, reached[0] - TIE_CONTEXT)
            keep = data.rfind(b"\n", max(0, low - TIE_CONTEXT), low) + 1 or low  # from a line's start where one is near
            carry, begin, base = data[keep:], reached[0] - keep, base + keep
        else:
            carry = data


def unprefixed(data: bytes) -> bytes:
    """A paste whose tracebacks were printed behind a prefix repeated on each line (Ray's
    `(RayTrainWorker pid=812, ip=10.130.0.5) `, vLLM's, a logger's stamp, torchrun's `[rank0]: `,
    pytest's `E   `), read as the process printed them: where a line holds NEXT_TRACEBACK after a
    prefix, the prefix is taken off that line and off each next line that begins with it. A
    prefix of whitespace, `|` and `+` alone, or ending with `Group ` (`Exception Group
    Traceback`), is an exception group's own layout: kept."""
    if NEXT_TRACEBACK_BYTES not in data:
        return data
    out, prefix = [], None
    for line in data.split(b"\n"):
        at = line.find(NEXT_TRACEBACK_BYTES)
        head = line[:at] if at > 0 else b""
        if head.strip(b" \t|+") and not head.endswith(b"Group "):
            prefix = head
            out.append(line[at:])
        elif prefix is not None and line.startswith(prefix):
            out.append(line[len(prefix):])
        else:
            prefix = None
            out.append(line)
    return b"\n".join(out)


def explain_chunks(index: Index, chunks, warn=None) -> tuple[list[Found], str, bool]:
    """(distinct exact matches, most recent first; the input's tail; whether any text was seen),
    of the matches `scan_chunks` finds."""
    found: dict = {}
    reading = Reading()
    previous = None  # (the match before, its key)
    for match, data in scan_chunks(index, chunks, warn, reading):
        if previous is not None and same_block(previous[0], match, data):
            # one error printed over several lines (a status, then "Look at the errors above"):
            # one answer with every value, counted once
            match.params = {**previous[0].params, **match.params}
            item = found[previous[1]]
            item.count -= 1
            if not item.count:
                del found[previous[1]]
        key = match.key()
        item = found.get(key)
        if item is None:
            item = found[key] = Found(match)
        item.count += 1
        item.last_line = match.line
        previous = (match, key)
    strong = {f.match.code for f in found.values() if not f.match.weak}
    # a note line or a page link under a message that matched says nothing more
    ordered = sorted((f for f in found.values() if not (f.match.weak and f.match.code in strong)),
                     key=lambda f: f.last_line, reverse=True)
    text = Tail(reading.tail.decode("utf-8", "replace"))
    text.first_line = reading.line - text.count("\n")
    return ordered, text, reading.seen_text

"""Reading around a line: what the text around a match adds to its answer, read after the line
itself matched (errkit/explain/matching/line.py).

- a tie between wordings that match the same text is broken by the raise site the traceback above
  shows, else by the only kernel whose source files it shows, else by the release the text names
  (`break_tie`; when nothing tells, `match.undecided` holds the kernels its entry's tied wordings
  name);
- the kernel that raised it is decided here, once (`decide_kernel`): the wording's only kernel,
  else the one named in the lines after it, else the one whose source the traceback shows; the
  answer (errkit/explain/answer.py) and the context read it from `match.kernel`;
- the values its entry `reads` from the lines after it (a compiler's dump under its header);
- the context: the framework and the raise site (errkit/explain/context.py), for the entries whose
  fixes depend on it;
- a message with no fixed text is recognised by its traceback's last frame (`match_location`).

This room keeps each entry's reads, whether its fixes depend on the context, the compiled regexes
of the reads and the wordings by raise site (`Around`)."""

from errkit.core.index_format import (CONTEXT_MARKS, FRAME, FRAME_MARK, FRAME_REACH, HEADER, NEXT_TRACEBACK, READ_WINDOW, RELEASE_SEEN,
                                     TIE_CONTEXT, UNCONFIRMED)
from errkit.core.normalise import original_span
from errkit.core.regex import engine, escape
from errkit.explain.matching.found import Match
from errkit.explain.matching.index import captured, group_numbers
from errkit.explain.matching.text import EXC, ID_CHARS, MSG, clean, header_of

FRAME_BYTES = FRAME_MARK.encode()  # (the matcher reads bytes)
NEXT_TRACEBACK_BYTES = NEXT_TRACEBACK.encode()
_ID_BYTES = frozenset(c.encode()[0] for c in ID_CHARS)
SHORT_WINDOW = 2048  # bytes after a match read_on looks in directly, not through the scan's Ahead


class Around:
    """What the room keeps of an index: each entry's reads and whether its fixes depend on the
    context, the reads' compiled regexes, and the wordings recognised by their raise site by file."""

    def __init__(self, index):
        self.index = index
        self._reads: dict[str, list | None] = {}
        self._context_codes: dict[str, bool] = {}
        self._needs_context: dict[str, bool] = {}
        self._marks = None  # shows_context's (regex of the marks of JAX's side or None, the marks)
        self._read_regexes: dict[tuple, object] = {}
        self._sites: dict[str, list[tuple[int, str, str]]] | None = None

    def reads(self, code: str) -> list | None:
        """Entry `code`'s reads (the values it reads from the lines after its message)."""
        reads = self._reads.get(code, False)
        if reads is False:
            reads = self._reads[code] = (self.index.entries.get(code) or {}).get("reads")
        return reads

    def reads_context(self, code: str) -> bool:
        """Whether entry `code` has fixes the context orders or leaves out: one for a raise site, or
        one for a kernel of a framework other than JAX (errkit/explain/context.py). Only those
        matches read it: a log's other matches pay nothing."""
        known = self._context_codes.get(code)
        if known is None:
            kernels = self.index.data.get("kernels") or {}
            fixes = (self.index.entries.get(code) or {}).get("fixes") or ()
            known = self._context_codes[code] = any(
                fix.get("site") or (kernels.get(fix.get("kernel")) or {}).get("framework") for fix in fixes)
        return known

    def needs_context(self, code: str) -> bool:
        """Whether entry `code`'s text is another compiler's as likely, exact only where the text
        around shows JAX's side (`needs_context`: issue 51)."""
        known = self._needs_context.get(code)
        if known is None:
            known = self._needs_context[code] = bool((self.index.entries.get(code) or {}).get("needs_context"))
        return known

    def depends(self, match: Match | None) -> bool:
        """Whether the answer of `match` depends on the text around it (so it is not remembered
        whole: errkit/explain/matching/memory.py): a tie, a wording of several kernels, values read
        after it, a context read."""
        return match is not None and bool(match.ties or len(match.wording.get("kernels") or ()) > 1
                                          or self.reads(match.code) or self.reads_context(match.code)
                                          or self.needs_context(match.code))

    def read(self, match: Match, data: bytes, start: int, line: str, text: str, origin, record=None, ahead=None) -> Match:
        """`match` (of the line at `start` of `data`: `line` as read, `text` normalised by `origin`)
        with what the text around it adds: its tie broken, its kernel decided, the values read after
        it, its context. `record()`: the strings of the JSON log line it was found in, else None
        (`read_on`); `ahead`: an errkit/explain/ahead.py Ahead of `data` (a log's)."""
        kernels = match.wording.get("kernels") or ()
        if match.ties or len(kernels) > 1:
            before = Before(data, max(0, start - TIE_CONTEXT), start, text, ahead)
            if match.ties:
                match = break_tie(match, before, self.index.data.get("kernels") or {})
                kernels = match.wording.get("kernels") or ()
        shown = shown_kernel(kernels, self.index.data.get("kernels") or {}, before) if len(kernels) > 1 else None
        named = self.read_on(match, data, start, ahead, lambda: _prefix_end(data, start, line, text, match, origin), record)
        decide_kernel(match, shown, named)
        if self.reads_context(match.code):
            self.read_context(match, data, start)
        if self.needs_context(match.code) and not self.shows_context(data, start):
            match.exact = False  # another compiler's, as likely: approximate, saying why
            match.context = {**(match.context or {}), "unconfirmed": UNCONFIRMED}
        return match

    def shows_context(self, data: bytes, start: int) -> bool:
        """Whether the text around the line at `start` (FRAME_REACH bytes each side) shows JAX's side:
        CONTEXT_MARKS, or the name or source of a kernel of the catalogue."""
        if self._marks is None:  # one search for all of them: a regex of the marks, made once
            kernels = self.index.data.get("kernels") or {}
            marks = [*CONTEXT_MARKS, *(n for k in kernels.values() for n in (k.get("names") or ())),
                     *(k["source"] for k in kernels.values() if k.get("source"))]
            regex = None
            if marks and "" not in marks:
                try:
                    regex = engine().compile("|".join(escape(m) for m in marks).encode("utf-8"))
                except Exception:  # noqa: BLE001 - an installed catalogue's marks too many for one regex
                    regex = None
            self._marks = (regex, [m.encode("utf-8") for m in marks])
        regex, marks = self._marks
        if regex is not None:
            return regex.search(data, max(0, start - FRAME_REACH), start + FRAME_REACH) is not None
        window = data[max(0, start - FRAME_REACH):start + FRAME_REACH]  # (searched for each mark)
        return any(mark in window for mark in marks)

    def read_on(self, match: Match, data: bytes, start: int, ahead=None, prefix_end=None, record=None) -> str | None:
        """What the lines after a match's message add (a compiler's dump under its header): the
        params of its entry's `reads` it does not have yet, each from the first line that holds it
        (`match.params` replaced by a new dict: the message's own values may be shared with a
        remembered match); returned, the one kernel they name (a pallas_call's name,
        `%splash_mha_fwd`) when its wording is raised by several, else None. Read from the match's
        line to the next traceback, READ_WINDOW at most, and, where `prefix_end()` tells where its
        line's log prefix ends in `data` (asked only when something is read), to the next log
        record from another place (errkit/explain/records.py). `record()`: the strings of the JSON
        log line the match was found in (text.json_record), read alone (a JSON log's record is its
        line, a dump inside it is in its strings), else None; asked only when something is read.
        `ahead`: an errkit/explain/ahead.py Ahead of `data` (the scan's: windows overlap)."""
        raised_by = match.wording.get("kernels") or ()
        reads = self.reads(match.code)
        if not reads and len(raised_by) < 2:
            return None
        kernels = self.index.data.get("kernels") or {}
        # a wording of one kernel is that kernel's: its names are not looked for
        candidates = [k for k in raised_by if (kernels.get(k) or {}).get("names")] if len(raised_by) > 1 else []
        if not reads and not candidates:
            return None
        record = None if record is None else record()
        if ahead is None or record is not None:
            from errkit.explain.ahead import Ahead

            if record is not None:  # a JSON log line: its strings, unescaped, alone
                data, start = record.encode("utf-8", "replace"), 0
            ahead = Ahead(data)
        end = min(len(data), start + READ_WINDOW)
        first_line_end = data.find(b"\n", start, end) if record is None else -1
        if first_line_end >= 0:
            cut = ahead.find(NEXT_TRACEBACK_BYTES, first_line_end, end)
            end = end if cut < 0 else cut
            prefix = None if prefix_end is None else prefix_end()
            if prefix is not None:
                from errkit.explain.records import record_end  # (not for a message without `reads`: start-up time)

                end = record_end(data, start, first_line_end, prefix, end)
        window = data[start:end] if reads else b""  # (kernel names are found in the bytes)
        as_bytes = window.isascii()  # searched as they are: the same matches as in their text, none of
        # the RE2 wrapper's mapping of a text's offsets (a bad byte decodes to U+FFFD: read as text then)
        window = window if as_bytes else window.decode("utf-8", "replace")
        extra = {}
        for k, read in enumerate(reads or ()):
            compiled = self._read_regexes.get((match.code, k, as_bytes))
            if compiled is None:
                compiled = self._read_regexes[(match.code, k, as_bytes)] = _read_regex(read, as_bytes)
            pattern, numbers = compiled
            m = pattern.search(window)
            found = captured(read["captures"], m, numbers) if m else None
            for param, value in (found or {}).items():
                if param not in match.params and param not in extra:
                    extra[param] = value
        if extra:  # a new dict: the message's own values may be shared with a remembered match
            match.params = {**match.params, **extra}
        # a short window (one record's lines) is looked in at once: a name not in it starts no identifier there
        shown = data[start:end] if candidates and end - start <= SHORT_WINDOW else None
        named = [k for k in candidates if any((shown is None or name.encode("utf-8") in shown)
                                              and starts_identifier_in(ahead, start, end, name) for name in kernels[k]["names"])]
        return named[0] if len(named) == 1 else None

    def read_context(self, match: Match, data: bytes, start: int) -> None:
        """match.context: the framework and the raise site the text around the match shows, each with
        the text it was read from (errkit/explain/context.py); from FRAME_REACH bytes before its
        line (the traceback's last frames) to the next traceback after it, FRAME_REACH at most (a
        log's windows are searched for every mark: kept short)."""
        from errkit.explain import context

        line_end = data.find(b"\n", start)
        line_end = len(data) if line_end < 0 else line_end
        end = min(len(data), line_end + FRAME_REACH)
        cut = data.find(NEXT_TRACEBACK_BYTES, line_end, end)
        end = end if cut < 0 else cut
        before = data[max(0, start - FRAME_REACH):start].decode("utf-8", "replace")
        line = data[start:line_end].decode("utf-8", "replace")
        after = data[line_end:end].decode("utf-8", "replace")
        framework, framework_mark = context.framework(before, line, after)
        site, site_mark = context.site(match.kernel, line, after)
        match.context = {"framework": framework, "framework_from": framework_mark, "site": site, "site_from": site_mark}

    def match_location(self, frame_path: str, func: str, line_no: int, exception: str = "", message: str = "") -> Match | None:
        """A message with no fixed text (often none at all), recognised by the raise site of its
        traceback's last frame, then by its wording.

        The most specific location is tried first (file and function over the whole file); a
        wording whose exception class differs from the raised one never matches.
        """
        index = self.index
        frame_path = frame_path.replace("\\", "/")
        raised = exception.rsplit(".", 1)[-1]
        if self._sites is None:  # file name -> (wording, its file, its function): read once
            self._sites = {}
            for i in index.located:
                place, _, where = index.wordings[i]["location"].partition(" in ")
                path = place.partition(":")[0]
                self._sites.setdefault(path.rsplit("/", 1)[-1], []).append((i, path, where))
        ranked = []
        for i, path, where in self._sites.get(frame_path.rsplit("/", 1)[-1], ()):
            wording = index.wordings[i]
            if not frame_path.endswith(path) or (where and where != func):
                continue
            if raised and wording["exception"] and wording["exception"] != raised:
                continue
            ranked.append((-bool(where), i))
        for _, i in sorted(ranked):
            m = index.regex(i).fullmatch(message)
            params = index.captured(i, m) if m else None
            if params is not None:
                wording = index.wordings[i]
                return Match(wording["code"], wording, params, line_no, text=message or f"{frame_path} in {func}")
        return None

    def located_match(self, data: bytes, start: int, line: str, line_no: int) -> Match | None:
        """The match of a traceback's exception line `line` (at `start` of `data`) by the raise site
        of the traceback's last frame: the nearest `File "..."` line above, within FRAME_REACH bytes."""
        header = HEADER.search(clean(line))
        if not header:
            return None
        low, end = max(0, start - FRAME_REACH), start
        last = None
        while last is None:
            at = data.rfind(FRAME_BYTES, low, end)
            if at < 0:
                return None
            line_start = data.rfind(b"\n", 0, at) + 1
            line_end = data.find(b"\n", at, start)
            last = FRAME.match(data[line_start:start if line_end < 0 else line_end].decode("utf-8", "replace"))
            end = at
        message = (header.group(MSG) or "").strip()
        return self.match_location(last.group("path"), last.group("func"), line_no, header.group(EXC), message)


def match_location(index, frame_path: str, func: str, line_no: int, exception: str = "", message: str = "") -> Match | None:
    """Around.match_location of `index`."""
    return index.room(Around).match_location(frame_path, func, line_no, exception, message)


def _read_regex(read: dict, as_bytes: bool) -> tuple:
    """(a read's compiled regex, over bytes or text; the numbers of its captures' groups over
    bytes, else None: a bytes pattern's group names are bytes)."""
    if not as_bytes:
        return engine().compile(read["regex"]), None
    pattern = engine().compile(read["regex"].encode("utf-8"))
    return pattern, group_numbers(pattern, read["captures"])


def decide_kernel(match: Match, shown: str | None, named: str | None) -> None:
    """match.kernel, the kernel that raised it, decided once: its wording's only kernel (set when the
    match was made); of a wording's several kernels, the one named in the lines after it, else the
    one whose source the traceback above shows, else None (not told)."""
    if len(match.wording.get("kernels") or ()) > 1:
        match.kernel = named or shown


def _prefix_end(data: bytes, start: int, line: str, text: str, match: Match, origin) -> int | None:
    """Where the log record's prefix of `line` (the line at `start`, `text` once normalised by
    `origin`) ends in `data`: before the exception named ahead of the text `match` found, else
    before that text (errkit/explain/records.py); None when that is not known (no span, or the
    line was not read whole from there)."""
    if match.span is None:
        return None
    cut = match.span[0]
    header = header_of(text)
    if header is not None and header.start(EXC) < cut:
        cut = header.start(EXC)
    before = line[:original_span(origin, cut, cut)[0]].encode("utf-8")
    return start + len(before) if data.startswith(before, start) else None


# -- ties ----------------------------------------------------------------------------------------


_COMPARE = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, "<": lambda a, b: a < b,
            "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


class Before:
    """What break_tie and shown_kernel read: the bytes before a match's line (`data[low:high]`,
    TIE_CONTEXT of them, ending with a line's end) and the line's text, as one text whose
    backslashes are slashes (a Windows traceback's paths). Looked in without decoding the bytes
    where that gives the same: an ASCII needle without a line's end is in the text exactly where its
    bytes are in the bytes, or in the line (no byte of another character, nor the U+FFFD a bad byte
    decodes to, is ASCII); with no backslash before the line, in `data` itself, through `ahead` (an
    errkit/explain/ahead.py Ahead of it: a log's windows overlap, each byte is searched once)."""

    __slots__ = ("data", "low", "high", "ahead", "line", "_text", "_slashed", "_lowered", "_plain")

    def __init__(self, data: bytes, low: int, high: int, line: str, ahead=None):
        self.data, self.low, self.high, self.ahead = data, low, high, ahead
        self.line = line.replace("\\", "/")
        self._text = self._slashed = self._lowered = self._plain = None

    @classmethod
    def of(cls, text: str) -> "Before":
        """A text alone, no bytes before it."""
        return cls(b"", 0, 0, text)

    def text(self) -> str:
        if self._text is None:
            self._text = self.data[self.low:self.high].decode("utf-8", "replace").replace("\\", "/") + self.line
        return self._text

    def _slashed_raw(self) -> bytes:
        if self._slashed is None:
            self._slashed = self.data[self.low:self.high].replace(b"\\", b"/")
        return self._slashed

    def _holds(self, needle: bytes) -> bool:
        """Whether data[low:high] holds `needle` (ahead: from what earlier searches read)."""
        if self.ahead is not None:
            return self.ahead.find(needle, self.low, self.high) >= 0
        return self.data.find(needle, self.low, self.high) >= 0

    def shows(self, needle: str) -> bool:
        """`needle in text()`."""
        if not needle.isascii() or "\n" in needle:
            return needle in self.text()
        if needle in self.line:
            return True
        if self._plain is None:
            self._plain = not self._holds(b"\\")  # no backslash: the bytes are their slashed form
        return self._holds(needle.encode("ascii")) if self._plain else needle.encode("ascii") in self._slashed_raw()

    def shows_lowered(self, needle: str) -> bool:
        """`needle in text().lower()`, `needle` in lower case (bytes lowered as ASCII only: read so
        only when they are ASCII, as a non-ASCII letter may lower to an ASCII one)."""
        if not needle.isascii() or "\n" in needle:
            return needle in self.text().lower()
        if self._lowered is None:
            raw = self._slashed_raw()
            self._lowered = (raw.lower() if raw.isascii() else None, self.line.lower())
        if self._lowered[0] is None:
            return needle in self.text().lower()
        return needle.encode("ascii") in self._lowered[0] or needle in self._lowered[1]


def break_tie(match: Match, context: "str | Before", kernels: dict | None = None) -> Match:
    """Of wordings that match the same text (line.py's apart): the one whose raise site (a
    traceback frame's file) the context shows, else the only one whose kernel's source files it
    shows, else the one whose release range holds the release the context names (`jax==0.4.31`);
    else the first (then `undecided` holds the kernels any of them may be)."""
    candidates = [match, *match.ties]
    context = Before.of(context) if isinstance(context, str) else context
    chosen = next((c for c in candidates if raise_file(c.wording) and context.shows(raise_file(c.wording))), None)
    if chosen is None and kernels:
        shown = [c for c in candidates if any(_sources_shown(kernels.get(k) or {}, context) for k in c.wording.get("kernels") or ())]
        chosen = shown[0] if len(shown) == 1 else None
    if chosen is None and _names_a_dist(candidates, context):
        seen = _releases_in(context.text())
        chosen = next((c for c in candidates if _in_range(c.wording.get("releases"), seen)), match) if seen else match
    undecided = chosen is None
    chosen = match if chosen is None else chosen
    if chosen is not match:
        chosen.span, chosen.text = match.span, match.text
    if undecided:  # the first wording, by default: any of its entry's tied wordings' kernels may have raised it
        kernels_of = tuple(dict.fromkeys(k for c in candidates if c.code == chosen.code for k in c.wording.get("kernels") or ()))
        chosen.undecided = kernels_of if len(kernels_of) > 1 else ()
    chosen.ties = []
    return chosen


def _sources_shown(kernel: dict, context: Before) -> bool:
    """Whether the context (a traceback's frames) shows one of a kernel's source files (its `source`,
    files comma-separated)."""
    return any(part.strip() and context.shows(part.strip()) for part in (kernel.get("source") or "").split(","))


def raise_file(wording: dict) -> str:
    return (wording.get("location") or "").partition(" in ")[0].partition(":")[0]


def _releases_in(context: str) -> dict[str, tuple[int, ...]]:
    """Distribution -> the release the context names for it (the last one named)."""
    seen = {}
    for m in RELEASE_SEEN.finditer(context):
        seen[m.group("dist").lower()] = tuple(int(x) for x in m.group("version").split("."))
    return seen


def _in_range(record: dict | None, seen: dict[str, tuple[int, ...]]) -> bool:
    """Whether a wording's release range holds the release the context names for its distribution."""
    if not record or record.get("dist", "").lower() not in seen:
        return False
    version = seen[record["dist"].lower()]
    width = max([len(version)] + [len(b) for _, b in record["bounds"]])
    pad = lambda v: tuple(v) + (0,) * (width - len(v))  # noqa: E731 - 0.5 is 0.5.0
    return all(_COMPARE[op](pad(version), pad(bound)) for op, bound in record["bounds"])


def _names_a_dist(candidates: list[Match], context: Before) -> bool:
    """Whether the context holds the name of a distribution whose releases a candidate has: the
    release regex (a lookbehind, on `re`) reads the context only then."""
    for c in candidates:
        dist = (c.wording.get("releases") or {}).get("dist")
        if dist and context.shows_lowered(dist.lower()):
            return True
    return False


# -- the kernel that raised it -------------------------------------------------------------------


def shown_kernel(candidates, kernels: dict, context: "str | Before") -> str | None:
    """Of the kernels raising a shared wording, the one whose source file the context (a traceback's
    frames) shows, when exactly one is shown."""
    context = Before.of(context) if isinstance(context, str) else context
    shown = [k for k in candidates if (kernels.get(k) or {}).get("source") and context.shows(kernels[k]["source"])]
    return shown[0] if len(shown) == 1 else None


def starts_identifier_in(ahead, low: int, high: int, name: str) -> bool:
    """Whether an identifier of the text of ahead.data[low:high] (a match of
    `[A-Za-z_][A-Za-z0-9_]*`, found left to right) starts with `name`, found by substring (a regex
    over a compiler dump is slow on RE2's wrapper; `ahead`: an errkit/explain/ahead.py Ahead of the
    bytes). In a run of identifier characters the identifier starts at its first character that
    is not a digit, so `name` starts one where only digits come before it in its run. Read in the
    bytes without decoding them: identifier characters are ASCII, and no byte of another
    character (nor the U+FFFD a bad byte decodes to) is one."""
    if not name or name[0].isdigit() or not ID_CHARS.issuperset(name):
        return False
    needle, data = name.encode("ascii"), ahead.data
    at = ahead.find(needle, low, high)
    while at >= 0:
        before = at
        while before > low and data[before - 1] in _ID_BYTES:
            before -= 1
        if before == at or data[before:at].isdigit():
            return True
        at = ahead.find(needle, at + 1, high)
    return False

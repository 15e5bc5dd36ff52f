"""Find catalogue wordings in pasted text: anchor-word prefilter, then the wordings' typed regexes.

The explain path: imports only json, os and re (values/template for reading values back); reads the
index that `errkit generate` compiled.
"""

from __future__ import annotations

import json
import os
import re

from . import values

INDEX_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_index.json")


class _Lazy:
    """A regex compiled on first use: compiling at import would slow every `errkit explain` start."""

    def __init__(self, pattern: str):
        self.pattern, self._compiled = pattern, None

    def __getattr__(self, name):
        if self._compiled is None:
            self._compiled = re.compile(self.pattern)
        return getattr(self._compiled, name)


WORD = _Lazy(r"[A-Za-z_][A-Za-z0-9_]*")
ANSI = _Lazy(r"\x1b\[[0-9;?]*[A-Za-z]")
# `SomeError: message`, possibly after a log prefix, pytest's `E   ` or a dotted module path.
HEADER = _Lazy(
    r"(?:^|(?<=[\s:\[\]|>(]))(?P<exc>(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*(?:Error|Exception))"
    r"(?:: ?(?P<msg>.*))?$"
)
FRAME = _Lazy(r'^\s*File "(?P<path>[^"]+)", line (?P<line>[0-9]+), in (?P<func>\S+)')
ENGINE_ENV = "ERRKIT_REGEX_ENGINE"  # "re" forces Python's engine (tests compare the two)


def engine():
    """The regex engine for wordings: google-re2 (linear time, no catastrophic backtracking on
    hostile input) when installed, else Python's `re`, which the test suite proves equivalent on
    its corpus."""
    global _ENGINE
    if _ENGINE is None:
        _ENGINE = re
        if os.environ.get(ENGINE_ENV, "re2") != "re":
            try:
                import re2

                _ENGINE = re2
            except ImportError:
                pass
    return _ENGINE


_ENGINE = None
MAX_LINE = 16_384  # an error message is never longer; a longer line is read up to here


class Match:
    __slots__ = ("code", "wording", "params", "line", "exact", "score", "text")

    def __init__(self, code, wording, params, line, exact=True, score=1.0, text=""):
        self.code, self.wording, self.params, self.line = code, wording, params, line
        self.exact, self.score, self.text = exact, score, text

    def key(self):
        return (self.code, repr(sorted(self.params.items())))


class Entries(dict):
    """Code -> entry; entries stored as JSON strings are parsed on first access."""

    def __getitem__(self, code):
        value = super().__getitem__(code)
        if isinstance(value, str):
            value = json.loads(value)
            self[code] = value
        return value

    def get(self, code, default=None):
        return self[code] if code in self else default

    def items(self):
        return [(code, self[code]) for code in self]

    def values(self):
        return [self[code] for code in self]


class Index:
    def __init__(self, data: dict):
        self.data = data
        self.entries = Entries(data["entries"])
        self.wordings: list = data["wordings"]
        self.anchors: dict = data["anchors"]
        self.anchor_set = frozenset(self.anchors)
        self.always = [i for i in data["always"] if self.wordings[i]["template"]]
        self.located = data.get("located", [])
        self.gates: list = data["gates"]
        self.ungated: list = data["ungated"]
        self._compiled: dict[tuple, re.Pattern] = {}

    @classmethod
    def load(cls, path: str = INDEX_FILE) -> "Index":
        with open(path, encoding="utf-8") as handle:
            return cls(json.load(handle))

    def regex(self, i: int, to_line_end: bool = False) -> re.Pattern:
        """The wording's regex; `to_line_end` anchors it at the end of the line (for searching a log line)."""
        key = (i, to_line_end)
        pattern = self._compiled.get(key)
        if pattern is None:
            source = self.wordings[i]["regex"]
            pattern = self._compiled[key] = engine().compile(f"(?:{source})\\s*$" if to_line_end else source)
        return pattern

    def lookup(self, key: str):
        """An entry by code or slug (case-insensitive), or None."""
        key = key.strip()
        if key.upper() in self.entries:
            return key.upper()
        slug = f'"slug":"{key.lower()}"'
        for code, entry in dict.items(self.entries):  # a cheap look at the raw text first
            if (slug in entry if isinstance(entry, str) else entry["slug"] == key.lower()) and self.entries[code]["slug"] == key.lower():
                return code
        return None

    # -- exact matching ---------------------------------------------------------------------------

    def candidates(self, line: str) -> list[int]:
        found = sorted(self.anchor_set.intersection(WORD.findall(line)))  # sorted: the same answer on every run
        ids = [i for word in found for i in self.anchors[word]]
        return ids + self.always if self.always else ids

    def _extract(self, i: int, m: "re.Match[str]"):
        out = {}
        for group, param, type_ in self.wordings[i]["captures"]:
            try:
                value = values.parse(type_, m.group(group))
            except (ValueError, OverflowError):  # matched the shape of a value but is none (e.g. "1,,2")
                return None
            if param in out and out[param] != value:
                return None
            out[param] = value
        return out

    def match_line(self, line: str, line_no: int = 0) -> Match | None:
        """The best wording found in one line: a fullmatch of the message part first, then a search."""
        line = clean(line)
        ids = self.candidates(line)
        if not ids:
            return None
        header = HEADER.search(line)
        stripped = line.strip()
        # Most specific first: the message after `SomeError: `, the whole line, the line's end, anywhere.
        segments = []
        if header and header.group("msg") is not None:
            segments.append((header.group("msg").strip(), "full"))
        segments += [(stripped, "full"), (stripped, "end"), (stripped, "any")]
        best: Match | None = None
        for text, how in segments:
            for i in ids:
                if how == "full":
                    m = self.regex(i).fullmatch(text)
                else:
                    m = self.regex(i, to_line_end=how == "end").search(text)
                if m is None:
                    continue
                params = self._extract(i, m)
                if params is None:
                    continue
                wording = self.wordings[i]
                if best is None or wording["literal_chars"] > best.wording["literal_chars"]:
                    best = Match(wording["code"], wording, params, line_no, text=text)
            if best is not None:
                return best
        return best

    def match_location(self, frame_path: str, func: str, line_no: int, exception: str = "", message: str = "") -> Match | None:
        """A message with no fixed text (often none at all), recognised by the raise site of its
        traceback's last frame, then by its wording.

        The most specific location is tried first (file and function over the whole file); a
        wording whose exception class differs from the raised one never matches.
        """
        frame_path = frame_path.replace("\\", "/")
        raised = exception.rsplit(".", 1)[-1]
        ranked = []
        for i in self.located:
            wording = self.wordings[i]
            place, _, where = wording["location"].partition(" in ")
            path = place.partition(":")[0]
            if not frame_path.endswith(path) or (where and where != func):
                continue
            if raised and wording["exception"] and wording["exception"] != raised:
                continue
            ranked.append((-bool(where), i))
        for _, i in sorted(ranked):
            m = self.regex(i).fullmatch(message)
            params = self._extract(i, m) if m else None
            if params is not None:
                wording = self.wordings[i]
                return Match(wording["code"], wording, params, line_no, text=message or f"{frame_path} in {func}")
        return None

    def scan(self, text: str, first_line: int = 1):
        """Every match in a block of text, in order.

        A few gate substrings (every wording holds one) are searched at C speed; only the lines
        holding one are matched further.
        """
        starts: dict[int, int] = {}  # line start -> where a gate was seen on it
        for gate in self.gates:
            pos = text.find(gate)
            while pos >= 0:
                starts.setdefault(text.rfind("\n", 0, pos) + 1, pos)
                pos = text.find("\n", pos)  # one hit per line is enough
                if pos < 0:
                    break
                pos = text.find(gate, pos)
        if self.ungated or self.located:
            for marker in ("Error", "Exception"):
                pos = text.find(marker)
                while pos >= 0:
                    starts.setdefault(text.rfind("\n", 0, pos) + 1, pos)
                    pos = text.find(marker, pos + 1)
        line_no, counted = first_line, 0
        for start in sorted(starts):
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
            if end - start <= MAX_LINE:
                line = text[start:end]
            else:  # a huge line: read the window around what the gate saw
                hit = starts[start]
                line = text[max(start, hit - MAX_LINE // 2):min(end, hit + MAX_LINE // 2)]
            line_no += text.count("\n", counted, start)  # incrementally: starts are sorted
            counted = start
            match = self.match_line(line, line_no)
            if match is None and self.located:
                match = self._located_match(text, start, line, line_no)
            if match is not None:
                yield match

    def _located_match(self, text: str, start: int, line: str, line_no: int) -> Match | None:
        header = HEADER.search(clean(line))
        if not header:
            return None
        window = text[max(0, start - 4000):start].splitlines()
        frames = [m for m in (FRAME.match(l) for l in window) if m]
        if not frames:
            return None
        last = frames[-1]
        message = (header.group("msg") or "").strip()
        return self.match_location(last.group("path"), last.group("func"), line_no, header.group("exc"), message)


def clean(line: str) -> str:
    line = ANSI.sub("", line) if "\x1b" in line else line
    return line.rstrip("\r\n")

"""The keys: each wording's key is the piece of its fixed text least likely to appear elsewhere
(chosen by `errkit generate`). Which keys a line holds says which wordings to try on it (`KeySet`);
one regex of every key and of the other marks worth reading (`Keys.locator`), searched over the
raw bytes of a log, or the prefilter made of it (errkit/explain/prefilter.py), picks the lines to
read."""

from errkit.core.index_format import FRAME_MARK, LOOKUP_MARKS, MARKERS, SPACE
from errkit.core.regex import engine, escape, is_re2


def re2_options():
    options = engine().Options()
    options.max_mem = 256 << 20  # the automata of a large catalogue's keys outgrow RE2's 8 MB default
    return options


def key_pattern(key: str) -> str:
    """The regex of a prefilter key: its words with any run of whitespace between them."""
    return f"{SPACE}+".join(escape(word) for word in key.split(" "))


class KeySet:
    """Which keys occur in a line: RE2::Set (one pass for all keys), or a loop over `re` regexes.

    The first LITERAL_LINES lines are answered without compiling anything: a key is its words
    with any run of SPACE between them, so it occurs in a line exactly when its text (words joined
    by one space) is a substring of the line with each run of SPACE made one space. Compiling
    the set of every key costs more than a paste's few lines take that way (start-up time)."""

    LITERAL_LINES = 32

    def __init__(self, keys: list[str]):
        self.keys = keys
        self._set = None
        self._regexes: list | None = None
        self._asked = 0

    def _compile(self) -> None:
        patterns = [key_pattern(k) for k in self.keys]
        self._regexes = []
        if patterns and is_re2():
            self._set = engine().Set.SearchSet(re2_options())
            for pattern in patterns:
                self._set.Add(pattern)
            self._set.Compile()
        else:
            self._regexes = [engine().compile(p) for p in patterns]

    def present(self, line: str) -> list[int]:
        if self._regexes is None:
            if self._asked < self.LITERAL_LINES:
                self._asked += 1
                text = line.translate(_SPACES)
                if "  " in text:
                    text = " ".join(part for part in text.split(" ") if part)
                return [k for k, key in enumerate(self.keys) if key in text]
            self._compile()
        if self._set is not None:
            return sorted(self._set.Match(line) or ())  # sorted: the same answer on every run
        return [k for k, regex in enumerate(self._regexes) if regex.search(line)]


_SPACES = {ord(c): " " for c in "\t\n\r\f\v"}  # SPACE's characters other than the space


class Keys:
    """What the keys room keeps of an index: its key set, its locator regex and the prefilter."""

    def __init__(self, index):
        self.index = index
        self._set: KeySet | None = None
        self._locator = None
        self._prefilter = None  # errkit/explain/prefilter.py: where the next line worth reading starts

    def candidates(self, line: str) -> list[int]:
        """The wordings worth trying on `line`: those whose key it holds, and those without a key
        tried on every line read."""
        if self._set is None:
            self._set = KeySet(self.index.keys)
        index = self.index
        ids = [i for k in self._set.present(line) for i in index.keyed[k]]
        return ids + index.always if index.always else ids

    def locator(self):
        """One regex of every key, and of what else makes a line worth reading (a traceback frame
        when some wordings are recognised by their raise site, an exception name when some have no
        key, the note line and page links of our exceptions), over bytes. None: nothing to look for."""
        if self._locator is None:
            alternatives = self.alternatives()
            if not alternatives:
                return None  # nothing to look for: no wording can match
            source = "|".join(alternatives).encode("utf-8")
            self._locator = engine().compile(source, re2_options()) if is_re2() else engine().compile(source)
        return self._locator

    def alternatives(self) -> list[str]:
        """The locator's alternatives ([] when nothing is looked for)."""
        index = self.index
        alternatives = [key_pattern(k) for k in index.keys]
        if index.always:
            alternatives += MARKERS
        if index.located:
            alternatives.append(escape(FRAME_MARK))
        return alternatives + list(LOOKUP_MARKS) if alternatives else []

    def prefilter(self):
        """The locator as errkit/explain/prefilter.py scans a log's blocks with it (Hyperscan where
        installed, else the locator regex searched line by line): the same answers."""
        if self._prefilter is None:
            from errkit.explain import prefilter

            self._prefilter = prefilter.chosen(self.alternatives(), self.locator)
        return self._prefilter


def candidates(index, line: str) -> list[int]:
    """The wordings of `index` worth trying on `line` (Keys.candidates)."""
    return index.room(Keys).candidates(line)

"""Reading one line: the wording a line holds, read as pasted (normalised by the caller).

The message after `SomeError: ` is tried whole first; a message answered before is answered from
memory by its text (`LineReader`'s messages: a log repeats the same messages behind different
timestamps), before any key is looked up. Then the whole line, its end, anywhere in it, with the
wordings whose keys it holds (errkit/explain/matching/keys.py). A JSON log line is read as the
strings it holds. A note line our exceptions print, or a link to an entry's page, names an entry
without a message matched (`match_note`: weak)."""

from errkit.core import values
from errkit.core.regex import engine
from errkit.core.index_format import DOCS_LINK, NOTE
from errkit.explain.matching.around import raise_file
from errkit.explain.matching.found import Match
from errkit.explain.matching.keys import Keys
from errkit.explain.matching.text import EXC, MSG, clean, header_of, json_strings, message_forms, opening_quote, quoted_message, raise_statement

MESSAGES_KEPT = 4096  # messages remembered per index: a log repeats the same few errors
FINAL_STOP = r"(?:\.)?"  # how a wording's regex ends when its message ends with a full stop (a paste may drop it)


class LineReader:
    """What the room keeps of an index: the answer to each message read after `SomeError: `."""

    def __init__(self, index):
        self.index = index
        self._keys = index.room(Keys)
        self._messages: dict[str, Match | None] = {}
        self._stopped: dict[int, object] = {}

    def match_line(self, line: str, line_no: int = 0) -> Match | None:
        """The best wording found in one line: a fullmatch of the message part first, then a search.

        A JSON log line (`{"level": "error", "msg": "ValueError: ..."}`) is read as the strings it
        holds, unescaped, each line of each (a traceback in an `exc_info` field too)."""
        line = clean(line)
        json_line = line.startswith("{") or line.lstrip().startswith("{")
        header = False if json_line else header_of(line)  # (False: not searched)
        if header and header.group(MSG) is not None:
            # a message answered before needs no key lookup: every wording that matches it whole
            # has its key in it, so in any line holding it (the keys' set match is the cost here)
            remembered = self._messages.get(header.group(MSG).strip())
            if remembered is not None:
                return _remembered(remembered, header, line_no)
        ids = self._keys.candidates(line)
        if not ids:
            return None
        if json_line:
            for text in json_strings(line):
                for part in text.splitlines():
                    found = self._match_text(clean(part), line_no)
                    if found is not None:
                        found.span = None  # in the unescaped string, not in the line
                        return found
        return self._match_text(line, line_no, ids, header)

    def _match_text(self, line: str, line_no: int, ids: list[int] | None = None, header=False) -> Match | None:
        """`header`: HEADER's search of `line` when the caller made it (False: not made)."""
        ids = self._keys.candidates(line) if ids is None else ids
        if not ids:
            return None
        header = header_of(line) if header is False else header
        if not header:
            quoted = quoted_message(line)
            if quoted is not None:  # `I get "ValueError: ..." when I run it`: the quoted text first
                found = self._match_text(line[quoted[0]:quoted[1]], line_no)
                if found is not None:
                    if found.span is not None:
                        found.span = (found.span[0] + quoted[0], found.span[1] + quoted[0])
                    return found
        start = None
        if header and header.group(MSG) is not None:
            # The message after `SomeError: ` decides alone when a wording matches it whole: a log
            # repeats the same messages behind different timestamps, so that answer is remembered.
            msg = header.group(MSG).strip()
            if msg in self._messages:
                hit = self._messages[msg]
            else:
                if len(self._messages) >= MESSAGES_KEPT:
                    self._messages.clear()
                hit = self._messages[msg] = self._full(ids, msg, opening_quote(line, header.start(EXC)))
            if hit is not None:
                return _remembered(hit, header, line_no)
            start = self._started(ids, msg, line_no)
        # Then the whole line, the line's end, anywhere; only the wordings found somewhere in it
        # can match it one of these ways (one search each: a line no wording matches costs that)
        stripped = line.strip()
        if raise_statement(stripped):  # a traceback's source line: its message comes on the exception line
            return None
        data = stripped.encode("utf-8", "replace")
        index, plain = self.index, not values.shows_number_forms(data)
        ids = [i for i in ids if index.bytes_regex(i, plain=plain).search(data) is not None]
        at = len(line) - len(line.lstrip())
        for how in ("full", "end", "any") if ids else ():
            best = self._full(ids, stripped, "", line_no) if how == "full" else self._best(ids, stripped, how, line_no)
            if best is not None:
                if start is not None and start.wording["literal_chars"] >= best.wording["literal_chars"]:
                    break
                best.span = (best.span[0] + at, best.span[1] + at)
                return best
        return _remembered(start, header, line_no) if start is not None else None

    def _started(self, ids: list[int], msg: str, line_no: int) -> Match | None:
        """The wording the message after `SomeError: ` starts with, where text follows it that no
        wording reads (`value3 must be same, got a, b, c. Retrying in 5s`): read there, a value that
        opens the wording is the message's, where a search of the line reads `SomeError: ` into it.
        Only a reading that ends where a word does (a lazy free-text value read one character
        is none)."""
        start = self._best(ids, msg, "start", line_no)
        end = start.span[1] if start is not None else 0
        if start is None or (_alnum(msg[end:end + 1]) and _alnum(msg[end - 1:end])):
            return None
        return start

    def _full(self, ids: list[int], text: str, quote: str = "", line_no: int = 0) -> Match | None:
        """The wording of `ids` matching a reading of `text` whole (text.message_forms: without a
        traceback or comment after it, a closing quote, a leading tag) with the most fixed text, the
        likelier reading first of two alike; its span in characters of `text`."""
        best = None
        for offset, form in message_forms(text, quote):
            hit = self._best(ids, form, "full", line_no)
            if hit is not None and (best is None or hit.wording["literal_chars"] > best.wording["literal_chars"]):
                best = hit
                best.span = (hit.span[0] + offset, hit.span[1] + offset)
                for tie in best.ties:
                    tie.span = best.span
        if best is not None and any(isinstance(v, str) and " " in v for v in best.params.values()):
            # (only a value of several words can have read in another wording's fixed text or the text after it)
            # a longer wording that the message starts with, text written after it: a shorter one matched
            # whole only by reading that wording's own fixed text into a value ("Unrecognized TPU device kind:
            # {device_kind}." over "...: cpu. tpu_custom_call cannot be lowered ... =True. on TPU v5e")
            longer = [i for i in ids if self.index.wordings[i]["literal_chars"] > best.wording["literal_chars"]]
            start = self._best(longer, text, "start", line_no) if longer else None
            if start is not None:
                return start
            if best.wording["regex"].endswith(FINAL_STOP) and not (best.text or "").endswith("."):
                return self._stopped_at(ids, best, text, line_no) or best
        return best

    def _stopped_at(self, ids: list[int], best: Match, text: str, line_no: int) -> Match | None:
        """`best`'s wording read up to its own full stop where one ends its last value and text
        follows after a space (`Not supported on {device_kind}.` over `...on TPU v4. (while compiling
        step 3)`): a full match without the stop read that text into the value."""
        i = next(i for i in ids if self.index.wordings[i] is best.wording)
        pattern = self._stopped.get(i)
        if pattern is None:  # on the index's engine (RE2): the stop after a lazy value is linear there
            pattern = self._stopped[i] = engine().compile(best.wording["regex"][:-len(FINAL_STOP)] + r"\.+[ \t]")
        m = pattern.match(text)
        params = self.index.captured(i, m) if m else None
        if params is None:
            return None
        end = m.end() - 1  # the space after the stop is not the message's
        return Match(best.code, best.wording, params, line_no, text=text[:end], span=(0, end))

    def _best(self, ids: list[int], text: str, how: str, line_no: int) -> Match | None:
        """The wording of `ids` that matches `text` (`how`: fullmatch, at its start, at the line end, anywhere)
        with the most fixed text; its span is in characters of `text`."""
        index = self.index
        best: Match | None = None
        data = text.encode("utf-8", "replace")
        plain = not values.shows_number_forms(data)
        for i in ids:
            if how == "full":
                m = index.bytes_regex(i, plain=plain).fullmatch(data)
            elif how == "start":
                m = index.bytes_regex(i, plain=plain).match(data)
            else:
                m = index.bytes_regex(i, to_line_end=how == "end", plain=plain).search(data)
            if m is None:
                continue
            params = index.captured(i, m)
            if params is None:
                continue
            if ", ..." in text or ", \u2026" in text:
                params = cut_short(params, text)
            wording = index.wordings[i]
            if best is not None and wording["literal_chars"] == best.wording["literal_chars"] and apart(wording, best):
                best.ties.append(Match(wording["code"], wording, params, line_no, text=best.text, span=best.span))
            elif best is None or wording["literal_chars"] > best.wording["literal_chars"]:
                a, b = m.span()
                if how == "end":  # the regex takes trailing spaces too
                    b = a + len(data[a:b].rstrip())
                lo = len(data[:a].decode("utf-8", "replace")) if a else 0
                span = (lo, lo + len(data[a:b].decode("utf-8", "replace")))
                best = Match(wording["code"], wording, params, line_no, text=text[span[0]:span[1]], span=span)
        return best


def match_line(index, line: str, line_no: int = 0) -> Match | None:
    """The best wording of `index` found in one line (LineReader.match_line)."""
    return index.room(LineReader).match_line(line, line_no)


def match_note(index, line: str, line_no: int = 0) -> Match | None:
    """An entry named by the note line our exceptions print, or by a link to its page (with
    the values of its query string): weak, since no message was matched."""
    found = NOTE.search(line) if "] " in line else None
    link = DOCS_LINK.search(line) if "/errors/" in line else None
    code = (found or link).group("code") if (found or link) else None
    if code is None or code not in index.entries:
        return None
    params = {}
    if link is not None and link.group("code") == code and link.group("query"):
        types = {name: p["type"] for name, p in index.entries[code]["params"].items()}
        for pair in link.group("query").split("&"):
            name, _, raw = pair.partition("=")
            if name in types:
                try:
                    params[name] = values.parse(types[name], _unquote(raw))
                except (ValueError, OverflowError):
                    continue
    hit = found or link
    match = index.named(code, line[hit.start():hit.end()], line_no)
    match.params, match.span = params, hit.span()
    return match


def apart(wording: dict, best: Match) -> bool:
    """Whether a wording matching as much fixed text as the best so far is a tie to break by the
    context (errkit/explain/matching/around.py break_tie): another entry's, or the same text raised
    at another site (one entry's wordings of several kernels: the traceback's last frames tell
    which raised it)."""
    return wording["code"] != best.code or (
        wording["template"] == best.wording["template"] and raise_file(wording) != raise_file(best.wording))


def _remembered(hit: Match, header, line_no: int) -> Match:
    """The remembered answer `hit` to the message HEADER found (`header`), as a match of this line."""
    raw = header.group(MSG)
    at = header.start(MSG) + len(raw) - len(raw.lstrip())
    span = (at + hit.span[0], at + hit.span[1]) if hit.span else (at, at + len(raw.strip()))
    found = Match(hit.code, hit.wording, hit.params, line_no, text=hit.text, span=span)
    hit.key()
    found._keyed = hit._keyed
    found.ties = [Match(t.code, t.wording, t.params, line_no, text=t.text, span=span) for t in hit.ties]
    return found


def _alnum(c: str) -> bool:
    """An ASCII letter or digit (as match.js tests it)."""
    return c.isascii() and c.isalnum()


def _unquote(text: str) -> str:
    """%-escapes and '+' of a query string value (urllib.parse costs start-up time)."""
    text = text.replace("+", " ")
    if "%" not in text:
        return text
    head, *parts = text.split("%")
    raw = bytearray(head.encode("utf-8"))
    for part in parts:
        code = part[:2]
        if len(code) == 2 and all(c in "0123456789abcdefABCDEF" for c in code):
            raw.append(int(code, 16))
            raw += part[2:].encode("utf-8")
        else:
            raw += b"%" + part.encode("utf-8")
    return raw.decode("utf-8", "replace")


def cut_short(params: dict, text: str) -> dict:
    """`params` less each str value the text shows as the start of a list cut short (`float32, ...`)."""
    return {k: v for k, v in params.items() if not (isinstance(v, str) and v and (f"{v}, ..." in text or f"{v}, \u2026" in text))}

"""The strings of a JSON log line read without recursion: the matcher reads a JSON line's strings
with `json.loads` (errkit/explain/matching/text.py `json_strings`), whose decoder recurses once per level
of nesting; a line nested past the recursion limit (1,000 levels: one hostile line) raised
RecursionError and ended a whole triage. Such a line is read here instead, token by token with a
stack of the open containers: the same strings, in the same order, for any line json.loads reads
(tests/explain/test_untrusted_logs.py holds both to it), and [] for one that is not strict JSON."""

import json
import re

_SPACE = r"[ \t\n\r]*"  # JSON's whitespace (not Python's \s)
_TOKEN = re.compile(_SPACE + r'(?:("(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")'
                    r"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)|(true|false|null)|([{}\[\],:]))")
_END = re.compile(_SPACE + r"\Z")
DEPTH = 2  # containers a string may be in to be read: match._json_strings's walk (two levels deep)


def strings(line: str) -> list[str]:
    """The string values of a JSON object or array (those in at most DEPTH containers, keys not), in
    order; [] when the line is not strict JSON."""
    out: list[str] = []
    stack: list[str] = []  # "{" or "[" per open container
    want = "value"  # what comes next: "value", "key" (or "}" right after "{"), "colon", "next" ("," or the close)
    first = False  # right after an opening: its close may come at once
    pos = 0
    for m in _TOKEN.finditer(line):
        if m.start() != pos:
            return []
        pos = m.end()
        string, number, literal, mark = m.groups()
        if want == "key":
            if mark == "}" and first and stack and stack[-1] == "{":
                stack.pop()
                want, first = "next", False
            elif string is not None:
                want, first = "colon", False
            else:
                return []
        elif want == "colon":
            if mark != ":":
                return []
            want = "value"
        elif want == "value":
            if mark in ("{", "["):
                stack.append(mark)
                want, first = ("key" if mark == "{" else "value"), True
            elif mark == "]" and first and stack and stack[-1] == "[":
                stack.pop()
                want, first = "next", False
            elif string is not None or number is not None or literal is not None:
                if string is not None and len(stack) <= DEPTH:
                    out.append(json.loads(string))
                want, first = "next", False
            else:
                return []
        else:  # "next"
            if not stack:
                return []  # a second value after the document
            if mark == ",":
                want = "key" if stack[-1] == "{" else "value"
            elif mark == ("}" if stack[-1] == "{" else "]"):
                stack.pop()
            else:
                return []
        if want == "next" and not stack:
            break
    if want != "next" or stack or not _END.match(line, pos):
        return []
    return out

"""What a match holds: the entry and wording found, the values read, where, and what the text around
it told (the kernel that raised it, the context); and a match's copies for other lines (the
answers remembered by errkit/explain/matching/memory.py and line.py share their values)."""


class Match:
    """A wording found in a text. `params` may be shared with a remembered match: replaced, never
    changed in place (a new dict with the values added)."""

    __slots__ = ("code", "wording", "params", "line", "exact", "score", "text", "offset", "at", "span", "weak", "ties", "kernel",
                 "context", "undecided", "repaired", "_keyed")

    def __init__(self, code, wording, params, line, exact=True, score=1.0, text="", span=None, weak=False):
        self.code, self.wording, self.params, self.line = code, wording, params, line
        self.exact, self.score, self.text = exact, score, text
        self.offset = 0  # set by scan: where the match's line starts in the scanned block (bytes)
        self.at = 0  # set by scan_chunks: where it starts in the whole input (bytes)
        self.span = span  # where `text` is in the line that was matched (characters), when known
        self.weak = weak  # the entry was named (a note line, a docs link), no message matched
        self.ties: list[Match] = []  # other wordings that match the same text as well (line.py's apart)
        kernels = wording.get("kernels")
        # the kernel that raised it: its wording's only kernel; of several, the one the text around
        # it tells (errkit/explain/matching/around.py decide_kernel), else None
        self.kernel = kernels[0] if kernels and len(kernels) == 1 else None
        self.context = None  # what the text around it tells of where it was raised (around.py read_context), when asked
        # the kernels of its entry's wordings it tied with, when nothing told which raised it (around.py break_tie)
        self.undecided = ()
        self.repaired = None  # a misspelt message: its line put right, which matched (approximate.py misspelt)
        self._keyed = None  # (the params, the key made of them): matches of a remembered message share both

    def key(self):
        keyed = self._keyed
        if keyed is None or keyed[0] is not self.params:  # (params replaced: values read after it, merged)
            keyed = self._keyed = (self.params, (self.code, repr(sorted(self.params.items()))))
        return keyed[1]


def again(template: Match, line_no: int, ties: bool = False) -> Match:
    """A remembered match (errkit/explain/matching/memory.py; with its `ties`) as the match of
    another line: its values shared, not copied."""
    found = _new(Match)  # (every slot set here: most matches of a log are copies, made per line)
    found.code, found.wording, found.params, found.line = template.code, template.wording, template.params, line_no
    found.exact, found.score, found.text, found.span, found.weak = template.exact, template.score, template.text, template.span, template.weak
    found.offset = found.at = 0
    found.kernel, found.context, found.undecided, found._keyed = template.kernel, None, template.undecided, template._keyed
    found.repaired = template.repaired
    found.ties = [again(tie, line_no) for tie in template.ties] if ties and template.ties else []
    return found


_new = object.__new__

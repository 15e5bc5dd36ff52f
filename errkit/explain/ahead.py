"""Substring searches over one block of a log that remember what they found: the windows after
matches (errkit/explain/matching/around.py's read_on: the next traceback, kernel names) overlap when errors
come every few lines, and each window searched anew costs its 16 KB for every needle. A search
is answered from the last one for the same needle where that one covers it, and goes on from
where that one stopped where it does not: each byte of the windows is read once per needle.

The answers are data.find(needle, low, high)'s, exactly (tests/explain/test_ahead.py)."""


class Ahead:
    """`find(needle, low, high)` over `data`, with data.find's answer."""

    __slots__ = ("data", "_seen")

    def __init__(self, data: bytes):
        self.data = data
        self._seen: dict[bytes, tuple[int, int, int]] = {}  # needle -> (from, to, its first at in from:to, or -1)

    def find(self, needle: bytes, low: int, high: int) -> int:
        seen = self._seen.get(needle)
        begin = low
        if seen is not None and seen[0] <= low:
            _, until, at = seen
            if at >= low:  # the first occurrence from `low` on
                return at if at + len(needle) <= high else -1
            if at < 0:  # none wholly inside from:until
                if until >= high:
                    return -1
                begin = max(low, until - len(needle) + 1)  # one starting before this would end by `until`
        at = self.data.find(needle, begin, high)
        self._seen[needle] = (low, high, at)
        return at

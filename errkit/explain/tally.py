"""The distinct matches of a whole input (`errkit explain --all`), counted in memory that stays flat
however many distinct values a log holds: at most MAX_ANSWERS per code are kept, the ones seen
most recently (the answers are printed most recent first); a match let go is counted in `others`,
per code, and said after the answers (errkit/explain/command.py). Before issue 48 every distinct
match was kept: 2,000,000 log lines with distinct values grew `explain --all` past 6 GB."""

from collections import OrderedDict

MAX_ANSWERS = 100  # distinct answers kept per code


class Tally(dict):
    """key -> Found (errkit/explain/matching/chunks.py), at most `cap` keys per code: inserting one more lets
    the code's least recently seen key go, its count added to `others[code]`. `get` of a key
    makes it the most recently seen."""

    def __init__(self, cap: int | None = None):
        super().__init__()
        self.cap = MAX_ANSWERS if cap is None else cap
        self.order: dict[str, OrderedDict] = {}  # code -> its keys, least recently seen first
        self.others: dict[str, int] = {}  # code -> matches counted but let go

    def get(self, key, default=None):
        item = super().get(key)
        if item is None:
            return default
        self.order[item.match.code].move_to_end(key)
        return item

    def __setitem__(self, key, item) -> None:
        code = item.match.code
        order = self.order.get(code)
        if order is None:
            order = self.order[code] = OrderedDict()
        if key not in order and len(order) >= self.cap:
            oldest = next(iter(order))
            del order[oldest]
            gone = super().pop(oldest)
            self.others[code] = self.others.get(code, 0) + gone.count
        order.pop(key, None)
        order[key] = None
        super().__setitem__(key, item)

    def __delitem__(self, key) -> None:
        item = super().pop(key)
        del self.order[item.match.code][key]

"""What the text around a match tells of where its error was raised (issue 26, item 3): the
framework whose code raised it (PyTorch, JAX, or Triton alone), read from the traceback's frames,
module paths and exception names; and the raise site: a kernel the catalogue knows, an XLA fusion,
or a user's own pallas_call, read from kernel names and allocation dumps.

The fixes of an answer are filtered and ordered by it (errkit/explain/answer.py): a fix for a
kernel of another framework is left out, and a fix naming the site read comes first. Plain
substring tests, no regex: this runs on the explain path (start-up time). The marks are the index
format's (errkit/core/index_format.py), so the paste page's port (site_assets/match.js) reads the same.
"""

from errkit.core.index_format import FUSION_MARKS, JAX_MARKS, PALLAS_MARKS, PYTORCH_MARKS, TRITON_MARKS

MARKS = {"pytorch": PYTORCH_MARKS, "jax": JAX_MARKS}


def _last(text: str, marks: tuple) -> tuple[int, str]:
    """(the position of the last of `marks` in `text`, -1 if none; that mark). The marks sharing
    an anchor (`_anchored`) are looked for only where it is in the text: most texts hold none."""
    best, which = -1, ""
    for anchor, held in _anchored(marks):
        if anchor not in text:
            continue
        for mark in held:
            at = text.rfind(mark)
            if at > best:
                best, which = at, mark
    return best, which


_ANCHORED: dict[tuple, list[tuple[str, list[str]]]] = {}


def _anchored(marks: tuple) -> list[tuple[str, list[str]]]:
    """[(anchor, the marks holding it)]: each mark's first run of letters (the whole mark when it
    has none), an anchor holding another left out for that one (`jaxlib` for `jax`)."""
    found = _ANCHORED.get(marks)
    if found is None:
        firsts = {mark: _first_letters(mark) for mark in marks}
        anchors = {a for a in firsts.values() if not any(b != a and b in a for b in firsts.values())}
        found = _ANCHORED[marks] = [(a, [m for m in marks if a in m]) for a in sorted(anchors)]
    return found


def _first_letters(mark: str) -> str:
    start = next((i for i, c in enumerate(mark) if c.isalpha()), None)
    if start is None:
        return mark
    end = start
    while end < len(mark) and mark[end].isalpha():
        end += 1
    return mark[start:end]


def framework(before: str, line: str, after: str = "") -> tuple[str | None, str | None]:
    """(the framework the text shows, the mark it was read from), (None, None) when it shows none.

    `before`: the text above the match (its traceback), `line`: the match's line, `after`: the
    lines after it, up to the next traceback. When PyTorch's and JAX's marks both appear, the one
    nearest the match wins (a JAX program calling a PyTorch loader, or the reverse, has the raising
    framework's frames last); Triton's own marks count only when neither appears (a Triton kernel
    launched from Python, or Triton's compiler alone)."""
    text = before + "\n" + line + "\n" + after
    found = {name: _last(text, marks) for name, marks in MARKS.items()}
    shown = {name: hit for name, hit in found.items() if hit[0] >= 0}
    if len(shown) == 1:
        (name, (_, mark)), = shown.items()
        return name, mark
    if len(shown) > 1:
        cut = len(before) + 1 + len(line)  # marks after the match's line count as its own
        def nearness(item):
            at = item[1][0]
            return cut - at if at < cut else 0
        name, (_, mark) = min(shown.items(), key=nearness)
        return name, mark
    at, mark = _last(text, TRITON_MARKS)
    return ("triton", mark) if at >= 0 else (None, None)


def _first(text: str, marks: tuple) -> tuple[int, str]:
    """(the position of the first of `marks` in `text`, -1 if none; that mark)."""
    found = [(at, mark) for mark in marks if (at := text.find(mark)) >= 0]
    return min(found) if found else (-1, "")


def site(told: str | None, line: str, after: str) -> tuple[str | None, str | None]:
    """(the raise site, what it was read from): "kernel" when the catalogue's kernel that raised it
    is told; else "pallas-call" when the message or its allocation dump names a kernel's custom
    call (a pallas_call of no kernel the catalogue knows), "xla-fusion" when it names one of XLA's
    own operations (a fusion, a reduce-window), whichever comes first: the message's own
    instruction is named before the listing of the others."""
    if told:
        return "kernel", told
    text = line + "\n" + after
    kernel_at, kernel_mark = _first(text, PALLAS_MARKS)
    xla_at, xla_mark = _first(text, FUSION_MARKS)
    if kernel_at >= 0 and (xla_at < 0 or kernel_at <= xla_at or _same_instruction(text, xla_at, kernel_at)):
        return "pallas-call", kernel_mark
    if xla_at >= 0:
        return "xla-fusion", xla_mark
    return None, None


def _same_instruction(text: str, xla_at: int, kernel_at: int) -> bool:
    """Whether the custom call at `kernel_at` is the instruction the allocation at `xla_at` names
    (`allocating on stack for %name = ... custom-call(...)`, on one line)."""
    return "\n" not in text[xla_at:kernel_at]


def ordered(fixes: list[dict], kernels: dict, shown_framework: str | None, shown_site: str | None) -> list[dict]:
    """`fixes` for the context read: a fix for a kernel of another framework left out (a JAX kernel's
    BlockSizes never helps a PyTorch user), and a kernel's fix when the site is one of XLA's own
    operations; then the fixes for this framework's kernels and those
    naming the site read first, the rest in the catalogue's order. `kernels`: the index's records
    (a kernel without `framework` is JAX's)."""
    def fix_framework(fix):
        kernel = fix.get("kernel")
        return ((kernels.get(kernel) or {}).get("framework") or "jax") if kernel else None

    if shown_framework:
        fixes = [f for f in fixes if fix_framework(f) in (None, shown_framework)]
    if shown_site == "xla-fusion":  # one of XLA's own operations: no kernel's fix applies
        fixes = [f for f in fixes if not f.get("kernel")]

    def rank(item):
        n, fix = item
        first = (shown_framework and fix.get("kernel") and fix_framework(fix) == shown_framework
                 and shown_framework != "jax") or (shown_site and fix.get("site") == shown_site)
        return (0 if first else 1, bool(fix.get("alternative")), n)

    return [fix for _, fix in sorted(enumerate(fixes), key=rank)]

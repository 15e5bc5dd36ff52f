"""One explained error, shown where it happens: under a traceback in a terminal, in a notebook, in
a pytest report. One function, `for_exception`, serves every hook (errkit/integrations/): the
exception's text is explained as `errkit explain` explains a paste, and only a confident answer is
shown.

Nothing here is imported until an exception is being explained.
"""

import traceback

from errkit.explain.answer import result
from errkit.explain.matching.chunks import explain_chunks
from errkit.explain.reading import line_chunks
from errkit.explain.render import render

CONFIDENT = ("exact", "lookup")


def exception_text(exc: BaseException) -> str:
    """What a terminal shows for `exc`: its traceback, chained exceptions and notes included."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def explain_text(text: str, index=None) -> dict | None:
    """`errkit explain`'s first answer for `text`, when it is a confident one (an exact match or
    a code named); None otherwise: a hook never shows a guess under someone's traceback."""
    if index is None:
        index = load_index()
    found, _, _ = explain_chunks(index, line_chunks([text.encode("utf-8", "backslashreplace")]))
    if not found:
        return None
    res = result(index, found[0].match)  # one exception: its message and its note are one error
    return res if res["confidence"] in CONFIDENT else None


def load_index():
    """The catalogues `errkit explain` reads (this project's, the registered ones, the bundled one)."""
    from errkit.explain.registry import load

    return load(warn=lambda line: None)  # a clash is `errkit list`'s news, not this traceback's


def for_exception(exc: BaseException, fmt: str = "text") -> str | None:
    """The explanation of `exc` in `fmt`, None when errkit does not recognise it. Never raises: a
    failure in here becomes one line saying so (the user's own error matters more)."""
    try:
        res = explain_text(exception_text(exc))
        return render(res, fmt) if res else None
    except Exception as err:  # noqa: BLE001 - a hook must never raise over the user's error
        return f"errkit: could not explain this error ({type(err).__name__}: {err})"


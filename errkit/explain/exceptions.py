"""One explained error, shown where it happens: under a traceback in a terminal, in a notebook, in
a pytest report, in a bug report. One function, `for_exception`, serves every hook; the text form
is `errkit explain`'s own, HTML and markdown carry the same facts.

Nothing here is imported until an exception is being explained.
"""

from __future__ import annotations

import html
import traceback

FORMATS = ("text", "ansi", "html", "markdown")
CONFIDENT = ("exact", "lookup")


def exception_text(exc: BaseException) -> str:
    """What a terminal shows for `exc`: its traceback, chained exceptions and notes included."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def explain_text(text: str, index=None) -> dict | None:
    """`errkit explain`'s first answer for `text`, when it is a confident one (an exact match or
    a code named); None otherwise: a hook never shows a guess under someone's traceback."""
    from errkit.explain.command import explain_chunks, line_chunks, result

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


def docs_link(res: dict) -> str:
    """The entry's page with the values as a query string (`.../RA105/?num_q_heads=12&...`): the
    page computes the fixes for them."""
    from errkit.core.runtime import query_string

    query = query_string(res.get("params") or {})
    return res["docs_url"] + ("?" + query if query else "")


def _plain(value) -> str:
    from errkit.core.runtime import shown

    return shown(value)


def first_suggestion(res: dict) -> str | None:
    """The first concrete value a fix computes (`valid num_kv_heads: 1, 2, 3, 4, 6, 12`)."""
    from errkit.explain.command import _show

    for fix in res["fixes"]:
        for s in fix["suggestions"]:
            if "value" in s and s["value"] not in (None, []):
                return f"{s['label']}: {_show(s['value'])}"
    return None


# -- the formats ----------------------------------------------------------------------------------


def as_text(res: dict, colour: bool = False) -> str:
    from errkit.explain.command import Style, format_result

    style = Style.__new__(Style)
    style.on = colour
    return format_result({**res, "docs_url": docs_link(res)}, style)


def as_html(res: dict) -> str:
    e = html.escape
    rows = [f"<div class=\"errkit-answer\"><p><strong>{e(res['code'])}</strong> {e(res['title'])}</p>", "<ul>"]
    if res["params"]:
        values = ", ".join(f"<code>{e(k)}={e(_plain(v))}</code>" for k, v in res["params"].items())
        rows.append(f"<li>values: {values}</li>")
    for n, fix in enumerate(res["fixes"], 1):
        found = [s for s in fix["suggestions"] if "value" in s and s["value"] not in (None, [])]
        computed = "".join(f"<br><code>{e(s['label'])}: {e(_plain(s['value']))}</code>" for s in found)
        kind = "alternative" if fix.get("alternative") else "fix"
        rows.append(f"<li>{kind} {n}: {e(fix['summary'])}{computed}</li>")
    link = e(docs_link(res), quote=True)
    rows.append(f"</ul><p><a href=\"{link}\" target=\"_blank\" rel=\"noopener\">{link}</a></p></div>")
    return "\n".join(rows)


def as_markdown(res: dict) -> str:
    """A snippet for a bug report: the message, the code, the values, the fixes, the link."""
    fence = "```"
    message = res["matched"].get("text") or res["matched"]["wording"]
    while fence in message:
        fence += "`"
    lines = [f"**{res['code']}: {res['title']}** (errkit)", "", fence + "text", message.strip(), fence, ""]
    if res["params"]:
        lines.append("- values: " + ", ".join(f"`{k}={_plain(v)}`" for k, v in res["params"].items()))
    for n, fix in enumerate(res["fixes"], 1):
        found = [s for s in fix["suggestions"] if "value" in s and s["value"] not in (None, [])]
        kind = "alternative" if fix.get("alternative") else "fix"
        lines.append(f"- {kind} {n}: {fix['summary']}")
        lines += [f"  - {s['label']}: `{_plain(s['value'])}`" for s in found]
    lines.append(f"- docs: <{docs_link(res)}>")
    return "\n".join(lines)


def render(res: dict, fmt: str) -> str:
    if fmt == "html":
        return as_html(res)
    if fmt == "markdown":
        return as_markdown(res)
    return as_text(res, colour=fmt == "ansi")


def for_exception(exc: BaseException, fmt: str = "text") -> str | None:
    """The explanation of `exc` in `fmt`, None when errkit does not recognise it. Never raises: a
    failure in here becomes one line saying so (the user's own error matters more)."""
    try:
        res = explain_text(exception_text(exc))
        return render(res, fmt) if res else None
    except Exception as err:  # noqa: BLE001 - a hook must never raise over the user's error
        return f"errkit: could not explain this error ({type(err).__name__}: {err})"

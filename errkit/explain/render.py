"""An answer (errkit/explain/answer.py) as people read it: the terminal's text, with ANSI colour
when it is a terminal; HTML for notebooks; markdown for bug reports; JSON for tools; and an entry
in full, as `errkit show` prints it."""

import os

from errkit.core.escape import terminal as t
from errkit.core import runtime
from errkit.core.runtime import shown, valued
from errkit.core.titles import in_sentence
from errkit.explain.answer import docs_link

COLOURS = ("auto", "always", "never")


def colour_wanted(stream, mode: str = "auto") -> bool:
    """Whether to write ANSI colour to `stream`: `--color always|never` as asked; `auto` (the
    default) when the stream is a terminal, unless the environment says otherwise: NO_COLOR set
    and not empty turns it off (https://no-color.org), else FORCE_COLOR set and not empty turns it
    on for any stream (https://force-color.org), as CPython reads the two."""
    if mode != "auto":
        return mode == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


def width_of(stream) -> int:
    """The columns to wrap text for: the terminal's when `stream` is one, else $COLUMNS, else 100."""
    try:
        if stream.isatty():
            return max(40, os.get_terminal_size(stream.fileno()).columns)
    except (AttributeError, OSError, ValueError):
        pass
    try:
        return max(40, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return 100


class Style:
    def __init__(self, stream, mode: str = "auto", verbose: bool = False):
        self.on = colour_wanted(stream, mode)
        self.width = width_of(stream)
        self.verbose = verbose

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.on else text

    def bold(self, text):
        return self._wrap("1", text)

    def dim(self, text):
        return self._wrap("2", text)

    def green(self, text):
        return self._wrap("32", text)

    def yellow(self, text):
        return self._wrap("33", text)


MEANS_LINES = 3  # lines of the explanation shown after the fixes, without --verbose


def wrapped(text: str, width: int, indent: str, limit: int | None = None) -> list[str]:
    """`text` (one paragraph) in lines of `width` columns at most, broken at spaces (a longer word
    has a line of its own), each line after the first behind `indent`; with `limit`, its first
    `limit` lines only (a line does not depend on the words after it). (textwrap imports re: not
    on explain's start-up path.)"""
    room = max(20, width - len(indent))
    rest = " ".join(text.split())  # (the words, one space between: a line is cut at a space)
    lines: list[str] = []
    while len(rest) > room and (limit is None or len(lines) < limit):
        cut = rest.rfind(" ", 0, room + 1)  # the most words that fit
        if cut < 0:  # a word longer than the room: a line of its own
            cut = rest.find(" ")
            if cut < 0:
                break
        lines.append(rest[:cut])
        rest = rest[cut + 1:]
    if limit is None or len(lines) < limit:
        lines.append(rest)
    return [lines[0]] + [indent + line for line in lines[1:]]


_MEANS: dict[tuple, list[str]] = {}  # (explanation, colour, width, verbose) -> its lines: a log's answers of one entry share them
MAX_MEANS = 512


def means(explanation: str, style) -> list[str]:
    """The explanation as the terminal shows it, behind its label's indent and wrapped to the
    terminal: its first paragraph in MEANS_LINES lines at most (cut at a sentence's end when one
    fits, else at a word, with `...`) and where to read the rest; every paragraph with
    --verbose."""
    if type(style) is not Style:
        return _means(explanation, style)
    key = (explanation, style.on, style.width, style.verbose)
    lines = _MEANS.get(key)
    if lines is None:
        if len(_MEANS) >= MAX_MEANS:
            _MEANS.clear()
        lines = _MEANS[key] = _means(explanation, style)
    return list(lines)


def _means(explanation: str, style) -> list[str]:
    indent = " " * 11
    paragraphs = [" ".join(p.split()) for p in explanation.strip().split("\n\n") if p.strip()]
    if not paragraphs:
        return [""]
    if style.verbose:
        out = []
        for n, para in enumerate(paragraphs):
            out += ([""] if n else []) + wrapped(t(para), style.width, indent)
        return out
    lines = wrapped(t(paragraphs[0]), style.width, indent, limit=MEANS_LINES + 1)
    if len(lines) > MEANS_LINES:
        kept = " ".join(line.strip() for line in lines[:MEANS_LINES])
        end = kept.rfind(". ")
        kept = kept[:end + 1] if end > len(kept) // 3 else kept.rsplit(" ", 1)[0] + " ..."
        lines = wrapped(kept, style.width, indent)
    elif len(paragraphs) == 1:
        return lines
    return lines + [indent + style.dim("(--verbose: the whole explanation)")]


def format_result(res: dict, style: Style) -> str:
    """An answer for the terminal: every text from the input or a catalogue through `t`
    (errkit/core/escape.py: its control characters shown, never sent)."""
    label = lambda s: style.dim(f"  {s:<9}")  # noqa: E731
    head = f"{style.bold(t(res['code']))}  {style.bold(t(res['title']))}"
    if res["confidence"] == "approximate":
        head += "  " + style.yellow(f"[approximate match, similarity {res['score']:.2f}]")
    elif res["count"] > 1:
        head += style.dim(f"  (x{res['count']}, last at line {res['line']})")
    lines = [head]
    matched = res["matched"]
    lines.append(label("wording") + t(matched["wording"]))
    # the life ("raised since jax X; no longer raised since jax Y") says what the range does
    said = [line.strip() for line in wrapped(t(raised_by(matched)), getattr(style, "width", 100), " " * 11)]
    lines.append(label("") + ("\n" + " " * 11).join(style.dim(line) for line in said))
    if res["confidence"] == "approximate":
        lines.append(label("you have") + t(matched["text"][:200]))
    if res["params"]:
        lines.append(label("values") + ", ".join(f"{t(k)}={t(shown(v))}" for k, v in res["params"].items()))
    if context_said(res):
        lines.append(label("context") + t(context_said(res)))
    for n, fix in enumerate(res["fixes"], 1):
        aside = style.dim("alternative, outside this library: ") if fix.get("alternative") else ""
        if fix.get("kernel") and not matched.get("kernel"):
            aside += style.dim(f"for {t(in_sentence(fix['kernel']['title']))}: ")
        lines.append(label(f"fix {n}") + aside + "\n".join(wrapped(t(fix["summary"]), getattr(style, "width", 100), " " * 11)))
        if fix.get("unverified"):
            lines.append(label("") + "  " + style.dim(f"(unverified: {t(fix['unverified'])})"))
        among = kernels_said(fix, matched)
        if among:
            lines.append(label("") + "  " + style.dim(f"(valid whichever raised it: {t(among)}; each one's own below)"))
        for s in fix["suggestions"]:
            said = t(s["label"])
            if "value" in s and s["value"] in (None, []):
                lines.append(label("") + "  " + style.yellow(f"{said}: {t(none_said(s['label']))}"))
            elif "value" in s:
                lines.append(label("") + "  " + style.green(f"{t(valued(s['label']))}: {t(shown(s['value']))}"))
            elif "not_computed" in s:
                lines.append(label("") + "  " + style.yellow(f"{said}: not computed: {t(s['not_computed'])}"))
            elif s.get("cases"):  # the message lacks a value it uses: only its cases are computed
                lines.append(label("") + "  " + f"{said}: depends on what the message does not show:")
            elif s.get("missing"):
                lines.append(label("") + "  " + style.dim(f"{said}: needs {t(', '.join(s['missing']))}, which the message "
                                                          "does not show (the docs link computes it from yours)"))
            lines += [label("") + "    " + t(case) for case in case_values(s)]
            if len(s.get("requires") or ()) == 1:
                lines.append(label("") + "    " + style.dim("not checked, the message does not show what it reads: "
                                                          + t(s["requires"][0])))
            elif s.get("requires"):
                lines.append(label("") + "    " + style.dim("not checked, the message does not show what they read:"))
                lines += [label("") + "      " + style.dim("- " + t(said)) for said in s["requires"]]
    for record in res.get("verified") or ():
        lines.append(label("verified") + style.dim(t(record["said"].removeprefix("verified "))))
    # after the fixes: what to do first, then why (shortened; --verbose: all of it)
    lines.append(label("means") + "\n".join(means(res["explanation"], style)))
    lines.append(label("docs") + t(res["docs_url"]))
    if res.get("catalogue"):
        lines.append(label("catalogue") + " " + t(res["catalogue"]))
    return "\n".join(lines)


def format_entry(code: str, entry: dict, style: Style, catalogue: str = "") -> str:
    """An entry in full for the terminal (`errkit show`), its texts through `t` line by line."""
    lines = [f"{style.bold(t(code))}  {style.bold(t(entry['title']))}  {style.dim(t(entry['slug']))}"]
    lines.append(style.dim(f"  {t(entry['exception'])}: ") + t(entry["message"]))
    lines.append("")
    lines.extend("  " + t(l) for l in entry["explanation"].strip().splitlines())
    for n, fix in enumerate(entry["fixes"], 1):
        lines.append("")
        scope = f"for {t(fix['kernel'])}: " if fix.get("kernel") else ""
        lines.append(f"  {'alternative' if fix.get('alternative') else 'fix'} {n}: {scope}{t(fix['summary'])}")
        for lbl, source in fix["suggest"].items():
            lines.append(style.dim(f"    {t(lbl)}: computed as {t(source)}"))
            lines += [style.dim(f"      {t(case['when'])}: {t(case['suggest'][lbl])}") for case in fix.get("cases") or ()
                      if lbl in case["suggest"]]
    lines.append("")
    lines.append("  docs: " + t(entry["docs_url"]))
    if catalogue:
        lines.append("  catalogue: " + t(catalogue))
    return "\n".join(lines)


def kernels_said(fix: dict, matched: dict) -> str:
    """The kernels whose rules a fix's values satisfy when which of them raised the error is not
    told (errkit/core/suggest.py), as their titles; "" when one is told or the values are the same."""
    titles = {k["id"]: k["title"] for k in matched.get("kernels") or ()}
    for s in fix["suggestions"]:
        if len(s.get("kernels") or ()) > 1 and s.get("cases"):
            return ", ".join(titles.get(k, k) for k in s["kernels"])
    return ""


def none_said(label: str) -> str:
    """What an empty suggestion says: "none" when its label says what none means ("(none: pad the
    keys)", "(none: block_kv is valid)"), else that no value satisfies every constraint."""
    return "none" if "none:" in label else "none satisfies every constraint"


def case_values(suggestion: dict) -> list[str]:
    """A suggestion's values in the cases the message cannot show: `with segment_ids, under jax.grad: 256`.
    Cases with the same value are one line (`A; B: 256`), and the most common value, when it is that
    of most cases and at least MANY, comes last as `in the other N cases: ...`."""
    out, groups = [], runtime.case_groups(suggestion.get("cases") or ())
    for whens, case, other in groups:
        if "not_computed" in case:
            said = f"not computed: {case['not_computed']}"
        elif case["value"] in (None, []):
            said = none_said(suggestion["label"])
        else:
            said = shown(case["value"])
        out.append(f"in the other {len(whens)} cases: {said}" if other else f"{'; '.join(whens)}: {said}")
    return out


def raised_by(matched: dict) -> str:
    """`ValueError raised by ..., raised since jax 0.4.36`: the wording's source and its life (or range)."""
    said = f"{matched['exception']} raised by {matched['source']}"
    if matched.get("life"):
        return said + f", {matched['life']['text']}"
    return said + (f", {matched['releases']}" if matched.get("releases") else "")


FRAMEWORK_NAMES = {"pytorch": "PyTorch", "jax": "JAX", "triton": "Triton (no PyTorch or JAX frame shown)"}
SITE_NAMES = {"xla-fusion": "one of XLA's own operations", "pallas-call": "a kernel's custom call (your own pallas_call?)"}


def context_said(res: dict) -> str:
    """What explain read of where the error was raised, in words, with what it read it from ("" if
    nothing): `PyTorch (read from "torch._inductor"); one of XLA's own operations (...)`."""
    context = res.get("context") or {}
    said = []
    if context.get("framework"):
        said.append(f"{FRAMEWORK_NAMES[context['framework']]} (read from \"{context['framework_from']}\")")
    if context.get("site") in SITE_NAMES:
        said.append(f"{SITE_NAMES[context['site']]} (read from \"{context['site_from']}\")")
    return "; ".join(said)


def to_json(res: dict) -> str:
    import json  # --json only: json imports re (start-up time)

    return json.dumps(res, ensure_ascii=False)




def first_suggestion(res: dict) -> str | None:
    """The first concrete value a fix computes (`valid num_kv_heads: 1, 2, 3, 4, 6, 12`)."""
    for fix in res["fixes"]:
        for s in fix["suggestions"]:
            if "value" in s and s["value"] not in (None, []):
                return f"{valued(s['label'])}: {shown(s['value'])}"
    return None


def as_text(res: dict, colour: bool = False, width: int = 100, verbose: bool = False) -> str:
    style = Style.__new__(Style)
    style.on, style.width, style.verbose = colour, width, verbose
    return format_result({**res, "docs_url": docs_link(res)}, style)


def as_html(res: dict) -> str:
    """An answer for a notebook: every text escaped (errkit/core/escape.py), the link only when it
    is an http(s) address."""
    from errkit.core.escape import html as e, link

    rows = [f"<div class=\"errkit-answer\"><p><strong>{e(res['code'])}</strong> {e(res['title'])}</p>", "<ul>"]
    if res["params"]:
        values = ", ".join(f"<code>{e(k)}={e(shown(v))}</code>" for k, v in res["params"].items())
        rows.append(f"<li>values: {values}</li>")
    rows.append(f"<li>{e(raised_by(res['matched']))}</li>")
    for n, fix in enumerate(res["fixes"], 1):
        found = [s for s in fix["suggestions"] if "value" in s and s["value"] not in (None, [])]
        computed = "".join(f"<br><code>{e(valued(s['label']))}: {e(shown(s['value']))}</code>" for s in found)
        computed += "".join(f"<br>{e(s['label'])}: not computed: {e(s['not_computed'])}" for s in fix["suggestions"]
                            if "not_computed" in s)
        computed += "".join(f"<br>&nbsp;&nbsp;{e(said)}" for s in fix["suggestions"] for said in case_values(s))
        kind = "alternative" if fix.get("alternative") else "fix"
        rows.append(f"<li>{kind} {n}: {e(fix['summary'])}{computed}</li>")
    target = link(docs_link(res))
    if target is None:
        rows.append(f"</ul><p>{e(docs_link(res))}</p></div>")
    else:
        rows.append(f"</ul><p><a href=\"{e(target)}\" target=\"_blank\" rel=\"noopener\">{e(docs_link(res))}</a></p></div>")
    return "\n".join(rows)


def as_markdown(res: dict) -> str:
    """A snippet for a bug report: the message, the code, the values, the fixes, the link; every
    text escaped for markdown (errkit/core/escape.py), values in code spans, the message in a
    fence longer than any backtick run it holds, the link only when it is an http(s) address."""
    from errkit.core.escape import link, markdown, markdown_code as code, terminal

    md = lambda text: markdown(text, code_spans=True)  # noqa: E731 - catalogue prose keeps its `code spans`
    fence = "```"
    message = "\n".join(terminal(line) for line in (res["matched"].get("text") or res["matched"]["wording"]).split("\n"))
    while fence in message:
        fence += "`"
    lines = [f"**{md(res['code'])}: {md(res['title'])}** (errkit)", "", fence + "text", message.strip(), fence, ""]
    lines.append("- " + md(raised_by(res["matched"])))
    if res["params"]:
        lines.append("- values: " + ", ".join(code(f"{k}={shown(v)}") for k, v in res["params"].items()))
    if context_said(res):
        lines.append("- raised in: " + md(context_said(res)))
    for n, fix in enumerate(res["fixes"], 1):
        found = [s for s in fix["suggestions"] if "value" in s and s["value"] not in (None, [])]
        kind = "alternative" if fix.get("alternative") else "fix"
        lines.append(f"- {kind} {n}: {md(fix['summary'])}")
        lines += [f"  - {md(valued(s['label']))}: {code(shown(s['value']))}" for s in found]
        lines += [f"  - {md(s['label'])}: not computed: {md(s['not_computed'])}" for s in fix["suggestions"] if "not_computed" in s]
        for s in fix["suggestions"]:
            if "needs" in s and s.get("cases"):
                lines.append(f"  - {md(s['label'])}: depends on what the message does not show:")
            lines += [f"    - {md(said)}" for said in case_values(s)]
    target = link(docs_link(res))
    lines.append(f"- docs: <{target}>" if target else f"- docs: {md(docs_link(res))}")
    return "\n".join(lines)


def render(res: dict, fmt: str) -> str:
    if fmt == "html":
        return as_html(res)
    if fmt == "markdown":
        return as_markdown(res)
    return as_text(res, colour=fmt == "ansi")


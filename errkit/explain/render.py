"""An answer (errkit/explain/answer.py) as people read it: the terminal's text, with ANSI colour
when it is a terminal; HTML for notebooks; markdown for bug reports; JSON for tools; and an entry
in full, as `errkit show` prints it."""

import os

from errkit.core.escape import terminal as t
from errkit.core.runtime import shown
from errkit.core.titles import in_sentence
from errkit.explain.answer import docs_link

class Style:
    def __init__(self, stream):
        # https://no-color.org: a NO_COLOR that is set and not empty turns colour off
        self.on = bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")

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


def _first_paragraph(text: str) -> str:
    para = text.strip().split("\n\n", 1)[0]
    return " ".join(para.split())


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
    lines.append(label("") + style.dim(t(raised_by(matched))))
    if res["confidence"] == "approximate":
        lines.append(label("you have") + t(matched["text"][:200]))
    if res["params"]:
        lines.append(label("values") + ", ".join(f"{t(k)}={t(shown(v))}" for k, v in res["params"].items()))
    if context_said(res):
        lines.append(label("context") + t(context_said(res)))
    lines.append(label("means") + t(_first_paragraph(res["explanation"])))
    for n, fix in enumerate(res["fixes"], 1):
        aside = style.dim("alternative, outside this library: ") if fix.get("alternative") else ""
        if fix.get("kernel") and not matched.get("kernel"):
            aside += style.dim(f"for {t(in_sentence(fix['kernel']['title']))}: ")
        lines.append(label(f"fix {n}") + aside + t(fix["summary"]))
        if fix.get("unverified"):
            lines.append(label("") + "  " + style.dim(f"(unverified: {t(fix['unverified'])})"))
        for s in fix["suggestions"]:
            said = t(s["label"])
            if "value" in s and s["value"] in (None, []):
                lines.append(label("") + "  " + style.yellow(f"{said}: {t(none_said(s['label']))}"))
            elif "value" in s:
                lines.append(label("") + "  " + style.green(f"{said}: {t(shown(s['value']))}"))
            elif "not_computed" in s:
                lines.append(label("") + "  " + style.yellow(f"{said}: not computed: {t(s['not_computed'])}"))
            elif s.get("cases"):  # the message lacks a value it uses: only its cases are computed
                lines.append(label("") + "  " + f"{said}: depends on what the message does not show:")
            elif s.get("missing"):
                lines.append(label("") + "  " + style.dim(f"{said}: needs {t(', '.join(s['missing']))}, which the message "
                                                          "does not show (the docs link computes it from yours)"))
            lines += [label("") + "    " + t(case) for case in case_values(s)]
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


def none_said(label: str) -> str:
    """What an empty suggestion says: "none" when its label says what none means ("(none: pad the
    keys)", "(none: block_kv is valid)"), else that no value satisfies every constraint."""
    return "none" if "none:" in label else "none satisfies every constraint"


def case_values(suggestion: dict) -> list[str]:
    """A suggestion's values in the cases the message cannot show: `with segment_ids, under jax.grad: 256`."""
    out = []
    for case in suggestion.get("cases") or ():
        if "not_computed" in case:
            out.append(f"{case['when']}: not computed: {case['not_computed']}")
        elif case["value"] in (None, []):
            out.append(f"{case['when']}: {none_said(suggestion['label'])}")
        else:
            out.append(f"{case['when']}: {shown(case['value'])}")
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
                return f"{s['label']}: {shown(s['value'])}"
    return None


def as_text(res: dict, colour: bool = False) -> str:
    style = Style.__new__(Style)
    style.on = colour
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
        computed = "".join(f"<br><code>{e(s['label'])}: {e(shown(s['value']))}</code>" for s in found)
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
        lines += [f"  - {md(s['label'])}: {code(shown(s['value']))}" for s in found]
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


"""Every writer escapes for its medium (errkit/core/escape.py), whatever a log, a paste or an installed
catalogue holds: each writer is fed answers and reports whose every text field (values, hosts, file
names, messages, titles, codes, labels, links) carries payloads, and what it writes is read as its
reader would: the terminal's output for control characters and line breaks, markdown rendered to
HTML by a CommonMark renderer that lets HTML through (the worst case: GitHub strips some of it,
others do not), HTML parsed; then both rendered in Debian's chromium, where no script may run.

Before issue 48: `--format markdown` copied values and host names raw (live `<img onerror>`,
`<svg onload>`, `<script>`, a `javascript:` link), terminal output passed a log value's OSC and
CSI sequences, and a catalogue title with a newline printed fake answer lines."""

import html.parser
import json
import re

import pytest

from errkit.explain import chart, report, triage
from errkit.explain.matcher import Matcher
from errkit.explain.render import Style, as_html, as_markdown, format_entry, format_result

PAYLOAD = ("<script>window.pwned='script'</script><img src=x onerror=\"window.pwned='img'\">"
           "<svg onload=\"window.pwned='svg'\"></svg>[click](javascript:window.pwned='link') "
           "<a href=\"javascript:window.pwned='a'\">a</a> `tick` | cell ** _x_ \x1b]0;owned\x07\x1b]52;c;ZWNobw==\x07"
           "\x1b[2J\x9b31m\u202e\r\nRA999  a fake answer line\n- fake item\n# fake heading")
JS_URL = "javascript:window.pwned='docs'"
# fields that say how an answer is shaped, not what it says: kept
STRUCTURAL = {"confidence", "count", "line", "score", "exact", "value", "values", "seen", "distinct", "more", "varied",
              "totals", "lines", "bytes", "matches", "report", "life", "since", "until", "alternative"}

RA105 = "ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8"
RA710 = "ValueError: q_block_size=128 should divide q_seq_len=200."


def hostile(value, key=None):
    """`value` with PAYLOAD in every text it holds (dict keys of values and hosts too), links `javascript:`."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in ("docs_url", "url"):
                out[k] = JS_URL
            elif k in STRUCTURAL:
                out[k] = v
            elif k in ("params", "hosts", "files") and isinstance(v, dict):
                out[k] = {PAYLOAD + str(name): hostile(item, k) for name, item in v.items()}
                out[k].update(v)
            else:
                out[k] = hostile(v, k)
        return out
    if isinstance(value, list):
        return [hostile(v, key) for v in value]
    if isinstance(value, str):
        return PAYLOAD + value
    return value


@pytest.fixture(scope="module")
def answers() -> list[dict]:
    matcher = Matcher()
    found = [*matcher.explain_text(RA105), *matcher.explain_text(RA710)]
    assert {a["code"] for a in found} == {"RA105", "RA710"}
    out = [hostile(a) for a in found]
    for a in out:
        a["params"][PAYLOAD] = PAYLOAD  # a value of a log
        a["context"] = {"framework": "jax", "framework_from": PAYLOAD, "site": "pallas-call", "site_from": PAYLOAD}
    return out


@pytest.fixture(scope="module")
def doc() -> dict:
    matcher = Matcher()
    log = f"2026-01-02 03:04:05 host={PAYLOAD.split()[0]} {RA105}\n{RA710}\n".encode()
    summary = triage.triage(matcher.index, [log], f"logs/{PAYLOAD}.log")
    found = report.report(matcher.index, [summary, triage.skipped(f"{PAYLOAD}.bin", f"{PAYLOAD} looks binary")])
    assert found["errors"]
    return hostile(found)


# -- the terminal -----------------------------------------------------------------------------------


def _terminal_safe(text: str, lines: int) -> None:
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text), repr(text[:300])
    assert "RA999" not in "\n".join(line for line in text.splitlines() if line.startswith("RA999")), "a fake line"
    assert text.count("\n") == lines, "a field's newline made a line of its own"


def test_the_terminal_answer_shows_control_characters(answers):
    style = Style(None)
    style.width = 10**6  # no wrapping: each field's lines are counted against the answer without the payload
    for a in answers:
        plain = format_result(json.loads(json.dumps(a).replace(json.dumps(PAYLOAD)[1:-1], "")), style)
        shown = format_result(a, style)
        _terminal_safe(shown, plain.count("\n"))
        assert "\\x1b]0;owned\\x07" in shown and "\\n" in shown, "shown visibly, not dropped"


def test_the_terminal_entry_and_report_show_control_characters(answers, doc):
    entry = {"title": PAYLOAD, "slug": PAYLOAD, "exception": PAYLOAD, "message": PAYLOAD, "explanation": "line one\nline two",
             "fixes": [{"summary": PAYLOAD, "kernel": PAYLOAD, "suggest": {PAYLOAD: PAYLOAD},
                        "cases": [{"when": PAYLOAD, "suggest": {PAYLOAD: PAYLOAD}}]}], "docs_url": PAYLOAD}
    plain = format_entry("", json.loads(json.dumps(entry).replace(json.dumps(PAYLOAD)[1:-1], "x")), Style(None), "x")
    _terminal_safe(format_entry(PAYLOAD, entry, Style(None), PAYLOAD), plain.count("\n"))
    text = report.as_text(doc)
    plain = report.as_text(json.loads(json.dumps(doc).replace(json.dumps(PAYLOAD)[1:-1], "")))
    _terminal_safe(text, plain.count("\n"))


# -- markdown and HTML, as a renderer and a browser read them ----------------------------------------


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


SAFE_TAGS = {"p", "strong", "em", "code", "pre", "ul", "li", "a", "br", "h2", "table", "thead", "tbody", "tr", "th",
             "td", "div", "h1", "title", "meta", "html", "head", "body", "style", "span", "svg"}


def _assert_inert(page: str, allowed=SAFE_TAGS) -> None:
    parser = _Tags()
    parser.feed(page)
    for tag, attrs in parser.tags:
        assert tag in allowed, (tag, attrs)
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        assert not str(attrs.get("href", "")).lower().startswith(("javascript:", "data:")), (tag, attrs)


def _rendered(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough").render(markdown)


def _outputs(answers, doc) -> dict[str, str]:
    """Each writer's output for the hostile answers and report, as HTML."""
    pages = {f"answer {a['code']} markdown": _rendered(as_markdown(a)) for a in answers}
    pages.update({f"answer {a['code']} html": as_html(a) for a in answers})
    pages["report markdown"] = _rendered(report.as_markdown(doc))
    return pages


def test_markdown_and_html_writers_write_no_live_markup(answers, doc):
    for name, page in _outputs(answers, doc).items():
        assert "RA999" in page and "&lt;script&gt;" in page, f"{name}: the payload is shown as text"
        _assert_inert(page)
        assert "<h1" not in page or name.startswith("report html"), name
        assert "<li>fake item" not in page, name


@pytest.mark.filterwarnings("error::UserWarning")  # matplotlib's layout given up: a chart squeezed or cut
def test_the_report_page_writes_no_live_markup(doc):
    pytest.importorskip("matplotlib")  # the errkit[report] extra (installed with [test])
    page = chart.as_html(doc)
    svg = re.search(r"<svg.*</svg>", page, re.S).group(0)  # matplotlib's drawing: its texts in comments
    _assert_inert(page.replace(svg, "<svg></svg>"))
    _assert_inert(svg, {"svg", "g", "path", "defs", "use", "clippath", "rect", "style", "metadata", "title", "rdf:rdf", "cc:work", "dc:type", "dc:date", "dc:format", "dc:creator", "cc:agent", "dc:title"} | SAFE_TAGS)
    assert "RA999" in page and "&lt;script&gt;" in page


def test_no_payload_runs_in_chromium(answers, doc, chromium):
    """Each output loaded in chromium, every link clicked: no dialog, no script, `window.pwned` unset."""
    pages = _outputs(answers, doc)
    pages["report html"] = chart.as_html(doc)
    for name, body in pages.items():
        tab = chromium.new_page()
        events: list[str] = []
        tab.on("dialog", lambda d: (events.append(d.message), d.dismiss()))
        tab.on("console", lambda m: events.append(m.text) if "pwned" in m.text else None)
        tab.set_content(f"<!DOCTYPE html><html><body>{body}</body></html>" if "<html" not in body else body)
        tab.wait_for_timeout(100)
        for anchor in tab.locator("a").all():
            href = anchor.get_attribute("href") or ""
            assert href.startswith(("http://", "https://")), (name, href)
        assert tab.evaluate("typeof window.pwned") == "undefined", (name, tab.evaluate("window.pwned"))
        assert not events, (name, events)
        assert "RA999" in tab.inner_text("body"), f"{name}: the payload is shown as text"
        tab.close()

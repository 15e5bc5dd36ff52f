"""The triage report (errkit/explain/report.py) as one self-contained HTML page: the errors' table
and a chart of each code's occurrences per host, drawn by matplotlib (the `errkit[report]` extra)
as an SVG written into the page. The page loads nothing: its text is drawn as paths (no font is
fetched), and its Content-Security-Policy forbids every request."""

from errkit.core import UsageError

MAX_CODES = 10  # codes drawn (the most frequent); the table lists them all
MAX_HOSTS = 64  # hosts drawn (those with most errors), in the files' order
MAX_TICK = 24  # characters of a host's name under its bar
WIDTH = 11  # inches: the figure is drawn at the page's width, so its text keeps one size
LEGEND_WRAP = 90  # characters of a legend line, wrapped at words (a label is never cut)


def require() -> None:
    """A usage error, before any file is read, when matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError("--format html draws its chart with matplotlib: pip install 'errkit[report]'") from None


def _label(text: str) -> str:
    """A text of the logs or a catalogue as matplotlib draws it: control characters shown, `$` not
    mathtext, and no `--` (matplotlib writes each text in an XML comment beside its paths: `-->`
    would end it, and what follows would be markup in the page)."""
    from errkit.core.escape import terminal

    text = terminal(text).replace("$", "\\$")
    while "--" in text:
        text = text.replace("--", "- -")
    return text


def _tick(host: str) -> str:
    """A host under its bar: its first MAX_TICK characters (the table names it whole)."""
    host = _label(host)
    return host if len(host) <= MAX_TICK else host[:MAX_TICK - 1] + "\u2026"


def _legend_label(text: str) -> str:
    """A code and its title for the legend: whole, wrapped at words into lines of LEGEND_WRAP
    characters at most (a long word is broken, never dropped)."""
    import textwrap

    return "\n".join(textwrap.wrap(_label(text), LEGEND_WRAP)) or " "


def chart_svg(doc: dict) -> str:
    """An SVG of the occurrences of each code (the MAX_CODES most frequent) per host, stacked bars."""
    import io

    import matplotlib
    from matplotlib.figure import Figure

    errors = doc["errors"][:MAX_CODES]
    totals: dict[str, int] = {}
    for e in errors:
        for host, n in e["hosts"].items():
            totals[host] = totals.get(host, 0) + n
    order = [f["host"] for f in doc["files"]] + [h for e in errors for h in e["hosts"]]
    hosts = list(dict.fromkeys(h for h in order if h in totals))
    if len(hosts) > MAX_HOSTS:
        kept = set(sorted(hosts, key=lambda h: -totals[h])[:MAX_HOSTS])
        hosts = [h for h in hosts if h in kept]
    labels = [_legend_label(f"{e['code']} {e['title']}") for e in errors]
    columns = 2 if labels and max(len(line) for label in labels for line in label.split("\n")) <= LEGEND_WRAP // 2 + 8 else 1
    rows = max((sum(label.count("\n") + 1 for label in labels[c::columns]) for c in range(columns)), default=0)
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "errkit", "font.size": 9}):
        # the page's width (the SVG is drawn at 100%); the legend below the bars, each label whole
        # (wrapped at words, never cut), the figure as tall as the bars and the legend need
        fig = Figure(figsize=(WIDTH, 3.6 + 0.17 * rows), layout="constrained")
        ax = fig.add_subplot()
        bottom = [0] * len(hosts)
        for e, label in zip(errors, labels):
            heights = [e["hosts"].get(h, 0) for h in hosts]
            ax.bar(range(len(hosts)), heights, bottom=bottom, label=label,
                   gid="bars-" + "".join(c for c in e["code"] if c.isascii() and c.isalnum()))
            bottom = [b + h for b, h in zip(bottom, heights)]
        slanted = len(hosts) > 12
        ax.set_xticks(range(len(hosts)), [_tick(h) for h in hosts], rotation=60 if slanted else 0,
                      ha="right" if slanted else "center")
        ax.set_ylabel("occurrences")
        ax.yaxis.get_major_locator().set_params(integer=True)  # counts: no 0.5 of an error
        cut = f" (the {len(hosts)} of {len(totals)} hosts with most errors)" if len(hosts) < len(totals) else ""
        codes = f", the {len(errors)} most frequent codes" if len(doc["errors"]) > len(errors) else ""
        ax.set_title(f"catalogued errors per host{cut}{codes}")
        if errors:
            legend = fig.legend(loc="outside lower center", ncols=columns, fontsize=8, frameon=False)
            legend.set_gid("legend")
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    svg = out.getvalue()
    return svg[svg.index("<svg"):]  # the XML declaration and doctype have no place inside HTML


STYLE = """body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}th{background:#f4f4f4}
td.n{text-align:right}code{font-size:90%}.chart svg{width:100%;height:auto}.when{white-space:nowrap}
.text{font:12px/1.35 ui-monospace,monospace;color:#444;margin-top:.2em;overflow-wrap:anywhere;max-width:40ch}
ul.values{margin:0;padding-left:1.1em}"""


def _linked(text: str, target: str | None) -> str:
    """`text` escaped, linked to `target` (an http(s) address made safe, or None: no link)."""
    from errkit.core.escape import html as e

    return f"<a href=\"{e(target)}\">{e(text)}</a>" if target else e(text)


def _place(where: dict) -> str:
    """A first or last occurrence in a cell: its time (the report's one format), file and line, text."""
    from errkit.core.escape import html as e, terminal

    at = f"<span class=\"when\">{e(where['when'])}</span> " if where.get("when") else ""
    return f"{at}<code>{e(where['file'])}:{where['line']}</code><div class=\"text\">{e(terminal(where['text']))}</div>"


def as_html(doc: dict) -> str:
    """The report as a page that needs nothing else (no script, no request)."""
    from errkit.explain.report import UNMATCHED_HINT, hosts_line, summary_line, unmatched_files, values_lines

    from errkit.core.escape import html as e, link

    rows = []
    for err in doc["errors"]:
        first, last = err["first"], err["last"]
        values = "".join(f"<li>{e(v)}</li>" for v in values_lines(err["values"]))
        rows.append(
            f"<tr><td>{_linked(err['code'], link(err['docs_url']))}</td><td>{e(err['title'])}</td>"
            f"<td class=\"n\">{err['count']:,}</td><td class=\"n\">{len(err['files'])}</td><td>{e(hosts_line(err['hosts'], others=err.get('other_hosts', 0)))}</td>"
            f"<td>{_place(first)}</td><td>{_place(last)}</td><td><ul class=\"values\">{values}</ul></td></tr>")
    skipped = "".join(f"<li>{e(f['skipped'])}</li>" for f in doc["files"] if f["skipped"])
    unmatched = "".join(f"<li><code>{e(name)}</code>: {e(why)}</li>" for name, why in unmatched_files(doc))
    hint = f"<p>{e(UNMATCHED_HINT)}.</p>" if any(f.get("unmatched") for f in doc["files"]) else ""
    return "\n".join([
        "<!DOCTYPE html>",
        "<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        "<title>errkit triage</title>", f"<style>{STYLE}</style></head><body>",
        "<h1>errkit triage</h1>", f"<p>{e(summary_line(doc))}</p>",
        f"<div class=\"chart\" id=\"chart\">{chart_svg(doc)}</div>",
        "<table id=\"errors\"><thead><tr><th>code</th><th>error</th><th>count</th><th>files</th><th>hosts</th>"
        "<th>first</th><th>last</th><th>values seen (count)</th></tr></thead><tbody>",
        *rows, "</tbody></table>",
        f"<h2>No catalogued error</h2><ul>{unmatched}</ul>{hint}" if unmatched else "",
        f"<h2>Skipped</h2><ul>{skipped}</ul>" if skipped else "",
        "</body></html>", ""])


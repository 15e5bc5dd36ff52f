"""The triage report (errkit/explain/report.py) as one self-contained HTML page: the errors' table
and a chart of each code's occurrences per host, drawn by matplotlib (the `errkit[report]` extra)
as an SVG written into the page. The page loads nothing: its text is drawn as paths (no font is
fetched), and its Content-Security-Policy forbids every request."""

from errkit.core import UsageError

MAX_CODES = 10  # codes drawn (the most frequent); the table lists them all
MAX_HOSTS = 64  # hosts drawn (those with most errors), in the files' order


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
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "errkit", "font.size": 9}):
        fig = Figure(figsize=(min(14, 3 + 0.35 * max(len(hosts), 4)), 4.2), layout="constrained")
        ax = fig.add_subplot()
        bottom = [0] * len(hosts)
        for e in errors:
            heights = [e["hosts"].get(h, 0) for h in hosts]
            ax.bar(range(len(hosts)), heights, bottom=bottom, label=_label(f"{e['code']} {e['title'][:40]}"),
                   gid="bars-" + "".join(c for c in e["code"] if c.isascii() and c.isalnum()))
            bottom = [b + h for b, h in zip(bottom, heights)]
        ax.set_xticks(range(len(hosts)), [_label(h) for h in hosts], rotation=60 if len(hosts) > 6 else 0, ha="right" if len(hosts) > 6 else "center")
        ax.set_ylabel("occurrences")
        ax.yaxis.get_major_locator().set_params(integer=True)  # counts: no 0.5 of an error
        cut = f" (the {len(hosts)} of {len(totals)} hosts with most errors)" if len(hosts) < len(totals) else ""
        codes = f", the {len(errors)} most frequent codes" if len(doc["errors"]) > len(errors) else ""
        ax.set_title(f"catalogued errors per host{cut}{codes}")
        if errors:
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    svg = out.getvalue()
    return svg[svg.index("<svg"):]  # the XML declaration and doctype have no place inside HTML


STYLE = """body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}th{background:#f4f4f4}
td.n{text-align:right}code{font-size:90%}.chart svg{max-width:100%;height:auto}"""


def _linked(text: str, target: str | None) -> str:
    """`text` escaped, linked to `target` (an http(s) address made safe, or None: no link)."""
    from errkit.core.escape import html as e

    return f"<a href=\"{e(target)}\">{e(text)}</a>" if target else e(text)


def as_html(doc: dict) -> str:
    """The report as a page that needs nothing else (no script, no request)."""
    from errkit.explain.report import hosts_line, summary_line, values_lines

    from errkit.core.escape import html as e, link

    rows = []
    for err in doc["errors"]:
        first, last = err["first"], err["last"]
        varied = "<br>".join(e(v) for v in values_lines(err["values"], varied_only=True))
        rows.append(
            f"<tr><td>{_linked(err['code'], link(err['docs_url']))}</td><td>{e(err['title'])}</td>"
            f"<td class=\"n\">{err['count']:,}</td><td class=\"n\">{len(err['files'])}</td><td>{e(hosts_line(err['hosts'], others=err.get('other_hosts', 0)))}</td>"
            f"<td>{e(first.get('time') or '')} <code>{e(first['file'])}:{first['line']}</code></td>"
            f"<td>{e(last.get('time') or '')} <code>{e(last['file'])}:{last['line']}</code></td><td>{varied}</td></tr>")
    skipped = "".join(f"<li>{e(f['skipped'])}</li>" for f in doc["files"] if f["skipped"])
    return "\n".join([
        "<!DOCTYPE html>",
        "<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        "<title>errkit triage</title>", f"<style>{STYLE}</style></head><body>",
        "<h1>errkit triage</h1>", f"<p>{e(summary_line(doc))}</p>",
        f"<div class=\"chart\" id=\"chart\">{chart_svg(doc)}</div>",
        "<table id=\"errors\"><thead><tr><th>code</th><th>error</th><th>count</th><th>files</th><th>hosts</th>"
        "<th>first</th><th>last</th><th>values that varied</th></tr></thead><tbody>",
        *rows, "</tbody></table>",
        f"<h2>Skipped</h2><ul>{skipped}</ul>" if skipped else "",
        "</body></html>", ""])


"""The grouped report of a triage (`errkit explain --all PATH...`): the files' summaries
(errkit/explain/triage.py) merged per code, as one JSON document of a documented shape
(`REPORT_VERSION`; site/docs/triage.md), and that document as text or markdown. The HTML page and
its chart are errkit/explain/chart.py's.

The shape (`--json`):

    {"report": 1,
     "totals": {"files": 8, "skipped": 0, "lines": 8000, "bytes": 812345, "matches": 80, "codes": 3},
     "files": [{"file": "logs/host-001.log", "host": "host-001", "lines": 1000, "bytes": 101000,
                "matches": 10, "skipped": null, "unmatched": null},
               {"file": "logs/vllm.log", ..., "matches": 0, "skipped": null,
                "unmatched": {"lines": 2, "first": {"line": 6, "text": "torch.OutOfMemoryError: ..."}}}, ...],
     "errors": [{"code": "RA105", "title": "...", "slug": "...", "docs_url": "...", "catalogue": "...",
                 "count": 40, "files": {"logs/host-001.log": 5, ...}, "hosts": {"host-001": 5, ...}, "other_hosts": 0,
                 "first": {"file": ..., "line": 12, "time": "2026-11-29 10:00:12,000",
                           "when": "2026-11-29 10:00:12.000", "text": "..."},
                 "last": {...},
                 "values": {"num_kv_heads": {"seen": [8, 6], "counts": [30, 10], "other": 0, "distinct": 2,
                                             "more": false},
                            "block_q": {"seen": [96], "counts": [40], "other": 0, "distinct": 1, "more": false}},
                 "varied": ["num_kv_heads"]}, ...]}

Errors come most frequent first (then by code); `hosts` names a code's first 1,000 hosts
(triage.MAX_HOSTS), the matches of any other host are counted in `other_hosts`; a param's `seen`
holds its first 20 distinct values and `counts` the occurrences of each, `other` the occurrences of
any value past those 20, `distinct` counts up to 1,000 and `more` says there were more (memory
stays flat whatever a log holds); `files` and `hosts` in the order the files were
given; `first`/`last` are the earliest and latest occurrence by timestamp when the lines carry
timestamps (ISO, a JSON line's time field, glog's: errkit/explain/triage.py timestamp), else the
first and last in the order the files were given (`time` null). `time` is as the log wrote it;
`when` is that time in one format for every log (`2026-11-29 10:00:12.000`, in UTC when the log
gave a zone, with the year glog's header gives; `--02-06 23:21:41.495` when a glog line has no
year: ISO 8601's date without one). A file read with no catalogued error has `unmatched`: how many
of its lines name an error anyway (an exception's name, an ERROR, FATAL or CRITICAL level) and the
first of them (an exception's first), which `errkit explain` answers with the closest entries; null
when none does (errkit/explain/unmatched.py), and for the other files.
"""

from errkit.core.escape import link, markdown, markdown_code, terminal as t
from errkit.core.runtime import shown
from errkit.explain.triage import merged

REPORT_VERSION = 1


def when(key: str | None) -> str | None:
    """A timestamp's sort key (triage.timestamp: `2026-11-29T10:00:12.000000`) in the report's one
    format, to the millisecond: `2026-11-29 10:00:12.000`."""
    return None if key is None else key.replace("T", " ")[:-3]


def _where(occurrence: dict | None) -> dict | None:
    if occurrence is None:
        return None
    shown_ = {k: v for k, v in occurrence.items() if not k.startswith("_")}
    shown_["when"] = when(occurrence.get("_key"))
    return shown_


def report(index, summaries: list[dict]) -> dict:
    """The report's document (the shape above) of the files' summaries, in their order."""
    groups = merged(summaries)
    errors = []
    for code, group in groups.items():
        entry = index.entries.get(code) or {}
        values = {param: {"seen": record["seen"], "counts": record["counts"], "other": record["other"],
                          "distinct": len(record["keys"]), "more": record["more"]}
                  for param, record in group["values"].items()}
        errors.append({
            "code": code, "title": entry.get("title", ""), "slug": entry.get("slug", ""),
            "docs_url": entry.get("docs_url", ""), "catalogue": index.catalogue(code),
            "count": group["count"], "files": group["files"], "hosts": group["hosts"],
            "other_hosts": group.get("other_hosts", 0),
            "first": _where(group["earliest"] or group["first"]),
            "last": _where(group["latest"] or group["last"]),
            "values": values,
            "varied": [param for param, v in values.items() if v["distinct"] > 1],
        })
    errors.sort(key=lambda e: (-e["count"], e["code"]))
    files = [{**{k: s[k] for k in ("file", "host", "lines", "bytes", "matches", "skipped")}, "unmatched": s.get("unmatched")}
             for s in summaries]
    read = [s for s in summaries if not s["skipped"]]
    totals = {"files": len(read), "skipped": len(summaries) - len(read), "lines": sum(s["lines"] for s in read),
              "bytes": sum(s["bytes"] for s in read), "matches": sum(e["count"] for e in errors), "codes": len(errors)}
    return {"report": REPORT_VERSION, "totals": totals, "files": files, "errors": errors}


def to_json(doc: dict) -> str:
    import json

    return json.dumps(doc, ensure_ascii=False, indent=1)


def values_lines(values: dict) -> list[str]:
    """Each param with every value kept and its count, varied or not: `num_kv_heads (2 values): 8
    (x30), 6 (x10)`, `block_q: 96 (all 40)`; values past the first 20 counted together."""
    out = []
    for param, v in values.items():
        said = [f"{shown(x) if not isinstance(x, list) else f'({shown(x)})'} (x{n:,})" for x, n in zip(v["seen"], v["counts"])]
        if v["other"]:
            said.append(f"{v['distinct'] - len(v['seen']):,}{'+' if v['more'] else ''} other values (x{v['other']:,})")
        if v["distinct"] == 1 and not v["more"]:
            x = v["seen"][0]
            out.append(f"{param}: {shown(x) if not isinstance(x, list) else f'({shown(x)})'} (all {v['counts'][0]:,})")
        else:
            out.append(f"{param} ({v['distinct']:,}{'+' if v['more'] else ''} values): {', '.join(said)}")
    return out


def hosts_line(counts: dict, limit: int = 6, others: int = 0) -> str:
    """The hosts with most matches first; `others`: the matches of hosts past those counted by name."""
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])  # stable: the files' order among equals
    shown_ = ", ".join(f"{h} ({n})" for h, n in ranked[:limit])
    shown_ += f", and {len(ranked) - limit} more" if len(ranked) > limit else ""
    return shown_ + (f", and more hosts ({others:,})" if others else "")


def _hosts_count(e: dict) -> str:
    return f"{len(e['hosts'])}{'+' if e.get('other_hosts') else ''}"


def _place(where: dict | None) -> str:
    if where is None:
        return ""
    at = f"{where['when']}  " if where.get("when") else ""
    return f"{at}{where['file']}:{where['line']}  {where['text']}"


UNMATCHED_HINT = "errkit explain on such a line gives the entries closest to it"


def unmatched_files(doc: dict) -> list[tuple[str, str]]:
    """(file, why it has no catalogued error) of each file read that has none: how many of its lines
    name an error no wording matches, and the first of them (errkit/explain/unmatched.py)."""
    out = []
    for f in doc["files"]:
        if f["skipped"] or f["matches"]:
            continue
        found = f.get("unmatched")
        if found is None:
            out.append((f["file"], "no line names an error"))
        else:
            first = found["first"]
            out.append((f["file"], f"{found['lines']:,} line(s) name an error no wording matches; "
                                   f"the first, line {first['line']}: {first['text']}"))
    return out


def summary_line(doc: dict) -> str:
    t = doc["totals"]
    skipped = f", {t['skipped']} skipped" if t["skipped"] else ""
    return (f"{t['matches']:,} catalogued error(s) of {t['codes']} code(s) in {t['files']} file(s){skipped}, "
            f"{t['lines']:,} lines")


def as_text(doc: dict) -> str:
    """The report for a terminal: every text from the logs or a catalogue through `t` (its control
    characters shown, never sent: errkit/core/escape.py)."""
    lines = ["errkit triage: " + t(summary_line(doc)), ""]
    for e in doc["errors"]:
        lines.append(f"{t(e['code'])}  {t(e['title'])}  x{e['count']:,} in {len(e['files'])} file(s), "
                     f"{_hosts_count(e)} host(s)")
        lines.append(f"  hosts    {t(hosts_line(e['hosts'], others=e.get('other_hosts', 0)))}")
        lines.append(f"  first    {t(_place(e['first']))}")
        lines.append(f"  last     {t(_place(e['last']))}")
        for n, line in enumerate(values_lines(e["values"])):
            lines.append(f"  {'values' if n == 0 else '':<9}{t(line)}")
        lines.append(f"  docs     {t(e['docs_url'])}")
        lines.append("")
    unmatched = unmatched_files(doc)
    if unmatched:
        lines.append(f"no catalogued error in {len(unmatched)} file(s)")
        lines += [f"  {t(name)}  {t(why)}" for name, why in unmatched]
        if any(f.get("unmatched") for f in doc["files"]):
            lines.append(f"  ({UNMATCHED_HINT})")
        lines.append("")
    for f in doc["files"]:
        if f["skipped"]:
            lines.append(f"skipped  {t(f['skipped'])}")
    return "\n".join(lines).rstrip("\n")


def _cell(text) -> str:
    """Text in a markdown table cell (errkit/core/escape.py: pipes escaped, no line break, no HTML)."""
    return markdown(text)


def _place_cell(where: dict) -> str:
    """A first or last occurrence in a table cell: its time, its file and line as code, its text."""
    at = markdown(where.get("when") or "")
    return ((at + " " if at else "") + markdown_code(f"{where['file']}:{where['line']}", in_table=True)
            + " " + markdown_code(where["text"], in_table=True))


def _code_cell(e: dict) -> str:
    """An error's code, linked to its page when the page is an http(s) address."""
    target = link(e["docs_url"])
    return f"[{_cell(e['code'])}]({target})" if target else _cell(e["code"])


def as_markdown(doc: dict) -> str:
    """The report as a markdown table: every text from the logs or a catalogue escaped (values,
    hosts, file names, messages), links only to http(s) addresses."""
    lines = ["## errkit triage", "", markdown(summary_line(doc), starts_line=True), "",
             "| code | error | count | files | hosts | first | last | values seen (count) |",
             "| --- | --- | ---: | ---: | --- | --- | --- | --- |"]
    for e in doc["errors"]:
        varied = "; ".join(values_lines(e["values"]))
        lines.append(
            f"| {_code_cell(e)} | {_cell(e['title'])} | {e['count']:,} | {len(e['files'])} | "
            f"{_cell(hosts_line(e['hosts'], others=e.get('other_hosts', 0)))} | {_place_cell(e['first'])} | {_place_cell(e['last'])} | {_cell(varied)} |")
    unmatched = unmatched_files(doc)
    if unmatched:
        lines += ["", "No catalogued error:", ""] + [f"- {markdown_code(name)}: {_cell(why)}" for name, why in unmatched]
        if any(f.get("unmatched") for f in doc["files"]):
            lines += ["", markdown(f"({UNMATCHED_HINT}.)", starts_line=True)]
    skipped = [f for f in doc["files"] if f["skipped"]]
    if skipped:
        lines += ["", "Skipped:", ""] + [f"- {_cell(f['skipped'])}" for f in skipped]
    return "\n".join(lines)

"""`errkit explain`: read pasted text or a log, find catalogued errors, compute fixes, print them.
The orchestration only: reading (errkit/explain/reading.py), matching (matching/), the answer
(answer.py) and its rendering (render.py) are each a module of their own."""

import os
import sys

from errkit.core import UsageError
from errkit.core.escape import terminal
from errkit.explain.answer import answers, docs_link, result
from errkit.explain.matching.index import Index
from errkit.explain.reading import line_chunks, looks_like_code, looks_like_path, open_input
from errkit.explain.render import Style, as_markdown, to_json, format_entry, format_result


def _open(url: str, err) -> None:
    """Open `url` in the user's browser (`$BROWSER`, else the system's); say so, or why not."""
    import webbrowser

    if webbrowser.open(url):
        print(f"errkit: opened {url}", file=err)
    else:
        print(f"errkit: no browser to open {url}", file=err)


def wants_report(sources: list[str], fmt: str = "text", as_text: bool = False, asked: bool = False) -> bool:
    """Whether the arguments are log files for the grouped report (errkit/explain/report.py) rather
    than one input to answer. They are paths when one of them names an existing file or folder, or
    each is one word shaped like a path (`logs/*.log` that the shell did not expand: then a usage
    error names it); `--text` reads them as a message, whatever files they name. Several paths or a
    folder make the report; a single file or `-` is answered as before unless the report is `asked`
    (--report, --include/--exclude) or `--format html` is."""
    from errkit.explain.inputs import STDIN, is_path

    if as_text or not sources:
        return False
    shaped = all(s == STDIN or is_path(s) or (looks_like_path(s) and not s.split()[1:]) for s in sources)
    if not shaped and not any(is_path(s) for s in sources):
        return False
    if asked or fmt == "html":
        return True
    return len(sources) > 1 or os.path.isdir(sources[0])


PARTIAL = 3  # the report of `explain --all` lacks a file whose worker died (errkit/explain/workers.py)


def run_report(sources: list[str], fmt: str = "text", stdin=None, out=None, err=None, matcher=None,
               include=(), exclude=(), workers: int | None = None, quiet: bool = False) -> int:
    """`errkit explain --all PATH...`: every file's catalogued errors in one grouped report (text,
    JSON, markdown or HTML); 0 when some were found, 1 when none, PARTIAL when a file was lost."""
    from errkit.explain import inputs, report
    from errkit.explain.unmatched import unmatched
    from errkit.explain.workers import summaries as read_files
    from errkit.explain.progress import Progress

    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    if fmt == "html":
        from errkit.explain import chart

        chart.require()
    warnings: list[str] = []
    names = inputs.expand(sources, list(include), list(exclude), warn=warnings.append)
    if not names:
        for line in warnings:
            print(terminal(line), file=err)
        raise UsageError(f"no file to read in {', '.join(sources)}" + (" (see --include/--exclude)" if include or exclude else ""))
    if matcher is None:
        from errkit.explain.matcher import Matcher

        matcher = Matcher()
    with Progress(err, names, quiet) as progress:
        summaries = read_files(matcher, names, workers, stdin=stdin, warn=warnings.append, done=progress.done,
                                    reading=progress.read if progress.on else None)
    for line in warnings:  # once the bar is gone: a line printed under it would be drawn over
        print(terminal(line), file=err)  # (a file's name, a log's text: shown, never sent)
    for summary in summaries:  # why a file has no catalogued error: its lines that name one anyway
        if summary["matches"] == 0 and not summary["skipped"] and not summary.get("lost") and summary["file"] != inputs.STDIN:
            summary["unmatched"] = unmatched(summary["file"])
    doc = report.report(matcher.index, summaries)
    if fmt == "json":
        text = report.to_json(doc)
    elif fmt == "markdown":
        text = report.as_markdown(doc)
    elif fmt == "html":
        text = chart.as_html(doc)
    else:
        text = report.as_text(doc)
    status = 0 if doc["errors"] else 1
    if any(s.get("lost") for s in summaries):
        status = PARTIAL  # a worker died: the report lacks what its file held (named on stderr)
    if not doc["errors"]:
        print(f"errkit: no catalogued error found in {doc['totals']['files']} file(s)", file=err)
    try:
        out.write(text + "\n")
        out.flush()
    except BrokenPipeError as closed:
        closed.exit_status = status
        raise
    return status


def run(sources: list[str], as_json: bool, show_all: bool, stdin=None, out=None, err=None, index: Index | None = None,
        fmt: str = "text", open_page: bool = False, colour: str = "auto", verbose: bool = False) -> int:
    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    style = Style(out, colour, verbose)
    index = Index.load() if index is None else index
    if fmt == "html":
        raise UsageError("--format html is the report of log files: give files or folders with --all")
    if len(sources) == 1 and "\n" not in sources[0] and " " not in sources[0].strip() and not os.path.exists(sources[0]):
        word = sources[0].strip()
        code = index.lookup(word)
        if code:
            named = result(index, index.named(code, word))
            if as_json:  # the shape of every answer: the entry named, no values
                out.write(to_json(named) + "\n")
            elif fmt == "markdown":
                out.write(as_markdown(named) + "\n")
            else:
                out.write(format_entry(code, index.entries[code], style, index.catalogue(code)) + "\n")
            if open_page:
                _open(named["docs_url"], err)
            return 0
        if looks_like_code(word):  # what `errkit show` answers
            raise UsageError(f"no entry with code or slug {word!r} (see `errkit list`)")
        if looks_like_path(word):
            from errkit.explain.inputs import no_such_path

            raise no_such_path(word)
    chunks = line_chunks(open_input(sources, stdin))
    others: dict[str, int] = {}
    results, tail, seen_text = answers(index, chunks, show_all, warn=lambda msg: print(terminal(msg), file=err),
                                       others=others)
    if not seen_text:
        raise UsageError("the input is empty: nothing to explain")
    if not results:
        print("errkit: no catalogued error found in the input", file=err)
        if "JAX_TRACEBACK_FILTERING" in tail:
            # an error without text is recognised by its raise site, which JAX's filtering hides
            print("errkit: JAX filtered this traceback; rerun with JAX_TRACEBACK_FILTERING=off and paste it again",
                  file=err)
        return 1
    status = 0 if results[0]["confidence"] in ("exact", "lookup") else 1
    try:
        for res in results:
            if as_json:
                out.write(to_json(res) + "\n")
            elif fmt == "markdown":
                out.write(as_markdown(res) + "\n\n")
            else:
                out.write(format_result(res, style) + "\n\n")
        out.flush()  # a reader that left (`| head`) shows here, while the status is known
    except BrokenPipeError as closed:
        closed.exit_status = status  # the answer's status, whether or not the reader read it all
        raise
    if show_all:
        from errkit.explain.tally import MAX_ANSWERS

        for code, count in others.items():  # memory stays flat: the rest are counted, not kept
            print(f"errkit: {count:,} more match(es) of {terminal(code)} with other values, not shown "
                  f"(the {MAX_ANSWERS} seen last of each code are)", file=err)
    if open_page:
        _open(docs_link(results[0]), err)
    return status


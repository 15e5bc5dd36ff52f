"""`errkit explain`: read pasted text or a log, find catalogued errors, compute fixes, print them.
The orchestration only: reading (errkit/explain/reading.py), matching (match.py), the answer
(answer.py) and its rendering (render.py) are each a module of their own."""

import os
import sys

from errkit.core import UsageError
from errkit.explain.answer import docs_link, result
from errkit.explain.match import Index, approximate, explain_chunks
from errkit.explain.reading import line_chunks, looks_like_code, looks_like_path, open_input
from errkit.explain.render import Style, as_markdown, to_json, format_entry, format_result


def _open(url: str, err) -> None:
    """Open `url` in the user's browser (`$BROWSER`, else the system's); say so, or why not."""
    import webbrowser

    if webbrowser.open(url):
        print(f"errkit: opened {url}", file=err)
    else:
        print(f"errkit: no browser to open {url}", file=err)


def run(sources: list[str], as_json: bool, show_all: bool, stdin=None, out=None, err=None, index: Index | None = None,
        fmt: str = "text", open_page: bool = False) -> int:
    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    style = Style(out)
    index = Index.load() if index is None else index
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
            raise UsageError(f"no such file: {word}")
    chunks = line_chunks(open_input(sources, stdin))
    found, tail, seen_text = explain_chunks(index, chunks, warn=lambda msg: print(msg, file=err))
    if not seen_text:
        raise UsageError("the input is empty: nothing to explain")
    results = [result(index, f.match, f.count, f.last_line) for f in (found if show_all else found[:1])]
    if not results:
        results = [result(index, m) for m in approximate(index, tail)]
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
    if open_page:
        _open(docs_link(results[0]), err)
    return status


"""`errkit explain`: read pasted text or a log, find catalogued errors, compute fixes, print them."""

import os
import sys

from errkit.core.errors import UsageError
from errkit.explain.match import HEADER, MSG, PASTE_SIZE, Index, Match, clean
from errkit.core.normalise import text_encoding

CHUNK = 4 * 1024 * 1024
TAIL = 256 * 1024  # what the approximate pass reads: the most recent part of the input
APPROXIMATE_MAX = 0.99  # the best similarity an approximate match shows


# -- input ----------------------------------------------------------------------------------------


def _binary_chunks(stream):
    while True:
        block = stream.read(CHUNK)
        if not block:
            return
        yield block


def line_chunks(raw_chunks):
    """Byte chunks cut on line boundaries. Text is decoded later, one line at a time, and only
    for the lines the matcher reads: a log of gigabytes is never decoded whole. Text saved as
    UTF-16 (with or without a byte-order mark) or with a UTF-8 byte-order mark is read as UTF-8."""
    raw_chunks = iter(raw_chunks)
    head = next(raw_chunks, b"")
    encoding = text_encoding(head)
    pending = b""
    ready = b""  # held back one block: the input's last line joins the last block, not a chunk of its own
    first = True
    for block in _transcoded(encoding, head, raw_chunks) if encoding else _chained(head, raw_chunks):
        if first:
            if b"\x00" in block[:8192]:
                raise UsageError("the input looks binary (it has NUL bytes); pass a text log or message")
            first = False
        block = pending + block if pending else block
        cut = block.rfind(b"\n") + 1
        if cut == 0 and len(block) < 8 * CHUNK:
            pending = block
            continue
        cut = cut or len(block)
        pending = block[cut:]
        if ready:
            yield ready
        ready = block[:cut]
    if ready or pending:
        yield ready + pending


def _chained(head: bytes, rest):
    yield head
    yield from rest


def _transcoded(encoding: str, head: bytes, rest):
    import codecs

    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    for block in _chained(head, rest):
        yield decoder.decode(block).encode("utf-8")
    yield decoder.decode(b"", final=True).encode("utf-8")


def open_input(sources: list[str], stdin):
    """Byte chunks of what to explain: '-' or piped stdin, a file path, or the arguments themselves."""
    if sources in ([], ["-"]):
        if sources == [] and (stdin is None or stdin.isatty()):
            raise UsageError("nothing to explain: pass an error text, a file, or '-' for standard input")
        return _binary_chunks(stdin.buffer if hasattr(stdin, "buffer") else stdin)
    if len(sources) == 1 and "\n" not in sources[0] and len(sources[0]) < 4096 and os.path.exists(sources[0]):
        path = sources[0]
        if os.path.isdir(path):
            raise UsageError(f"{path} is a directory; pass a file, an error text, or '-'")
        try:
            handle = open(path, "rb")
        except OSError as err:
            raise UsageError(f"cannot read {path}: {err.strerror}") from None
        return _file_chunks(handle)
    return iter([" ".join(sources).encode("utf-8", errors="replace")])


CODE_SHAPE = (2, 4, 3)  # letters (at least, at most), then digits: RA105, ABCD123
PATH_SUFFIXES = (".txt", ".log", ".out", ".err", ".json", ".jsonl", ".trace", ".tb", ".stderr", ".stdout")


def looks_like_code(word: str) -> bool:
    """An entry code such as RA105 (any prefix of 2-4 letters, case-insensitive)."""
    letters = len(word) - CODE_SHAPE[2]
    return (CODE_SHAPE[0] <= letters <= CODE_SHAPE[1] and word[:letters].isascii() and word[:letters].isalpha()
            and word[letters:].isascii() and word[letters:].isdigit())


def looks_like_path(word: str) -> bool:
    """A file name rather than error text: one word with a folder separator or a log file's suffix."""
    if "://" in word:  # a link to an entry's page
        return False
    return "/" in word or "\\" in word or word.lower().endswith(PATH_SUFFIXES)


def _file_chunks(handle):
    with handle:
        yield from _binary_chunks(handle)


# -- matching -------------------------------------------------------------------------------------


class Tail(str):
    """The end of the input (what the approximate pass reads), knowing its first line's number."""

    first_line: int = 1


class Found:
    __slots__ = ("match", "count", "last_line")

    def __init__(self, match: Match):
        self.match, self.count, self.last_line = match, 0, match.line


def explain_chunks(index: Index, chunks, warn=None) -> tuple[list[Found], str, bool]:
    """(distinct exact matches, most recent first; the input's tail; whether any text was seen).

    `chunks` are bytes cut on line boundaries (or str); `warn(message)` hears once of input that
    is not UTF-8 where it mattered: in the first 8 KB or on a line read further.
    """
    found: dict = {}
    line = 1
    tail = b""
    seen_text = False
    warned = []

    def undecodable():
        if not warned and warn is not None:
            warn("errkit: the input is not valid UTF-8; undecodable bytes were replaced")
        warned.append(True)

    chunks = iter(chunks)
    upcoming = next(chunks, None)
    i = -1
    while upcoming is not None:
        chunk, upcoming, i = upcoming, next(chunks, None), i + 1
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8", "replace")
        paste = i == 0 and upcoming is None and len(chunk) <= PASTE_SIZE  # the whole input, and small
        if i == 0:
            try:
                chunk[:8192].decode("utf-8")
            except UnicodeDecodeError as err:
                if err.start < 8192 - 4:  # not a character cut at the 8 KB boundary
                    undecodable()
        if not seen_text and not chunk.isspace() and chunk:
            seen_text = True
        counted = 0  # the scan counted the lines up to its last match; count the rest once
        for match in index.scan(chunk, first_line=line, undecodable=undecodable, paste=paste):
            key = match.key()
            item = found.get(key)
            if item is None:
                item = found[key] = Found(match)
            item.count += 1
            item.last_line = match.line
            line, counted = match.line, match.offset
        line += chunk.count(b"\n", counted)
        tail = (tail + chunk[-TAIL:])[-TAIL:]
    strong = {f.match.code for f in found.values() if not f.match.weak}
    # a note line or a page link under a message that matched says nothing more
    ordered = sorted((f for f in found.values() if not (f.match.weak and f.match.code in strong)),
                     key=lambda f: f.last_line, reverse=True)
    text = Tail(tail.decode("utf-8", "replace"))
    text.first_line = line - text.count("\n")
    return ordered, text, seen_text


def approximate(index: Index, tail: str, limit: int = 3) -> list[Match]:
    """Closest wordings to the error lines of the input (edited, truncated or newer wordings).

    Never 1.0: a text the shape of a wording that did not match exactly differs somewhere (a
    value of another type, a changed word)."""
    from difflib import SequenceMatcher

    first = getattr(tail, "first_line", 1)
    lines = [(first + n, clean(l)) for n, l in enumerate(tail.splitlines()) if l.strip()]
    segments = []
    for line_no, l in lines:
        header = HEADER.search(l)
        if header and (header.group(MSG) or "").strip():
            segments.append((line_no, header.group(MSG).strip()))
    if not segments:
        segments = [(line_no, l.strip()) for line_no, l in lines[-20:]]
    segments = [(line_no, seg[-2000:]) for line_no, seg in segments[-5:]]  # similarity is quadratic: a message-sized piece
    scored: dict[str, Match] = {}
    for line_no, seg in segments:
        norm_seg = _normalise(seg)
        for i in index.shortlist(seg):
            wording = index.wordings[i]
            score = min(SequenceMatcher(None, norm_seg, index.normalised_skeleton(i, _normalise), autojunk=False).ratio(), APPROXIMATE_MAX)
            best = scored.get(wording["code"])
            if score >= 0.6 and (best is None or score > best.score):
                scored[wording["code"]] = Match(wording["code"], wording, {}, line_no, exact=False, score=round(score, 3), text=seg)
    return sorted(scored.values(), key=lambda m: -m.score)[:limit]


def _normalise(text: str) -> str:
    import re

    text = re.sub(r"<[^<>]*>", "#", text)
    text = re.sub(r"\([-0-9, ]*\)|'[^']*'|-?[0-9][0-9.e+-]*", "#", text)
    return " ".join(text.split())


# -- fixes ----------------------------------------------------------------------------------------


def suggestions(fix: dict, params: dict, vetted: dict | None = None) -> list[dict]:
    """The fix's suggestions computed from `params`; `vetted`: its expressions already vetted and
    compiled (match.Index.vetted), used when they read only names `params` has."""
    out = []
    sets = fix.get("sets") or {}
    for label, source in fix.get("suggest", {}).items():
        try:
            found = {"label": label, "value": _jsonable(_evaluate(source, params, vetted))}
            if label in sets:
                found["sets"] = sets[label]
            out.append(found)
        except ValueError as err:  # expr.ExprError: the expression is not for these values
            if getattr(err, "rule", None) == "unknown-name":
                out.append({"label": label, "needs": source})
        except Exception:  # a suggestion that cannot be computed for these values is left out
            continue
    return out


class _NeedsValues(ValueError):
    """What expr.ExprError says of an expression reading a name the values at hand lack."""

    rule = "unknown-name"


def _evaluate(source: str, params: dict, vetted: dict | None):
    """`expr.evaluate(source, params)`, from the cache's vetted code when it can tell the same."""
    ready = (vetted or {}).get(source)
    if ready is not None and params.keys().isdisjoint(ready[2]):  # (no loop name shadows a value)
        from errkit.core.helpers import HELPERS, evaluate_code

        missing = set(ready[1]) - params.keys()
        if not missing:
            return evaluate_code(ready[0], params)
        if missing.isdisjoint(HELPERS):  # vetting again would stop at one of them: an unknown name
            raise _NeedsValues(source)
    from errkit.core import expr  # vets it against these values (imports ast)

    return expr.evaluate(source, params)


def _jsonable(value):
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return value


def offered(fixes: list[dict], wording: dict, told: str | None) -> list[dict]:
    """The fixes for the kernel that raised the error: a fix for another kernel is left out when the
    kernel is told, or when none of the kernels raising the wording is the fix's."""
    candidates = [told] if told else list(wording.get("kernels") or ())
    return [fix for fix in fixes if not fix.get("kernel") or not candidates or fix["kernel"] in candidates]


def _kernel_ref(index: Index, kernel: str | None) -> dict | None:
    if not kernel:
        return None
    return {"id": kernel, "title": ((index.data.get("kernels") or {}).get(kernel) or {}).get("title", kernel)}


def result(index: Index, match: Match, count: int = 1, last_line: int | None = None) -> dict:
    from errkit.explain.match import told_kernel

    entry = index.entries[match.code]
    vetted = index.vetted(match.code)
    wording = match.wording
    told = None if match.weak else told_kernel(match)  # a lookup names the entry, not who raised it
    return {
        "code": match.code,
        "slug": entry["slug"],
        "title": entry["title"],
        "confidence": "lookup" if match.weak else "exact" if match.exact else "approximate",
        "score": match.score,
        "matched": {
            "wording": wording["template"],
            "variant": wording["variant"],
            "source": wording["source"],
            "exception": wording["exception"],
            "releases": (wording.get("releases") or {}).get("shown"),
            "kernel": _kernel_ref(index, told),
            "text": match.text,
        },
        "params": {k: _jsonable(v) for k, v in match.params.items()},
        "fixes": [
            {"summary": fix["summary"], "alternative": bool(fix.get("alternative")), "unverified": fix.get("unverified"),
             "kernel": _kernel_ref(index, fix.get("kernel")),
             "suggestions": suggestions(fix, match.params, vetted) if match.exact or match.weak else [],
             "before": fix.get("before"), "after": fix.get("after")}
            for fix in (entry["fixes"] if match.weak else offered(entry["fixes"], wording, told))
        ],
        "explanation": entry["explanation"],
        "docs_url": entry["docs_url"],
        "line": match.line if last_line is None else last_line,
        "count": count,
        "catalogue": index.catalogue(match.code),
    }


# -- output ---------------------------------------------------------------------------------------


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


def _show(value) -> str:
    if isinstance(value, list):
        return ", ".join(_show(v) for v in value) if value else "(none)"
    return str(value)


def _first_paragraph(text: str) -> str:
    para = text.strip().split("\n\n", 1)[0]
    return " ".join(para.split())


def format_result(res: dict, style: Style) -> str:
    label = lambda s: style.dim(f"  {s:<9}")  # noqa: E731
    head = f"{style.bold(res['code'])}  {style.bold(res['title'])}"
    if res["confidence"] == "approximate":
        head += "  " + style.yellow(f"[approximate match, similarity {res['score']:.2f}]")
    elif res["count"] > 1:
        head += style.dim(f"  (x{res['count']}, last at line {res['line']})")
    lines = [head]
    matched = res["matched"]
    lines.append(label("wording") + matched["wording"])
    raised = f"{matched['exception']} raised by {matched['source']}"
    lines.append(label("") + style.dim(raised + (f", {matched['releases']}" if matched.get("releases") else "")))
    if res["confidence"] == "approximate":
        lines.append(label("you have") + matched["text"][:200])
    if res["params"]:
        lines.append(label("values") + ", ".join(f"{k}={_show(v)}" for k, v in res["params"].items()))
    lines.append(label("means") + _first_paragraph(res["explanation"]))
    for n, fix in enumerate(res["fixes"], 1):
        aside = style.dim("alternative, outside this library: ") if fix.get("alternative") else ""
        if fix.get("kernel") and not matched.get("kernel"):
            aside += style.dim(f"for {fix['kernel']['title']}: ")
        lines.append(label(f"fix {n}") + aside + fix["summary"])
        if fix.get("unverified"):
            lines.append(label("") + "  " + style.dim(f"(unverified: {fix['unverified']})"))
        for s in fix["suggestions"]:
            if "value" in s and s["value"] in (None, []):
                lines.append(label("") + "  " + style.yellow(f"{s['label']}: none satisfies every constraint"))
            elif "value" in s:
                lines.append(label("") + "  " + style.green(f"{s['label']}: {_show(s['value'])}"))
    lines.append(label("docs") + res["docs_url"])
    if res.get("catalogue"):
        lines.append(label("catalogue") + " " + res["catalogue"])
    return "\n".join(lines)


def format_entry(code: str, entry: dict, style: Style, catalogue: str = "") -> str:
    lines = [f"{style.bold(code)}  {style.bold(entry['title'])}  {style.dim(entry['slug'])}"]
    lines.append(style.dim(f"  {entry['exception']}: ") + entry["message"])
    lines.append("")
    lines.extend("  " + l for l in entry["explanation"].strip().splitlines())
    for n, fix in enumerate(entry["fixes"], 1):
        lines.append("")
        scope = f"for {fix['kernel']}: " if fix.get("kernel") else ""
        lines.append(f"  {'alternative' if fix.get('alternative') else 'fix'} {n}: {scope}{fix['summary']}")
        for lbl, source in fix["suggest"].items():
            lines.append(style.dim(f"    {lbl}: computed as {source}"))
    lines.append("")
    lines.append("  docs: " + entry["docs_url"])
    if catalogue:
        lines.append("  catalogue: " + catalogue)
    return "\n".join(lines)


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
                out.write(_json(named) + "\n")
            elif fmt == "markdown":
                out.write(_markdown(named) + "\n")
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
    for res in results:
        if as_json:
            out.write(_json(res) + "\n")
        elif fmt == "markdown":
            out.write(_markdown(res) + "\n\n")
        else:
            out.write(format_result(res, style) + "\n\n")
    if open_page:
        from errkit.explain.exceptions import docs_link

        _open(docs_link(results[0]), err)
    return 0 if results[0]["confidence"] in ("exact", "lookup") else 1


def _json(res: dict) -> str:
    import json  # --json only: json imports re (start-up time)

    return json.dumps(res, ensure_ascii=False)


def _markdown(res: dict) -> str:
    from errkit.explain.exceptions import as_markdown

    return as_markdown(res)

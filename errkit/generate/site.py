"""site/docs: the troubleshooting site's generated pages, its JSON index and compiled suggestions.

Generated here (every file starts with the generated-file header):
  site/docs/errors/<CODE>.md            one page per entry, served at errors/<CODE>/
  site/docs/errors/index.md             the A-Z of codes
  site/docs/by-area.md, by-tag.md, by-exception.md
  site/docs/assets/errkit/index.json    errkit/_index.json's data, regexes in JavaScript syntax
  site/docs/assets/errkit/suggest.js    every `suggest` expression compiled to JavaScript
  site/docs/assets/errkit/*.js, *.css   the scripts of site_assets/, match.js with the index's format
                                        (errkit/core/index_format.py) written in (templates/site/format.js.j2)

Everything from the catalogue is escaped where it lands: pages are rendered by a jinja2
environment whose `finalize` escapes every `{{ }}` for markdown (and HTML) unless a filter here
built it as `Md`; prose keeps only its `code spans`. Stale pages are found by
`errkit generate --check`; a generated page whose entry is gone is an orphan: `errkit docs`
deletes it, `errkit docs --check` and the site tests fail on it, `errkit generate` warns.
"""

from __future__ import annotations

import difflib
import html
import json
import re
from urllib.parse import quote
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from errkit.generate import js
from errkit.catalogue import kernels, wordings, releases
from errkit.core import index_format
from errkit.catalogue.model import Catalogue, Entry
from errkit.generate import index as index_module
from errkit.generate.render import HEADER, environment

ASSETS = "docs/assets/errkit"  # inside the site folder (the `site` setting)
# The paste page's scripts and the site's stylesheet: errkit's code, written into every site by
# `errkit generate` (so a site never runs an older copy than its index.json was made for).
SITE_ASSETS = Path(__file__).parent / "site_assets"


# The line of site_assets/match.js that `errkit generate` replaces with the index's format (FORMAT).
FORMAT_LINE = "  var FORMAT = {}; // errkit/core/index_format.py: `errkit generate` writes its names here, no copy by hand\n"


def static_assets() -> dict[str, str]:
    """File name -> text of each script and stylesheet, under the generated-file header; match.js
    with the index's format written in."""
    out = {}
    for path in sorted(SITE_ASSETS.iterdir()):
        if path.suffix in (".js", ".css"):
            out[path.name] = f"/* {HEADER} Source: errkit/generate/site_assets/{path.name} */\n" + path.read_text("utf-8")
    if out["match.js"].count(FORMAT_LINE) != 1:
        raise ValueError(f"site_assets/match.js must hold the line {FORMAT_LINE.strip()!r} once: the index format goes there")
    out["match.js"] = out["match.js"].replace(FORMAT_LINE, format_js())
    return out


def js_format() -> list[tuple[str, object]]:
    """[(name, value)] of what the browser's matcher reads of errkit/core/index_format.py: its
    JS_CONSTANTS as they are, its JS_PATTERNS translated to JavaScript syntax."""
    out = [(name, getattr(index_format, name)) for name in index_format.JS_CONSTANTS]
    for name in index_format.JS_PATTERNS:
        source = index_format.pattern_source(getattr(index_format, name))
        out.append((name, [js.regex_to_js(s) for s in source] if isinstance(source, list) else js.regex_to_js(source)))
    return out


def format_js() -> str:
    """The index's format as JavaScript (`var FORMAT = {...};`), written into match.js."""
    return _js_env().get_template("site/format.js.j2").render(HEADER=HEADER, constants=js_format())


def docs_folder(catalogue: Catalogue) -> str | None:
    """The site's docs folder, project-relative; None for a catalogue without a site."""
    return f"{catalogue.settings.site.rstrip('/')}/docs" if catalogue.settings.site else None


# -- markdown escaping ----------------------------------------------------------------------------


class Md(str):
    """Markdown built here from escaped parts: written out as it is."""


# HTML's specials, the backslash and stray backticks as entities; markdown's as backslash escapes
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\\": "&#92;", "`": "&#96;"}
_MD_SPECIAL = set("*_{}[]()#+-.!|")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


def _escape_char(ch: str) -> str:
    if ch in _HTML:
        return _HTML[ch]
    if ch in _MD_SPECIAL:
        return "\\" + ch
    return ch


def text(value) -> Md:
    """Plain text: every markdown and HTML special character escaped, whitespace collapsed."""
    return Md("".join(_escape_char(ch) for ch in " ".join(str(value).split())))


def _code_span(content: str) -> Md:
    content = " ".join(content.split())
    longest = max((len(m) for m in re.findall(r"`+", content)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if content.startswith("`") or content.endswith("`") else ""
    return Md(f"{fence}{pad}{content}{pad}{fence}")


def code(value) -> Md:
    """Any text as an inline code span (shown verbatim)."""
    return _code_span(str(value))


def prose(value, link=None, in_table: bool = False) -> Md:
    """Catalogue prose: `code spans` kept, everything else escaped, paragraphs kept.

    `link(word)` may turn a word (an entry code) into a markdown link.
    """
    paragraphs = [p for p in re.split(r"\n\s*\n", str(value).strip()) if p.strip()]
    out = []
    for para in paragraphs:
        para = " ".join(para.split())
        pieces, pos = [], 0
        for m in _CODE_SPAN.finditer(para):
            pieces.append(_words(para[pos:m.start()], link))
            inner = m.group(2)
            pieces.append(text(m.group(0)) if in_table and "|" in inner else _code_span(inner.strip() or inner))
            pos = m.end()
        pieces.append(_words(para[pos:], link))
        out.append("".join(pieces))
    return Md("\n\n".join(out))


_CODE_WORD = re.compile(r"\b[A-Z]{2,4}[0-9]{3}\b")


# `*word*` and `**words**` in prose: emphasis. Only the asterisks are kept as markdown; what they
# enclose is escaped like any text, so no other markdown or HTML gets through.
_EMPHASIS = re.compile(r"(?<![\w*\\])(\*\*?)(?=[^\s*])(.+?)(?<=[^\s*\\])\1(?![\w*])")


def _words(chunk: str, link) -> str:
    out, pos = [], 0
    for m in _EMPHASIS.finditer(chunk):
        out.append(_plain_words(chunk[pos:m.start()], link))
        out.append(m.group(1) + _plain_words(m.group(2), link) + m.group(1))
        pos = m.end()
    out.append(_plain_words(chunk[pos:], link))
    return "".join(out)


def _plain_words(chunk: str, link) -> str:
    if not link:
        return "".join(_escape_char(ch) for ch in chunk)
    out, pos = [], 0
    for m in _CODE_WORD.finditer(chunk):
        target = link(m.group())
        if target:
            out.append("".join(_escape_char(ch) for ch in chunk[pos:m.start()]))
            out.append(target)
            pos = m.end()
    out.append("".join(_escape_char(ch) for ch in chunk[pos:]))
    return "".join(out)


def fence(value, lang: str = "text") -> Md:
    """A fenced code block holding `value` verbatim."""
    body = str(value).rstrip("\n")
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return Md(f"{ticks} {lang}\n{body}\n{ticks}")


def yaml_string(value) -> Md:
    """A front-matter string: HTML-escaped (themes print titles raw), then JSON (valid YAML)."""
    return Md(json.dumps(html.escape(" ".join(str(value).split()), quote=True), ensure_ascii=True))


def comment(value) -> Md:
    """Text inside an HTML comment: no '--' that could end it."""
    return Md(re.sub(r"-(?=-)", "- ", " ".join(str(value).split())))


_URL = re.compile(r"https?://[^\s]+")


def url(value) -> Md:
    """An http(s) address as a markdown link destination (percent-encoded: no ( ) < > or spaces)."""
    value = str(value)
    if not _URL.fullmatch(value):
        raise ValueError(f"not an http(s) address: {value!r}")
    return Md(quote(value, safe="/:?#@!$&'*+,;=%~-._"))


def http_or_none(value: str | None) -> str | None:
    return value if value and _URL.fullmatch(value) else None


def _finalize(value):
    if isinstance(value, Md):
        return value
    if value is None:
        return ""
    return text(value)


@lru_cache(maxsize=1)
def _markdown_env():
    env = environment().overlay(finalize=_finalize)
    env.filters = dict(env.filters)
    env.filters.update(text=text, code=code, prose=prose, fence=fence, yaml=yaml_string, url=url, comment=comment,
                       md=lambda v: Md(v))
    return env


def _js_string(value) -> str:
    return json.dumps(value, ensure_ascii=True).replace("/", "\\/")


@lru_cache(maxsize=1)
def _js_env():
    env = environment().overlay()
    env.filters = dict(env.filters)
    env.filters["js"] = _js_string
    return env


# -- what the pages show --------------------------------------------------------------------------


def source_path(catalogue: Catalogue, entry: Entry) -> str:
    """The entry's YAML file, relative to the project root."""
    root = catalogue.root.resolve()
    if entry.source_path is not None:
        path = Path(entry.source_path)
        path = path if path.is_absolute() else Path.cwd() / path
        try:
            return path.resolve().relative_to(catalogue.project_root).as_posix()
        except ValueError:
            pass
    return f"{_catalog_path(catalogue)}/{entry.area}/{entry.code}-{entry.slug}.yaml"


def _catalog_path(catalogue: Catalogue) -> str:
    root = catalogue.root.resolve()
    try:
        return root.relative_to(catalogue.project_root).as_posix()
    except ValueError:
        return root.name


def edit_url(catalogue: Catalogue, entry: Entry) -> str | None:
    repo = http_or_none(catalogue.settings.repo_url)
    return f"{repo.rstrip('/')}/edit/{catalogue.settings.branch}/{source_path(catalogue, entry)}" if repo else None


def kernel_url(catalogue: Catalogue, kernel) -> str | None:
    """The kernel's YAML file in the repository, when the catalogue names one."""
    repo = http_or_none(catalogue.settings.repo_url)
    return f"{repo.rstrip('/')}/blob/{catalogue.settings.branch}/{_catalog_path(catalogue)}/kernels/{kernel.id}.yaml" if repo else None


def _module_of(catalogue: Catalogue) -> str:
    return (catalogue.settings.validators or "").removesuffix(".py").replace("/", ".")


def _example(entry: Entry) -> str | None:
    """The entry's own message rendered with its first bad example, as the kernel raises it."""
    wording = next((w for w in wordings.wordings(entry) if w.index == 0), None)
    if wording is None or not entry.message:
        return None
    try:
        return wording.render(wordings.sample_params(entry)[0])
    except Exception:  # a template that cannot render these values: show the template only
        return None


def raised_by(text: str | None, catalogue: Catalogue) -> str | None:
    """'jax 0.4.31 to 0.5.2' for a wording's `releases`, None when it has none."""
    record = releases.index_record(text, catalogue.root)
    return record["shown"] if record else None


def related_both_ways(entries) -> dict[str, list[str]]:
    """code -> the codes its page links as related: those it names first (in its order), then every
    entry that names it (by code); unknown codes and itself left out."""
    known = {e.code for e in entries}
    out: dict[str, list[str]] = {e.code: [c for c in dict.fromkeys(e.related) if c in known and c != e.code] for e in entries}
    for e in sorted(entries, key=lambda e: e.code):
        for c in e.related:
            if c in known and c != e.code and e.code not in out[c]:
                out[c].append(e.code)
    return out


def description(entry: Entry) -> str:
    """The page's description (search engines, link previews): its title and its message, as raised
    with the first bad example when the template renders, else the template."""
    message = " ".join((_example(entry) or entry.message or "").split())
    return f"{entry.title.rstrip('.')}: {message}" if message else entry.title


def az(entries) -> list[Entry]:
    """Entries A-Z by title (case and leading punctuation ignored), ties by code."""
    return sorted(entries, key=lambda e: (re.sub(r"^[^A-Za-z0-9]+", "", e.title).casefold(), e.code))


_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\betc)(?<!\bcf)(?<!\bapprox)(?<!\b[A-Za-z])([.!?])\s+(?=\S)")


def first_sentence(text: str) -> str:
    """The first sentence of the first paragraph (code spans kept whole)."""
    para = " ".join(str(text).strip().split("\n\n", 1)[0].split())
    spans = [(m.start(), m.end()) for m in _CODE_SPAN.finditer(para)]
    for m in _SENTENCE_END.finditer(para):
        if any(a <= m.start() < b for a, b in spans):
            continue
        return para[:m.start() + 1]
    return para


def example_params(entry: Entry) -> dict | None:
    """The typed values of the entry's first bad example (the params it does not give filled as the
    raised example on its page fills them); None without a bad example."""
    if not entry.bad_examples:
        return None
    try:
        entry.typed(entry.bad_examples[0])
    except Exception:  # noqa: BLE001 - an example lint reports
        return None
    return wordings.sample_params(entry)[0]


def example_suggestions(entry: Entry, catalogue: Catalogue) -> list[list[dict]]:
    """Per fix, the suggestions `errkit explain` computes (errkit/core/suggest.py) from its
    (kernel-expanded) suggest on the first bad example."""
    from errkit.core.suggest import suggestions

    params = example_params(entry)
    sources = kernels.suggestion_sources(entry, catalogue.kernels)
    out = []
    for fix, suggest in zip(entry.fixes, sources):
        if params is None or not suggest:
            out.append([{"label": label, "needs": source} for label, source in suggest.items()])
            continue
        out.append(suggestions({"suggest": suggest, "sets": dict(fix.sets)}, params))
    return out


def _python_value(value) -> str:
    """The value as Python source (a float that is not finite as float('nan'), float('inf'))."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f"float('{value}')"
    return repr(value)


def reproduce(entry: Entry, catalogue: Catalogue) -> dict | None:
    """A minimal call that raises the error, from the entry's examples: {"code", "lang", "how"}.

    Our own entries: the kernel call of the entry's `setup`/`then` with the first bad example's
    values, when `then` reads them; else the generated check function called with them. Upstream
    entries: the first fix's `before` (with its setup and then); else the raised line.
    """
    params = example_params(entry)
    if not entry.explain_only and params is not None:
        bad = entry.typed(entry.bad_examples[0])
        then = entry.then or ""
        setup = entry.setup or ""
        read = [name for name in entry.params if re.search(rf"(?<![\w.]){re.escape(name)}\b", then)]
        assigned = [name for name in read if re.search(rf"^\s*{re.escape(name)}\s*=", setup, re.M)]
        if read and not assigned and all(name in bad for name in read):
            lines = [setup.rstrip("\n")] if setup.strip() else []
            lines += [f"{name} = {_python_value(bad[name])}" for name in read]
            lines.append(then.rstrip("\n"))
            return {"code": "\n".join(lines), "lang": "python", "how": "the kernel call with the example's values"}
        module = _module_of(catalogue)
        if module:
            from errkit.generate.validators import check_code

            try:
                check = check_code(entry)
            except Exception:  # noqa: BLE001 - a check lint reports
                check = None
            if check is not None:
                args = ", ".join(f"{name}={_python_value(params[name])}" for name in check.params)
                return {"code": f"from {module} import {check.function}\n\n{check.function}({args})",
                        "lang": "python", "how": "the generated check with the example's values"}
    if entry.explain_only:
        for n, fix in enumerate(entry.fixes, 1):
            if fix.before:
                parts = [(fix.setup or entry.setup or "").rstrip("\n"), fix.before.rstrip("\n"), (fix.then or entry.then or "").rstrip("\n")]
                return {"code": "\n".join(p for p in parts if p.strip()), "lang": "python",
                        "how": f"fix {n}'s code before the fix"}
    example = _example(entry)
    if example is not None:
        return {"code": f"{entry.exception}: {example}", "lang": "text", "how": "the line it raises"}
    return None


def change(before: str | None, after: str | None) -> str | None:
    """A fix's before and after as one unified diff (every line: `-` before, `+` after, ` ` both),
    the compact form the top of an entry page shows; None unless the fix has both."""
    if not before or not after:
        return None
    old, new = before.rstrip("\n").splitlines(), after.rstrip("\n").splitlines()
    lines = list(difflib.unified_diff(old, new, n=len(old) + len(new), lineterm=""))[3:]  # no ---, +++, @@ lines
    return "\n".join(lines) if lines else None


def page_data(entry: Entry, indexed: dict, kernel_titles: dict | None = None) -> str:
    """What the page's script needs to compute the fixes for the reader's values (JSON): the
    params' types and each fix as the index holds it. HTML-escaped for a data- attribute."""
    data = {
        "code": entry.code,
        "params": {name: {"type": p.type, "description": p.description} for name, p in entry.params.items()},
        "fixes": [{key: fix.get(key) for key in ("summary", "suggest", "sets", "alternative", "unverified", "kernel")}
                  for fix in indexed["fixes"]],
        "kernels": {fix["kernel"]: (kernel_titles or {}).get(fix["kernel"], fix["kernel"])
                    for fix in indexed["fixes"] if fix.get("kernel")},
    }
    return html.escape(json.dumps(data, ensure_ascii=True, separators=(",", ":")), quote=True)


def _sections(entry: Entry, catalogue: Catalogue, by_code: dict[str, Entry], related: dict | None = None,
              indexed: dict | None = None) -> dict:
    def link(word: str) -> str | None:
        if word in by_code and word != entry.code:
            return f"[{word}]({word}.md)"
        return None

    raised_as = entry.exception if entry.explain_only else f"{_module_of(catalogue)}.{entry.class_name}"
    example = _example(entry)
    used = [entry.kernel] if entry.kernel else []
    used += [f.kernel for f in entry.fixes if f.kernel and f.kernel not in used]
    kernels = [catalogue.kernels[k] for k in used if k in catalogue.kernels]
    return {
        "entry": entry,
        "kernels": [{"kernel": k, "file": kernel_url(catalogue, k)} for k in kernels],
        "page_url": http_or_none(catalogue.settings.page_url(entry.code)),
        "source": source_path(catalogue, entry),
        "edit_url": edit_url(catalogue, entry),
        "view_url": (f"{catalogue.settings.repo_url.rstrip('/')}/blob/{catalogue.settings.branch}/{source_path(catalogue, entry)}"
                     if http_or_none(catalogue.settings.repo_url) else None),
        "raised_as": raised_as,
        "raised_line": f"{raised_as}: {example}" if example is not None else None,
        "raised_by": raised_by(entry.releases, catalogue),
        "description": description(entry),
        "meaning": prose(first_sentence(entry.explanation), link),
        "reproduce": reproduce(entry, catalogue),
        "example_values": example_params(entry) if entry.bad_examples else None,
        "data": Md(page_data(entry, indexed, {k: v.title for k, v in catalogue.kernels.items()})) if indexed else None,
        "tag_links": [(tag, _anchor(tag)) for tag in entry.tags],
        "explanation": prose(entry.explanation, link),
        "triggers": [prose(t, link) for t in entry.triggers],
        "situations": [prose(s, link) for s in entry.situations],
        "prevention": [prose(p, link) for p in entry.prevention],
        "fixes": [
            {
                "summary": prose(f.summary, link),
                "suggest": list(f.suggest.items()),
                "computed": computed,
                "change": fence(change(f.before, f.after), "diff") if change(f.before, f.after) else None,
                "before": fence(f.before, "python") if f.before else None,
                "after": fence(f.after, "python") if f.after else None,
                "alternative": f.alternative,
                "unverified": prose(f.unverified, link) if f.unverified else None,
                "kernel": catalogue.kernels[f.kernel].title if f.kernel in catalogue.kernels else f.kernel,
            }
            for f, computed in zip(entry.fixes, example_suggestions(entry, catalogue))
        ],
        "variants": [
            {
                "message": fence(v.message),
                "source": prose(v.source, link),
                "exception": v.exception or entry.exception,
                "location": v.location,
                "note": prose(v.note, link) if v.note else None,
                "raised_by": raised_by(v.releases, catalogue),
            }
            for v in entry.variants
        ],
        "related": [by_code[c] for c in (related[entry.code] if related is not None else entry.related) if c in by_code],
    }


def _shown_md(value) -> Md:
    """A computed value as `errkit explain` shows it, as inline code."""
    from errkit.core.runtime import shown

    return code(shown(value))


def _groups(entries, key) -> list[tuple[str, list[Entry]]]:
    groups: dict[str, list[Entry]] = defaultdict(list)
    for e in entries:
        for name in key(e):
            if e not in groups[name]:
                groups[name].append(e)
    return sorted(groups.items())


def _anchor(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "section"


# -- the JSON index and the compiled suggestions --------------------------------------------------


def site_index(catalogue: Catalogue) -> dict:
    """errkit/_index.json's data for the browser: the same matcher, regexes in JavaScript syntax."""
    data = index_module.build(catalogue)
    every_wording = [w for e in catalogue.entries for w in wordings.wordings(e)]
    assert len(every_wording) == len(data["wordings"]), "index.build walks the wordings in this order"
    for wording, compiled in zip(every_wording, data["wordings"]):
        samples = []
        for params in wordings.sample_params(wording.entry):
            try:
                samples.append(wording.render(params))
            except Exception:
                continue
        try:
            js_regex = js.regex_to_js(compiled["regex"])
            js.check_regex(compiled["regex"], js_regex, samples)
        except ValueError as err:
            raise ValueError(f"{wording.entry.code} wording {wording.index}: no JavaScript regex: {err}") from None
        compiled["regex"] = js_regex
    data["regex_flavour"] = index_format.REGEX_FLAVOUR  # (the patterns and limits: match.js's FORMAT)
    by_code = catalogue.by_code()
    for code, entry in data["entries"].items():
        for read in entry.get("reads", ()):
            read["regex"] = js.regex_to_js(read["regex"])
        entry["page"] = f"errors/{code}/"
        example = _example(by_code[code])
        entry["example"] = f"{entry['exception']}: {example}" if example is not None else None
    return data


def suggest_table(catalogue: Catalogue) -> list[tuple[str, list[list[tuple[str, str, tuple[str, ...]]]]]]:
    """[(code, [[(label, JavaScript function, names it reads) per suggestion] per fix])]."""
    table = []
    for entry in sorted(catalogue.entries, key=lambda e: e.code):
        fixes = []
        for suggest in kernels.suggestion_sources(entry, catalogue.kernels):
            compiled = []
            for label, source in suggest.items():
                fn, names = js.compile_expression(source, entry.params.keys())
                compiled.append((label, fn, names))
            fixes.append(compiled)
        table.append((entry.code, fixes))
    return table


# -- pages ----------------------------------------------------------------------------------------


def pages(catalogue: Catalogue) -> dict[str, str]:
    """Every generated file of the site (the producer `errkit generate` writes and checks)."""
    docs = docs_folder(catalogue)
    if docs is None:
        return {}
    errors, assets = f"{docs}/errors", f"{catalogue.settings.site.rstrip('/')}/{ASSETS}"
    env = _markdown_env()
    entries = sorted(catalogue.entries, key=lambda e: e.code)
    by_code = {e.code: e for e in entries}
    common = {"HEADER": Md(HEADER), "settings": catalogue.settings, "entries": entries}
    out: dict[str, str] = {}
    index_data = site_index(catalogue)
    related = related_both_ways(entries)
    entry_template = env.get_template("site/entry.md.j2")
    for entry in entries:
        out[f"{errors}/{entry.code}.md"] = entry_template.render(
            **common, **_sections(entry, catalogue, by_code, related, index_data["entries"][entry.code]), anchor=_anchor,
            show=_shown_md)
    out[f"{errors}/index.md"] = env.get_template("site/codes.md.j2").render(**{**common, "entries": az(entries)})
    groups = env.get_template("site/groups.md.j2")
    out[f"{docs}/by-area.md"] = groups.render(
        **common, title="Errors by area", anchor=_anchor, groups=_groups(entries, lambda e: [e.area]),
        intro=f"Each area is a folder of the catalogue (`{_catalog_path(catalogue)}/<area>/`).")
    out[f"{docs}/by-tag.md"] = groups.render(
        **common, title="Errors by tag", anchor=_anchor, groups=_groups(entries, lambda e: e.tags),
        intro="Tags group errors across areas: shapes, dtypes, block sizes, upstream kernels and so on.")
    out[f"{docs}/by-exception.md"] = groups.render(
        **common, title="Errors by exception class", anchor=_anchor,
        groups=_groups(entries, lambda e: [e.exception] + [v.exception for v in e.variants if v.exception]),
        intro=f"The builtin exception class each error is raised as, by {catalogue.settings.raised_by} or, for its other wordings, upstream.")
    out[f"{assets}/index.json"] = json.dumps(index_data, indent=1, ensure_ascii=False) + "\n"
    for name, body in static_assets().items():
        out[f"{assets}/{name}"] = body
    out[f"{assets}/suggest.js"] = _js_env().get_template("site/suggest.js.j2").render(HEADER=HEADER, table=suggest_table(catalogue))
    return out


# -- orphans and `errkit docs` ---------------------------------------------------------------------


def orphans(project: Path, docs: str | None, expected) -> list[Path]:
    """Generated files under the site's docs folder (project-relative, `docs_folder`) that no
    current entry produces (project-relative)."""
    if docs is None:
        return []
    docs = project / docs
    if not docs.is_dir():
        return []
    expected = {Path(p) for p in expected}
    found = []
    for path in sorted(docs.rglob("*")):
        if not path.is_file() or path.suffix not in (".md", ".json", ".js", ".css"):
            continue
        rel = path.relative_to(project)
        if rel in expected:
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                head = handle.read(2000)
        except OSError:
            continue
        if HEADER in head:
            found.append(rel)
    return found


def run(root, args) -> int:
    """`errkit docs [--check]`: write (or check) the site's generated files and delete orphans."""
    from errkit.generate.files import linted_catalogue, write_or_check

    catalogue = linted_catalogue(Path(root), "docs")
    if catalogue is None:
        return 1
    project = catalogue.project_root
    files = {Path(rel): text.encode("utf-8") for rel, text in pages(catalogue).items()}
    return write_or_check("docs", project, files, getattr(args, "check", False),
                          orphans=orphans(project, docs_folder(catalogue), files))

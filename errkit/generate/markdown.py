"""Markdown made safe: the escaping of any text where it lands on a page (plain text, code spans,
prose that keeps its `code spans` and *emphasis*, fenced blocks, front-matter strings, HTML
comments, link addresses, heading anchors), and the jinja2 environment pages are rendered with.

Everything is escaped where it lands: the environment's `finalize` escapes every `{{ }}` for
markdown (and HTML) unless a filter here built it as `Md`. Nothing here knows of entries or
catalogues: it turns text into markdown, whatever the text says.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from errkit.core import escape
from errkit.core.runtime import labelled
from errkit.generate import render


class Md(str):
    """Markdown built here from escaped parts: written out as it is."""


_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


def _escaped(chunk: str) -> str:
    """A piece of prose escaped as text, its whitespace kept (errkit/core/escape.py: the one markdown escaping)."""
    return escape.markdown(f"x{chunk}x", starts_line=True)[1:-1]  # (x: its spaces at either end kept)


def text(value) -> Md:
    """Plain text: every markdown and HTML special character escaped, whitespace collapsed."""
    return Md(escape.markdown(value, starts_line=True))


def _code_span(content: str) -> Md:
    return Md(escape.markdown_code(content))


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
        return _escaped(chunk)
    out, pos = [], 0
    for m in _CODE_WORD.finditer(chunk):
        target = link(m.group())
        if target:
            out.append(_escaped(chunk[pos:m.start()]))
            out.append(target)
            pos = m.end()
    out.append(_escaped(chunk[pos:]))
    return "".join(out)


_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\betc)(?<!\bcf)(?<!\bapprox)(?<!\b[A-Za-z])([.!?])\s+(?=\S)")


def first_sentence(text: str) -> str:
    """The first sentence of the first paragraph of prose (code spans kept whole), unescaped."""
    para = " ".join(str(text).strip().split("\n\n", 1)[0].split())
    spans = [(m.start(), m.end()) for m in _CODE_SPAN.finditer(para)]
    for m in _SENTENCE_END.finditer(para):
        if any(a <= m.start() < b for a, b in spans):
            continue
        return para[:m.start() + 1]
    return para


def fence(value, lang: str = "text") -> Md:
    """A fenced code block holding `value` verbatim."""
    body = str(value).rstrip("\n")
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return Md(f"{ticks} {lang}\n{body}\n{ticks}")


def yaml_string(value) -> Md:
    """A front-matter string: HTML-escaped (themes print titles raw), then JSON (valid YAML)."""
    return Md(json.dumps(escape.html(" ".join(str(value).split())), ensure_ascii=True))


def comment(value) -> Md:
    """Text inside an HTML comment: no '--' that could end it."""
    return Md(re.sub(r"-(?=-)", "- ", " ".join(str(value).split())))


_URL = re.compile(r"https?://[^\s]+")


def url(value) -> Md:
    """An http(s) address as a markdown link destination (percent-encoded: no ( ) < > or spaces)."""
    value = str(value)
    if not _URL.fullmatch(value):
        raise ValueError(f"not an http(s) address: {value!r}")
    return Md(escape.link(value))


def http_or_none(value: str | None) -> str | None:
    """`value` when it is an http(s) address (one `url` takes), else None."""
    return value if value and _URL.fullmatch(value) else None


def anchor(name: str) -> str:
    """A heading's anchor (`{ #anchor }`, `page.md#anchor`): lower-case letters, digits and dashes."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "section"


def _finalize(value):
    if isinstance(value, Md):
        return value
    if value is None:
        return ""
    return text(value)


@lru_cache(maxsize=1)
def attribute(value) -> Md:
    """Any text as the value of a double-quoted HTML attribute (whitespace collapsed)."""
    return Md(escape.html(" ".join(str(value).split())))


def environment():
    """errkit's template environment (errkit/generate/render.py) for markdown: every `{{ }}`
    escaped as text unless it is `Md`; the filters text, code, prose, fence, yaml, url, comment
    attr (an HTML attribute's value), md (a string already markdown) and labelled (a suggestion's
    label beside its value: core/runtime.py labelled)."""
    env = render.environment().overlay(finalize=_finalize)
    env.filters = dict(env.filters)
    env.filters.update(text=text, code=code, prose=prose, fence=fence, yaml=yaml_string, url=url, comment=comment,
                       attr=attribute, md=lambda v: Md(v),
                       labelled=labelled)
    return env

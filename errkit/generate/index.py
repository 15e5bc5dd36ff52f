"""errkit/_index.json: everything `errkit explain` needs, precompiled, so it imports nothing heavy."""

from __future__ import annotations

import json
import re
from collections import Counter

from .. import patterns, template
from ..model import Catalogue, Entry
from .render import HEADER

INDEX_PATH = "errkit/_index.json"
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def anchor_words(wording: patterns.Wording) -> list[str]:
    """Words that every text matching the wording contains as whole words.

    A word at the edge of a literal run that touches a field could fuse with the field's value
    ("{x}abc" may print "5abc" or "xyabc"), so only words bounded inside their run count.
    """
    words: list[str] = []
    parts = wording.template.parts
    runs: list[tuple[str, bool, bool]] = []  # text, field before, field after
    run, before = "", False
    for i, part in enumerate(parts):
        if isinstance(part, str):
            run += part
        else:
            run += part.doc
            if run:
                runs.append((run, before, True))
            run, before = "", True
    if run:
        runs.append((run, before, False))
    for text, field_before, field_after in runs:
        for m in WORD.finditer(text):
            touches_start = m.start() == 0 and field_before
            touches_end = m.end() == len(text) and field_after
            if not touches_start and not touches_end:
                words.append(m.group())
    return words


def gate_tokens(wording: patterns.Wording) -> set[str]:
    """Whitespace-free pieces of the wording's fixed text: every matching text contains each of them."""
    return {tok for run in wording.template.literals for tok in run.split() if len(tok) >= 3}


def choose_gates(token_sets: list[set[str]]) -> list[str]:
    """A small set of substrings such that every wording contains one (greedy set cover).

    Scanning a log for a few substrings runs at C speed; only lines holding one are read further.
    """
    uncovered = {i for i, tokens in enumerate(token_sets) if tokens}
    gates: list[str] = []
    while uncovered:
        counts = Counter(tok for i in uncovered for tok in token_sets[i])
        best = max(counts, key=lambda t: (counts[t] * min(len(t), 10), len(t), t))
        gates.append(best)
        uncovered = {i for i in uncovered if best not in token_sets[i]}
    return sorted(gates)


def _suggestions(entry: Entry) -> list[dict]:
    return [
        {"summary": fix.summary, "suggest": dict(fix.suggest), "before": fix.before, "after": fix.after}
        for fix in entry.fixes
    ]


def build(catalogue: Catalogue) -> dict:
    settings = catalogue.settings
    wordings = [w for e in catalogue.entries for w in patterns.wordings(e)]
    words_of = [sorted(set(anchor_words(w))) for w in wordings]
    frequency = Counter(word for words in words_of for word in words)
    anchors: dict[str, list[int]] = {}
    always: list[int] = []
    compiled = []
    token_sets = [gate_tokens(w) for w in wordings]
    located = [i for i, w in enumerate(wordings) if w.variant.location and not token_sets[i]]
    for i, (wording, words) in enumerate(zip(wordings, words_of)):
        if i in located:
            pass  # no fixed text to find it by: tried only for exceptions raised at its location
        elif words:
            # the rarest word across the catalogue (longest on a tie) keeps candidate lists short
            best = min(words, key=lambda w: (frequency[w], -len(w), w))
            anchors.setdefault(best, []).append(i)
        else:
            always.append(i)
        variant = wording.variant
        compiled.append({
            "code": wording.entry.code,
            "variant": wording.index,
            "template": variant.message,
            "source": variant.source,
            "exception": variant.exception or wording.entry.exception,
            "location": variant.location,
            "regex": wording.pattern,
            "captures": [[c.group, c.param, c.type] for c in wording.captures],
            "literal_chars": wording.literal_chars,
            "skeleton": template_skeleton(wording.template),
        })
    entries = {}
    for entry in sorted(catalogue.entries, key=lambda e: e.code):
        entries[entry.code] = {
            "slug": entry.slug,
            "title": entry.title,
            "area": entry.area,
            "exception": entry.exception,
            "explain_only": entry.explain_only,
            "message": entry.message,
            "params": {name: {"type": p.type, "description": p.description} for name, p in entry.params.items()},
            "check": entry.check,
            "explanation": entry.explanation,
            "fixes": _suggestions(entry),
            "tags": list(entry.tags),
            "related": list(entry.related),
            "docs_url": settings.page_url(entry.code),
        }
    gates = choose_gates([set() if i in located else tokens for i, tokens in enumerate(token_sets)])
    ungated = [i for i, tokens in enumerate(token_sets) if not tokens and wordings[i].variant.message and i not in located]
    return {
        "$comment": HEADER,
        "gates": gates,
        "ungated": ungated,
        "project": settings.project,
        "version": settings.version,
        "entries": entries,
        "wordings": compiled,
        "anchors": dict(sorted(anchors.items())),
        "always": always,
        "located": located,
    }


def template_skeleton(tpl: template.Template) -> str:
    """The wording with each field shown as its name in angle brackets: for approximate matching."""
    out = []
    for part in tpl.parts:
        out.append(part if isinstance(part, str) else f"{part.doc}<{part.name}>")
    return "".join(out)


def index(catalogue: Catalogue) -> dict[str, str]:
    data = build(catalogue)
    # Each entry is stored as a JSON string, parsed only when explain shows it: the start-up of
    # `errkit explain` reads this file whole, and most of it is prose.
    data["entries"] = {code: json.dumps(entry, ensure_ascii=False, separators=(",", ":")) for code, entry in data["entries"].items()}
    return {INDEX_PATH: json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"}

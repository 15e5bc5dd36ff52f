"""Draft catalogue entries for uncatalogued sites: lint-shaped plain fields, written by the catalogue's
entry writer (errkit/catalogue/writing.py), drafts merged until no two wordings overlap."""

from __future__ import annotations

import functools
import itertools
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from errkit.core import expr, template
from errkit.catalogue import spec
from errkit.catalogue.vetting import vet
from errkit.scan.coverage import renderings
from errkit.scan.messages import escape, parse_template
from errkit.scan.sites import Site


@dataclass
class Draft:
    sites: list[Site]
    code: str = ""
    slug: str = ""

    @property
    def first(self) -> Site:
        return self.sites[0]


def location_of(site: Site) -> str:
    """`path:line in function`, the path from the package root when it is installed."""
    path = site.abspath.split("site-packages/", 1)[1] if "site-packages/" in site.abspath else site.path.replace(os.sep, "/")
    where = f" in {site.bare_function}" if site.function != "<module>" else ""
    return f"{path}:{site.line}{where}"


def source_of(site: Site) -> str:
    return f"{location_of(site).split(':')[0]} ({site.function})"[:300]


def plain_message(site: Site) -> str:
    """The site's template with every field written as its param (an own message resolves plain names)."""
    tpl = parse_template(site.template)
    out = []
    for part in tpl.parts:
        if isinstance(part, str):
            out.append(escape(part))
        else:
            out.append("{" + site.param_of[part.name] + ("=" if part.self_doc else "")
                       + (f"!{part.conversion}" if part.conversion else "") + (f":{part.spec}" if part.spec else "") + "}")
    return "".join(out)


def slug_for(site: Site) -> str:
    tpl = parse_template(site.template)
    words = re.findall(r"[a-z0-9]+", " ".join(p for p in tpl.parts if isinstance(p, str)).lower())
    if not words:
        words = [site.exception.lower(), "in", *re.findall(r"[a-z0-9]+", site.bare_function.lower())]
    return "-".join(words[:7])[:60].strip("-") or "draft"


def allowed(field_name: str, record: spec.Record | None = None) -> tuple:
    """The values the catalogue format allows for an enum field of an entry (or of `record`)."""
    found = (record or spec.ENTRY).field_named(field_name)
    return getattr(found.kind, "values", ()) if found else ()


def empty_messages_allowed() -> bool:
    """Does the catalogue format accept an empty message (recognised by its `location`)?"""
    message = spec.ENTRY.field_named("message")
    return not spec.validate(message.kind, "") and all(spec.ENTRY.field_named(f) for f in ("location", "source"))


def example_candidates(type_: str) -> list:
    return {
        "int": [4, 8, 3, 1, 2, 16, 0, -1, 128, 5],
        "float": [4.0, 0.5, 1.0, 0.0, -1.0, 2.0],
        "bool": [True, False],
        "str": ["value0", "value1", ""],
        "dtype": ["float32", "bfloat16", "int8"],
        "shape": [(4, 4, 4, 4), (8, 8, 8, 8), (3, 3), (1,), (2, 4), (4, 2, 4, 8), ()],
        "bytes": [1 << 20, 16 << 20, 0, 512],
    }[type_]


def find_examples(check: str, types: dict[str, str]) -> tuple[dict, dict] | None:
    """A param set that violates the check and one that satisfies it, over the names it reads."""
    return _find_examples(check, tuple(sorted(types.items())))


@functools.lru_cache(maxsize=1024)
def _find_examples(check: str, typed: tuple) -> tuple[dict, dict] | None:
    types = dict(typed)
    names = sorted(vet(check, types).names)
    pools = [example_candidates(types[n]) for n in names]
    bad = good = None
    for env in _example_envs(names, pools):
        try:
            holds = bool(expr.evaluate(check, env))
        except Exception:
            continue
        if holds and good is None:
            good = env
        elif not holds and bad is None:
            bad = env
        if bad is not None and good is not None:
            return bad, good
    return None


def _example_envs(names: list[str], pools: list[list]) -> Iterator[dict]:
    longest = max((len(p) for p in pools), default=0)
    for k in range(longest):  # everything alike first: equal sizes, matching shapes
        yield {n: p[k % len(p)] for n, p in zip(names, pools)}
    total = 1
    for p in pools:
        total *= len(p)
    if total <= 4096:
        for combo in itertools.product(*pools):
            yield dict(zip(names, combo))
        return
    rng = random.Random(0)
    for _ in range(4096):
        yield {n: rng.choice(p) for n, p in zip(names, pools)}


class DraftWriter:
    """Draft entries for uncatalogued sites, under DIR/drafts, lint-shaped and marked for review."""

    AREA = "drafts"
    HEADER = ("DRAFT written by `errkit scan --emit` into this catalogue's drafts/ folder: `errkit lint` refuses it "
              "(unfinished-draft) until every TODO is written; then keep it here or move it to its area's folder.")

    def __init__(self, root: Path, report, prefix: str | None = None) -> None:
        from errkit.catalogue.codes import code_prefix

        self.root = root
        self.report = report
        self.existing = self._existing_entries()
        self.prefix = prefix or code_prefix(root)

    def _existing_entries(self) -> list:
        if not self.root.is_dir():
            return []
        from errkit.catalogue.load import load

        return list(load(self.root).entries)

    def write(self, sites: list[Site]) -> list[Path]:
        from errkit.core.atomic import write_text

        drafts = merge_overlapping(self.group(self.draftable(sites)), self)
        self.number(drafts)
        out = []
        for draft in drafts:
            if not draft.code:
                continue
            path = self.root / self.AREA / f"{draft.code}-{draft.slug}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text(path, self.text(draft))
            out.append(path)
        return out

    def draftable(self, sites: list[Site]) -> list[Site]:
        keep, already = [], self._drafted_wordings()
        for site in sites:
            why = self._not_draftable(site, already)
            if why:
                self.report(f"{site.path}:{site.line}: {why}; not drafted")
            else:
                keep.append(site)
        return keep

    def _not_draftable(self, site: Site, already) -> str | None:
        if not site.template:
            return None if empty_messages_allowed() else "no message, and the catalogue format needs one"
        if len(site.template) > 2000:
            return "message template longer than 2000 characters"
        if not "".join(p for p in parse_template(site.template).parts if isinstance(p, str)).strip():
            return "the message is all placeholders (no fixed wording to recognise)"
        for wording in already:
            if any(re.fullmatch(wording.pattern, text) for text in renderings(site)):
                return f"already drafted as {wording.entry.code} in {self.root}"
        return None

    def _drafted_wordings(self) -> list:
        from errkit.catalogue import wordings

        return [w for e in self.existing for w in wordings.wordings(e) if w.variant.message.strip()]

    def group(self, sites: list[Site]) -> list[Draft]:
        """One draft per wording: identical templates (several raise sites) share one."""
        by_key: dict[str, Draft] = {}
        for site in sites:
            key = site.template if site.template else f"\0{site.abspath}:{site.line}"
            by_key.setdefault(key, Draft([])).sites.append(site)
        return list(by_key.values())

    def number(self, drafts: list[Draft]) -> None:
        from errkit.catalogue.codes import next_code, used_codes
        from errkit.core import UsageError

        taken = used_codes(self.root) if self.root.is_dir() else set()
        slugs = {e.slug for e in self.existing}
        previous = None
        for i, draft in enumerate(drafts):
            try:  # as `errkit new drafts ...` numbers: after the area's highest, else the first free hundred
                draft.code = (next_code(self.root, self.AREA, self.prefix, taken) if previous is None
                              else self._after(previous, taken))
            except UsageError as err:
                self.report(f"{self.root}: {err}; {len(drafts) - i} draft(s) not written")
                draft.code = ""
                return
            taken.add(draft.code)
            previous = draft.code
            base = slug_for(draft.first)
            slug, n = base, 2
            while slug in slugs:
                slug, n = f"{base}-{n}", n + 1
            slugs.add(slug)
            draft.slug = slug

    def _after(self, code: str, taken: set[str]) -> str:
        from errkit.core import UsageError

        for number in range(int(code[len(self.prefix):]) + 1, 1000):
            if f"{self.prefix}{number:03d}" not in taken:
                return f"{self.prefix}{number:03d}"
        raise UsageError(f"no free code left after {code}")

    # -- one entry --

    def entry(self, draft: Draft):
        """The draft as an entry document (the catalogue's entry writer lays it out)."""
        from errkit.catalogue.writing import entry_document

        return entry_document(self.fields(draft))

    def fields(self, draft: Draft) -> dict[str, Any]:
        """The draft's entry as plain fields (None: left out): its wording, params, check and
        examples, TODOs for the prose a reviewer writes."""
        first = draft.first
        params = {}
        for site in draft.sites:
            for name, type_ in site.params.items():
                params.setdefault(name, type_)
        check, examples = self._check_and_examples(draft, params)
        exception = self._exception(first.base)
        located = not first.template  # recognised by where it is raised: the entry carries its site
        return {
            "code": draft.code or f"{self.prefix}900",
            "slug": draft.slug or "draft",
            "title": ("TODO: title for " + (first.template or f"{first.exception} in {first.bare_function}"))[:200],
            "exception": exception,
            "message": plain_message(first) if first.template else "",
            "source": source_of(first) if located else None,
            "location": location_of(first) if located else None,
            "explain_only": True,
            "params": {name: {"type": type_, "description": f"TODO: what {self._printed(draft, name)} is."}
                       for name, type_ in params.items()} or None,
            "check": check,
            "explanation": "TODO: explain what the error means and why the code needs the invariant.\n",
            "triggers": ["TODO: a concrete input that raises it."],
            "fixes": [{"summary": "TODO: what to change."}],
            "variants": [self._variant(site, exception, params) for site in draft.sites] if first.template else None,
            "examples": examples,
        }

    @staticmethod
    def _check_and_examples(draft: Draft, params: dict[str, str]) -> tuple[str | None, dict | None]:
        """The check every site of the draft shares, with a bad and a good example; (None, None)
        when the sites differ or no examples are found (lint wants both)."""
        checks = {s.check for s in draft.sites}
        check = checks.pop() if len(checks) == 1 else None
        examples = find_examples(check, params) if check else None
        if not (check and examples):
            return None, None
        bad, good = examples
        return check, {"bad": [bad], "good": [good]}

    @staticmethod
    def _printed(draft: Draft, name: str) -> str:
        for site in draft.sites:
            for source, param in site.param_of.items():
                if param == name:
                    return f"`{source}`"
        return name

    @staticmethod
    def _exception(base: str) -> str:
        """The site's builtin where an entry may name it; otherwise ValueError (the variant says which)."""
        return base if base in allowed("exception") else "ValueError"

    def _variant(self, site: Site, exception: str, params: dict) -> dict[str, Any]:
        exc = site.base if site.base != exception else None
        return {
            "message": site.template,
            "source": source_of(site),
            "exception": exc if exc and exc in allowed("exception", spec.VARIANT) else None,
            "aliases": self._aliases(site, params) or None,
            "location": location_of(site),
            "note": f"Raised as {site.exception}, a subclass of {site.base}." if site.exception != site.base else None,
        }

    @staticmethod
    def _aliases(site: Site, params: dict) -> dict[str, str]:
        out = {}
        for f in parse_template(site.template).fields:
            param = site.param_of[f.name]
            if template.resolve(f, params, {}) != param:
                out[f.name] = param
        return out

    def text(self, draft: Draft) -> str:
        from errkit.catalogue.writing import entry_text

        return entry_text(self.entry(draft), header=self.HEADER)

    def model(self, draft: Draft):
        """The draft as the loader would build it: what lint and the overlap test see."""
        from errkit.catalogue.load import build_entry, plain
        from errkit.catalogue.model import Positions

        return build_entry(plain(self.entry(draft)), self.AREA, Positions(Path(draft.code or "draft")))


def merge_overlapping(drafts: list[Draft], writer: DraftWriter) -> list[Draft]:
    """Merge drafts until no two have wordings that match each other's renderings (lint would refuse)."""
    for _ in range(10):
        pairs = overlapping_pairs([writer.model(d) for d in drafts])
        if not pairs:
            return drafts
        parent = list(range(len(drafts)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for a, b in pairs:
            parent[root(b)] = root(a)
        merged: dict[int, Draft] = {}
        for i, draft in enumerate(drafts):
            merged.setdefault(root(i), Draft([])).sites.extend(draft.sites)
        drafts = list(merged.values())
    return drafts


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def anchor_words(wording) -> list[str]:
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
        for m in _WORD.finditer(text):
            touches_start = m.start() == 0 and field_before
            touches_end = m.end() == len(text) and field_after
            if not touches_start and not touches_end:
                words.append(m.group())
    return words


def overlapping_pairs(entries: list) -> set[tuple[int, int]]:
    """(i, j) where a sample rendering of entry i's wording fully matches a wording of entry j.

    The test lint's `overlapping-wording` rule makes, with an anchor-word prefilter so that a few
    thousand drafts stay cheap.
    """
    from errkit.catalogue import wordings

    compiled = []
    for i, entry in enumerate(entries):
        for wording in wordings.wordings(entry):
            if wording.variant.message.strip():
                compiled.append((i, wording, re.compile(wording.pattern), set(anchor_words(wording))))
    by_word: dict[str, list[int]] = {}
    always = []
    for k, (_, _, _, words) in enumerate(compiled):
        for word in words:
            by_word.setdefault(word, []).append(k)
        if not words:
            always.append(k)
    pairs: set[tuple[int, int]] = set()
    for i, wording, _, _ in compiled:
        for params in wordings.sample_params(wording.entry):
            try:
                text = wording.render(params)
            except (KeyError, ValueError, TypeError):
                continue
            present = set(_WORD.findall(text))
            candidates = {k for w in present & by_word.keys() for k in by_word[w]} | set(always)
            for k in candidates:
                j, _, regex, words = compiled[k]
                if j != i and words <= present and regex.fullmatch(text):
                    pairs.add((min(i, j), max(i, j)))
    return pairs

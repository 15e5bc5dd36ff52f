"""The compiled index (`index` setting; errkit/_index.json here): everything `errkit explain` needs, precompiled, so it imports nothing heavy."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from errkit.catalogue import kernels, ledger, wordings, releases
from errkit.core import index_format, template
from errkit.catalogue.model import Catalogue, Entry
from errkit.generate.render import HEADER



# Where a prefilter key comes from, rarest first: a code-like token (`num_q_heads=`, `bf16`,
# `(inferred`), a phrase of words, a long word, a short phrase, a short word. Prose is full of
# short words and rarely holds code-like tokens or a given phrase.
_CODE_LIKE = re.compile(r"[_=0-9()\[\]{}<>*/`]|\w\.\w")
_CLASS_COST = (1, 2, 8, 16, 64)


def key_candidates(wording: wordings.Wording) -> set[str]:
    """Texts every rendering of the wording contains: its tokens of 3+ characters and phrases of
    2-3 consecutive tokens of one fixed-text run, words joined by one space (the matcher allows
    any run of whitespace between them, as the wording's regex does). The punctuation that ends
    the message is left out: the regex makes it optional. A `located_only` wording has none: explain
    tries it only for exceptions raised at its location."""
    out: set[str] = set()
    if wording.variant.located_only:
        return out
    runs = list(wording.template.unspaced_literals)
    if runs and isinstance(wording.template.parts[-1], str):
        runs[-1] = runs[-1].rstrip(template.FINAL_PUNCTUATION)
    for run in runs:
        if not run.isascii():
            try:
                run.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: no UTF-8 input holds it
                continue
        tokens = run.split()
        for i, token in enumerate(tokens):
            if len(token) >= 3:
                out.add(token)
            for n in (2, 3):
                if i + n <= len(tokens):
                    out.add(" ".join(tokens[i:i + n]))
    return out


def _rarity_class(key: str, code_names: frozenset[str] = frozenset()) -> int:
    core = key.strip(".,:;!?'\"")
    if core in code_names and len(core) >= 3:
        return 0
    if " " in key:
        return 1 if len(key) >= 12 else 3
    if _CODE_LIKE.search(core) and len(core) >= 4:
        return 0
    return 2 if len(core) >= 9 else 4


def choose_keys(candidate_sets: list[set[str]], code_names: frozenset[str] = frozenset()) -> list[str | None]:
    """Each wording's prefilter key: the candidate least likely to appear in other text.

    Cost = how common its kind is in prose x how many wordings share it (every line holding a key
    is matched against every wording sharing it), so the choice stays good as a catalogue grows.
    `code_names`: names messages print as `name=` (`{name=}` fields), as rare as code whatever
    their length, though the key leaves out the `=` (its spacing varies).
    """
    shared = Counter(c for cands in candidate_sets for c in cands)

    def cost(key: str) -> tuple:
        kind = _rarity_class(key, code_names)
        return (_CLASS_COST[kind] * shared[key], kind, -len(key), key)

    return [min(cands, key=cost) if cands else None for cands in candidate_sets]


def _suggestions(entry: Entry, kernel_map, verified: list | None = None) -> list[dict]:
    """Each fix as explain shows it, its suggestions written out to satisfy the rules of the kernels
    that may raise the error (errkit/catalogue/kernels.py: solutions); `unverified` none once the
    fix's values all worked on a TPU (`verified`: the entry's ledger records, errkit/catalogue/ledger.py)."""
    return [
        {"summary": fix.summary, "suggest": solved["suggest"], "sets": dict(fix.sets), "before": fix.before, "after": fix.after,
         "alternative": fix.alternative, "unverified": ledger.shown_unverified(fix.unverified, verified or [], n),
         "kernel": fix.kernel,
         **({"site": fix.site} if fix.site else {}), **({"cases": solved["cases"]} if solved["cases"] else {}),
         **({"requires": solved["requires"]} if solved["requires"] else {})}
        for n, (fix, solved) in enumerate(zip(entry.fixes, kernels.solutions(entry, kernel_map)), 1)
    ]


def build(catalogue: Catalogue) -> dict:
    settings = catalogue.settings
    every_wording = [w for e in catalogue.entries for w in wordings.wordings(e)]
    code_names = frozenset(f.printed_name for w in every_wording for f in w.template.fields if f.printed_name)
    keys = choose_keys([key_candidates(w) for w in every_wording], code_names)
    compiled = []
    for wording, key in zip(every_wording, keys):
        variant = wording.variant
        compiled.append({
            "code": wording.entry.code,
            "variant": wording.index,
            "template": variant.message,
            "source": variant.source or settings.raised_by,
            "exception": variant.exception or wording.entry.exception,
            "location": variant.location,
            "regex": wording.pattern,
            "captures": [[c.group, c.param, c.type] for c in wording.captures],
            "literal_chars": wording.literal_chars,
            "skeleton": template_skeleton(wording.template),
            # what the matcher's prefilter looks for (None: no fixed text of 3+ characters; such a
            # wording is tried on lines naming an exception, or recognised by its raise site)
            "key": key,
            # the upstream releases raising this wording: None, or dist, specifier, bounds (number
            # lists) and how to show it ("jax 0.4.31 to 0.5.2", from the harvested releases)
            "releases": releases.index_record(variant.releases, catalogue.root),
            # the kernels raising it: one, or several when the wording is shared (the traceback's
            # paths may then tell which: the kernels' `source` files)
            "kernels": list(wording.entry.raising_kernels(variant)),
        })
    entries = {}
    ledgers = ledger.read(catalogue.root)  # what running the advice on the real kernels showed
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
            "fixes": _suggestions(entry, catalogue.kernels, ledgers.get(entry.code)),
            "kernel": entry.kernel,
            "tags": list(entry.tags),
            "related": list(entry.related),
            "docs_url": settings.page_url(entry.code),
        }
        if entry.code in ledgers:  # the advice run on the real kernels (catalog/ledger/): platform, versions, counts
            entries[entry.code]["verified"] = [{k: r[k] for k in (*ledger.KEYS, "said")} for r in ledgers[entry.code]]
        if entry.needs_context:  # other compilers print it too: exact only with JAX, Pallas or Mosaic shown
            entries[entry.code]["needs_context"] = True
        if entry.reads:  # lines after the message that hold more of its params (a compiler's dump)
            entries[entry.code]["reads"] = [{"regex": r.pattern, "captures": [[c.group, c.param, c.type] for c in r.captures]}
                                            for r in wordings.reads(entry)]
    return checked({
        "$comment": HEADER,
        "format": index_format.VERSION,
        "project": settings.project,
        "version": settings.version,
        "entries": entries,
        "wordings": compiled,
        # what explain says of a fix for one kernel, and how a traceback tells a shared wording's kernel
        "kernels": {k.id: {"title": k.title, "source": k.source, "names": list(k.names),
                           **({"framework": k.framework} if k.framework != "jax" else {})}
                    for k in sorted(catalogue.kernels.values(), key=lambda k: k.id)},
    })


def checked(data: dict) -> dict:
    """`data` (build's) when each of its records has the keys errkit/core/index_format.py defines
    for it, in that order: the format has one definition, which the explain side and the paste
    page read by. ValueError naming the first record that differs."""
    f = index_format

    def expect(record: dict, keys: tuple, where: str, optional: tuple = ()) -> None:
        got = tuple(record)
        if got != keys + tuple(k for k in optional if k in record):
            raise ValueError(f"index {where}: keys {list(got)}, the format (errkit/core/index_format.py) has "
                             f"{list(keys + optional)}")

    expect(data, f.TOP_KEYS, "top level")
    for code, entry in data["entries"].items():
        expect(entry, f.ENTRY_KEYS, f"entry {code}", f.ENTRY_OPTIONAL_KEYS)
        for name, param in entry["params"].items():
            expect(param, f.PARAM_KEYS, f"entry {code} param {name}")
        for n, fix in enumerate(entry["fixes"]):
            expect(fix, f.FIX_KEYS, f"entry {code} fix {n}", f.FIX_OPTIONAL_KEYS)
            for c, case in enumerate(fix.get("cases", ())):
                expect(case, f.CASE_KEYS, f"entry {code} fix {n} case {c}", f.CASE_OPTIONAL_KEYS)
        for n, read in enumerate(entry.get("reads", ())):
            expect(read, f.READ_KEYS, f"entry {code} read {n}")
    for n, wording in enumerate(data["wordings"]):
        expect(wording, f.WORDING_KEYS, f"wording {n} ({wording.get('code')})")
        if wording["releases"] is not None:
            expect(wording["releases"], f.RELEASES_KEYS, f"wording {n} releases")
    for name, kernel in data["kernels"].items():
        expect(kernel, f.KERNEL_KEYS, f"kernel {name}", f.KERNEL_OPTIONAL_KEYS)
    return data


def template_skeleton(tpl: template.Template) -> str:
    """The wording with each field shown as its name in angle brackets: for approximate matching."""
    out = []
    for part in tpl.parts:
        out.append(part if isinstance(part, str) else f"{part.doc}<{part.name}>")
    return "".join(out)


# The catalogue `compiled` compiled last, with its index: [(catalogue, data)], or [] before the first.
_COMPILED: list[tuple[Catalogue, dict]] = []


def compiled(catalogue: Catalogue) -> dict:
    """build(catalogue), built once for a Catalogue object (a Catalogue does not change): the
    `index` output and the site's index.json (errkit/generate/assets.py) of one `errkit generate`
    are made from one build. Shared, so no reader changes it: each copies what it changes."""
    if not _COMPILED or _COMPILED[0][0] is not catalogue:
        _COMPILED[:] = [(catalogue, build(catalogue))]
    return _COMPILED[0][1]


def index(catalogue: Catalogue) -> dict[str, str]:
    """The compiled index, at the catalogue's `index` setting (none: a catalogue without one)."""
    if not catalogue.settings.index:
        return {}
    data = compiled(catalogue)
    # Each entry is stored as a JSON string, parsed only when explain shows it: the start-up of
    # `errkit explain` reads this file whole, and most of it is prose.
    entries = {code: json.dumps(entry, ensure_ascii=False, separators=(",", ":")) for code, entry in data["entries"].items()}
    return {catalogue.settings.index: json.dumps({**data, "entries": entries}, ensure_ascii=False, separators=(",", ":")) + "\n"}


def compiled_index(folder) -> dict | None:
    """The matcher index of the catalogue under `folder`, compiled in memory; None (its errors
    printed) when it does not lint clean. What `--catalog DIR` reads when DIR's index is stale."""
    from errkit.generate.files import linted_catalogue  # (files imports lint: only for --catalog)

    catalogue = linted_catalogue(Path(folder), "explain")
    return None if catalogue is None else build(catalogue)

"""site/docs: the troubleshooting site's generated pages, what each entry page shows, and the
`pages` producer that writes them with the files of the site's scripts.

Generated here (every file starts with the generated-file header):
  site/docs/errors/<CODE>.md            one page per entry, served at errors/<CODE>/
  site/docs/errors/index.md             the A-Z of codes
  site/docs/by-area.md, by-tag.md, by-exception.md
  site/docs/assets/errkit/              what the site's scripts read (errkit/generate/assets.py)

Everything from the catalogue is escaped where it lands (errkit/generate/markdown.py); the worked
example an entry page shows is errkit/generate/examples.py's. A generated page whose entry is gone
is an orphan (errkit/generate/files.py): `errkit docs` deletes it, `errkit docs --check` and the
site tests fail on it, `errkit generate` warns.
"""

from __future__ import annotations

import difflib
import html
import json
import re
from collections import defaultdict
from pathlib import Path

from errkit.catalogue import releases
from errkit.catalogue.model import Catalogue, Entry
from errkit.core import lifespan
from errkit.core.titles import in_sentence
from errkit.generate import assets, markdown
from errkit.generate import index as index_module
from errkit.generate.examples import example_params, example_suggestions, raised_message, reproduce
from errkit.generate.markdown import Md, anchor, code, fence, first_sentence, http_or_none, prose
from errkit.generate.render import HEADER
from errkit.generate.validators import module_name

ASSETS = "docs/assets/errkit"  # inside the site folder (the `site` setting)


def docs_folder(catalogue: Catalogue) -> str | None:
    """The site's docs folder, project-relative; None for a catalogue without a site."""
    return f"{catalogue.settings.site.rstrip('/')}/docs" if catalogue.settings.site else None


# -- what the pages show --------------------------------------------------------------------------


def source_path(catalogue: Catalogue, entry: Entry) -> str:
    """The entry's YAML file, relative to the project root."""
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


def raised_by(text: str | None, catalogue: Catalogue) -> str | None:
    """'jax 0.4.31 to 0.5.2' for a wording's `releases`, None when it has none."""
    record = releases.index_record(text, catalogue.root)
    return record["shown"] if record else None


def life(text: str | None, catalogue: Catalogue) -> str | None:
    """'raised since jax 0.4.29; no longer raised since jax 0.4.36' for a wording's `releases`
    (errkit/core/lifespan.py, the words `errkit explain` says), None when it has none."""
    found = lifespan.life(releases.index_record(text, catalogue.root))
    return found["text"] if found else None


def life_summary(entry: Entry, catalogue: Catalogue) -> str | None:
    """The entry's life over all its wordings (its message and its variants), for the line under
    its title: 'raised since jax 0.4.25; no longer raised since jax 0.4.38'."""
    return lifespan.summary([releases.index_record(text, catalogue.root)
                             for text in [entry.releases] + [v.releases for v in entry.variants]])


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
    message = " ".join((raised_message(entry) or entry.message or "").split())
    return f"{entry.title.rstrip('.')}: {message}" if message else entry.title


# Words a title may start with that an index of titles does not sort on ("A TPU kernel ..." under T).
_ARTICLES = re.compile(r"^(?:(?:a|an|the)\s+)?", re.I)


def az(entries) -> list[Entry]:
    """Entries A-Z by title (case, leading punctuation and a leading "A", "An" or "The" ignored),
    ties by code."""
    def key(e):
        title = re.sub(r"^[^A-Za-z0-9]+", "", e.title)
        return (_ARTICLES.sub("", title, count=1).casefold(), e.code)

    return sorted(entries, key=key)


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

    raised_as = entry.exception if entry.explain_only else f"{module_name(catalogue)}.{entry.class_name}"
    example = raised_message(entry)
    used = [entry.kernel] if entry.kernel else []
    used += [f.kernel for f in entry.fixes if f.kernel and f.kernel not in used]
    kernels = [catalogue.kernels[k] for k in used if k in catalogue.kernels]
    return {
        "entry": entry,
        "kernels": [{"kernel": k, "title": in_sentence(k.title), "file": kernel_url(catalogue, k)} for k in kernels],
        "page_url": http_or_none(catalogue.settings.page_url(entry.code)),
        "source": source_path(catalogue, entry),
        "edit_url": edit_url(catalogue, entry),
        "view_url": (f"{catalogue.settings.repo_url.rstrip('/')}/blob/{catalogue.settings.branch}/{source_path(catalogue, entry)}"
                     if http_or_none(catalogue.settings.repo_url) else None),
        "raised_as": raised_as,
        "raised_line": f"{raised_as}: {example}" if example is not None else None,
        "raised_by": raised_by(entry.releases, catalogue),
        "life": life(entry.releases, catalogue),
        "life_summary": life_summary(entry, catalogue),
        "description": description(entry),
        "meaning": prose(first_sentence(entry.explanation), link),
        "reproduce": reproduce(entry, catalogue),
        "example_values": example_params(entry) if entry.bad_examples else None,
        "example_values_shown": ", ".join(f"{name}={value}" for name, value in (example_params(entry) or {}).items()),
        "data": Md(page_data(entry, indexed, {k: in_sentence(v.title) for k, v in catalogue.kernels.items()})) if indexed else None,
        "tag_links": [(tag, anchor(tag)) for tag in entry.tags],
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
                "unverified": prose(shown, link) if shown else None,
                "kernel": in_sentence(catalogue.kernels[f.kernel].title) if f.kernel in catalogue.kernels else f.kernel,
            }
            for f, computed, shown in zip(entry.fixes, example_suggestions(entry, catalogue),
                                          [fix["unverified"] for fix in indexed["fixes"]] if indexed else
                                          [f.unverified for f in entry.fixes])
        ],
        # the advice run on the real kernels (catalog/ledger/, errkit/catalogue/ledger.py)
        "verified": (indexed or {}).get("verified") or [],
        "variants": [
            {
                "message": fence(v.message),
                "source": prose(v.source, link),
                "exception": v.exception or entry.exception,
                "location": v.location,
                "note": prose(v.note, link) if v.note else None,
                "raised_by": raised_by(v.releases, catalogue),
                "life": life(v.releases, catalogue),
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


# -- pages ----------------------------------------------------------------------------------------


def pages(catalogue: Catalogue) -> dict[str, str]:
    """Every generated file of the site: its pages, and assets.assets in its assets folder (the
    producer `errkit generate` writes and checks, and `errkit docs` alone)."""
    docs = docs_folder(catalogue)
    if docs is None:
        return {}
    errors, scripts = f"{docs}/errors", f"{catalogue.settings.site.rstrip('/')}/{ASSETS}"
    env = markdown.environment()
    entries = sorted(catalogue.entries, key=lambda e: e.code)
    by_code = {e.code: e for e in entries}
    common = {"HEADER": Md(HEADER), "settings": catalogue.settings, "entries": entries}
    out: dict[str, str] = {}
    indexed = index_module.compiled(catalogue)["entries"]  # each page's script data: its fixes as the index holds them
    related = related_both_ways(entries)
    entry_template = env.get_template("site/entry.md.j2")
    for entry in entries:
        out[f"{errors}/{entry.code}.md"] = entry_template.render(
            **common, **_sections(entry, catalogue, by_code, related, indexed[entry.code]), anchor=anchor,
            show=_shown_md)
    out[f"{errors}/index.md"] = env.get_template("site/codes.md.j2").render(**{**common, "entries": az(entries)})
    groups = env.get_template("site/groups.md.j2")
    out[f"{docs}/by-area.md"] = groups.render(
        **common, title="Errors by area", anchor=anchor, groups=_groups(entries, lambda e: [e.area]),
        intro=f"Each area is a folder of the catalogue (`{_catalog_path(catalogue)}/<area>/`).")
    out[f"{docs}/by-tag.md"] = groups.render(
        **common, title="Errors by tag", anchor=anchor, groups=_groups(entries, lambda e: e.tags),
        intro="Tags group errors across areas: shapes, dtypes, block sizes, upstream kernels and so on.")
    out[f"{docs}/by-exception.md"] = groups.render(
        **common, title="Errors by exception class", anchor=anchor,
        groups=_groups(entries, lambda e: [e.exception] + [v.exception for v in e.variants if v.exception]),
        intro=f"The builtin exception class each error is raised as, by {catalogue.settings.raised_by} or, for its other wordings, upstream.")
    for name, body in assets.assets(catalogue).items():
        out[f"{scripts}/{name}"] = body
    return out

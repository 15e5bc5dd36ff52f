"""The catalogue knows which jax release raises which wording.

`catalog/harvest/jax.json` (written by `scripts/harvest.py`) holds every raise site of JAX's
attention kernels in every release from 0.4.25 on: template -> sites, each with the releases that
raise it. Here, with no network: every harvested wording, rendered with sample values, is read
back exactly by the matcher, values included, as a wording whose `releases` range holds each
release raising it; and every range covers exactly the releases whose wordings it is matched by.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from errkit.catalogue import releases
from errkit.core import values
from errkit.explain.matching.blocks import scan
from errkit.explain.matching.index import Index
from errkit.explain.matching.around import match_location
from errkit.explain.matching.keys import candidates
from errkit.scan.messages import parse_template
from errkit.scan.sites import RawSite, Site, assign_params
from support import CATALOG, ROOT, bundled_catalogue

HARVEST = CATALOG / "harvest" / "jax.json"
DATA = json.loads(HARVEST.read_text(encoding="utf-8"))
RELEASES: list[str] = DATA["releases"]

class Typed(str):
    """A field the scan cannot type from source alone: sample values of this type."""


# Templates whose fields the scan cannot fill from source alone: the values the callers really pass
# (each set is rendered and must be recognised; the remaining fields get sample values).
REALISED = {
    # BlockSizes.__post_init__'s helper, called with these four (prefix, suffix) pairs and int sizes
    **{template: [{"prefix": p, "suffix": s, "minor": Typed("int"), "major": Typed("int")}
                  for p, s in (("block_k", ""), ("block_q", "_dkv"), ("block_k", "_dkv"), ("block_k", "_dq"))]
       for template in ("{prefix}{suffix}={minor} should be smaller than {prefix}_major{suffix}={major}",
                        "{prefix}{suffix}={minor} should divide {prefix}_major{suffix}={major}")},
    # an assert whose message is a tuple of two shapes
    "{(padded_non_zero_cols.shape, block_mask.shape)}": [{"(padded_non_zero_cols.shape, block_mask.shape)": ((2, 3), (1, 2, 2))}],
    "{(padded_non_zero_rows.shape, block_mask.shape)}": [{"(padded_non_zero_rows.shape, block_mask.shape)": ((2, 3), (1, 2, 2))}],
}

# Harvested templates not recognised, each with why. This list may only shrink, and it is held to
# that: it must name exactly the templates found unrecognised (a stale item fails).
EXEMPT: dict[str, str] = {}


# -- the harvested data ---------------------------------------------------------------------------


def runs_releases(at: list) -> list[str]:
    order = {r: i for i, r in enumerate(RELEASES)}
    raised = set()
    for first, last, _ in at:
        raised.update(RELEASES[order[first]:order[last] + 1])
    return [r for r in RELEASES if r in raised]


CASES = [(template, site) for template, sites in DATA["wordings"].items() for site in sites]


def case_id(case) -> str:
    template, site = case
    return f"{Path(site['path']).name}:{site['function'].rsplit('.', 1)[-1]}:{template[:50] or '(no message)'}"


# -- recognising one harvested site ---------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def index() -> Index:
    return Index.load(str(ROOT / "errkit" / "_index.json"))


def scan_site(template: str, site: dict) -> Site:
    """The harvested site as errkit's scan would see it: params typed from the template."""
    raw = RawSite(site["exception"], site["at"][-1][2], site["function"], template, {}, None)
    out = Site(site["path"], "/harvest/" + site["path"], raw, site["exception"], False)  # builtins, all of them
    assign_params(out)
    return out


def render(template: str, value_of: dict) -> str | None:
    """The message as raised (lines kept), or None when a value does not fit its format spec."""
    try:
        return parse_template(template).render(lambda f: value_of[f.name])
    except (ValueError, TypeError, KeyError):
        return None


def raised(text: str, site: dict):
    """The match of `text` as the site raises it: under a traceback whose last frame is the site
    (explain tells wordings of several entries with the same text apart by it)."""
    frame = f'  File "/venv/lib/python3.11/site-packages/{site["path"]}", line {site["at"][-1][2]}, in {site["function"].rsplit(".", 1)[-1]}'
    traceback = f"Traceback (most recent call last):\n{frame}\n    raise\n{site['exception']}: {text}\n"
    return next(iter(scan(index(), traceback)), None)


def one_line(text: str) -> str:
    """As errkit/scan/coverage.py matches a rendering: one line."""
    return " ".join(text.split("\n")).strip()


def value_sets(site: Site, fixed: dict) -> list[dict]:
    """Field expression -> value: the guessed types first, then the types of each candidate wording
    with as many values, then the guessed types with numbers for text."""
    guessed = {source: site.params[param] for source, param in site.param_of.items()}
    type_sets = [{k: fixed.get(k, t) if isinstance(fixed.get(k), Typed) else t for k, t in guessed.items()}]
    fixed = {k: v for k, v in fixed.items() if not isinstance(v, Typed)}
    first = render(site.template, {k: fixed.get(k, values.sample(t, i)) for i, (k, t) in enumerate(type_sets[0].items())})
    fields = parse_template(site.template).fields
    for i in dict.fromkeys(candidates(index(), one_line(first or "")) if len(type_sets[0]) > len(fixed) else ()):
        captures = index().wordings[i]["captures"]
        if len(captures) == len(fields):
            typed: dict[str, str] = {}
            for f, capture in zip(fields, captures):
                typed.setdefault(f.name, capture[2])
            type_sets.append(typed)
    # a name the scan reads as text may print a number (`got {q_seq_rank}`)
    type_sets.append({k: "int" if t == "str" and k not in fixed else t for k, t in type_sets[0].items()})
    out = []
    for types in type_sets:
        for seed in (0, 1):
            out.append({k: fixed[k] if k in fixed else values.sample(t, seed + i) for i, (k, t) in enumerate(types.items())})
    return out


def _plain(value):
    return tuple(_plain(v) for v in value) if isinstance(value, (tuple, list)) else value


@dataclass
class Outcome:
    found: object  # the matcher's Match, or None
    text: str  # what was matched
    lost: list[str]  # rendered values the match did not read back
    wordings: list[dict]  # the catalogue wordings standing for this raise site (see attributed)


def recognise(template: str, site: dict) -> list[Outcome]:
    """One Outcome for each value set the site's callers use (REALISED), else for sample values."""
    s = scan_site(template, site)
    results = []
    for fixed in REALISED.get(template, [{}]):
        best = None
        for value_of in value_sets(s, fixed):
            raw = render(template, value_of)
            if raw is None:
                continue
            text = one_line(raw)
            found = raised(text, site) if text else None
            if found is None or not found.exact or not re.fullmatch(found.wording["regex"], text):
                found = match_location(index(), s.abspath, s.bare_function, s.line, s.base, text)
            if found is None:
                best = best or Outcome(None, text, [], [])
                continue
            got = [_plain(v) for v in found.params.values()]
            lost = [f"{k}={v!r}" for k, v in value_of.items()
                    if not (k in fixed and not isinstance(fixed[k], Typed)) and _plain(v) not in got]
            best = Outcome(found, text, lost, attributed(found, raw, site, template))
            if not lost:
                break
        results.append(best or Outcome(None, "(no rendering)", [], []))
    return results


@functools.lru_cache(maxsize=1)
def by_code() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for w in index().wordings:
        out.setdefault(w["code"], []).append(w)
    return out


def shapes(template: str) -> set[str]:
    """The template as fixed text with a marker per value (`{x=}` and `x={y}` read alike), whole
    and line by line: a wording written for a harvested template has one of its shapes."""
    shape = "".join(p if isinstance(p, str) else p.doc + "\x00" for p in parse_template(template).parts)
    return {shape, *(shape.split("\n") if "\n" in shape else ())}


def attributed(found, raw: str, site: dict, template: str) -> list[dict]:
    """The wordings that stand for this raise site. Of the matched entry's wordings that read the
    message whole (or, for a message of several lines, one of its lines, as explain reads a log),
    those written for this template (same fixed text, see `shapes`) and whose `location` names the
    site best: its file, then function, then line; a wording naming no site (this kernel's own
    message) only when no other reads it. An entry may record one text once per raise site, or
    once per release's template: each such wording carries its own releases. A wording of another
    distribution's releases (tokamax raising jax's text) stands for none of jax's sites."""
    texts = [one_line(raw)] + ([line.strip() for line in raw.split("\n")] if "\n" in raw else [])
    readers = [w for w in by_code()[found.code] if any(re.fullmatch(w["regex"], t) for t in texts)
               and (w.get("releases") or {}).get("dist", "jax") == "jax"]  # another library's raising it too (tokamax)
    readers = readers or [found.wording]
    lines = {line for _, _, line in site["at"]}
    own = shapes(template)

    def place(w) -> tuple[bool, bool, bool, bool, bool]:
        where, _, function = (w["location"] or "").partition(" in ")
        path, _, line = where.partition(":")
        return (bool(shapes(w["template"]) & own), bool(path) and site["path"].endswith(path),
                function == site["function"].rsplit(".", 1)[-1], line.isdigit() and int(line) in lines, bool(where))

    best = max(map(place, readers))
    return [w for w in readers if place(w) == best]


def wording_name(wording: dict) -> str:
    return f"{wording['code']} wording {wording['variant']} ({wording['template']!r})"


def holds(wording: dict, release: str) -> bool:
    record = wording.get("releases")
    return bool(record) and record["dist"] == "jax" and releases.contains(record["bounds"], releases.release_tuple(release))


@functools.lru_cache(maxsize=1)
def outcomes() -> dict[int, tuple[list[Outcome], list[str]]]:
    """Case number -> (recognise()'s outcomes, the releases raising the site)."""
    return {n: (recognise(template, site), runs_releases(site["at"])) for n, (template, site) in enumerate(CASES)}


def problems_of(n: int) -> list[str]:
    results, raising = outcomes()[n]
    out = []
    for o in results:
        if o.found is None:
            out.append(f"not recognised: {o.text!r}")
        elif o.lost:
            out.append(f"{wording_name(o.found.wording)} does not read back {', '.join(o.lost)} from {o.text!r}")
        for wording in o.wordings if not o.lost else ():
            outside = [r for r in raising if not holds(wording, r)]
            if outside:
                shown = (wording.get("releases") or {}).get("specifier")
                out.append(f"{wording_name(wording)} matches {o.text!r}, raised by jax {', '.join(outside)}, "
                           f"outside its releases ({shown!r})")
    return out


# -- the tests ------------------------------------------------------------------------------------


def test_the_harvest_covers_every_release_from_0_4_25():
    from packaging.version import Version

    assert RELEASES[0] == "0.4.25" and RELEASES == sorted(RELEASES, key=Version) and len(set(RELEASES)) == len(RELEASES)
    assert len(RELEASES) >= 34 and "0.10.2" in RELEASES
    for template, sites in DATA["wordings"].items():
        for site in sites:
            assert site["at"] and all(RELEASES.index(a) <= RELEASES.index(b) for a, b, _ in site["at"]), (template, site)
    assert len(CASES) > 300 and len(DATA["wordings"]) > 200


@pytest.mark.parametrize("n", range(len(CASES)), ids=[case_id(c) for c in CASES])
def test_every_harvested_wording_is_recognised_in_its_releases(n):
    template, site = CASES[n]
    problems = problems_of(n)
    if template in EXEMPT:
        assert problems, f"{template!r} is recognised now: remove it from EXEMPT"
        return
    assert not problems, f"{site['path']} in {site['function']} ({', '.join(runs_releases(site['at']))}):\n" + "\n".join(problems)


def test_exemptions_are_exactly_the_unrecognised_templates():
    unrecognised = {CASES[n][0] for n in range(len(CASES)) if problems_of(n)}
    assert unrecognised == set(EXEMPT), (
        f"not exempt: {sorted(unrecognised - set(EXEMPT))}; stale (remove from EXEMPT): {sorted(set(EXEMPT) - unrecognised)}")


def test_each_range_covers_exactly_the_releases_raising_its_wordings():
    """A wording's range holds the harvested releases whose wordings it is matched by, no more."""
    raised_by: dict[tuple[str, int], set[str]] = {}
    for n in range(len(CASES)):
        results, raising = outcomes()[n]
        for o in results:
            for wording in o.wordings:
                raised_by.setdefault((wording["code"], wording["variant"]), set()).update(raising)
    wrong = []
    for w in index().wordings:
        record = w.get("releases")
        if not record or record["dist"] != "jax":
            continue
        inside = {r for r in RELEASES if releases.contains(record["bounds"], releases.release_tuple(r))}
        raising = raised_by.get((w["code"], w["variant"]), set())
        if inside != raising:
            want = releases.specifier_for(sorted(raising), RELEASES) if raising else "(no harvested wording matches it: drop it)"
            wrong.append(f"{w['code']} wording {w['variant']} ({w['template']!r}): releases {record['specifier']!r}, "
                         f"raised by {len(raising)} harvested release(s): want jax{want}")
    assert not wrong, "\n".join(wrong)


# -- the field: parsing, the index record, the site -----------------------------------------------


@pytest.mark.parametrize("text, specifier, bounds", [
    ("jax>=0.4.31,<0.5.3", ">=0.4.31,<0.5.3", ((">=", (0, 4, 31)), ("<", (0, 5, 3)))),
    ("JAX >= 0.4.31 , < 0.5.3", ">=0.4.31,<0.5.3", ((">=", (0, 4, 31)), ("<", (0, 5, 3)))),
    ("jax==0.4.31", "==0.4.31", (("==", (0, 4, 31)),)),
    ("jax>0.4,<=0.5,!=0.4.33", ">0.4,<=0.5,!=0.4.33", ((">", (0, 4)), ("<=", (0, 5)), ("!=", (0, 4, 33)))),
])
def test_a_release_range_parses(text, specifier, bounds):
    parsed = releases.parse(text)
    assert (parsed.dist, parsed.specifier, parsed.bounds) == ("jax", specifier, bounds)


@pytest.mark.parametrize("text, says", [
    ("jax>=0.4.x", "cannot parse"),
    ("jax", "names no releases"),
    ("jax~=0.4", "operator"),
    ("jax===0.4.31", "operator"),
    ("jax==0.4.*", "not a version"),
    ("jax>=0.5rc1", "plain release numbers"),
    ("jax>=0.4.post1", "plain release numbers"),
    ("jax[cuda]>=0.4", "extras"),
    ('jax>=0.4; python_version > "3"', "markers"),
    ("jax>=0.5.3,<0.4.31", "empty range"),
    ("jax>0.5,<=0.5", "empty range"),
    ("jax>=0.5,<=0.5.0,!=0.5", "empty range"),
    ("jax==0.5,==0.6", "empty range"),
    ("jax==0.5,<0.5", "empty range"),
])
def test_a_broken_release_range_is_refused(text, says):
    with pytest.raises(releases.ReleasesError, match=re.escape(says)):
        releases.parse(text)


def test_ranges_compare_release_numbers_as_pep_440_does():
    from packaging.specifiers import SpecifierSet

    versions = ["0.4", "0.4.0", "0.4.25", "0.4.31", "0.4.38", "0.5", "0.5.0", "0.5.3", "0.9.0.1", "0.10.2", "1.0"]
    for text in (">=0.4.31,<0.5.3", ">0.5", "<=0.5", "==0.5.0", "!=0.5,>=0.4", ">=0.9.0.1,<0.10"):
        parsed = releases.parse("jax" + text)
        for v in versions:
            assert (v in parsed) == SpecifierSet(text).contains(v), (text, v)


@pytest.mark.parametrize("text, shown", [
    ("jax>=0.4.31,<0.5.3", "jax 0.4.31 to 0.5.2"),
    ("jax>=0.4.36", "jax 0.4.36 and later"),
    ("jax<0.4.29", "jax 0.4.28 and earlier"),
    ("jax==0.4.31", "jax 0.4.31"),
    ("jax>=0.4.30,<0.4.35,!=0.4.33", "jax 0.4.30 to 0.4.34 except 0.4.33"),
    ("jax!=0.4.31", "every jax release except 0.4.31"),
    ("jax>=0.13", "jax >=0.13"),  # none harvested: the range as written
])
def test_shown_names_the_first_and_last_harvested_release(text, shown):
    assert releases.shown(releases.parse(text), RELEASES) == shown


def test_specifier_for_writes_exactly_the_releases_given():
    for raising in (RELEASES[3:9], RELEASES[-5:], RELEASES[:1], RELEASES[2:6] + RELEASES[8:10]):
        parsed = releases.parse("jax" + releases.specifier_for(raising, RELEASES))
        assert releases.inside(parsed, RELEASES) == raising


def test_every_compiled_wording_has_its_releases_record():
    catalogue = bundled_catalogue()
    wordings = [w for e in catalogue.entries for w in e.wordings]
    assert len(index().wordings) == len(wordings)
    with_range = 0
    for compiled in index().wordings:
        variant = catalogue.get(compiled["code"]).wordings[compiled["variant"]]
        record = compiled["releases"]
        if variant.releases is None:
            assert record is None, compiled["code"]
            continue
        with_range += 1
        parsed = releases.parse(variant.releases)
        known = RELEASES if parsed.dist == "jax" else releases.harvested(CATALOG, parsed.dist)  # tokamax: harvest/tokamax.json
        assert known, f"{compiled['code']}: no harvest of {parsed.dist}"
        assert record == {"dist": parsed.dist, "specifier": parsed.specifier,
                          "bounds": [[op, list(nums)] for op, nums in parsed.bounds],
                          "shown": releases.shown(parsed, known)}
        inside = releases.inside(parsed, known)
        assert record["shown"].startswith(f"{parsed.dist} {inside[0]}") or record["shown"].endswith(f"{inside[-1]} and earlier")
    assert with_range >= 200


def test_the_explain_path_imports_no_packaging():
    import subprocess
    import sys

    code = ("import sys, errkit.cli, errkit.explain.command, errkit.explain.matching.index; "
            "errkit.explain.command.run(['head_dim=64 should be a multiple of 128'], as_json=True, show_all=False); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('packaging', 'ruamel', 'jinja2', 'jax')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_entry_pages_say_which_releases_raise_each_wording():
    from errkit.generate.site import pages
    catalogue = bundled_catalogue()
    rendered = pages(catalogue)
    page = rendered["site/docs/errors/RA716.md"]
    own, variant = page.index("Raised by jax 0\\.4\\.25 to 0\\.5\\.2:"), page.index("raised by jax 0\\.5\\.3 to 0\\.7\\.0 (raised since")
    assert page.index("## The message") < own < page.index("## What it means") < page.index("## You may also see this as") < variant
    # every page whose entry has ranges shows each of them
    for entry in catalogue.entries:
        page = rendered[f"site/docs/errors/{entry.code}.md"]
        for w in entry.wordings:
            if w.releases:
                parsed = releases.parse(w.releases)
                shown = releases.shown(parsed, RELEASES if parsed.dist == "jax" else releases.harvested(CATALOG, parsed.dist))
                assert shown.replace(".", "\\.") in page, (entry.code, shown)

"""What the site's scripts receive: the files of the site's assets folder (docs/assets/errkit/).

  index.json          errkit/_index.json's data for the paste page's matcher, regexes in JavaScript
                      syntax, each entry with its page and raised example
  suggest.js          every `suggest` expression compiled to JavaScript (errkit/generate/js.py)
  suggest/<code>.js   one entry's part of suggest.js, which its page loads with values.bundle.js
  codes.json          every entry's code and title, for the 404 page's "did you mean" (notfound.js)
  values.bundle.js    an entry page's "For your values" in one file (BUNDLE: runtime, match, dom
                      and values_box.js), which values.js loads, after the entry's part of
                      suggest.js, when the address has values
  *.js, *.css         the scripts and stylesheets of site_assets/, match.js with the index's format
                      (errkit/core/index_format.py) written in (templates/site/format.js.j2),
                      runtime.js with errkit/core/bounds.py's limits (templates/site/bounds.js.j2)

The translating itself (expressions, regexes, literals) is errkit/generate/js.py's; this module
says what is translated and into which file.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from errkit.catalogue import kernels, wordings
from errkit.catalogue.model import Catalogue
from errkit.core import bounds, index_format
from errkit.generate import index as index_module
from errkit.generate import js
from errkit.generate.examples import raised_message
from errkit.generate.render import HEADER, environment

# The paste page's scripts and the site's stylesheet: errkit's code, written into every site by
# `errkit generate` (so a site never runs an older copy than its index.json was made for).
SITE_ASSETS = Path(__file__).parent / "site_assets"

# The line of site_assets/match.js that `errkit generate` replaces with the index's format (FORMAT).
FORMAT_LINE = "  var FORMAT = {}; // errkit/core/index_format.py: `errkit generate` writes its names here, no copy by hand\n"
# The line of site_assets/runtime.js that `errkit generate` replaces with errkit/core/bounds.py's limits.
BOUNDS_LINE = "  var BOUNDS = {}; // errkit/core/bounds.py: `errkit generate` writes its limits here, no copy by hand\n"


# values.bundle.js, in order (match.js uses runtime.js; values_box.js uses them all): one
# parser-blocking file, so an entry page's box is filled before the rest of the page is laid out.
# Without suggest.js: the page loads its entry's part (suggest/<code>.js, 2.6 KB on average where the
# whole is 500 KB), which Lighthouse's simulated phone counted in the first paint.
BUNDLE = ("runtime.js", "match.js", "dom.js", "values_box.js")


def assets(catalogue: Catalogue) -> dict[str, str]:
    """File name -> text of every file of the site's assets folder."""
    out = {"index.json": json.dumps(site_index(catalogue), indent=1, ensure_ascii=False) + "\n"}
    codes = {e.code: e.title for e in sorted(catalogue.entries, key=lambda e: e.code)}
    out["codes.json"] = json.dumps({"$comment": HEADER, "codes": codes}, indent=0, ensure_ascii=False) + "\n"
    out.update(static_assets())
    table = suggest_table(catalogue)
    out["suggest.js"] = _js_env().get_template("site/suggest.js.j2").render(HEADER=HEADER, table=table)
    part = _js_env().get_template("site/suggest_part.js.j2")
    for code, fixes in table:
        out[f"suggest/{code}.js"] = part.render(HEADER=HEADER, code=code, fixes=fixes)
    out["values.bundle.js"] = "".join(out[name].rstrip("\n") + "\n;\n" for name in BUNDLE)
    del out["values_box.js"]  # only in the bundle
    return out


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
    if out["runtime.js"].count(BOUNDS_LINE) != 1:
        raise ValueError(f"site_assets/runtime.js must hold the line {BOUNDS_LINE.strip()!r} once: the bounds go there")
    out["runtime.js"] = out["runtime.js"].replace(BOUNDS_LINE, bounds_js())
    return out


def bounds_js() -> str:
    """errkit/core/bounds.py's limits as JavaScript (`var BOUNDS = {...};`), written into runtime.js."""
    limits = [(name, getattr(bounds, name)) for name in bounds.JS_BOUNDS]
    return _js_env().get_template("site/bounds.js.j2").render(HEADER=HEADER, limits=limits)


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


@lru_cache(maxsize=1)
def _js_env():
    env = environment().overlay()
    env.filters = dict(env.filters)
    env.filters["js"] = js.json_literal
    return env


def site_index(catalogue: Catalogue) -> dict:
    """errkit/_index.json's data for the browser: the same matcher, regexes in JavaScript syntax.

    Made from the catalogue's one compiled index (index.compiled), which it leaves as it is: the
    records it changes are copies."""
    data = index_module.compiled(catalogue)
    every_wording = [w for e in catalogue.entries for w in wordings.wordings(e)]
    assert len(every_wording) == len(data["wordings"]), "index.build walks the wordings in this order"
    shown_wordings = []
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
        shown_wordings.append({**compiled, "regex": js_regex})
    by_code = catalogue.by_code()
    entries = {}
    for code, entry in data["entries"].items():
        entry = dict(entry)
        if "reads" in entry:
            entry["reads"] = [{**read, "regex": js.regex_to_js(read["regex"])} for read in entry["reads"]]
        entry["page"] = f"errors/{code}/"
        example = raised_message(by_code[code])
        entry["example"] = f"{entry['exception']}: {example}" if example is not None else None
        entries[code] = entry
    # (the patterns and limits: match.js's FORMAT)
    # the matcher's plan (which wordings each key finds; those told by their raise site; those tried
    # on every line) made by the Python's own function, not worked out again by match.js
    plan = index_format.plan(data["wordings"])
    return {**data, "entries": entries, "wordings": shown_wordings, "regex_flavour": index_format.REGEX_FLAVOUR, "plan": plan}


def suggest_table(catalogue: Catalogue) -> list[tuple[str, list[list[tuple]]]]:
    """[(code, [[(label, JavaScript function, names it reads, its cases) per suggestion] per fix])]; a
    case: (when, assume, names its expression reads, JavaScript function, 1 when it is one of a
    partition of the values the message cannot show, 2 when no value fits it whatever the message shows)
    (errkit/core/suggest.py)."""
    table = []
    for entry in sorted(catalogue.entries, key=lambda e: e.code):
        fixes = []
        for suggest, cases in zip(kernels.suggestion_sources(entry, catalogue.kernels), kernels.case_sources(entry, catalogue.kernels)):
            compiled = []
            for label, source in suggest.items():
                fn, names = js.compile_expression(source, entry.params.keys(), entry.verdicts)
                for_label = []
                for case in cases:
                    if label in case["suggest"]:
                        case_fn, case_names = js.compile_expression(case["suggest"][label], set(entry.params) | set(case["assume"]),
                                                                     entry.verdicts)
                        kind = (2 if label in case.get("regardless", ()) else 1) if case.get("partition") else 0
                        for_label.append((case["when"], case["assume"], case_names, case_fn, kind))
                compiled.append((label, fn, names, for_label))
            fixes.append(compiled)
        table.append((entry.code, fixes))
    return table

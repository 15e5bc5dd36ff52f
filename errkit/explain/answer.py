"""The answer for one match: the entry, the wording matched, the values read, the fixes for the
kernel that raised it with their suggestions computed; one dict, the shape `--json` prints."""

from errkit.core.bounds import Meter
from errkit.core.lifespan import life
from errkit.core.runtime import query_string
from errkit.core.suggest import jsonable, suggestions
from errkit.explain.matching.index import Index
from errkit.explain.matching.chunks import explain_chunks
from errkit.explain.matching.approximate import approximate
from errkit.explain.matching.found import Match


def offered(fixes: list[dict], wording: dict, told: str | None) -> list[dict]:
    """The fixes for the kernel that raised the error: a fix for another kernel is left out when the
    kernel is told, or when none of the kernels raising the wording is the fix's."""
    candidates = [told] if told else list(wording.get("kernels") or ())
    return [fix for fix in fixes if not fix.get("kernel") or not candidates or fix["kernel"] in candidates]


def missing_named(found: list[dict], declared: dict, params: dict, printed: frozenset) -> list[dict]:
    """Each suggestion that needs a value no wording of its entry prints, with the params it needs
    ("missing"): what the answer says, and what the entry's page asks for. One that needs only
    values another wording prints is that wording's suggestion: nothing is said of it."""
    for s in found:
        if "needs" in s:
            missing = sorted(n for n in declared if n not in params and _word_in(n, s["needs"]))
            if any(n not in printed for n in missing):
                s["missing"] = missing
    return found


def _word_in(name: str, text: str) -> bool:
    """Whether `name` is a whole word of `text`: a run of letters, digits and `_` (an expression of
    4,000 characters is not split into words for each of its entry's few names)."""
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        if not (at and _word_char(text[at - 1])) and not (end < len(text) and _word_char(text[end])):
            return True
        at = text.find(name, at + 1)
    return False


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def raisers(match: Match) -> tuple[str | None, list | None]:
    """(the kernel told to have raised the match, or None; else the kernels that may have, or None
    when nothing says): what the suggestions solve (errkit/core/suggest.py)."""
    if match.weak:  # a lookup names the entry, not who raised it
        return None, None
    if match.undecided:  # a wording several kernels' sites raise verbatim, no frame telling which
        return None, list(match.undecided)
    told = match.kernel  # its wording's only kernel, else the one the text around it told (matching/around.py)
    return told, (None if told else list(match.wording.get("kernels") or ()) or None)


def _kernel_ref(index: Index, kernel: str | None) -> dict | None:
    if not kernel:
        return None
    return {"id": kernel, "title": ((index.data.get("kernels") or {}).get(kernel) or {}).get("title", kernel)}


def result(index: Index, match: Match, count: int = 1, last_line: int | None = None) -> dict:
    entry = index.entries[match.code]
    vetted = index.vetted(match.code)
    wording = match.wording
    told, candidates = raisers(match)
    meter = Meter()  # the bounds of the answer's suggestions, all together (errkit/core/bounds.py)
    context = match.context or {}
    fixes = entry["fixes"] if match.weak else offered(entry["fixes"], {"kernels": candidates or ()}, told)
    if context and not match.weak:
        from errkit.explain.context import ordered  # (only the entries whose fixes depend on it read a context)

        fixes = ordered(fixes, index.data.get("kernels") or {}, context.get("framework"), context.get("site"))
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
            # what the range says of the wording's life: since, until (the first release no longer
            # raising it) and the sentence ("raised since jax 0.4.29; no longer raised since jax 0.4.36")
            "life": life(wording.get("releases")),
            "kernel": _kernel_ref(index, told),
            # when the kernel is not told: those that may have raised it (the values satisfy all their rules)
            "kernels": [_kernel_ref(index, k) for k in candidates or ()],
            "text": match.text,
        },
        # where the text says it was raised (errkit/explain/context.py), when the entry's fixes depend on it
        "context": dict(context) if context else None,
        "params": {k: jsonable(v) for k, v in match.params.items()},
        "fixes": [
            {"summary": fix["summary"], "alternative": bool(fix.get("alternative")), "unverified": fix.get("unverified"),
             "kernel": _kernel_ref(index, fix.get("kernel")),
             "suggestions": missing_named(suggestions(fix, match.params, vetted, meter, told, candidates), entry["params"],
                                          match.params, index.printed(match.code))
             if match.exact or match.weak or match.repaired is not None else [],  # (a misspelt message put right too)
             "before": fix.get("before"), "after": fix.get("after")}
            for fix in fixes
        ],
        "explanation": entry["explanation"],
        # the entry's advice run on the real kernels (catalog/ledger/): platform, versions, values that worked
        "verified": entry.get("verified") or [],
        "docs_url": entry["docs_url"],
        "line": match.line if last_line is None else last_line,
        "count": count,
        "catalogue": index.catalogue(match.code),
    }


def docs_link(res: dict) -> str:
    """The entry's page with the values as a query string (`.../RA105/?num_q_heads=12&...`): the
    page computes the fixes for them."""
    query = query_string(res.get("params") or {})
    return res["docs_url"] + ("?" + query if query else "")



def read_again(found: list, tail: str) -> bool:
    """Whether a paste may be answered better read again (errkit/explain/matching/rereading.py):
    nothing matched, it has several lines, or a match has text after it on its line (a message in
    another case whose start matched a shorter wording exactly). A single message matched to its
    end is not: the start-up time of `errkit explain MSG` pays nothing for it."""
    text = tail.strip()
    return not found or "\n" in text or any(not text.endswith((f.match.text or "").strip()) for f in found)


def answers(index: Index, chunks, every: bool = True, warn=None, others: dict | None = None) -> tuple[list[dict], str, bool]:
    """(the answers for a whole input: every distinct exact match, most recent first, or only the
    last with `every` False; when none matched, the closest wordings; the input's tail; whether it
    held any text). `others`: code -> the matches past the distinct answers kept per code
    (errkit/explain/tally.py), counted, not answered."""
    found, tail, seen_text = explain_chunks(index, chunks, warn=warn, others=others)
    if seen_text and read_again(found, tail):  # a paste read again: hard wraps joined, without case (rereading.py: a log is not)
        from errkit.explain.matching.rereading import reread

        found = reread(index, tail, found)
    results = [result(index, f.match, f.count, f.last_line) for f in (found if every else found[:1])]
    if not results:
        results = [result(index, m) for m in approximate(index, tail)]
    return results, tail, seen_text

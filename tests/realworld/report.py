"""Rates of `errkit explain` on the real-world corpus (tests/realworld/cases/*.yaml).

    python tests/realworld/report.py [--json] [--class CLASS] [--id SUBSTRING]

Each case is explained in-process (errkit.explain.command.run, as `errkit explain --json`). A positive case
is *exact* when the first result is an exact match (exit code 0) with the expected code and every
expected value equal to what errkit reports; *right code* when the first result (exact or
approximate) has the expected code. A negative is a *false exact* when errkit reports any exact
match for it. Uncatalogued cases (messages with no entry yet) are listed apart.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
FILES = HERE / "files"
ROOT = HERE.parent.parent
POSITIVE_CLASSES = ("prose", "free-text", "altered", "release", "lookup", "plain")
FIELDS = ("id", "source", "source_type", "class", "text", "file", "code", "values", "note", "kind", "kernel", "context",
          "known_miss")


def load_cases(folder: Path = CASES) -> list[dict]:
    """Every case of every file, with `_file` set; texts of binary cases are left to their file."""
    cases = []
    for path in sorted(folder.glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            unknown = set(case) - set(FIELDS)
            if unknown:
                raise ValueError(f"{path.name}: case {case.get('id')}: unknown fields {sorted(unknown)}")
            case["_file"] = path.name
            case.setdefault("values", {})
            cases.append(case)
    return cases


def case_input(case: dict) -> str:
    """What errkit is given: the text, or the path of the case's binary file (read as a file)."""
    if case.get("file"):
        return str(FILES / case["file"])
    return case["text"]


def explain(text: str) -> tuple[int, list[dict]]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from errkit.explain import command as ex

    out, err = io.StringIO(), io.StringIO()
    try:
        rc = ex.run([text], as_json=True, show_all=False, out=out, err=err)
    except Exception as exc:  # noqa: BLE001 - a usage error (empty or binary input) is a result too
        return 2, [{"error": f"{type(exc).__name__}: {exc}"}]
    return rc, [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def same_value(want, got) -> bool:
    if isinstance(want, float) or isinstance(got, float):
        try:
            return math.isclose(float(want), float(got), rel_tol=1e-9, abs_tol=0.0)
        except (TypeError, ValueError):
            return False
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(want) == len(got) and all(same_value(a, b) for a, b in zip(want, got))
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got
    return want == got


def judge(case: dict) -> dict:
    """The outcome of one case: got code/confidence/params, and which checks it passes."""
    rc, results = explain(case_input(case))
    first = results[0] if results else {}
    got_code = first.get("code")
    confidence = first.get("confidence")
    params = first.get("params") or {}
    want = case.get("values") or {}
    wrong = {k: (v, params.get(k, "<missing>")) for k, v in want.items() if k not in params or not same_value(v, params[k])}
    if case.get("kernel"):  # the kernel the text names must be the one explain tells
        told = ((first.get("matched") or {}).get("kernel") or {}).get("id")
        if told != case["kernel"]:
            wrong["(kernel)"] = (case["kernel"], told)
    for key, want_context in (case.get("context") or {}).items():  # where the text says it was raised
        got_context = (first.get("context") or {}).get(key)
        if got_context != want_context:
            wrong[f"(context {key})"] = (want_context, got_context)
    # a lookup (a code, a class name, the note line our exceptions print) names the entry exactly,
    # with the values its text carries (none, or a page link's query string)
    exact = rc == 0 and confidence in ("exact", "lookup")
    return {
        "id": case["id"], "class": case["class"], "want": case.get("code"), "got": got_code,
        "confidence": confidence if results else None, "rc": rc, "params": params, "wrong_values": wrong,
        "exact_right": exact and got_code == case.get("code") and not wrong,
        "right_code": got_code == case.get("code"),
        "false_exact": case.get("code") is None and exact,
        "error": first.get("error"),
        "known_miss": case.get("known_miss"),
    }


def summarise(outcomes: list[dict]) -> dict:
    by_class = defaultdict(list)
    for o in outcomes:
        by_class[o["class"]].append(o)
    positives = [o for o in outcomes if o["class"] in POSITIVE_CLASSES]
    negatives = by_class.get("negative", [])

    def rates(rows):
        n = len(rows)
        return {"n": n, "exact_right": sum(o["exact_right"] for o in rows), "right_code": sum(o["right_code"] for o in rows)}

    return {
        "overall": rates(positives),
        "classes": {c: rates(by_class[c]) for c in POSITIVE_CLASSES if by_class.get(c)},
        "negatives": {"n": len(negatives), "false_exact": sum(o["false_exact"] for o in negatives)},
        "uncatalogued": len(by_class.get("uncatalogued", [])),
    }


def failure_kind(o: dict) -> str:
    if o["class"] == "negative":
        return "false exact match"
    if o["error"]:
        return "error"
    if o["got"] is None:
        return "no match at all"
    if o["got"] != o["want"]:
        return "wrong code" + (" (exact)" if o["confidence"] in ("exact", "lookup") else " (approximate)")
    if o["confidence"] not in ("exact", "lookup"):
        return "right code, approximate only"
    return "exact, wrong or missing values"


def pct(a: int, n: int) -> str:
    return f"{100.0 * a / n:5.1f}%" if n else "   - "


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the outcomes as JSON")
    ap.add_argument("--class", dest="klass", help="only this class")
    ap.add_argument("--id", help="only cases whose id contains this")
    args = ap.parse_args(argv)
    cases = load_cases()
    if args.klass:
        cases = [c for c in cases if c["class"] == args.klass]
    if args.id:
        cases = [c for c in cases if args.id in c["id"]]
    outcomes = [judge(c) for c in cases]
    summary = summarise(outcomes)
    if args.json:
        print(json.dumps({"summary": summary, "outcomes": outcomes}, indent=1, default=str))
        return 0
    print(f"{'class':<12} {'cases':>5}  {'exact+values':>13}  {'right code':>11}")
    for name, r in list(summary["classes"].items()) + [("OVERALL", summary["overall"])]:
        print(f"{name:<12} {r['n']:>5}  {r['exact_right']:>4} {pct(r['exact_right'], r['n'])}  {r['right_code']:>4} {pct(r['right_code'], r['n'])}")
    neg = summary["negatives"]
    print(f"negatives    {neg['n']:>5}  false exact matches: {neg['false_exact']}")
    print(f"uncatalogued {summary['uncatalogued']:>5}  (not counted)")
    failing = [o for o in outcomes if (o["class"] in POSITIVE_CLASSES and not o["exact_right"]) or o["false_exact"]]
    if failing:
        print("\nfailing cases:")
        kinds = defaultdict(list)
        for o in failing:
            kinds[failure_kind(o)].append(o)
        for kind, rows in sorted(kinds.items()):
            print(f"  -- {kind} ({len(rows)})")
            for o in rows:
                extra = f" wrong values {o['wrong_values']}" if o["wrong_values"] and o["got"] == o["want"] else ""
                known = "  [known miss]" if o["known_miss"] else ""
                print(f"  {o['id']:<52} want {o['want'] or '-':<6} got {o['got'] or '-':<6} {o['confidence'] or ''}{extra}{known}")
    unc = [(c, o) for c, o in zip(cases, outcomes) if c["class"] == "uncatalogued"]
    if unc:
        print("\nuncatalogued messages (no entry yet):")
        for c, o in unc:
            print(f"  {c['id']:<52} got {o['got'] or '-'} {o['confidence'] or ''}  {c.get('note', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

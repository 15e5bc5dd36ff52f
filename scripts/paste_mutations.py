"""Paste mutations over the whole catalogue (issue 51): every wording, rendered with realistic values,
altered by every kind of tests/mutations.py (worker, rank, pytest and logger prefixes, text after the
message, quotes and markdown, hard wraps, case changes, a value retyped as `<V>` or `...`, a
shortened list), explained by errkit's matcher; prints the failures per kind.

    python scripts/paste_mutations.py                 # the Python matcher (errkit explain)
    python scripts/paste_mutations.py --js            # and the paste page's match.js, in node
    python scripts/paste_mutations.py --seed 7 --show 3 --json out.json

The tests (tests/explain/test_paste_mutations.py, tests/site/test_paste_mutations_js.py) run a
hypothesis sample of each kind; this runs all of it (about 450 wordings x 23 kinds, a few minutes).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import mutations  # noqa: E402
from support import bundled_catalogue  # noqa: E402


def texts(seed: int) -> tuple[list[mutations.Sample], dict[str, list[mutations.Text]]]:
    """Every sample and its mutated texts, the choices of each from one seeded generator."""
    samples = mutations.samples(bundled_catalogue())
    rng = random.Random(seed)
    return samples, {s.key: mutations.mutations(rng, s) for s in samples}


def node_answers(texts_: list[str]) -> list[tuple[int, dict]]:
    """match.js's first answer for each text (the paste page's), through tests/fixtures/site/harness.js."""
    from errkit.generate.outputs import render_all

    catalogue = bundled_catalogue()
    with tempfile.TemporaryDirectory() as tmp:
        assets = Path(tmp) / "assets"
        src = ROOT / "site" / "docs" / "assets" / "errkit"
        assets.mkdir()
        for f in src.iterdir():
            if f.is_file():
                (assets / f.name).write_bytes(f.read_bytes())
        for rel, data in render_all(catalogue).items():
            if Path(rel).parent == Path("site/docs/assets/errkit"):
                (assets / Path(rel).name).write_bytes(data)
        proc = subprocess.run(["node", str(ROOT / "tests" / "fixtures" / "site" / "harness.js"), str(assets)],
                              input="\n".join(json.dumps({"cases": texts_[i:i + 200]}) for i in range(0, len(texts_), 200)) + "\n",
                              capture_output=True, text=True, check=True)
    answers = []
    for line in proc.stdout.splitlines():
        for results in json.loads(line)["cases"]:
            answers.append(mutations.js_answer(results))
    return answers


def judge(samples, by_key, answer_of) -> tuple[list, dict, dict]:
    """(samples whose bare text fails, failures per kind, texts per kind)."""
    bare_fail, fails, tried = [], defaultdict(list), Counter()
    order = [(s, None) for s in samples] + [(s, t) for s in samples for t in by_key[s.key]]
    answers = answer_of([mutations.raised(s) if t is None else t.text for s, t in order])
    reference = {}
    for (s, t), answer in zip(order, answers):
        if t is None:
            why = mutations.bare_answer(s, answer)
            if why:
                bare_fail.append((s.key, why))
            else:
                reference[s.key] = answer[1].get("params") or {}
            continue
        if s.key not in reference:
            continue
        tried[t.kind] += 1
        why = mutations.verdict(t, s, reference[s.key], answer)
        if why:
            fails[t.kind].append((s.key, t.text, why))
    return bare_fail, fails, tried


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=51)
    ap.add_argument("--js", action="store_true", help="also run the paste page's match.js (needs node)")
    ap.add_argument("--show", type=int, default=2, help="failing texts shown per kind")
    ap.add_argument("--json", type=Path, help="write the counts and failures here")
    args = ap.parse_args(argv)
    samples, by_key = texts(args.seed)
    from errkit.explain.matching.index import Index

    index = Index.load()
    sides = {"python": lambda ts: [mutations.explain(t, index) for t in ts]}
    if args.js:
        sides["javascript"] = node_answers
    report = {"seed": args.seed, "wordings": len(samples), "kinds": mutations.KIND_NAMES, "sides": {}}
    for side, answer_of in sides.items():
        bare_fail, fails, tried = judge(samples, by_key, answer_of)
        total = sum(tried.values())
        print(f"\n{side}: {len(samples)} wordings, {len(bare_fail)} not answered right unaltered (left out), "
              f"{total} mutated texts, {sum(map(len, fails.values()))} failing")
        print(f"  {'kind':<20} {'texts':>6} {'failing':>8}")
        for kind in mutations.KIND_NAMES:
            print(f"  {kind:<20} {tried[kind]:>6} {len(fails[kind]):>8}")
            for key, text, why in fails[kind][:args.show]:
                print(f"      {key}: {why}\n        {text[:150]!r}")
        report["sides"][side] = {"bare_failures": bare_fail, "tried": dict(tried),
                                 "failing": {k: len(v) for k, v in fails.items()},
                                 "failures": {k: v for k, v in fails.items()}}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

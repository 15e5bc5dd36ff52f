"""A misspelt message gets the answer of the message (issue 52: a one-letter typo gave an approximate
answer with no values plus two unrelated entries): the closest wordings are read with their fixed
words put in for the text's words one edit from them (matching/approximate.py misspelt), and the
line so put right is answered alone, with its values and its fixes' suggestions.

The texts are generated: every wording of the catalogue rendered with its entry's first sample
values, one of its fixed words (four letters or more, once in the text) given a seeded one-letter
typo (a letter left out, added, changed, or two swapped)."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

from errkit.core.index_format import TYPO_LENGTH, WORD

ERRKIT = Path(sys.executable).with_name("errkit")
LETTERS = "abcdefghijklmnopqrstuvwxyz"
# Of 430 typos (seed 52), those not answered as the message, as measured when this was built:
# 3 in RA204's quoted choices ('soft_sign'), 5 where reading the paste again without case reaches
# RA947's catch-all wording first (RA925, RA938), 3 where the typo is in the only rare word, so no
# wording is shortlisted (RA810, RA825, RA828), RA721's 'Frist' and RA831's 'numbr'. 432 typos since
# RA810's allocation-listing wording (2026-12-07): its typo ('exrceed') is answered RA810 approximate
# with its values, and RA811 (the same listing with space=smem) as a second, closest-after answer.
KNOWN_MISSES = 14


def _bounded(word: str) -> str:
    return r"(?<![A-Za-z0-9_])" + re.escape(word) + r"(?![A-Za-z0-9_])"


def _typo(word: str, rng: random.Random) -> str:
    k = rng.randrange(len(word))
    kind = rng.choice(["drop", "add", "swap", "change"])
    if kind == "drop":
        return word[:k] + word[k + 1:]
    if kind == "add":
        return word[:k] + rng.choice(LETTERS) + word[k:]
    if kind == "swap" and k + 1 < len(word) and word[k] != word[k + 1]:
        return word[:k] + word[k + 1] + word[k] + word[k + 2:]
    return word[:k] + rng.choice([c for c in LETTERS if c != word[k].lower()]) + word[k + 1:]


def misspelt_messages(catalogue, seed: int = 52) -> list[tuple[str, str, str]]:
    """(the message as raised, the same with one typo, its code) for each wording that has a fixed
    word to misspell."""
    from errkit.catalogue import wordings

    rng = random.Random(seed)
    out = []
    for entry in catalogue.entries:
        for wording in wordings.wordings(entry):
            source = entry.message if wording.index == 0 else wording.variant.message
            try:
                text = wording.render(wordings.sample_params(entry)[0])
            except Exception:  # a wording the sample values do not render: none to misspell
                continue
            fixed = [w for w in dict.fromkeys(WORD.findall(re.sub(r"\{[^{}]*\}", " ", source or ""))) if len(w) >= TYPO_LENGTH]
            fixed = [w for w in fixed if len(re.findall(_bounded(w), text)) == 1]
            if not fixed:
                continue
            word = rng.choice(fixed)
            typo = _typo(word, rng)
            exception = (wording.variant.exception if wording.index else None) or entry.exception
            out.append((f"{exception}: {text}", f"{exception}: " + re.sub(_bounded(word), lambda _: typo, text, count=1), entry.code))
    return out


def _answers(index, text: str) -> list[dict]:
    from errkit.explain.answer import answers

    return answers(index, [text])[0]


def test_a_message_with_one_typo_is_answered_as_the_message(catalogue):
    from errkit.explain.matching.index import Index

    index = Index.load()
    tried, misses = 0, []
    for message, typo, code in misspelt_messages(catalogue):
        want = _answers(index, message)
        got = _answers(index, typo)
        if not want or want[0]["confidence"] != "exact" or (got and got[0]["confidence"] == "exact"):
            continue  # (a typo that makes another wording's exact text is that wording's)
        tried += 1
        same = (len(got) == 1 and got[0]["code"] == want[0]["code"] and got[0]["params"] == want[0]["params"]
                and [f["suggestions"] for f in got[0]["fixes"]] == [f["suggestions"] for f in want[0]["fixes"]])
        if not same:
            misses.append((typo[:120], [(g["code"], g["score"]) for g in got]))
    assert tried > 400, tried
    assert len(misses) <= KNOWN_MISSES, f"{len(misses)} of {tried} typos not answered as their message: {misses}"


def test_the_issues_typo_gets_the_values_and_fixes_through_the_command():
    typo = subprocess.run([str(ERRKIT), "explain", "--json", "ValueError: num_q_heads=12 must be divisble by num_kv_heads=8"],
                          capture_output=True, text=True, timeout=60)
    right = subprocess.run([str(ERRKIT), "explain", "--json", "ValueError: num_q_heads=12 must be divisible by num_kv_heads=8"],
                           capture_output=True, text=True, timeout=60)
    import json

    got = [json.loads(line) for line in typo.stdout.splitlines() if line.strip()]
    want = json.loads(right.stdout.splitlines()[0])
    assert [g["code"] for g in got] == ["RA105"], "one answer, not the closest three"
    assert got[0]["confidence"] == "approximate" and got[0]["params"] == {"num_q_heads": 12, "num_kv_heads": 8}
    assert [f["suggestions"] for f in got[0]["fixes"]] == [f["suggestions"] for f in want["fixes"]]
    assert any(s.get("value") == [2, 4] for s in got[0]["fixes"][0]["suggestions"]), got[0]["fixes"][0]


def test_a_typo_that_puts_right_no_wording_keeps_the_closest_ones():
    # two words misspelt beyond one edit each: nothing is put right, the closest wordings are shown
    done = subprocess.run([str(ERRKIT), "explain", "--json", "ValueError: num_q_heads=12 mst b dvsble by num_kv_heads=8"],
                          capture_output=True, text=True, timeout=60)
    import json

    got = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert got and all(g["confidence"] == "approximate" for g in got) and got[0]["params"] == {}

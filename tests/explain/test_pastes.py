"""Text as people paste it: altered copies, hard wraps, tracebacks, lookups, ties between entries,
other encodings, and the one answer shape of `errkit explain --json`."""

from __future__ import annotations

import io
import json

import pytest

from errkit.explain import command
from errkit.core.index_format import PASTE_SIZE
from errkit.explain.matching.chunks import explain_chunks
from errkit.explain.matching.index import Index
from errkit.core.normalise import normalise, original_span, text_encoding
from support import errkit_subprocess

INDEX = Index.load()
GQA = "ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8"


def first(text: str) -> dict:
    out = io.StringIO()
    rc = command.run([text], as_json=True, show_all=False, out=out, err=io.StringIO(), index=INDEX)
    results = [json.loads(line) for line in out.getvalue().splitlines()]
    assert results, f"nothing for {text!r} (exit {rc})"
    return results[0]


@pytest.mark.parametrize("text, original", [
    ("it&#39;s &lt;class &#x27;list&#x27;&gt; &amp; more", "it's <class 'list'> & more"),
    ("\u2018kv_head\u2019 \u201cbatch\u201d\u00a0x\u200by \u2212 1", "'kv_head' \"batch\" xy - 1"),
    ("\x1b[31mValueError\x1b[0m: boom", "ValueError: boom"),
    ("&#10; keeps the line &bogus; &#xZZ; &#99999999;", "  keeps the line &bogus; &#xZZ; &#99999999;"),
])
def test_copies_are_normalised_and_mapped_back(text, original):
    normalised, origin = normalise(text)
    assert normalised == original
    a, b = original_span(origin, 0, len(normalised))
    assert normalise(text[a:b])[0] == normalised  # the span maps back onto the text as pasted
    a, b = original_span(origin, 6, 12)
    assert normalise(text[a:b])[0] == normalised[6:12]


def test_plain_text_is_left_alone():
    assert normalise(GQA) == (GQA, None)


@pytest.mark.parametrize("head, want", [
    ("\ufeffValueError".encode("utf-8"), "utf-8-sig"),
    ("\ufeffValueError: x".encode("utf-16-le"), "utf-16"),
    ("ValueError: x".encode("utf-16-le"), "utf-16-le"),
    ("ValueError: x".encode("utf-16-be"), "utf-16-be"),
    (b"\xff\xfe garbage \xc3\x28\nValueError", None),  # not UTF-8, not UTF-16 either
    (b"ValueError: x", None),
])
def test_input_encodings_are_recognised(head, want):
    assert text_encoding(head) == want


def test_a_utf16_traceback_is_explained(tmp_path):
    path = tmp_path / "err.txt"
    path.write_bytes(("Traceback (most recent call last):\r\n" + GQA + "\r\n").encode("utf-16"))  # as PowerShell writes it
    proc = errkit_subprocess("explain", "--json", path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout)["params"] == {"num_q_heads": 12, "num_kv_heads": 8}


@pytest.mark.parametrize("cut", [20, 47, 55])
def test_a_hard_wrapped_message_is_joined(cut):
    res = first(GQA[:cut] + "\n" + GQA[cut:])
    assert (res["code"], res["confidence"], res["params"], res["line"]) == ("RA105", "exact", {"num_q_heads": 12, "num_kv_heads": 8}, 1)


def all_results(text: str) -> list[dict]:
    out = io.StringIO()
    command.run([text], as_json=True, show_all=True, out=out, err=io.StringIO(), index=INDEX)
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.mark.parametrize("after", ["KeyError: 'boom'", "ValueError: x must be divisible by 3", GQA[:30]])
def test_a_line_after_a_match_joined_to_it_is_not_counted_again(after):
    # a paste's line that matches nothing is tried joined with the line before (a hard wrap):
    # a match lying wholly in that line before is that line's own, counted already (once)
    results = all_results(f"2026-11-29 10:00:16,000 ERROR x: {GQA}\n2026-11-29 10:00:16,001 INFO x: {after}\n")
    assert [(r["code"], r["count"], r["line"]) for r in results if r["confidence"] == "exact"] == [("RA105", 1, 1)]


def test_a_generated_short_log_counts_each_error_once():
    # issue 30: benchmarks/logs.py's 1,500-line log (a paste: under PASTE_SIZE) counted RA511 twice
    import sys
    from collections import Counter
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks import logs

    text, expected = logs.make_log("english", 1500, error_every=40, seed=2)
    assert len(text.encode()) <= PASTE_SIZE
    got = Counter()
    for r in all_results(text):
        if r["confidence"] == "exact":
            got[r["code"]] += r["count"]
    assert got == expected


def test_a_wrapped_pytest_line_is_joined():
    res = first("E   " + GQA[:40] + "\n" + GQA[40:] + "\n\nFAILED tests/test_x.py::test_f - ValueError")
    assert (res["code"], res["confidence"]) == ("RA105", "exact")


def test_a_message_in_prose_is_reported_as_pasted():
    text = "I get \u201cnum_q_heads=12 must be divisible by and num_kv_heads=8\u201d when running"
    res = first(text)
    assert (res["code"], res["confidence"]) == ("RA105", "exact")
    assert res["matched"]["text"] == "num_q_heads=12 must be divisible by and num_kv_heads=8"
    assert first("It fails: `Need to specify backward blocks` (no period)")["code"] == "RA223"


def test_a_raise_statement_quoted_in_a_traceback_is_not_the_error():
    text = ('Traceback (most recent call last):\n  File "/x/kernel.py", line 3, in f\n'
            '    raise ValueError("Need to specify backward blocks.")\nKeyError: \'blocks\'\n')
    out = io.StringIO()
    assert command.run([text], as_json=True, show_all=True, out=out, err=io.StringIO(), index=INDEX) == 1
    assert all(json.loads(line)["confidence"] != "exact" for line in out.getvalue().splitlines())


@pytest.mark.parametrize("text, params", [
    ("GqaHeadCountError", {}),
    ("errkit_attention._validators.GqaHeadCountError", {}),
    ("[RA105] Query heads are not a multiple of key/value heads - see https://errkit.github.io/errkit/0.1/errors/RA105/", {}),
    ("see https://errkit.github.io/errkit/0.1/errors/RA105/?num_q_heads=12&num_kv_heads=8", {"num_q_heads": 12, "num_kv_heads": 8}),
    ("RA105", {}),
    ("gqa-head-count", {}),
])
def test_lookups_name_the_entry_in_the_shape_of_every_answer(text, params):
    res = first(text)
    assert (res["code"], res["confidence"], res["params"]) == ("RA105", "lookup", params)
    assert set(res) == set(first(GQA))  # one JSON shape for every answer
    assert set(res["matched"]) == set(first(GQA)["matched"])


def test_a_note_under_a_matched_message_adds_nothing():
    out = io.StringIO()
    text = GQA + "\n[RA105] Query heads are not a multiple of key/value heads - see https://errkit.github.io/errkit/0.1/errors/RA105/\n"
    command.run([text], as_json=True, show_all=True, out=out, err=io.StringIO(), index=INDEX)
    results = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["code"], r["confidence"], r["line"]) for r in results] == [("RA105", "exact", 1)]


def test_approximate_answers_have_their_line_and_never_a_perfect_score():
    text = "step 1\nstep 2\nValueError: num_q_heads=12 must be divisble by and num_kv_heads=8\nstep 4\n"
    res = first(text)
    assert (res["confidence"], res["line"]) == ("approximate", 3)
    same_shape = first("ValueError: num_q_heads=12.5 must be divisible by and num_kv_heads=8")  # the shape, not an int
    assert same_shape["code"] == "RA105" and same_shape["confidence"] == "approximate" and same_shape["score"] == 0.99


def _twins(first_releases: dict, second_releases: dict, locations=(None, None)) -> Index:
    """An index of two entries with the same wording (different release ranges or raise sites)."""
    base = dict(INDEX.wordings[0], template="boom {n}", regex=r"boom[ \t\n\r\f\v]+(?P<g0>-?[0-9]+)", key="boom",
                captures=[["g0", "n", "int"]], literal_chars=4, skeleton="boom <n>")
    entries = {code: INDEX.data["entries"]["RA105"] for code in ("AA100", "BB100")}
    return Index({"entries": entries, "wordings": [
        dict(base, code="AA100", releases=first_releases, location=locations[0]),
        dict(base, code="BB100", releases=second_releases, location=locations[1]),
    ]})


OLD = {"dist": "jax", "specifier": "<0.5", "bounds": [["<", [0, 5]]], "shown": "jax 0.4.25 to 0.4.38"}
NEW = {"dist": "jax", "specifier": ">=0.5", "bounds": [[">=", [0, 5]]], "shown": "jax 0.5.0 and later"}


@pytest.mark.parametrize("context, code", [
    ("", "AA100"),  # nothing tells them apart: the first
    ("jax==0.4.31\n", "AA100"),
    ("Using jax 0.6.2 and jaxlib 0.4.1\n", "BB100"),
    ('  File "/venv/site-packages/pkg/new/kernel.py", line 3, in f\n', "BB100"),  # the raise site beats the release
])
def test_a_tie_between_entries_goes_to_the_raise_site_then_the_release(context, code):
    index = _twins(OLD, NEW, ("pkg/old/kernel.py:1 in f", "pkg/new/kernel.py:3 in f"))
    found, _, _ = explain_chunks(index, [context + "ValueError: boom 3\n"])
    assert [f.match.code for f in found] == [code]


def test_a_tie_broken_on_a_remembered_message_keeps_its_line():
    index = _twins(OLD, NEW, ("pkg/old/kernel.py:1 in f", "pkg/new/kernel.py:3 in f"))
    text = ("ValueError: boom 3\nstep\n"  # the message is remembered here, the tie left unbroken
            'Traceback (most recent call last):\n  File "/venv/site-packages/pkg/new/kernel.py", line 3, in f\nValueError: boom 3\n')
    found, _, _ = explain_chunks(index, [text])
    assert sorted((f.match.code, f.last_line) for f in found) == [("AA100", 1), ("BB100", 5)]


def _raised_in(path: str, func: str) -> str:
    return ("Traceback (most recent call last):\n"
            '  File "/home/me/train.py", line 10, in <module>\n    out = attention(q, k, v)\n'
            f'  File "/venv/lib/python3.12/site-packages/{path}", line 212, in {func}\n'
            '    raise ValueError(f"{num_q_heads=} must be divisible by {num_kv_heads=}")\n'
            "ValueError: num_q_heads=12 must be divisible by num_kv_heads=8\n")


@pytest.mark.parametrize("text, source", [
    ("ValueError: num_q_heads=12 must be divisible by num_kv_heads=8", "errkit's ranker attention kernel"),
    (_raised_in("jax/experimental/pallas/ops/tpu/ragged_paged_attention/kernel.py", "static_validate_inputs"),
     "JAX Pallas TPU ragged paged attention"),
    (_raised_in("tokamax/_src/ops/attention/pallas_mosaic_gpu_kernel_sm90.py", "flash_attention_kernel"),
     "tokamax Pallas Mosaic GPU attention"),
    (_raised_in("tokamax/_src/ops/attention/pallas_mosaic_tpu.py", "_fwd"), "tokamax Pallas Mosaic TPU attention"),
])
def test_one_entrys_text_raised_at_several_sites_is_told_by_the_traceback(text, source):
    """RA105's text is raised verbatim by this kernel, jax's ragged paged attention and tokamax's
    kernels: the traceback's last frames say which (the wording, its source and range shown)."""
    res = first(text)
    assert (res["code"], res["confidence"], res["params"]) == ("RA105", "exact", {"num_q_heads": 12, "num_kv_heads": 8})
    assert res["matched"]["source"].startswith(source)

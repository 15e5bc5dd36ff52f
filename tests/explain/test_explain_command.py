"""`errkit explain`: every wording round-trips through render -> explain, in any wrapping; bad input is handled."""

import io
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from support import ROOT, bundled_catalogue, errkit_subprocess, explain_first
from errkit.explain import command, render
from errkit.catalogue import wordings
from errkit.core import values
from errkit.core.index_format import CONTEXT_MARKS
from errkit.explain.matching.index import Index
from errkit.explain.matching.blocks import scan

CATALOGUE = bundled_catalogue()
WORDINGS = [w for e in CATALOGUE.entries for w in wordings.wordings(e) if w.variant.message]  # empty ones: test_upstream_*
SAFE_TEXT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=12)

STRATEGIES = {
    "int": st.integers(-(10**6), 10**6),
    "float": st.floats(allow_nan=False, width=64, min_value=-1e9, max_value=1e9) | st.sampled_from([float("inf"), -float("inf")]),
    "bool": st.booleans(),
    "str": SAFE_TEXT,
    "dtype": st.sampled_from(values.DTYPE_NAMES),
    "shape": st.lists(st.integers(0, 4096), max_size=5).map(tuple),
    "bytes": st.integers(0, 2**40),
}


def params_for(wording):
    fields = {c.param for c in wording.captures}
    strategies = {}
    for name in fields:
        p = wording.entry.params[name]
        base = STRATEGIES[p.type]
        strategies[name] = st.none() | base if p.optional else base
    return st.fixed_dictionaries(strategies)


INDEX = Index.load()
EXAMPLES: dict[str, int] = {}  # round-trip cases run per wording and wrapper


@pytest.fixture(scope="module", autouse=True)
def record_example_counts():
    """Leave the number of cases each wording ran in artifacts/ (git-ignored), for the record."""
    yield
    if EXAMPLES:
        out = ROOT / "artifacts" / "round-trip-counts.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(dict(sorted(EXAMPLES.items())), indent=1))


def explain_json(text, *args):
    out, err = io.StringIO(), io.StringIO()
    code = command.run([text], as_json=True, show_all="--all" in args, out=out, err=err, index=INDEX)
    return code, [json.loads(line) for line in out.getvalue().splitlines()]


WRAPPERS = {
    "bare": lambda exc, msg: msg,
    "traceback": lambda exc, msg: (
        "Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    out = attention(q, k, v)\n"
        "  File \"kernel.py\", line 40, in attention\n    raise ValueError(msg)\n"
        "ValueError: an unrelated first error\n\nThe above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n  File \"train.py\", line 14, in <module>\n"
        f"{exc}: {msg}\n"
    ),
    "pytest": lambda exc, msg: (
        "    def test_forward():\n>       ranker_attention(q, k, v)\n\ntests/test_model.py:31: \n"
        "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _\n"
        f"E   {exc}: {msg}\n\nkernel/_validators.py:88: {exc}\n"
        f"=========================== short test summary info ============================\n"
        f"FAILED tests/test_model.py::test_forward - {exc}: {msg}\n"
    ),
    "log": lambda exc, msg: "\n".join(
        [f"2026-11-29 10:00:{i:02d},123 INFO trainer: step {i} loss=0.{i}31 lr=3e-4" for i in range(40)]
        + [f"2026-11-29 10:00:41,007 ERROR trainer: step failed: {exc}: {msg}"]
        + [f"2026-11-29 10:00:{i:02d},500 WARNING data: slow batch {i}" for i in range(42, 50)]
    ),
}


def shows_jax_side(text: str) -> bool:
    """What makes a `needs_context` entry's match exact: CONTEXT_MARKS, or a kernel's name or source."""
    from errkit.explain.matching.index import Index

    kernels = Index.load().data.get("kernels") or {}
    marks = [*CONTEXT_MARKS, *(n for k in kernels.values() for n in k.get("names") or ()), *(k["source"] for k in kernels.values() if k.get("source"))]
    return any(mark in text for mark in marks)


def _expected(params, wording):
    return {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}


def location_gated(wording) -> bool:
    """No fixed text, or `located_only`: explain finds it only by the raise site of a traceback's last frame."""
    from errkit.catalogue.entry_rules import has_fixed_text

    return bool(wording.variant.location) and (not has_fixed_text(wording.variant.message) or wording.variant.located_only)


def told_apart_by_location(wording) -> bool:
    """Another entry has the same text, raised in another file: only a traceback tells them apart."""
    from errkit.catalogue.lint import apart_by_location

    return any(other.entry.code != wording.entry.code and other.variant.message == wording.variant.message
               and apart_by_location(wording, other) for other in WORDINGS)


def raised_at(location: str):
    place, _, func = location.partition(" in ")
    path = place.partition(":")[0]
    return lambda exc, msg: (
        "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    run()\n"
        f"  File \"/venv/lib/python3.11/site-packages/{path}\", line 99, in {func or 'helper'}\n    assert ok\n"
        f"{exc}: {msg}\n"
    )


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("wording", WORDINGS, ids=lambda w: f"{w.entry.code}-v{w.index}")
def test_render_then_explain_round_trips(wording, wrapper):
    wrap = WRAPPERS[wrapper]
    if location_gated(wording) or told_apart_by_location(wording):
        if wrapper != "traceback":
            pytest.skip("a wording with no fixed text, or another entry's text, is recognised only inside a traceback raised at its location")
        wrap = raised_at(wording.variant.location)

    @given(params_for(wording))
    def check(params):
        EXAMPLES[f"{wording.entry.code}-v{wording.index}-{wrapper}"] = EXAMPLES.get(f"{wording.entry.code}-v{wording.index}-{wrapper}", 0) + 1
        message = wording.render(params)
        exc = wording.variant.exception or wording.entry.exception
        text = wrap(exc, message)
        if wording.entry.needs_context and not shows_jax_side(text):  # other compilers print it too (issue 51)
            code, results = explain_json(text)
            assert (code, results[0]["code"], results[0]["confidence"]) == (1, wording.entry.code, "approximate"), message
            assert results[0]["context"]["unconfirmed"] and results[0]["params"] == _expected(params, wording)
            text = 'jax.errors.JaxRuntimeError: the error below\n' + text
        code, results = explain_json(text)
        assert code == 0, message
        assert results[0]["code"] == wording.entry.code, message
        assert results[0]["confidence"] == "exact"
        got = {k: v for k, v in results[0]["params"].items()}
        want = _expected(params, wording)
        for k, v in want.items():
            if isinstance(v, float) and v in (float("inf"), -float("inf")):
                want[k] = "inf" if v > 0 else "-inf"
        assert got == want, message

    check()


def test_explain_the_issue_example_computes_divisors():
    code, (res,) = explain_json("num_q_heads=12 must be divisible by and num_kv_heads=8")
    assert code == 0 and res["code"] == "RA105"
    assert res["params"] == {"num_q_heads": 12, "num_kv_heads": 8}
    suggested = {s["label"]: s["value"] for fix in res["fixes"] for s in fix["suggestions"] if "value" in s}
    assert suggested["valid num_kv_heads"] == [1, 2, 3, 4, 6, 12]
    assert suggested["nearest valid num_kv_heads"] == [6, 12]
    assert res["docs_url"].endswith("/errors/RA105/")
    assert "x-algorithm" in res["matched"]["source"]


def test_all_counts_every_distinct_match_most_recent_first():
    log = "\n".join([
        "ValueError: num_q_heads=12 must be divisible by num_kv_heads=8",
        "noise",
        "ValueError: num_q_heads=12 must be divisible by num_kv_heads=8",
        "ValueError: q, k, and v should all be 4D, got: q.ndim=3, k.ndim=4, v.ndim=4",
    ])
    code, results = explain_json(log, "--all")
    assert code == 0
    assert [(r["code"], r["count"], r["line"]) for r in results] == [("RA101", 1, 4), ("RA105", 2, 3)]
    code, results = explain_json(log)
    assert [r["code"] for r in results] == ["RA101"]


def test_an_edited_wording_is_an_approximate_match():
    code, results = explain_json("num_q_heads=12 must be evenly divisible by num_kv_heads=8!")
    assert code == 1
    assert results[0]["code"] == "RA105"
    assert results[0]["confidence"] == "approximate" and 0.6 <= results[0]["score"] < 1


def test_nothing_matched_exits_1():
    code, results = explain_json("everything is fine")
    assert code == 1 and results == []


def test_lookup_by_code_and_slug(run_cli):
    code, out, _ = run_cli("explain", "RA105")
    assert code == 0 and "divisible" in out
    code, out, _ = run_cli("explain", "gqa-head-count")
    assert code == 0 and out.startswith("RA105")
    code, out, _ = run_cli("show", "ra105", "--json")
    assert json.loads(out)["slug"] == "gqa-head-count"
    code, _, err = run_cli("show", "RA999")
    assert code == 2 and "no entry" in err


def test_list_shows_every_entry(run_cli):
    code, out, _ = run_cli("list")
    assert code == 0
    assert len(out.splitlines()) == len(CATALOGUE.entries)


# -- bad input: a clear line and the right exit code, never a traceback ---------------------------


def _assert_clean(proc, code, fragment):
    err = proc.stderr.decode()
    assert proc.returncode == code, (proc.returncode, err)
    assert "Traceback" not in err
    assert fragment in err


def test_empty_input():
    _assert_clean(errkit_subprocess("explain", "-", input=b""), 2, "empty")
    _assert_clean(errkit_subprocess("explain", "   "), 2, "empty")


def test_binary_input(tmp_path):
    path = tmp_path / "core.bin"
    path.write_bytes(b"\x7fELF\x00\x00\x01" + bytes(range(256)) * 10)
    _assert_clean(errkit_subprocess("explain", path), 2, "binary")


def test_non_utf8_input_still_matches():
    data = b"\xff\xfe garbage \xc3\x28\nValueError: num_q_heads=12 must be divisible by num_kv_heads=8\n"
    proc = errkit_subprocess("explain", "--json", "-", input=data)
    _assert_clean(proc, 0, "not valid UTF-8")
    assert json.loads(proc.stdout)["code"] == "RA105"


def test_an_empty_directory(tmp_path):
    """A folder is read as a fleet's logs (issue 30, tests/explain/test_triage.py); one with no file
    in it is a usage error naming it."""
    _assert_clean(errkit_subprocess("explain", tmp_path), 2, f"no file to read in {tmp_path}")


def test_one_megabyte_single_line():
    line = b"x" * 1_000_000 + b" num_q_heads=12 must be divisible by num_kv_heads=8"
    proc = errkit_subprocess("explain", "--json", "-", input=line)
    _assert_clean(proc, 0, "")
    assert json.loads(proc.stdout)["params"] == {"num_q_heads": 12, "num_kv_heads": 8}
    proc = errkit_subprocess("explain", "-", input=b"y" * 1_000_000)
    _assert_clean(proc, 1, "no catalogued error")


def test_hundred_megabyte_log(tmp_path):
    path = tmp_path / "big.log"
    noise = b"2026-11-29 10:00:00,000 INFO trainer: step ok loss=0.131 lr=3e-4 tokens=81920\n"
    with open(path, "wb") as handle:
        block = noise * 10_000
        for _ in range(100_000_000 // len(block)):
            handle.write(block)
        handle.write(b"2026-11-29 10:01:00,000 ERROR trainer: ValueError: num_q_heads=12 must be divisible by num_kv_heads=8\n")
    proc = errkit_subprocess("explain", "--json", path, timeout=300)
    _assert_clean(proc, 0, "")
    assert json.loads(proc.stdout)["code"] == "RA105"


def test_closed_stdout(tmp_path):
    """`errkit ... | head -c 1`: the reader leaves while errkit still writes; no traceback, exit 0.

    The output must be far larger than a pipe buffer (64 KiB): output that fits is written in full
    before the reader leaves, and the test would pass without the BrokenPipeError handler."""
    import shlex
    import subprocess
    import sys

    log = tmp_path / "log.txt"  # distinct errors of two codes: `--all --json` explains the 100 last of each (megabytes)
    log.write_text("".join(f"ValueError: num_q_heads={8 * n + 1} must be divisible by num_kv_heads=8\n"
                           f"ValueError: q_block_size=128 should divide q_seq_len={128 * n + 1}.\n" for n in range(1, 3001)))
    full = errkit_subprocess("explain", "--all", "--json", log)
    assert full.returncode == 0 and len(full.stdout) > 5 * 65536, len(full.stdout)
    shell = f"{shlex.quote(sys.executable)} -m errkit.cli explain --all --json {shlex.quote(str(log))} | head -c 1"
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {shell}"], capture_output=True, cwd=ROOT, timeout=60)
    assert b"Traceback" not in proc.stderr and b"BrokenPipe" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 0 and len(proc.stdout) == 1, (proc.returncode, proc.stderr[-2000:])


def test_a_reader_that_left_keeps_the_answers_exit_status():
    """`errkit explain ... | head`: exit 1 for an approximate answer (0 for an exact one), as without
    the pipe, whether the reader left before errkit wrote or after (stdout's reading end is closed
    before errkit starts here: every write fails)."""
    import os
    import subprocess
    import sys

    approximate = "the query heads must be divisible by the number of kv heads in grouped attention"
    for text, want in ((approximate, 1), ("num_q_heads=12 must be divisible by and num_kv_heads=8", 0)):
        for extra in ([], ["--json"]):
            read, write = os.pipe()
            os.close(read)
            try:
                proc = subprocess.run([sys.executable, "-m", "errkit.cli", "explain", *extra, text], stdout=write,
                                      stderr=subprocess.PIPE, cwd=ROOT, timeout=60)
            finally:
                os.close(write)
            assert proc.returncode == want, (text, extra, proc.returncode, proc.stderr[-2000:])
            assert b"Traceback" not in proc.stderr and b"BrokenPipe" not in proc.stderr, proc.stderr[-2000:]


def test_no_arguments_on_a_terminal_is_a_usage_error():
    out, err = io.StringIO(), io.StringIO()

    class Tty(io.StringIO):
        def isatty(self):
            return True

    from errkit.core import UsageError

    with pytest.raises(UsageError, match="nothing to explain"):
        command.run([], as_json=False, show_all=False, stdin=Tty(), out=out, err=err)


def test_explain_imports_nothing_heavy():
    import subprocess
    import sys

    code = (
        "import sys, io; from errkit.explain import command; "
        "command.run(['num_q_heads=12 must be divisible by num_kv_heads=8'], False, False, out=io.StringIO()); "
        "heavy = [m for m in ('jax', 'ruamel', 'jinja2', 'numpy', 'errkit.catalogue.load', 'errkit.catalogue.lint') if m in sys.modules]; "
        "print(heavy)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert render.Style(Tty()).on
    assert not render.Style(io.StringIO()).on
    monkeypatch.setenv("NO_COLOR", "1")
    assert not render.Style(Tty()).on


def test_empty_messages_match_the_most_specific_location_of_the_same_exception():
    from errkit.explain.matching.index import Index

    def wording(code, location, exception):
        return {"code": code, "variant": 0, "template": "", "source": "s", "exception": exception, "location": location,
                "regex": "", "captures": [], "literal_chars": 0, "skeleton": ""}

    index = Index({"entries": {}, "wordings": [
        wording("FILE", "pkg/kernel.py", "AssertionError"),
        wording("FUNC", "pkg/kernel.py:10 in fwd", "AssertionError"),
        wording("NIE", "pkg/kernel.py in fwd", "NotImplementedError"),
    ]})
    tb = 'Traceback (most recent call last):\n  File "/x/site-packages/pkg/kernel.py", line 12, in {func}\n    assert ok\n{exc}\n'
    assert scan(index, tb.format(func="fwd", exc="AssertionError")).__next__().code == "FUNC"
    assert scan(index, tb.format(func="bwd", exc="AssertionError")).__next__().code == "FILE"
    assert scan(index, tb.format(func="fwd", exc="NotImplementedError")).__next__().code == "NIE"
    assert list(scan(index, tb.format(func="fwd", exc="ValueError"))) == []


def test_a_filtered_jax_traceback_of_an_empty_message_gets_a_hint():
    text = ('Traceback (most recent call last):\n  File "t.py", line 1, in <module>\n--------------------\n'
            "For simplicity, JAX has removed its internal frames from the traceback of the following exception. "
            "Set JAX_TRACEBACK_FILTERING=off to include these.\nAssertionError\n")
    out, err = io.StringIO(), io.StringIO()
    assert command.run([text], as_json=False, show_all=False, out=out, err=err) == 1
    assert "JAX_TRACEBACK_FILTERING=off" in err.getvalue()


@pytest.mark.parametrize("text, code, values", [
    ("ValueError: sm_scale must be a finite number or None, got np.float32(nan)", "RA202", {"sm_scale": "nan"}),
    ("ValueError: sm_scale must be a finite number or None, got Array(inf, dtype=float32, weak_type=True)", "RA202", {"sm_scale": "inf"}),
    ("ValueError: cap must be a positive finite number or None, got Array(-30., dtype=float32)", "RA203", {"cap": -30.0}),
    ("ValueError: batch_axis=('data', 'fsdp') is not an axis of the mesh (axes: 'data', 'fsdp')", "RA401",
     {"batch_axis": "('data', 'fsdp')", "mesh_axes": ["data", "fsdp"]}),
    # a value computed under jit: the tracer's repr, read as its text (jax 0.10, 0.4.36-0.6, 0.4.30-0.4.35)
    ("SmScaleNotFiniteError: sm_scale must be a finite number or None, got JitTracer(~float32[])", "RA202",
     {"sm_scale": "JitTracer(~float32[])"}),
    ("ValueError: cap must be a positive finite number or None, got Traced<float32[]>with<DynamicJaxprTrace>",
     "RA203", {"cap": "Traced<float32[]>with<DynamicJaxprTrace>"}),
    ("ValueError: sm_scale must be a finite number or None, got "
     "Traced<ShapedArray(float32[], weak_type=True)>with<DynamicJaxprTrace(level=1/0)>", "RA202",
     {"sm_scale": "Traced<ShapedArray(float32[], weak_type=True)>with<DynamicJaxprTrace(level=1/0)>"}),
])
def test_numpy_and_jax_scalars_are_read_as_their_number(text, code, values):
    """repr() of a NumPy or JAX scalar, as the kernel prints what a caller passed: an exact match."""
    res = explain_first(text)
    assert (res["code"], res["confidence"], res["params"]) == (code, "exact", values)

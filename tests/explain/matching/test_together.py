"""One error printed over several lines (issue 26, item 2): a status or versions logged above the
error line that says "Look at the errors above" join its answer, counted once; a repeated error
with the same values is still counted, and lines whose values disagree stay apart
(errkit/explain/matching/together.py same_block, and the paste page's port)."""

import io
import json

import pytest

from errkit.explain import command

HANDLE = "E1126 13:04:33.173027 1713450 cuda_dnn.cc:535] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n"
MEMORY = "E1126 13:04:33.173300 1713450 cuda_dnn.cc:539] Memory usage: 11372396544 bytes free, 11539054592 bytes total.\n"
VERSIONS = "E0101 cuda_dnn.cc:429] Loaded runtime CuDNN library: 8.5.0 but source was compiled with: 8.6.0.\n"
FINAL = "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed.\n"
TRACEBACK = 'Traceback (most recent call last):\n  File "<stdin>", line 1, in <module>\n'


def answers(text: str, every: bool = True) -> list[dict]:
    out, err = io.StringIO(), io.StringIO()
    assert command.run([text], as_json=True, show_all=every, out=out, err=err) == 0, err.getvalue()
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_the_lines_above_join_the_error_lines_answer():
    (res,) = answers(VERSIONS + HANDLE + MEMORY + TRACEBACK + FINAL)
    assert res["code"] == "RA827" and res["count"] == 1
    assert res["params"] == {"runtime_cudnn": "8.5.0", "compiled_cudnn": "8.6.0", "status": "CUDNN_STATUS_INTERNAL_ERROR",
                             "free_bytes": 11372396544, "total_bytes": 11539054592}
    computed = {s["label"]: s["value"] for fix in res["fixes"] for s in fix["suggestions"] if "value" in s}
    assert computed["cuDNN to load, at least (same major version)"] == "8.6.0"
    assert computed["share of the GPU's memory already taken"] == 0.01


def test_the_last_answer_alone_has_every_value_too():
    (res,) = answers(HANDLE + MEMORY + TRACEBACK + FINAL, every=False)
    assert res["params"]["status"] == "CUDNN_STATUS_INTERNAL_ERROR" and res["params"]["free_bytes"] == 11372396544


def test_a_repeated_error_with_the_same_values_is_counted_not_merged():
    (res,) = answers(HANDLE + MEMORY + HANDLE + MEMORY)
    assert res["count"] == 2 and res["params"]["status"] == "CUDNN_STATUS_INTERNAL_ERROR"


def test_lines_whose_values_disagree_stay_apart():
    other = HANDLE.replace("CUDNN_STATUS_INTERNAL_ERROR", "CUDNN_STATUS_NOT_INITIALIZED")
    results = answers(HANDLE + other)
    assert sorted(r["params"]["status"] for r in results) == ["CUDNN_STATUS_INTERNAL_ERROR", "CUDNN_STATUS_NOT_INITIALIZED"]


def test_another_entrys_error_between_them_keeps_them_apart():
    between = "ValueError: num_q_heads=12 must be divisible by num_kv_heads=8\n"
    results = answers(HANDLE + between + FINAL)
    final = next(r for r in results if r["code"] == "RA827" and "status" not in r["params"])
    assert final["count"] == 1


PROSE = "2026-11-29 10:00:01,101 INFO trainer: step {n} done in 0.31 s.\n"


def _log(*parts: str, between: int) -> str:
    return "".join(parts[0:1] + tuple(PROSE.format(n=n) for n in range(between)) + parts[1:])


def test_two_errors_a_page_of_log_apart_stay_two():
    """Issue 30: values that complete each other do not make two errors one when other log lines
    come between them (the benchmark log's errors 100 lines apart were merged)."""
    results = answers(_log(HANDLE, FINAL, between=40))
    assert sorted(sorted(r["params"]) for r in results) == [[], ["status"]]
    assert [r["count"] for r in results] == [1, 1]


@pytest.mark.parametrize("between, merged", [(3, True), (4, False)])
def test_a_few_other_lines_between_still_make_one_error(between, merged):
    results = answers(_log(HANDLE, FINAL, between=between))
    assert len(results) == (1 if merged else 2)


def test_a_traceback_pasted_without_its_indent_is_still_one_error():
    """https://github.com/jax-ml/jax/issues/22626 (abridged there): the frames and their source lines
    lost their indent in the paste; more of them than BLOCK_GAP."""
    frames = "".join(f'File "scripts/train_vqgan.py", line {200 + n}, in main\nstep_{n}()\n' for n in range(6))
    (res,) = answers(HANDLE + MEMORY + "Traceback (most recent call last):\n" + frames + FINAL)
    assert res["count"] == 1 and res["params"]["status"] == "CUDNN_STATUS_INTERNAL_ERROR"


# JAX's note between the exception and the same one re-raised (jax/_src/traceback_util.py,
# _jax_message_append, printed under JAX_TRACEBACK_FILTERING=off or by older releases)
UNFILTERED = ("jax._src.traceback_util.UnfilteredStackTrace: " + FINAL
              + "\nThe stack trace below excludes JAX-internal frames.\n"
              "The preceding is the original exception that occurred, unmodified.\n\n--------------------\n\n"
              "The above exception was the direct cause of the following exception:\n\n")
# IPython's traceback of the same (its frames: a path line, numbered source lines, an arrow)
IPYTHON = ("XlaRuntimeError                           Traceback (most recent call last)\n"
           "<ipython-input-3-2c1a07641e48> in <module>\n      1 import jax\n----> 2 key = jax.random.PRNGKey(0)\n\n"
           + "".join(f"/usr/local/lib/python3.10/dist-packages/jax/_src/random.py in f{n}(seed, impl)\n"
                     f"    {n}59   impl = default_prng_impl()\n--> {n}60   key = prng.seed_with_impl(impl, seed)\n\n"
                     for n in range(1, 4)))


def test_jax_and_ipython_tracebacks_between_the_lines_keep_one_error():
    (res,) = answers(HANDLE + MEMORY + TRACEBACK + UNFILTERED + TRACEBACK + FINAL)
    assert res["count"] == 1 and res["params"]["status"] == "CUDNN_STATUS_INTERNAL_ERROR"
    (res,) = answers(HANDLE + MEMORY + IPYTHON + FINAL)
    assert res["count"] == 1 and res["params"]["status"] == "CUDNN_STATUS_INTERNAL_ERROR"


def _match(code: str, params: dict, at: int, offset: int, exact: bool = True, weak: bool = False):
    from errkit.explain.matching.index import Index
    from errkit.explain.matching.found import Match

    wording = next(w for w in Index.load().wordings if w["code"] == code)
    match = Match(code, wording, params, 1, exact=exact, weak=weak)
    match.at, match.offset = at, offset
    return match


def test_a_match_ends_the_error_before_it_only_when_it_adds_nothing_new_and_agrees():
    from errkit.explain.matching.together import same_block

    data = HANDLE.encode() + FINAL.encode()
    before = _match("RA827", {"status": "X"}, 0, 0)
    after = len(HANDLE)
    assert same_block(before, _match("RA827", {}, after, after), data)
    assert not same_block(before, _match("RA827", {"status": "X"}, after, after), data)  # a repeat: counted
    disagrees = _match("RA827", {"status": "X", "free_bytes": 1}, 0, 0)
    assert not same_block(disagrees, _match("RA827", {"status": "Y"}, after, after), data)
    assert not same_block(before, _match("RA105", {}, after, after), data)  # another entry
    assert not same_block(before, _match("RA827", {}, after, after, weak=True), data)  # a note names it
    assert not same_block(before, _match("RA827", {}, 20_000, after), data)  # beyond TIE_CONTEXT


@pytest.mark.parametrize("line, inside", [
    (b"", True), (b"    frame()", True), (b"-----------", True), (b"_ _ _ _", True), (b"----> 4 f(x)", True),
    (b"/x/model.py in f(x)", True), (b"The above exception was the direct cause of the following exception:", True),
    (b"2026-11-29 INFO step 4 done.", False),
])
def test_a_tracebacks_own_lines_are_told_from_a_logs(line, inside):
    from errkit.explain.matching.together import _in_traceback

    assert _in_traceback(line) is inside

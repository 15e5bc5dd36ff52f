"""The lines read after a message for its entry's `reads` stop at the next log record from another
place (errkit/explain/records.py): in a busy log the next record is prose or another error, and
its values are not this error's (a Mosaic header followed by an INFO line quoting `= "code"(`
was answered with operation=code, operand_type=typ). Records of the same place (cuDNN's handle
error, then its `Memory usage` line from cuda_dnn.cc) are still read, and so are a dump's own
lines, which start no record."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings, strategies as st

from errkit.explain import command
from errkit.explain.matching.index import Index
from errkit.explain.records import record_end, shape, stamp

MOSAIC = ("2026-11-29 10:00:05,300 ERROR trainer: jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Mosaic failed to "
          "compile TPU kernel: unsupported shape cast\n")
MLIR = 'The MLIR operation involved:\n  %5 = "vector.shape_cast"(%4) : (vector<8x128xf32>) -> vector<1024xf32>\n'
PROSE = '2026-11-29 10:00:05,301 INFO trainer: Build it as cls = "code"(args) : (typ, more) from the cache.\n'
# https://github.com/jax-ml/jax/issues/22626: two records of cuda_dnn.cc, at level E
HANDLE = ("2024-07-19 15:49:01.341533: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:439] Could not create "
          "cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n")
USAGE = ("2024-07-19 15:49:01.341571: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:443] Memory usage: "
         "2624061440 bytes free, 12524191744 bytes total.\n")
GLOG_HANDLE = ("E1126 13:04:33.173027 1713450 cuda_dnn.cc:535] Could not create cudnn handle: "
               "CUDNN_STATUS_INTERNAL_ERROR\n")
GLOG_USAGE = "E1126 13:04:33.173300 1713450 cuda_dnn.cc:539] Memory usage: 11372396544 bytes free, 11539054592 bytes total.\n"
GLOG_USAGE_VALUES = {"free_bytes": 11372396544, "total_bytes": 11539054592}


def _kubectl(text: str) -> str:
    return "".join(f"2026-11-29T10:00:05.{n:09d}Z {line}" for n, line in enumerate(text.splitlines(True)))


def _json(line: str, exc_info: str | None = None) -> str:
    """A JSON log line of the record `line` (its prefix into fields), a dump in its exc_info."""
    head, _, message = line.rstrip("\n").partition(" trainer: ")
    record = {"time": head[:23] or "2026-11-29 10:00:05,300", "logger": "trainer", "msg": message or line.rstrip("\n")}
    if exc_info is not None:
        record["exc_info"] = exc_info
    return json.dumps(record) + "\n"


DUMP_VALUES = {"operation": "vector.shape_cast", "operand_type": "vector<8x128xf32>"}
USAGE_VALUES = {"free_bytes": 2624061440, "total_bytes": 12524191744}


@pytest.fixture(scope="module")
def index():
    return Index.load()


def params(index, text: str) -> dict:
    out = io.StringIO()
    command.run([text], as_json=True, show_all=True, out=out, err=io.StringIO(), index=index)
    (res,) = [json.loads(line) for line in out.getvalue().splitlines()]
    return res["code"], res["params"]


CASES = [
    pytest.param(MOSAIC + MLIR, "RA807", DUMP_VALUES, id="dump"),
    pytest.param(MOSAIC + PROSE, "RA807", {}, id="another-level"),
    pytest.param(MOSAIC + MLIR + PROSE, "RA807", DUMP_VALUES, id="dump-then-another-record"),
    pytest.param(MOSAIC + PROSE + MLIR, "RA807", {}, id="dump-after-another-record"),
    pytest.param(HANDLE + USAGE, "RA827", {"status": "CUDNN_STATUS_INTERNAL_ERROR", **USAGE_VALUES}, id="same-place"),
    pytest.param(HANDLE + USAGE.replace(": E ", ": W "), "RA827", {"status": "CUDNN_STATUS_INTERNAL_ERROR"},
                 id="same-file-another-level"),
    pytest.param(HANDLE + USAGE.replace("stream_executor/cuda/cuda_dnn.cc:443", "service/gpu/autotuner.cc:61"), "RA827",
                 {"status": "CUDNN_STATUS_INTERNAL_ERROR"}, id="another-file"),
    pytest.param(HANDLE.replace(":439]", ":99]") + USAGE.replace(":443]", ":1043]"), "RA827",
                 {"status": "CUDNN_STATUS_INTERNAL_ERROR", **USAGE_VALUES}, id="line-numbers-of-more-digits"),
    pytest.param(HANDLE[HANDLE.index("Could"):] + USAGE, "RA827", {"status": "CUDNN_STATUS_INTERNAL_ERROR", **USAGE_VALUES},
                 id="no-record-of-its-own"),
    # `kubectl logs --timestamps`: every line stamped, the error's own lines too
    pytest.param(_kubectl(MOSAIC[MOSAIC.index("jaxlib"):] + MLIR), "RA807", DUMP_VALUES, id="kubectl-stderr"),
    pytest.param(_kubectl(MOSAIC + MLIR + PROSE), "RA807", DUMP_VALUES, id="kubectl-logging"),
    pytest.param(_kubectl(MOSAIC + PROSE + MLIR), "RA807", {}, id="kubectl-logging-another-record"),
    # glog's own format (level, date, time, thread, file:line): a record of another file or level stops
    pytest.param(GLOG_HANDLE + GLOG_USAGE, "RA827", {"status": "CUDNN_STATUS_INTERNAL_ERROR", **GLOG_USAGE_VALUES},
                 id="glog-same-place"),
    pytest.param(GLOG_HANDLE + GLOG_USAGE.replace("cuda_dnn.cc:539", "gpu_autotuner.cc:61"), "RA827",
                 {"status": "CUDNN_STATUS_INTERNAL_ERROR"}, id="glog-another-file"),
    pytest.param(GLOG_HANDLE + GLOG_USAGE.replace("E1126", "W1126"), "RA827", {"status": "CUDNN_STATUS_INTERNAL_ERROR"},
                 id="glog-another-level"),
    # a JSON log: each line a record, a dump inside its strings
    pytest.param(_json(MOSAIC, MLIR) + _json(PROSE), "RA807", DUMP_VALUES, id="json-dump-in-its-record"),
    pytest.param(_json(MOSAIC) + _json(PROSE), "RA807", {}, id="json-another-record"),
    pytest.param(_json(MOSAIC) + _json(MLIR), "RA807", {}, id="json-dump-in-another-record"),
]


@pytest.mark.parametrize("text, code, want", CASES)
def test_values_are_read_from_this_errors_lines_only(index, text, code, want):
    assert params(index, text) == (code, want)


def test_each_error_of_a_busy_log_keeps_its_own_values(index):
    """The same Mosaic header twice, the second with its dump, prose between: each answer's values
    are its own (the first had the second's before)."""
    log = MOSAIC + "".join(PROSE.replace("code", f"name{n}") for n in range(3)) + MOSAIC + MLIR
    out = io.StringIO()
    command.run([log], as_json=True, show_all=True, out=out, err=io.StringIO(), index=index)
    answers = sorted((json.loads(line) for line in out.getvalue().splitlines()), key=lambda res: res["line"])
    assert [(res["line"], res["params"]) for res in answers] == [(1, {}), (5, DUMP_VALUES)]


def test_shape_writes_each_run_of_digits_as_one():
    assert shape(b"2024-07-19 15:49:01.341533: E cuda_dnn.cc:439] ") == b"0-0-0 0:0:0.0: E cuda_dnn.cc:0] "
    assert shape(b"E0719 x") == b"E0 x" and shape(b"no digits") == b"no digits"


@pytest.mark.parametrize("prefix, stamped", [
    (b"0-0-0 0:0:0,0 ERROR trainer: ", b"0-0-0 0:0:0,0 "),
    (b"0-0-0 0:0:0.0: E external/cuda_dnn.cc:0] ", b"0-0-0 0:0:0.0: "),
    (b"E0 0:0:0.0 0 cuda_dnn.cc:0] ", b"E0 0:0:0.0 0 "),  # glog: the source file is the place, not the stamp
    (b"[0-0-0 0:0:0] [Thread-0] trainer: ", b"[0-0-0 0:0:0] "),
    (b"0-0-0T0:0:0.0Z 0-0-0 0:0:0,0 ERROR trainer: ", b"0-0-0T0:0:0.0Z 0-0-0 0:0:0,0 "),
    (b"ERROR 0-0-0 ", b""),
])
def test_a_records_stamp_is_its_first_words_holding_a_digit(prefix, stamped):
    assert stamp(prefix) == stamped


@pytest.mark.parametrize("first", [
    "ValueError: Mosaic failed\n",  # no stamp: its first word holds no digit
    '{"time": "2026-11-29 10:00:05", "msg": "Mosaic failed"}\n',  # a JSON line: the same
    "2026 Mosaic failed\n",  # a stamp no later line has
])
def test_a_line_that_starts_no_record_stops_nothing(first):
    data = (first + PROSE).encode()
    at = data.index(b"Mosaic")
    assert record_end(data, 0, data.index(b"\n"), at, len(data)) == len(data)


_STAMPS = ["2026-11-29 10:00:05,{n:03d} ", "2024-07-19 15:49:01.{n:06d}: ", "E1126 13:04:33.{n:06d} 1713450 ",
           "[2026-11-29 10:00:{n:02d}] ", "2026-11-29T10:00:05.{n:09d}Z ", "I1126 13:04:{n:02d}.1 7 "]
_PLACES = ["ERROR trainer: ", "INFO trainer: ", "E cuda_dnn.cc:439] ", "W cuda_dnn.cc:443] ", "[Thread-1] x: ", ""]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_where_a_record_ends_is_the_same_on_either_regex_engine(data):
    """record_end's finder (a regex of the line's stamp: errkit/core/regex.py `compile_small`) runs on
    Python's `re` where it is loaded (a log) and on RE2 otherwise (a paste): the same ends for
    lines of any stamp, place and message after a record of any of them."""
    import re as python_re

    import re2

    from errkit.explain import records

    stamp_of = st.sampled_from(_STAMPS)
    line = st.builds(lambda s, n, p, m: s.format(n=n) + p + m, stamp_of, st.integers(0, 999), st.sampled_from(_PLACES),
                     st.sampled_from(["Mosaic failed\n", "Memory usage: 12 bytes\n", "  %5 = dump\n", "\n", "x\n"]))
    first = data.draw(line)
    rest = "".join(data.draw(st.lists(line | st.sampled_from(["  dump line\n", "E\n", "2026 x\n"]), max_size=8)))
    block = (first + rest).encode()
    prefix_end = len(first) - len(first.rstrip("\n").split(" ")[-1]) - 1 if " " in first else 0
    ends = []
    for compile_ in (python_re.compile, re2.compile):
        old, records.compile_small = records.compile_small, compile_
        records._FINDERS.clear()
        try:
            ends.append(record_end(block, 0, block.index(b"\n"), prefix_end, len(block)))
        finally:
            records.compile_small = old
            records._FINDERS.clear()
    assert ends[0] == ends[1]

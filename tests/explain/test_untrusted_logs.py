"""Logs are untrusted input: whatever a path names or a log holds, explain and scan never hang,
never grow without bound, and lose or hide nothing (issue 48, each attack failing before it):

- a FIFO, a device or a socket given as a path or found in a folder is skipped with a warning
  (before: `explain --all` and `scan` hung on a FIFO); standard input (`-`) is still read;
- a truncated `.zst` log is reported as a truncated `.gz` is (before: read as empty or partial);
- a folder that cannot be read is told (before: skipped in silence);
- a JSON line nested 1,000 deep is read, without recursion (before: RecursionError, exit 70);
- a long traceback is searched in linear time (before: each frame searched TRACEBACK_LINES lines);
- memory stays flat in a log's distinct values and hosts (before: every distinct value kept).
"""

import io
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from support import ROOT

from errkit.core import UsageError
from errkit.explain import tally, triage
from errkit.explain.matching import blocks, memory
from errkit.explain.matching.text import json_strings
from errkit.core.index_format import PASTE_SIZE
from errkit.explain.jsonline import strings
from errkit.explain.matching.index import Index
from errkit.explain.matching.chunks import explain_chunks
from errkit.explain.reading import stream_blocks

RA105 = "ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8"


def errkit(*args, input=None, cwd=None, timeout=30, user=None, env=None):
    proc = subprocess.run([sys.executable, "-m", "errkit", *map(str, args)], input=input, capture_output=True,
                          text=True, timeout=timeout, cwd=cwd or ROOT, user=user,
                          env=dict(os.environ, NO_COLOR="1", **(env or {})))
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def index() -> Index:
    from errkit.explain.matcher import Matcher

    return Matcher().index


# -- only regular files are read --------------------------------------------------------------------


@pytest.fixture
def odd_files(tmp_path) -> Path:
    """A folder of logs holding a FIFO and a socket beside a log."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text(RA105 + "\n")
    os.mkfifo(logs / "pipe.log")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(logs / "socket.log"))
    yield logs
    server.close()


def test_a_fifo_or_socket_in_a_folder_or_given_is_skipped_with_a_warning(odd_files):
    code, out, err = errkit("explain", "--all", "--json", "--quiet", odd_files, odd_files / "pipe.log", "/dev/zero")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["totals"]["matches"] == 1
    skipped = {Path(f["file"]).name: f["skipped"] for f in doc["files"] if f["skipped"]}
    assert skipped == {"pipe.log": f"{odd_files / 'pipe.log'} is a FIFO, not a regular file; give it as standard "
                                   "input ('-') to read it",
                       "socket.log": skipped["socket.log"], "zero": skipped["zero"]}
    assert "a socket" in skipped["socket.log"] and "a character device" in skipped["zero"]
    assert err.count("errkit: skipped") == 3


def test_a_fifo_given_alone_is_a_usage_error_and_stdin_is_still_read(odd_files):
    code, _, err = errkit("explain", odd_files / "pipe.log")
    assert code == 2 and "is a FIFO, not a regular file" in err
    code, out, err = errkit("explain", "--all", "--report", "--quiet", "-", input=RA105 + "\n")
    assert code == 0 and "RA105" in out, err


def test_scan_skips_a_fifo(tmp_path):
    (tmp_path / "ok.py").write_text("raise ValueError(f'x={x} must be positive')\n")
    os.mkfifo(tmp_path / "pipe.py")
    code, out, err = errkit("scan", tmp_path)
    assert "pipe.py: a FIFO, not a regular file; skipped" in err
    assert "1 skipped" in err, err


# -- a truncated zstd log -----------------------------------------------------------------------------


def _zstd_streams() -> dict[str, bytes]:
    zstd = pytest.importorskip("zstandard")
    text = "".join(f"line {i} {RA105}\n" for i in range(4000)).encode()
    plain = zstd.ZstdCompressor(level=3).compress(text)
    checked = zstd.ZstdCompressor(level=3, write_checksum=True, write_content_size=False).compress(text)
    streamed = io.BytesIO()
    with zstd.ZstdCompressor(level=1).stream_writer(streamed, closefd=False) as writer:  # no content size, blocks
        for i in range(0, len(text), 5000):
            writer.write(text[i:i + 5000])
            writer.flush(zstd.FLUSH_BLOCK)
    skippable = (0x184D2A53).to_bytes(4, "little") + (7).to_bytes(4, "little") + b"padding"
    return {"plain": plain, "checksum": checked, "streamed": streamed.getvalue(),
            "frames": plain + skippable + checked, "empty frame": zstd.ZstdCompressor().compress(b"")}


def _read(data: bytes) -> bytes:
    return b"".join(stream_blocks(io.BufferedReader(io.BytesIO(data)), "x.zst"))


def test_a_zstd_stream_cut_anywhere_is_corrupt_and_a_whole_one_is_read():
    """Every stream read whole; cut at every one of 200 places (and the last bytes), each a usage
    error saying so (before: read as empty or partial, no word)."""
    rng = random.Random(48)
    for name, data in _zstd_streams().items():
        assert _read(data) is not None, name
        # (a cut within the 4 bytes of the magic number is no zstd stream: read as the text it is)
        cuts = sorted({*rng.sample(range(4, len(data)), min(200, len(data) - 4)), *range(max(4, len(data) - 6), len(data))})
        for cut in cuts:
            with pytest.raises(UsageError, match="corrupt zstd data"):
                _read(data[:cut])


def test_a_truncated_zstd_log_is_reported_as_a_truncated_gzip_is(tmp_path):
    import gzip

    text = "".join(f"line {i} {RA105}\n" for i in range(4000)).encode()
    data, zipped = _zstd_streams()["plain"], gzip.compress(text)
    (tmp_path / "cut.log.zst").write_bytes(data[:len(data) // 2])
    (tmp_path / "cut.log.gz").write_bytes(zipped[:len(zipped) // 2])
    code, out, err = errkit("explain", "--all", "--json", "--quiet", tmp_path)
    skipped = {Path(f["file"]).name: f["skipped"] for f in json.loads(out)["files"]}
    assert "cut short" in skipped["cut.log.zst"] and "corrupt gzip data" in skipped["cut.log.gz"], skipped


# -- a folder that cannot be read ---------------------------------------------------------------------


def _as_nobody(work):
    """`work()`'s value, run by another user: a forked child that gives up root (root reads every
    folder), the modules it needs imported already; run as it is when this is no root."""
    if os.geteuid() != 0:
        return work()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read)
            os.setgid(65534)
            os.setuid(65534)
            os.write(write, json.dumps(work()).encode())
        except BaseException as err:  # noqa: BLE001 - told to the parent, which fails on it
            os.write(write, json.dumps(repr(err)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(said)


def test_a_folder_that_cannot_be_read_is_told():
    from errkit.explain import inputs

    shared = Path(tempfile.mkdtemp(prefix="errkit-unreadable-"))  # (pytest's tmp_path is root's alone)
    logs = shared / "logs"
    (logs / "locked").mkdir(parents=True)
    (logs / "a.log").write_text(RA105 + "\n")
    (logs / "locked" / "b.log").write_text(RA105 + "\n")
    os.chmod(shared, 0o755)
    os.chmod(logs / "locked", 0o700 if os.geteuid() == 0 else 0o000)  # root's: nobody cannot list it

    def expanded():
        told: list[str] = []
        return inputs.expand([str(logs)], warn=told.append), told

    inputs.expand([str(logs)])  # (fnmatch imported: the child reads no module of root's)
    try:
        names, told = _as_nobody(expanded)
    finally:
        os.chmod(logs / "locked", 0o700)
        shutil.rmtree(shared, ignore_errors=True)
    assert names == [str(logs / "a.log")]
    assert told == [f"errkit: skipped the folder {logs / 'locked'}: permission denied"]


# -- deep JSON ----------------------------------------------------------------------------------------


def test_a_json_line_nested_1000_deep_is_read(tmp_path):
    deep = '{"msg": "' + RA105 + '", "x": ' + '{"a": [' * 1000 + "1" + "]}" * 1000 + "}"
    (tmp_path / "deep.log").write_text(deep + "\n" + RA105 + "\n")
    (tmp_path / "other.log").write_text(RA105 + "\n")
    code, out, err = errkit("explain", "--all", "--report", "--quiet", tmp_path)
    assert code == 0 and "RA105" in out and "x3 in 2 file(s)" in out, err
    code, out, err = errkit("explain", tmp_path / "deep.log")
    assert code == 0 and "(x2, last at line 2)" in out, err


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
                    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(JSON, st.sampled_from([0, 1, 2]), st.booleans())
def test_the_reader_without_recursion_reads_what_json_loads_reads(doc, spaces, cut):
    line = json.dumps(doc, indent=None, separators=((", ", ": ") if spaces else (",", ":")), ensure_ascii=spaces == 2)
    if cut and len(line) > 1:
        line = line[:len(line) // 2]  # not JSON: both say []
    assert strings(line) == json_strings(line)


def test_the_reader_without_recursion_agrees_past_the_recursion_limit():
    deep = '{"a": "x", "b": [' + '{"c": "no", "d": [' * 3000 + '"deep"' + "]}" * 3000 + '], "e": "y"}'
    assert json_strings(deep) == ["x", "y"] == strings(deep)
    for bad in ('{"a": [1,]}', '{"a" 1}', '{"a": NaN}', '{"a": "\x01"}', '[1] [2]', '{"a": 1}}', "{'a': 1}"):
        assert strings(bad) == json_strings(bad) == [], bad


# -- tracebacks in linear time ------------------------------------------------------------------------


def _traceback(frames: int, chained: int) -> str:
    out = []
    for k in range(chained):
        out.append("Traceback (most recent call last):")
        for j in range(frames):
            out += [f'  File "/work/project/module_{j}.py", line {j + 10}, in function_{j}', f"    function_{j + 1}(x)"]
        out += [f"ValueError: num_q_heads={k + 12} must be divisible by and num_kv_heads=8", "",
                "The above exception was the direct cause of the following exception:", ""]
    return "\n".join(out) + "\nRuntimeError: the step failed\n"


def test_a_long_traceback_is_searched_in_linear_time(index, monkeypatch):
    """The lines read in search of the exception lines that end tracebacks: about one per line of
    the input (before: each frame searched up to TRACEBACK_LINES lines, 200 x the input's)."""
    read = [0]
    search = blocks._traceback_search

    def counted(data, pos, limit):
        found = search(data, pos, limit)  # (start, end) of the exception line, or [where it stopped, lines read]
        read[0] += data.count(b"\n", pos, found[0]) + 1
        return found

    monkeypatch.setattr(blocks, "_traceback_search", counted)
    text = _traceback(frames=1000, chained=5)
    assert len(text) > PASTE_SIZE  # a log (a paste is read the same way: every line)
    found, _, _ = explain_chunks(index, [text.encode()])
    assert {f.match.code for f in found} == {"RA105"}
    assert read[0] <= 1.5 * text.count("\n"), (read[0], text.count("\n"))


@pytest.mark.parametrize("frames", [1, 150, 199, 200, 201, 450])
def test_the_search_memo_gives_the_answers_of_the_search_without_it(index, frames, monkeypatch):
    text = _traceback(frames=frames, chained=3)
    with_memo = [(f.match.code, f.count, f.last_line) for f in explain_chunks(index, [text.encode()])[0]]
    end = blocks._traceback_end
    monkeypatch.setattr(blocks, "_traceback_end", lambda data, pos, limit=blocks.TRACEBACK_LINES, memo=None: end(data, pos, limit))
    assert with_memo == [(f.match.code, f.count, f.last_line) for f in explain_chunks(index, [text.encode()])[0]]


# -- memory flat in the distinct values ---------------------------------------------------------------


def _distinct_log(lines: int) -> bytes:
    from scripts.distinct_values_log import main

    out = io.StringIO()
    main(lines, out)
    return out.getvalue().encode()


def _peak(work) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_explain_all_keeps_the_last_answers_of_each_code_and_counts_the_rest(index):
    others: dict = {}
    found, _, _ = explain_chunks(index, [_distinct_log(3000)], others=others)
    by_code: dict = {}
    for f in found:
        by_code[f.match.code] = by_code.get(f.match.code, 0) + f.count
    assert by_code == {"RA105": tally.MAX_ANSWERS, "RA710": tally.MAX_ANSWERS}
    assert others == {"RA105": 2000 - tally.MAX_ANSWERS, "RA710": 1000 - tally.MAX_ANSWERS}
    assert max(f.last_line for f in found) == 3000 and min(f.last_line for f in found) > 2600, "the most recent kept"


def test_memory_of_explain_all_and_the_report_is_flat_in_distinct_values(index, monkeypatch):
    """Peak memory (tracemalloc) for 4,000 and for 16,000 lines of distinct values and hosts, the
    caps made small to reach them soon: the same give or take 25% (before: 4 times as much)."""
    monkeypatch.setattr(tally, "MAX_ANSWERS", 10)
    monkeypatch.setattr(triage, "MAX_DISTINCT", 50)
    monkeypatch.setattr(triage, "MAX_HOSTS", 50)
    monkeypatch.setattr(triage, "MAX_GIVEN", 64)
    monkeypatch.setattr(memory, "LINE_CACHE", 64)
    monkeypatch.setattr("errkit.explain.matching.line.MESSAGES_KEPT", 64)
    small, large = _distinct_log(4000), _distinct_log(16000)
    blocks = lambda log: [log[i:i + 65536] for i in range(0, len(log), 65536)]  # noqa: E731 - as a file is read
    for work in (lambda read: explain_chunks(index, iter(read), others={}),
                 lambda read: triage.triage(index, iter(read), "x.log")):
        work(blocks(small))  # (caches filled, regexes compiled)
        read_small, read_large = blocks(small), blocks(large)  # (made before the count: the file's bytes)
        few, many = _peak(lambda: work(read_small)), _peak(lambda: work(read_large))
        assert many < 1.25 * few, (few, many)
    summary = triage.triage(index, [large], "x.log")
    ra105 = sum(1 for i in range(16000) if i % 3 != 1)  # the generator's lines of RA105, each of its own host
    assert len(summary["codes"]["RA105"]["hosts"]) == 50 and summary["codes"]["RA105"]["other_hosts"] == ra105 - 50

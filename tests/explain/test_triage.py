"""`errkit explain --all PATH...` over a fleet's logs, through the real command (the venv's `errkit`
console script): files, folders, globs, `-` and compressed logs give the same per-error answers
as each file alone; the same report whatever the number of workers; missing paths, binary and
corrupt files, a missing zstandard; hosts, timestamps and varied values; markdown."""

import bz2
import gzip
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from benchmarks import logs

ERRKIT = Path(sys.executable).with_name("errkit")


def errkit(*args, input=None, cwd=None, env=None):
    done = subprocess.run([str(ERRKIT), *map(str, args)], input=input, capture_output=True, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "", **(env or {})}, timeout=300)
    return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> dict:
    """A folder of six logs (three plain, gzip, bz2 and zstd in a sub-folder), a binary file, and
    how many times each code appears in each log (as benchmarks/logs.py made them)."""
    import zstandard

    root = tmp_path_factory.mktemp("fleet")
    (root / "older").mkdir()
    expected = {}
    writers = {
        "host-000.log": lambda p, b: p.write_bytes(b),
        "host-001.log": lambda p, b: p.write_bytes(b),
        "host-002.txt": lambda p, b: p.write_bytes(b),
        "older/host-003.log.gz": lambda p, b: p.write_bytes(gzip.compress(b)),
        "older/host-004.log.bz2": lambda p, b: p.write_bytes(bz2.compress(b)),
        "older/host-005.log.zst": lambda p, b: p.write_bytes(zstandard.ZstdCompressor().compress(b)),
    }
    for seed, (name, write) in enumerate(writers.items()):
        kind = ("english", "tracebacks")[seed % 2]
        text, counts = logs.make_log(kind, 1500, error_every=40, seed=seed)
        write(root / name, text.encode("utf-8"))
        expected[str(root / name)] = counts
    (root / "core.bin").write_bytes(bytes(range(256)) * 64)
    return {"root": root, "expected": expected}


def answers(path) -> list[dict]:
    """What `errkit explain --all --json FILE` answers for one file on its own."""
    code, out, err = errkit("explain", "--all", "--json", path)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def alone(path) -> Counter:
    """Per code, the count `errkit explain --all --json FILE` gives for one file on its own."""
    counts: Counter = Counter()
    for answer in answers(path):
        counts[answer["code"]] += answer["count"]
    return counts


def values_of(answers_: list[dict]) -> dict[str, dict[str, set]]:
    """code -> param -> the distinct values (as JSON) of the answers."""
    out: dict = {}
    for answer in answers_:
        for param, value in answer["params"].items():
            out.setdefault(answer["code"], {}).setdefault(param, set()).add(json.dumps(value))
    return out


def per_file(doc: dict) -> dict[str, Counter]:
    out: dict[str, Counter] = {}
    for error in doc["errors"]:
        for name, n in error["files"].items():
            out.setdefault(name, Counter())[error["code"]] += n
    return out


def report(*args, input=None):
    code, out, err = errkit("explain", "--all", "--json", *args, input=input)
    assert code == 0, err
    return json.loads(out), err


def test_each_file_alone_is_what_the_generator_wrote(fleet):
    """The baseline the other tests compare with: one file at a time (compressed ones decompressed)
    finds every error the generator wrote, each once (a line of seed 2 once counted twice: fixed)."""
    for name, counts in fleet["expected"].items():
        assert alone(name) == Counter(counts), name


def test_folder_files_globs_and_stdin_give_each_file_alone_answers(fleet):
    root, expected = fleet["root"], fleet["expected"]
    singles = {name: alone(name) for name in expected}
    by_folder, err = report(root)
    assert per_file(by_folder) == singles
    assert "core.bin" in err and "binary" in err  # skipped with a warning, the rest read
    listed, _ = report(*sorted(expected))
    assert per_file(listed) == singles
    globbed, _ = report(root, "--include", "*.log*")
    assert per_file(globbed) == {n: c for n, c in singles.items() if not n.endswith(".txt")}
    excluded, _ = report(root, "--exclude", "older/*", "--exclude", "*.bin")
    assert per_file(excluded) == {n: c for n, c in singles.items() if "older" not in n}
    first = sorted(expected)[0]
    piped, _ = report("-", *sorted(expected)[1:], input=Path(first).read_bytes())
    assert per_file(piped) == {("-" if n == first else n): c for n, c in singles.items()}
    assert by_folder["totals"]["matches"] == sum(sum(c.values()) for c in singles.values())
    every = values_of([a for name in sorted(expected) for a in answers(name)])
    reported = {e["code"]: {p: {json.dumps(v) for v in r["seen"]} for p, r in e["values"].items()} for e in by_folder["errors"]}
    assert {c: p for c, p in reported.items() if p} == every  # the values too, not only the counts


def test_the_report_is_the_same_whatever_the_number_of_workers(fleet):
    outputs = set()
    for workers in ("1", "2", "4"):
        code, out, err = errkit("explain", "--all", "--json", "--workers", workers, fleet["root"])
        assert code == 0, err
        outputs.add(out)
    assert len(outputs) == 1
    text_outputs = {errkit("explain", "--all", "--workers", w, fleet["root"])[1] for w in ("1", "3")}
    assert len(text_outputs) == 1


def test_a_missing_path_is_a_usage_error_naming_it(fleet):
    existing = sorted(fleet["expected"])[0]
    for args in ([existing, "no/such/host-9.log"], ["no/such/host-9.log", existing], ["logs/*.log"]):
        code, out, err = errkit("explain", "--all", *args)
        assert code == 2 and out == ""
        lines = err.strip().splitlines()
        assert len(lines) == 1 and args[-1 if "no/such" in args[-1] else 0] in lines[0], err
        assert "Traceback" not in err


def test_text_that_names_a_file_is_read_as_text_with_the_text_flag(tmp_path):
    message = "ValueError: num_q_heads=12 must be divisible by num_kv_heads=8"
    (tmp_path / "ValueError:").write_text("nothing here\n")
    code, _, err = errkit("explain", *message.split(), cwd=tmp_path)
    assert code == 2 and "no such file or folder: num_q_heads=12" in err and "--text" in err
    code, out, err = errkit("explain", "--text", *message.split(), cwd=tmp_path)
    assert code == 0 and out.startswith("RA105"), err
    code, out, _ = errkit("explain", "--help")
    assert "--text" in " ".join(out.split())


def test_corrupt_and_binary_files_are_skipped_with_a_warning(tmp_path, fleet):
    good = sorted(fleet["expected"])[0]
    cut = tmp_path / "host-cut.log.gz"
    cut.write_bytes(gzip.compress(Path(good).read_bytes())[:-64])
    (tmp_path / "dump.core").write_bytes(b"\x7fELF\x00\x00\x00" * 100)
    doc, err = report(good, cut, tmp_path / "dump.core")
    skipped = {f["file"]: f["skipped"] for f in doc["files"] if f["skipped"]}
    assert set(skipped) == {str(tmp_path / "dump.core"), str(cut)}
    assert "corrupt gzip data" in skipped[str(cut)] and "binary" in skipped[str(tmp_path / "dump.core")]
    assert sum(1 for line in err.splitlines() if line.startswith("errkit: skipped")) == 2
    assert per_file(doc)[good] == fleet["expected"][good]


def test_zstd_without_zstandard_is_a_clear_message(fleet):
    path = next(n for n in fleet["expected"] if n.endswith(".zst"))
    blocked = "import sys; sys.modules['zstandard'] = None; from errkit.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", blocked, "explain", "--all", path], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "zstandard" in done.stderr and "errkit[zstd]" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


HOST_LOG = """\
2026-11-29T10:00:05Z host=tpu-a INFO step 1
2026-11-29T10:00:06Z host=tpu-a ERROR ValueError: num_q_heads=12 must be divisible by num_kv_heads=8
2026-11-29T10:30:07+01:00 host=tpu-b ERROR ValueError: num_q_heads=16 must be divisible by num_kv_heads=6
2026-11-29T10:30:00Z INFO nothing
"""


def test_hosts_timestamps_and_values_that_varied(tmp_path):
    """A `host=` field names the host (else the file's name does); first and last are by time, in UTC
    (10:30:07+01:00 is the earliest, though its text sorts after 10:00:06Z)."""
    (tmp_path / "a.log").write_text(HOST_LOG)
    (tmp_path / "worker-7.log").write_text("2026-11-29 09:59:59,500 ValueError: num_q_heads=12 must be divisible by num_kv_heads=8\n")
    doc, _ = report(tmp_path)
    (error,) = doc["errors"]
    assert error["code"] == "RA105" and error["count"] == 3
    assert error["hosts"] == {"tpu-a": 1, "tpu-b": 1, "worker-7": 1}
    assert error["first"]["file"].endswith("a.log") and error["first"]["line"] == 3
    assert error["first"]["time"] == "2026-11-29T10:30:07+01:00"
    assert error["last"]["line"] == 2 and error["last"]["time"] == "2026-11-29T10:00:06Z"
    assert error["varied"] == ["num_q_heads", "num_kv_heads"]
    assert error["values"]["num_kv_heads"] == {"seen": [8, 6], "counts": [2, 1], "other": 0, "distinct": 2, "more": False}
    # three time formats in the logs, one in the report: UTC where a zone was given
    assert (error["first"]["when"], error["last"]["when"]) == ("2026-11-29 09:30:07.000", "2026-11-29 10:00:06.000")
    code, text, _ = errkit("explain", "--all", tmp_path)
    assert code == 0 and "values   num_q_heads (2 values): 12 (x2), 16 (x1)\n" in text
    assert "         num_kv_heads (2 values): 8 (x2), 6 (x1)\n" in text
    assert "first    2026-11-29 09:30:07.000  " in text and text.split("first    ")[1].split("\n")[0].endswith(
        "a.log:3  num_q_heads=16 must be divisible by num_kv_heads=6")
    code, markdown, _ = errkit("explain", "--all", "--format", "markdown", tmp_path)
    assert code == 0 and "| [RA105](" in markdown and "| 3 | 2 |" in markdown
    assert "num_q_heads (2 values): 12 (x2), 16 (x1)" in markdown and "`num_q_heads=16 must be divisible by num_kv_heads=6`" in markdown


def test_a_value_every_occurrence_shared_is_listed_with_its_count(tmp_path):
    """A value that never varied (block_q=96 on every host) is reported with its count, in the
    JSON, the text and the markdown; values past the first 20 are counted together."""
    lines = [f"ValueError: q_seq_len={1000 + n} must be a multiple of block_q=96" for n in range(25)]
    lines += ["ValueError: q_seq_len=1000 must be a multiple of block_q=96"] * 3
    (tmp_path / "a.log").write_text("\n".join(lines[:14]) + "\n")
    (tmp_path / "b.log").write_text("\n".join(lines[14:]) + "\n")
    doc, _ = report(tmp_path)
    (error,) = doc["errors"]
    assert error["code"] == "RA230" and error["count"] == 28 and error["varied"] == ["q_seq_len"]
    assert error["values"]["block_q"] == {"seen": [96], "counts": [28], "other": 0, "distinct": 1, "more": False}
    q = error["values"]["q_seq_len"]
    assert q["seen"] == [1000 + n for n in range(20)] and q["counts"] == [4] + [1] * 19 and q["other"] == 5
    assert q["distinct"] == 25
    code, text, _ = errkit("explain", "--all", tmp_path)
    assert code == 0 and "         block_q: 96 (all 28)\n" in text and ", 1019 (x1), 5 other values (x5)\n" in text
    code, markdown, _ = errkit("explain", "--all", "--format", "markdown", tmp_path)
    assert code == 0 and "block_q: 96 (all 28)" in markdown


def test_no_catalogued_error_in_any_file_is_exit_1(tmp_path):
    (tmp_path / "a.log").write_text("all fine\n")
    (tmp_path / "b.log").write_text("still fine\n")
    code, out, err = errkit("explain", "--all", tmp_path / "a.log", tmp_path / "b.log")
    assert code == 1 and "no catalogued error found in 2 file(s)" in err


def test_bad_options_are_one_line_and_exit_2(fleet):
    root = fleet["root"]
    for args, says in ((["--workers", "0", root], "--workers 0"), (["--workers", "x", root], "invalid int value"),
                       (["--json", "--format", "html", root], "--json and --format"), (["--open", root], "--open")):
        code, out, err = errkit("explain", "--all", *args)
        assert code == 2 and out == "" and says in err and "Traceback" not in err, (args, err)
    blocked = ("import sys; sys.modules['matplotlib'] = None; from errkit.cli import main; "
               "sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", blocked, "explain", "--all", "--format", "html", str(root)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == "" and "errkit[report]" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1  # refused before any file is read: no "skipped" warning


@pytest.mark.parametrize("name, host", [
    ("logs/host-017.log.gz", "host-017"), ("host-017.log", "host-017"), ("tpu-v5.worker-3.txt.zst", "tpu-v5.worker-3"),
    ("old/node7", "node7"), ("-", "stdin"), (".log", ".log"), ("x.LOG.BZ2", "x"),
])
def test_the_host_of_a_file_name(name, host):
    from errkit.explain.triage import host_of

    assert host_of(name) == host


@pytest.mark.parametrize("line, shown, key", [
    ("2026-11-29 10:00:05,120 ERROR x", "2026-11-29 10:00:05,120", "2026-11-29T10:00:05.120000"),
    ("[2026-11-29T10:00:05.5Z] x", "2026-11-29T10:00:05.5Z", "2026-11-29T10:00:05.500000"),
    ("2026-11-29T11:00:05+0100 x", "2026-11-29T11:00:05+0100", "2026-11-29T10:00:05.000000"),
    ("2026-11-29T03:00:05-07:00 x", "2026-11-29T03:00:05-07:00", "2026-11-29T10:00:05.000000"),
    ("2026-13-29 10:00:05 not a date", None, None), ("step 2026-11-29 only a date", None, None),
    (" " * 90 + "2026-11-29 10:00:05 too far in the line", None, None),
])
def test_timestamps_are_read_and_compared_in_utc(line, shown, key):
    from errkit.explain.triage import timestamp

    assert timestamp(line) == ((shown, key) if shown else None)


@pytest.mark.parametrize("line, host", [
    ("2026 host=tpu-a ERROR x", "tpu-a"), ('{"host": "tpu-b", "msg": "x"}', "tpu-b"), ("hostname=n1 x", "n1"),
    ("ghost=spooky x", None), ("no host here", None),
])
def test_a_host_field(line, host):
    from errkit.explain.triage import host_field

    assert host_field(line) == host


def _timestamp_by_datetime(line: str):
    """triage.timestamp as it was written first: every timestamp through datetime.fromisoformat."""
    from datetime import datetime, timezone

    from errkit.explain.triage import _patterns

    m = _patterns()["time"].search(line, 0, 80)
    if m is None:
        return None
    date, clock, fraction, zone = m.groups()
    text = f"{date}T{clock}" + (f".{(fraction + '000000')[:6]}" if fraction else "")
    if zone:
        text += "+00:00" if zone == "Z" else (zone if ":" in zone else f"{zone[:3]}:{zone[3:]}")
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is not None:
        when = when.astimezone(timezone.utc).replace(tzinfo=None)
    return m.group(0), when.isoformat(timespec="microseconds")


def test_timestamps_without_a_zone_are_read_as_datetime_reads_them():
    """The timestamps without a zone are checked and keyed without datetime (dates checked once each,
    remembered in triage._DATES): every date, clock and fraction, valid or not, read twice (the
    second time from what was remembered), gives datetime's answer. Planted: every remembered date
    valid -> fails; seconds up to 60 allowed -> fails."""
    import random

    from errkit.explain.triage import timestamp

    rng = random.Random(5)
    for _ in range(20_000):
        date = f"{rng.choice(['2026', '2024', '1900', '0000'])}-{rng.randint(0, 13):02d}-{rng.randint(0, 32):02d}"
        clock = f"{rng.randint(0, 25):02d}:{rng.randint(0, 61):02d}:{rng.randint(0, 61):02d}"
        line = (f"{date}{rng.choice(' T')}{clock}{rng.choice(['', ',5', '.123', ',123456789'])}"
                f"{rng.choice(['', '', 'Z', '+0100'])} ERROR x")
        for _ in range(2):
            assert timestamp(line) == _timestamp_by_datetime(line), line


def test_values_given_once_keep_the_summary_of_every_value_given():
    """triage.triage gives each distinct value of a param to _seen once (`known`): its summary's values
    are those of every match given to _seen, with values that repeat, more distinct values than
    MAX_VALUES and, past MAX_DISTINCT, "more". Planted: values past MAX_VALUES distinct ones not
    given -> fails."""
    from errkit.explain import triage
    from errkit.explain.matching.index import Index
    from errkit.explain.matching.chunks import Reading, scan_chunks

    index = Index.load()
    lines = [f"2026-11-29 10:00:{n % 60:02d} ValueError: num_q_heads={12 * (n % 1100 + 1)} must be divisible by "
             f"num_kv_heads={8 if n % 3 else 6}\n" for n in range(2400)]
    lines += [f"ValueError: num_q_heads={12 * (n % 7 + 1)} must be divisible by num_kv_heads=5\n" for n in range(30)]
    data = "".join(lines).encode()
    summary = triage.triage(index, [data], "a.log")
    codes: dict = {}
    for match, chunk in scan_chunks(index, [data], None, Reading()):
        where = triage._occurrence("a.log", match.line, None, match.text)
        triage._add(codes, match, where, "a")  # every value given to _seen
    assert summary["codes"].keys() == codes.keys() and codes
    for code, group in codes.items():
        assert summary["codes"][code]["values"] == group["values"], code
    assert any(r["more"] for g in codes.values() for r in g["values"].values())


CUDNN_PRINTOUT = (  # https://github.com/jax-ml/jax/issues/22626 (abridged): one error over several lines
    "2024-07-19 15:49:01.341533: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:439] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n"
    "2024-07-19 15:49:01.341571: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:443] Memory usage: 2624061440 bytes free, 12524191744 bytes total.\n"
    "Traceback (most recent call last):\n"
    'File "scripts/train_vqgan.py", line 202, in\nmain()\n'
    "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed\n")


def test_one_error_over_several_lines_is_counted_once_as_alone(tmp_path):
    """The report counts a cuDNN status, its traceback and the error line it ends in once, as
    `errkit explain --all` on the file alone does (issue 26's same_block, matching/together.py), with the status and
    the time of its first line; the same printout again a page of log later is a second one."""
    prose = "".join(f"2024-07-19 15:50:{n:02d}.000000: I trainer step {n}\n" for n in range(30))
    (tmp_path / "host-a.log").write_text(CUDNN_PRINTOUT + prose + CUDNN_PRINTOUT)
    doc, _ = report(tmp_path)
    (error,) = doc["errors"]
    assert error["code"] == "RA827" and error["count"] == 2 == sum(alone(tmp_path / "host-a.log").values())
    assert error["values"]["status"]["seen"] == ["CUDNN_STATUS_INTERNAL_ERROR"]
    assert error["first"]["line"] == 6 and error["first"]["time"] == "2024-07-19 15:49:01.341533"

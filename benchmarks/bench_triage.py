"""A fleet's logs, side by side in one run: `errkit explain --all` over 8 generated files
(benchmarks/logs.py, English-prose noise, 1% errors, one seed per file) on 1 worker vs 2 workers,
and each vs `grep -c Error` over the same files (GNU grep reads every line of every file); one of
those files alone on one core vs `grep -c Error` on it, with each prefilter engine
(errkit/explain/prefilter.py: hyperscan where installed, re2), and on 2 workers, a part each
(errkit/explain/parts.py), vs on 1; and the cold start of
`errkit explain MSG` with the triage's caches in place vs without (unchanged: triage adds nothing
to it).

Whole processes timed with `hyperfine -N` (bench_explain.hyperfine, commands' order reversed each
round), errkit as this checkout's venv runs it (`errkit` beside the interpreter). The three runs'
reports are checked to be the same document before anything is timed.

    python benchmarks/bench_triage.py                 # 8 x 1,000,000 lines (issue 30's size)
    python benchmarks/bench_triage.py --lines 100000  # a short run
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import logs  # noqa: E402
from benchmarks._timing import Result, Target, fmt_time, report  # noqa: E402
from benchmarks.bench_explain import hyperfine  # noqa: E402
from errkit.explain import prefilter  # noqa: E402

ERRKIT = Path(sys.executable).with_name("errkit")
FILES = 8


def _spread(times: list[float]) -> str:
    return f"{fmt_time(min(times))}-{fmt_time(max(times))}"


def _locator():
    from errkit.explain.matching.index import Index
    from errkit.explain.matching.keys import Keys

    index = Index.load()
    keys = index.room(Keys)
    return keys.alternatives(), keys.locator()


def write_fleet(folder: Path, lines: int) -> int:
    """FILES logs of `lines` lines each in `folder`; the errors the generator wrote in all."""
    written = 0
    for n in range(FILES):
        text, expected = logs.make_log("english", lines, seed=n)
        (folder / f"host-{n:03d}.log").write_text(text, encoding="utf-8")
        written += sum(expected.values())
    return written


def same_reports(folder: Path) -> int:
    """The matches of the report, the same document on 1 and 2 workers, and one file's alone (read
    whole or in parts: errkit/explain/parts.py), else the benchmark stops."""
    import json

    found = []
    for path in (folder, sorted(folder.iterdir())[0]):
        docs = set()
        for workers in ("1", "2"):
            done = subprocess.run([str(ERRKIT), "explain", "--all", "--report", "--json", "--quiet", "--workers", workers, str(path)],
                                  capture_output=True, text=True, check=True)
            docs.add(done.stdout)
        if len(docs) != 1:
            raise SystemExit(f"bench_triage: the reports of {path} on 1 and 2 workers differ")
        found.append(json.loads(docs.pop())["totals"]["matches"])
    return found[0]


def compiled_as_installed() -> None:
    """errkit's modules compiled to bytecode, as pip leaves an installed wheel: a checkout run with
    PYTHONDONTWRITEBYTECODE (this machine sets it) compiles every module from source in each
    process, about 70 ms of each run here (35 modules), which no user's errkit does."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "errkit")], check=True,
                   stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000, help="lines of each of the 8 logs")
    parser.add_argument("--runs", type=int, default=3, help="hyperfine runs of each command")
    args = parser.parse_args(argv)
    compiled_as_installed()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        fleet = tmp / "fleet"
        fleet.mkdir()
        written = write_fleet(fleet, args.lines)
        load = os.getloadavg()[0]
        size = sum(p.stat().st_size for p in fleet.iterdir())
        found = same_reports(fleet)
        files = sorted(str(p) for p in fleet.iterdir())
        ours = lambda workers: [str(ERRKIT), "explain", "--all", "--quiet", "--workers", str(workers), str(fleet)]  # noqa: E731
        runs: list = []
        # at least 2 runs a round: a median of 2 single runs says little on a shared machine
        one, two, grep = hyperfine([ours(1), ours(2), ["grep", "-c", "Error", *files]], tmp, runs=max(args.runs, 4),
                                   warmup=1, rounds=2, times_of=runs)
        load_after = os.getloadavg()[0]
        single = ["explain", "--all", "--quiet", "--workers", "1", files[0]]
        re2 = ["env", f"{prefilter.ENV}=re2", str(ERRKIT)]
        alone, alone_re2, grep_one = hyperfine([[str(ERRKIT), *single], [*re2, *single], ["grep", "-c", "Error", files[0]]],
                                               tmp, runs=max(args.runs, 4), warmup=1, rounds=2)
        report_of = lambda workers: [str(ERRKIT), "explain", "--all", "--report", "--quiet", "--workers", str(workers), files[0]]  # noqa: E731
        whole, split = hyperfine([report_of(1), report_of(2)], tmp, runs=max(args.runs, 4), warmup=1, rounds=2)
        message = ["explain", "q_heads=12 must be divisible by and num_kv_heads=8"]
        cold, cold_re2 = hyperfine([[str(ERRKIT), *message], [*re2, *message]], tmp, runs=20, warmup=3, rounds=2,
                                   ignore_failure=True)
        engine = prefilter.chosen(*_locator()).name
    # `load`: the machine's other work, before timing (2 workers cannot beat 1 without a free core)
    what = (f"{FILES} logs x {args.lines:,} lines ({size / 1e6:.0f} MB, 1% errors; found {found:,} of {written:,}), "
            f"{len(os.sched_getaffinity(0))} cores, load {load:.1f} before, {load_after:.1f} after the fleet's runs")
    rows = [
        Result(f"one of those logs (1 file, {args.lines:,} lines), 1 core, prefilter {engine}: `explain --all` vs "
               "`grep -c Error`", fmt_time(alone), fmt_time(grep_one), alone / grep_one, Target("<=", 5)),
        Result("same log, its report (`--report`) on 2 workers, a part each (errkit/explain/parts.py), vs on 1 worker",
               fmt_time(split), fmt_time(whole), split / whole, Target("<=", 0.6)),
        Result("same log: `explain --all` with prefilter re2 vs `grep -c Error`", fmt_time(alone_re2), fmt_time(grep_one),
               alone_re2 / grep_one),
        Result(f"cold start `errkit explain MSG` ({engine} installed: a message never loads it) vs the same with "
               f"{prefilter.ENV}=re2 (through `env`)", fmt_time(cold), fmt_time(cold_re2), cold / cold_re2,
               Target("<=", 1.1)),
        Result(f"fleet, {what}: `explain --all` on 2 workers vs 1 worker (medians of {len(runs[0])} runs; "
               f"2 workers {_spread(runs[1])}, 1 worker {_spread(runs[0])})", fmt_time(two), fmt_time(one), two / one,
               Target("<=", 0.6)),
        Result("same fleet: `explain --all` on 1 worker vs `grep -c Error` over the 8 files", fmt_time(one), fmt_time(grep),
               one / grep),
        Result("same fleet: `explain --all` on 2 workers vs `grep -c Error` over the 8 files", fmt_time(two), fmt_time(grep),
               two / grep),
    ]
    return report(rows)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

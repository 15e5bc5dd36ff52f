"""Run every benchmark in this folder, one after the other, and print one table of their results.

    python benchmarks/run.py [name ...]          # e.g. `validators explain` for bench_validators/bench_explain
    python benchmarks/run.py --page              # also write the table into site/docs/contributing/benchmarks.md

Each benchmark compares ours with a baseline in the same run (see benchmarks/_timing.py). The exit
code is 1 when a target is missed or a benchmark fails, and the table says which.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks._timing import HEADER, load_results  # noqa: E402

PAGE = HERE.parent / "site" / "docs" / "contributing" / "benchmarks.md"
START, END = "<!-- benchmarks:start (python benchmarks/run.py --page) -->", "<!-- benchmarks:end -->"


# A benchmark run so that a crash exits 3, not Python's 1 (which is a missed target): a benchmark
# that raised was counted as missed, with no row to say so.
CRASH_IS_3 = """import runpy, sys, traceback
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit:
    raise
except BaseException:
    traceback.print_exc()
    sys.exit(3)
"""


def write_page(table: str, page: Path = PAGE) -> None:
    text = page.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"run.py: {page} has no {START} ... {END} markers")
    page.write_text(pattern.sub(lambda _: f"{START}\n{table}\n{END}", text), encoding="utf-8")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (bench_NAME.py); all by default")
    parser.add_argument("--page", action="store_true", help="write the table into the site's benchmarks page")
    args = parser.parse_args(argv)
    scripts = sorted(HERE.glob("bench_*.py"))
    unknown = set(args.names) - {s.stem.removeprefix("bench_") for s in scripts}
    if unknown:
        parser.error(f"no benchmark named {', '.join(sorted(unknown))}")
    if args.names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in args.names]
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        sink = os.path.join(tmp, "results.jsonl")
        open(sink, "w").close()
        for script in scripts:
            print(f"## {script.stem}\n", flush=True)
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", CRASH_IS_3, str(script)], cwd=HERE.parent,
                                  env=dict(os.environ, ERRKIT_BENCH_RESULTS=sink))
            if proc.returncode not in (0, 1):  # 1 is a missed target, reported below; anything else broke
                failed.append(script.stem)
            print(f"\n({time.perf_counter() - start:.0f} s)\n", flush=True)
        results = load_results(sink)
    table = "\n".join([HEADER] + [r.row() for r in results])
    print("## all benchmarks\n")
    print(table)
    missed = [r.name for r in results if not r.met]
    for name in missed:
        print(f"MISSED: {name}")
    for name in failed:
        print(f"FAILED: {name} did not finish")
    if args.page and not failed:
        write_page(table)
    return 1 if missed or failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Run every benchmark in this folder, one after the other, and print their tables.

    python benchmarks/run.py [name ...]      # e.g. `validators explain` for bench_validators/bench_explain

Each benchmark compares ours with a baseline in the same run and prints ratios against its target.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(names: list[str]) -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    if names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in names]
    failed = 0
    for script in scripts:
        print(f"## {script.stem}\n", flush=True)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, str(script)], cwd=HERE.parent)
        failed += proc.returncode != 0
        print(f"\n({time.perf_counter() - start:.0f} s)\n", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

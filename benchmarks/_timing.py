"""Side-by-side timing helpers and the result every benchmark reports.

A benchmark measures ours and a baseline doing the same job in the same run, and reports a
`Result`: the two figures, their ratio and the `Target` the ratio must meet (data, not code).
`benchmarks/run.py` collects the results of every benchmark, prints one table and exits non-zero
when a target is missed.
"""

from __future__ import annotations

import gc
import json
import operator
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from typing import Callable

_OPS = {"<=": operator.le, ">=": operator.ge}


@dataclass(frozen=True)
class Target:
    op: str  # "<=" or ">=": the ratio must be at most / at least `value`
    value: float

    def __post_init__(self):
        if self.op not in _OPS:
            raise ValueError(f"a target's op is '<=' or '>=', got {self.op!r}")

    def met(self, ratio: float) -> bool:
        return _OPS[self.op](ratio, self.value)

    def __str__(self) -> str:
        return f"{self.op} {self.value:g}x"


@dataclass(frozen=True)
class Result:
    """One row of the benchmark table. `target` None means the ratio is recorded, not judged."""

    name: str
    ours: str  # formatted figure, unit included ("66.0 ms", "1,030,000 lines/s")
    baseline: str
    ratio: float
    target: Target | None = None

    @property
    def met(self) -> bool:
        return self.target is None or self.target.met(self.ratio)

    def row(self) -> str:
        target = str(self.target) if self.target else "recorded"
        verdict = "" if self.target is None else ("met" if self.met else "**MISSED**")
        return f"| {self.name} | {self.ours} | {self.baseline} | {self.ratio:.2f}x | {target} | {verdict} |"


HEADER = "| benchmark | ours | baseline | ratio | target | |\n|---|---|---|---|---|---|"


def fmt_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.2f} us"


def per_call(fn: Callable[[], object], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def compare(ours: Callable[[], object], baseline: Callable[[], object], number: int, repeat: int = 9) -> tuple[float, float, float]:
    """(ours seconds/call, baseline seconds/call, ratio) from interleaved repeats; medians.

    Both sides run under the same garbage-collector setting (enabled, collected before each
    repeat), so neither gets a pause the other lacks.
    """
    ours(), baseline()  # warm up
    a, b = [], []
    for _ in range(repeat):
        gc.collect()
        a.append(per_call(ours, number))
        gc.collect()
        b.append(per_call(baseline, number))
    ratios = [x / y for x, y in zip(a, b)]
    return statistics.median(a), statistics.median(b), statistics.median(ratios)


def report(results: list[Result], stream=None) -> int:
    """Print the table (and, when run under benchmarks/run.py, hand the results to it); 1 on a miss."""
    stream = stream or sys.stdout
    print(HEADER, file=stream)
    for result in results:
        print(result.row(), file=stream, flush=True)
    sink = os.environ.get("ERRKIT_BENCH_RESULTS")
    if sink:
        with open(sink, "a", encoding="utf-8") as handle:
            for result in results:
                handle.write(json.dumps(asdict(result)) + "\n")
    return 0 if all(r.met for r in results) else 1


def load_results(path: str) -> list[Result]:
    out = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            raw = json.loads(line)
            target = raw.pop("target")
            out.append(Result(**raw, target=Target(**target) if target else None))
    return out

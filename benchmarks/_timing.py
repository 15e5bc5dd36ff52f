"""Side-by-side timing helpers: ours and the baseline, interleaved in one run, as a ratio."""

from __future__ import annotations

import statistics
import time
from typing import Callable


def per_call(fn: Callable[[], object], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def compare(ours: Callable[[], object], baseline: Callable[[], object], number: int, repeat: int = 9) -> tuple[float, float, float]:
    """(ours seconds/call, baseline seconds/call, ratio) from interleaved repeats; medians."""
    ours(), baseline()  # warm up
    a, b = [], []
    for _ in range(repeat):
        a.append(per_call(ours, number))
        b.append(per_call(baseline, number))
    ratios = [x / y for x, y in zip(a, b)]
    return statistics.median(a), statistics.median(b), statistics.median(ratios)


def row(name: str, ours: float, base: float, ratio: float, target: str, unit: str = "us") -> str:
    scale = 1e6 if unit == "us" else 1e3
    ok = "ok" if eval(f"{ratio} {target}") else "MISSED"  # noqa: S307 - literal targets written below
    return f"| {name} | {ours * scale:.2f} {unit} | {base * scale:.2f} {unit} | {ratio:.3f} | {target} | {ok} |"


HEADER = "| benchmark | ours | baseline | ratio | target | |\n|---|---|---|---|---|---|"

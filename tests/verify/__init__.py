"""The fix-verification suite's runners: for an entry, how to call the real kernel with given values.

A runner takes the entry's params (a bad example, or a bad example with one suggested value
applied) and calls the real kernel on the CPU (interpret mode, TPU interpret mode, or lowering for
CUDA or TPU from the CPU); it raises whatever the kernel raises. Each family of kernels registers
its runners in its own module here (`register`), imported by tests/advice/test_fix_verification.py.
"""

from __future__ import annotations

from typing import Callable

RUNNERS: dict[str, Callable[[dict], object]] = {}


def register(*codes: str):
    """Decorate a runner of the entries `codes`."""

    def add(fn):
        for code in codes:
            if code in RUNNERS:
                raise ValueError(f"{code} has two runners")
            RUNNERS[code] = fn
        return fn

    return add

"""Many measurements in one process on a TPU, where time is scarce: every function is lowered and
compiled first, on a pool of threads (XLA's and Mosaic's compilers release the GIL), and only when
every compile is done timed one after the other; each result is appended to a JSON-lines file as soon as it is known, so a
run stopped by its time limit keeps what it finished.

A ``Job`` is a name, a function, its arguments and the fields to record with it. ``run_jobs``
returns one dict per job: the fields, ``seconds`` (median of `repeats` after two warm-up calls)
or ``error`` (the exception's type and first line: a compile or run failure is a result too).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import os
import statistics
import time
import traceback
from typing import Any, Callable

import jax

OUT_OF_TIME = "skipped: out of time"  # the error of a job the budget did not reach


@dataclasses.dataclass
class Job:
    name: str
    fn: Callable
    args: tuple
    fields: dict = dataclasses.field(default_factory=dict)
    check: Callable | None = None  # check(outputs) -> dict of more fields, after timing
    time_it: bool = True
    # None: args are the arrays; else args may be jax.ShapeDtypeStructs (what is compiled) and
    # materialize() gives the arrays when the job runs (device memory held one shape at a time)
    materialize: Callable | None = None


def _error(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {(text[0] if text else '')[:300]}"


class Sink:
    """Appends JSON lines to a file (and prints them), flushed after each."""

    def __init__(self, path: str | None, log=print):
        self.path, self.log = path, log
        if path:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

    def __call__(self, record: dict) -> None:
        line = json.dumps(record, default=str)
        if self.path:
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        self.log(line, flush=True)


def _compile(job: Job):
    start = time.perf_counter()
    compiled = jax.jit(job.fn).lower(*job.args).compile()
    return compiled, time.perf_counter() - start


def median_seconds(call: Callable, repeats: int) -> float:
    jax.block_until_ready(call())
    jax.block_until_ready(call())
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(call())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_jobs(jobs: list[Job], sink: Sink, *, repeats: int = 10, workers: int = 12,
             deadline: float | None = None, stream: bool = False) -> list[dict]:
    """Compiles every job on `workers` threads and waits for all of them, then runs them one
    after the other: nothing compiles while a job is timed (a compile thread holding the GIL
    while it lowers would inflate a timing by milliseconds). Jobs past `deadline`
    (time.monotonic()) are not run, and those whose compile would start in its last 30 seconds
    are not compiled (the runs need them). stream: run each job as soon as its compile is done,
    in the order they finish (for jobs that are checked, not timed: a run stopped by its time
    limit then keeps every check it finished)."""
    def compile_unless_late(job):
        if deadline is not None and time.monotonic() > deadline - 30:
            raise TimeoutError(OUT_OF_TIME)
        return _compile(job)

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
    futures = [pool.submit(compile_unless_late, job) for job in jobs]
    job_of = dict(zip(futures, jobs))
    if stream:
        order = concurrent.futures.as_completed(futures)
    else:
        concurrent.futures.wait(futures)
        order = futures
    results = []
    for future in order:
        job = job_of[future]
        record: dict[str, Any] = {"name": job.name, **job.fields}
        try:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(OUT_OF_TIME)
            compiled, record["compile_s"] = future.result()
            args = job.materialize() if job.materialize is not None else job.args
            if job.time_it:
                record["seconds"] = median_seconds(lambda: compiled(*args), repeats)
            if job.check is not None:
                record.update(job.check(compiled(*args)))
            del args
        except Exception as exc:  # noqa: BLE001 - a failure is a result
            record["error"] = _error(exc)
            if not isinstance(exc, TimeoutError):
                record["trace"] = traceback.format_exc(limit=3)[-600:]
        sink(record)
        results.append(record)
    pool.shutdown(wait=False, cancel_futures=True)
    return results

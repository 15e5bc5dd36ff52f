"""The files of a triage read by worker processes (`summaries`; errkit/explain/triage.py sums each
file): as asked, else one per core and per PER_WORKER bytes; a large file cut into parts, one to a
worker, when there are fewer files than workers (errkit/explain/parts.py). Each worker is handed
one file (or part) at a time over a pipe of its own, so that a worker that dies (killed, out of memory) is known with the file
it held: that file is reported lost, the other files' summaries are kept, and a new worker takes the
files left. A worker ends when the process that started it dies (it looks every WATCH seconds).

Before issue 48 the workers were a ProcessPoolExecutor: one killed worker broke the pool and lost
the whole report (BrokenProcessPool, exit 70), and `kill -9` of errkit left its workers running."""

import os
import signal
import threading

from errkit.explain.triage import GLOG_HEAD, glog_header, host_of, skipped, summarise

WATCH = 0.5  # seconds between a worker's looks at whether the process that started it still runs


def died(code: int | None) -> str:
    """How a worker ended, in words: `killed by signal 9 (SIGKILL)`, `exit status 1`."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "?"
        return f"killed by signal {-code} ({name})"
    return f"exit status {code}"


def _watch(parent: int) -> None:
    """End this worker once the process that started it is gone (its parent changed)."""
    import time

    while True:
        time.sleep(WATCH)
        if os.getppid() != parent:
            os._exit(1)


def _serve(conn, work, start) -> None:
    """A worker's life: `start()` once, then `work(name)` for each (i, name) received, its answer
    sent back as (i, answer); None (or the parent gone) ends it. The parent watched is the one it
    has now: errkit's process when forked or spawned by it, the fork server under forkserver (which
    ends with errkit's process). Watching errkit's own pid there ended every worker after WATCH
    seconds of work (exit status 1)."""
    threading.Thread(target=_watch, args=(os.getppid(),), daemon=True).start()
    start()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        i, name = task
        conn.send((i, work(name)))


class Pool:
    """`size` workers of the multiprocessing `context`, each running `start()` once then `work(name)`
    for the files handed to it (work and start: picklable functions of errkit's modules)."""

    def __init__(self, context, size: int, work, start):
        self.context, self.work, self.start = context, work, start
        self.size = size
        self.idle: list = []  # (process, connection)
        self.busy: dict = {}  # connection -> (process, i)

    def _spawn(self):
        ours, theirs = self.context.Pipe()
        process = self.context.Process(target=_serve, args=(theirs, self.work, self.start), daemon=True)
        process.start()
        theirs.close()
        return process, ours

    def run(self, tasks: list[tuple[int, str]], answered, lost) -> None:
        """Each (i, name) of `tasks` read by a worker: `answered(i, answer)` as each comes back, in
        the order they finish; `lost(i, why)` for one whose worker died holding it."""
        from multiprocessing.connection import wait

        todo = list(reversed(tasks))
        try:
            while todo or self.busy:
                while todo and (self.idle or len(self.busy) < self.size):
                    process, conn = self.idle.pop() if self.idle else self._spawn()
                    i, name = todo.pop()
                    conn.send((i, name))
                    self.busy[conn] = (process, i)
                ready = wait([*self.busy, *(p.sentinel for p, _ in self.busy.values())])
                for conn in list(self.busy):
                    process, i = self.busy[conn]
                    if conn in ready or conn.poll():
                        try:
                            j, answer = conn.recv()
                        except (EOFError, OSError):
                            pass  # died as it answered: told below with its exit
                        else:
                            del self.busy[conn]
                            self.idle.append((process, conn))
                            answered(j, answer)
                            continue
                    if process.sentinel in ready or not process.is_alive():
                        process.join()
                        del self.busy[conn]
                        conn.close()
                        lost(i, died(process.exitcode))
        finally:
            self.close()

    def close(self) -> None:
        for process, conn in [*self.idle, *((p, c) for c, (p, _) in self.busy.items())]:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
            conn.close()
        for process, _ in [*self.idle, *((p, c) for c, (p, _) in self.busy.items())]:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join()
        self.idle, self.busy = [], {}


# -- a triage's files, on several processes ------------------------------------------------------


PER_WORKER = 8 * 1024 * 1024  # bytes on disk worth a worker process of their own (its start costs ~0.1 s)


def workers_for(names: list[str], asked: int | None) -> int:
    """How many worker processes: as asked, else one per core this process may run on and per
    PER_WORKER bytes of input; never more than the pieces of work: the files, a large plain file
    counting for as many parts as it can be cut into (errkit/explain/parts.py; 1: read here,
    without a pool)."""
    from errkit.explain.parts import PART_MIN

    sizes = [os.path.getsize(n) if n != "-" and os.path.isfile(n) else 0 for n in names]
    if asked is None:
        try:
            asked = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            asked = os.cpu_count() or 1
        asked = min(asked, max(1, sum(sizes) // PER_WORKER))
    return max(1, min(asked, sum(max(1, size // PART_MIN) for size in sizes)))


def _context():
    """fork on Linux while this process runs one thread (a worker starts as a copy of it: the
    matcher's modules imported, its index read; 2 workers over 4 small files took 345 ms with
    forkserver, 1 worker 170 ms), else forkserver where the platform has it (a fresh server
    process forks each worker with errkit's matcher imported already: no thread of this process
    is copied), else spawn."""
    import multiprocessing
    import sys
    import threading

    methods = multiprocessing.get_all_start_methods()
    if sys.platform.startswith("linux") and "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["errkit.explain.workers", "errkit.explain.triage", "errkit.explain.matcher", "errkit.explain.inputs"])
        return context
    return multiprocessing.get_context("spawn")


def _warm(matcher) -> None:
    """What each worker would load on its own once it reads a log, loaded once before they are
    forked (each starts with it: 20-30 ms a worker): the log path's modules and the prefilter's
    database."""
    import ast  # noqa: F401 - a quoted value's escapes (errkit/core/values.py)
    import datetime  # noqa: F401 - a record's stamp (errkit/explain/triage.py)

    from errkit.explain import ahead, context, records  # noqa: F401
    from errkit.explain.matching.keys import Keys

    index = matcher.index
    if index.keys or index.always or index.located:  # (else a log is not scanned: blocks.scan)
        index.room(Keys).prefilter()


_WORKER: dict = {}


def _start_worker(matcher, queue=None) -> None:
    """A worker's start: the matcher arrives pickled, and its index is read once, from the cache;
    `queue` carries (name, bytes, lines) of each block read back to the progress bar."""
    _WORKER["matcher"], _WORKER["queue"] = matcher, queue


def _in_worker(name) -> tuple[dict, list[str]]:
    """A file's summary and its warnings; a part of one (a task ("part", name, ...): _part_in_worker)."""
    if isinstance(name, tuple):
        return _part_in_worker(*name[1:])
    warnings: list[str] = []
    queue = _WORKER["queue"]
    reading = None if queue is None else (lambda *read: queue.put(read))  # noqa: E731
    return summarise(_WORKER["matcher"], name, warn=warnings.append, reading=reading), warnings


def _part_in_worker(name: str, host: str, header: dict, cuts: list[int], k: int, overlap: int) -> tuple[dict, list[str]]:
    """Part k of a large file (errkit/explain/parts.py), read with the overlap its cuts were made
    for, and its warnings."""
    from errkit.explain.parts import summarise_part

    warnings: list[str] = []
    part = summarise_part(_WORKER["matcher"].index, name, name, host, header, cuts, k,
                          lambda line: warnings.append(f"{line} ({name})"), overlap)
    queue = _WORKER["queue"]
    if queue is not None:  # the bytes and lines of its own part, once (progress)
        queue.put((name, cuts[k + 1] - cuts[k], 0))
    return part, warnings


def _split(names: list[str], remote: list[int], count: int) -> dict[int, list[int]]:
    """The files read in parts (index -> cuts), when there are fewer files than workers."""
    from errkit.explain.parts import parts_of

    if len(remote) >= count:
        return {}
    wanted = -(-count // len(remote))
    cuts = {i: parts_of(names[i], wanted) for i in remote}
    return {i: c for i, c in cuts.items() if c is not None}


def _file_head(name: str) -> tuple[str, dict]:
    """(the file's host, glog's header): what a part reads of the file's start (triage reads it as it goes)."""
    with open(name, "rb") as handle:
        header = glog_header(handle.read(GLOG_HEAD))
    return header.get("machine") or host_of(name), header


def _joined(matcher, name: str, host: str, parts: list) -> tuple[dict, list[str]]:
    """A split file's summary from its parts' (each with its warnings), and their warnings, each
    said once; read again whole when its parts cannot be joined (parts.NoJoin)."""
    from errkit.explain.parts import NoJoin, joined

    try:
        summary = joined([part for part, _ in parts], name, host, os.path.getsize(name))
    except NoJoin:
        warnings: list[str] = []
        return summarise(matcher, name, warn=warnings.append), warnings
    return summary, list(dict.fromkeys(line for _, warnings in parts for line in warnings))


def _drain(queue, reading) -> None:
    from queue import Empty

    while True:
        try:
            read = queue.get_nowait()
        except Empty:
            return
        reading(*read)


def summaries(matcher, names: list[str], workers: int | None = None, stdin=None, warn=None, done=None,
              reading=None) -> list[dict]:
    """Every file's summary, in the order of `names`. `done(name, summary)` hears of each file as it
    is finished and `reading(name, bytes, lines)` of each block read (progress); warnings are told in
    the order of the files, whatever the workers do. Standard input is read here, the files by
    `workers` processes (fork while this process runs one thread, else forkserver or spawn: no
    thread of this process is copied into them; see _context), each handed one file at a time
    (errkit/explain/workers.py): a worker that dies loses only the file it read, whose summary says
    so (`lost`: the report is partial), and the others are read on."""
    count = workers_for(names, workers)
    results: list = [None] * len(names)
    told: list = [None] * len(names)
    local = [i for i, name in enumerate(names) if name == "-" or count == 1]
    remote = [i for i in range(len(names)) if i not in set(local)]
    split = _split(names, remote, count) if remote else {}
    pieces: dict[int, list] = {}  # a split file -> its parts' (summary, warnings, host) as they finish
    queue = None
    for i in local:
        warnings: list[str] = []
        results[i] = summarise(matcher, names[i], stdin, warnings.append, reading)
        told[i] = warnings
        if done is not None:
            done(names[i], results[i])
    if remote:
        from functools import partial

        context = _context()
        queue = context.Queue() if reading is not None else None
        from errkit.explain.parts import OVERLAP

        tasks, hosts = [], {}
        for i in remote:
            if i in split:  # a large file: a part to each worker (errkit/explain/parts.py)
                hosts[i], header = _file_head(names[i])
                pieces[i] = [None] * (len(split[i]) - 1)
                tasks += [((i, k), ("part", names[i], hosts[i], header, split[i], k, OVERLAP))
                          for k in range(len(split[i]) - 1)]
            else:
                tasks.append(((i, None), names[i]))

        def finished(i: int, answer) -> None:
            results[i], told[i] = answer
            if done is not None:
                done(names[i], results[i])

        def answered(task, answer) -> None:
            if queue is not None:
                _drain(queue, reading)  # before the file is done: its blocks are counted first
            i, k = task
            if k is None:
                finished(i, answer)
            elif results[i] is None:  # (a part of a file lost already: nothing to join)
                pieces[i][k] = answer
                if all(p is not None for p in pieces[i]):
                    finished(i, _joined(matcher, names[i], hosts[i], pieces[i]))

        def lost(task, why: str) -> None:
            i = task[0]
            if results[i] is not None:  # (another part of it lost first)
                return
            reason = f"{names[i]}: the worker reading it died ({why}); its errors are not in the report"
            finished(i, ({**skipped(names[i], reason), "lost": True}, [f"errkit: lost {reason}"]))

        if context.get_start_method() == "fork":
            _warm(matcher)
        pool = Pool(context, min(count, len(tasks)), _in_worker, partial(_start_worker, matcher, queue))
        try:
            pool.run(tasks, answered, lost)
        finally:
            if queue is not None:
                _drain(queue, reading)
                queue.close()
    if warn is not None:
        for warnings in told:
            for line in warnings or ():
                warn(line)
    return results

"""The worker processes of a triage (errkit/explain/fleet.py `summaries`): each is handed one file at a
time over a pipe of its own, so that a worker that dies (killed, out of memory) is known with the file
it held: that file is reported lost, the other files' summaries are kept, and a new worker takes the
files left. A worker ends when the process that started it dies (it looks every WATCH seconds).

Before issue 48 the workers were a ProcessPoolExecutor: one killed worker broke the pool and lost
the whole report (BrokenProcessPool, exit 70), and `kill -9` of errkit left its workers running."""

import os
import signal
import threading

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


def _serve(conn, parent: int, work, start) -> None:
    """A worker's life: `start()` once, then `work(name)` for each (i, name) received, its answer
    sent back as (i, answer); None (or the parent gone) ends it."""
    threading.Thread(target=_watch, args=(parent,), daemon=True).start()
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
        process = self.context.Process(target=_serve, args=(theirs, os.getpid(), self.work, self.start), daemon=True)
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

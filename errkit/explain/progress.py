"""Progress of a triage on standard error (files done, bytes, lines a second, time left), drawn by
rich: only when standard error is a terminal, NO_COLOR is unset or empty and --quiet was not
given, and only once the run has lasted AFTER seconds (`$ERRKIT_PROGRESS_AFTER`, default 1): a
short run, a pipe or a log file never sees it. rich is imported only when a bar is drawn; without
it (not installed), no bar."""

import os
import time

AFTER_ENV = "ERRKIT_PROGRESS_AFTER"
AFTER = 1.0


def wanted(stream, quiet: bool) -> bool:
    """Whether progress may be shown on `stream` at all."""
    return (not quiet and not os.environ.get("NO_COLOR") and bool(getattr(stream, "isatty", lambda: False)()))


class Progress:
    """Told of each block read (`read(name, bytes, lines)`) and each file done (`done(name,
    summary)`); draws once AFTER seconds have passed. Bytes are counted on disk (a compressed file's
    decompressed blocks count up to its size on disk, the rest when it is done)."""

    def __init__(self, stream, files: list[str], quiet: bool = False):
        self.on = wanted(stream, quiet)
        self.stream = stream
        self.sizes = {name: _size(name) for name in files}
        self.total_files, self.total_bytes = len(files), sum(self.sizes.values())
        self.files = self.bytes = self.lines = 0
        self.reading: dict[str, list[int]] = {}  # file being read -> [bytes, lines] so far
        self.finished: set[str] = set()
        self.started = time.monotonic()
        try:
            self.after = float(os.environ.get(AFTER_ENV, AFTER))
        except ValueError:
            self.after = AFTER
        self._bar = None
        self._task = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.stop()
        return False

    def read(self, name: str, size: int, lines: int) -> None:
        if name in self.finished:  # a worker's last blocks, heard after its file was done
            return
        so_far = self.reading.setdefault(name, [0, 0])
        so_far[0] += size
        so_far[1] += lines
        self._draw()

    def done(self, name: str, summary: dict) -> None:
        self.finished.add(name)
        self.reading.pop(name, None)
        self.files += 1
        self.bytes += self.sizes.get(name, 0)
        self.lines += summary.get("lines", 0)
        self._draw()

    def _draw(self) -> None:
        if not self.on:
            return
        elapsed = time.monotonic() - self.started
        if self._bar is None:
            if elapsed < self.after:
                return
            if not self._start():
                return
        reading = sum(min(n, self.sizes.get(name, 0)) for name, (n, _) in self.reading.items())
        lines = self.lines + sum(n for _, n in self.reading.values())
        rate = lines / elapsed if elapsed > 0 else 0.0
        self._bar.update(self._task, completed=self.bytes + reading, files=f"{self.files}/{self.total_files} files",
                         rate=f"{rate:,.0f} lines/s")
        self._bar.refresh()  # each step drawn, not only at the next tick

    def _start(self) -> bool:
        try:
            from rich.console import Console
            from rich.progress import (BarColumn, DownloadColumn, Progress as Bar, TextColumn, TimeRemainingColumn)
        except ImportError:
            self.on = False
            return False
        console = Console(file=self.stream, stderr=True)
        self._bar = Bar(TextColumn("errkit triage"), BarColumn(), TextColumn("{task.fields[files]}"), DownloadColumn(),
                        TextColumn("{task.fields[rate]}"), TextColumn("ETA"), TimeRemainingColumn(),
                        console=console, transient=True, refresh_per_second=4)
        self._task = self._bar.add_task("triage", total=self.total_bytes or None, files="", rate="")
        self._bar.start()
        return True


def _size(name: str) -> int:
    """The bytes of a file on disk (compressed as it is), 0 for standard input."""
    if name == "-":
        return 0
    try:
        return os.path.getsize(name)
    except OSError:
        return 0

"""errkit's own process and its standard streams: what they cannot encode printed as escapes, a
reader that left (a closed pipe) never a traceback, and explain's answer ending the process at
once when it is written."""

import os
import sys


def tolerant_streams() -> None:
    """Print what the stream cannot encode as escapes, never crash: any character under a
    non-UTF-8 locale (LC_ALL=C), a lone surrogate (`'\\ud800'` pasted, undone by values.parse)
    under UTF-8 too."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass


def quiet_stdout() -> None:
    """Standard output sent to the null device: what is left in its buffer (a reader that left, a
    full disk) is not written again when the interpreter exits."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def end_now(status: int) -> None:
    """Exit with `status` once the streams are flushed, without the interpreter's teardown: an
    answer's objects (the index, the modules, a log's compiled regexes and remembered lines) live
    to its end, and freeing them one by one cost 7 ms of a paste's 40 ms and 40-50 ms of a 1M-line
    log's (measured: main with and without this). Called where nothing is left to do: one input
    answered, or a report written, in errkit's own process, with no worker left (a report's are
    joined: errkit/explain/workers.py Pool.close), thread or exit handler, and the cache file
    written whole (renamed in place) while it ran."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # a reader that left: what it did not read goes with the process (no exit flush follows)
    os._exit(status)

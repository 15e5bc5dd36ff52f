"""`errkit.install()`: after an uncaught exception that errkit recognises, its explanation is
printed under the traceback (which stays exactly as Python prints it).

Off unless asked for: a program calls `errkit.install()`, or runs with `ERRKIT_EXPLAIN=1` in its
environment (the `errkit-hook.pth` file errkit installs checks that variable when Python starts,
for scripts one cannot edit). Until an exception happens nothing is imported.
"""

from __future__ import annotations

import sys


def _hook(previous):
    def excepthook(exc_type, exc, tb):
        previous(exc_type, exc, tb)  # the traceback first, untouched
        try:
            from errkit.explain.hooks import for_exception
            from errkit.explain.render import Style

            if exc is not None and exc.__traceback__ is None:
                exc = exc.with_traceback(tb)
            text = for_exception(exc, "ansi" if Style(sys.stderr).on else "text")
            if text:
                sys.stderr.write("\n" + text + "\n")
                sys.stderr.flush()
        except BaseException as err:  # noqa: BLE001 - never raise from inside the excepthook
            try:
                sys.stderr.write(f"errkit: could not explain this error ({type(err).__name__})\n")
            except BaseException:  # noqa: BLE001
                pass

    excepthook.errkit = True
    excepthook.previous = previous
    return excepthook


def install() -> None:
    """Explain uncaught exceptions under their traceback (idempotent)."""
    if not getattr(sys.excepthook, "errkit", False):
        sys.excepthook = _hook(sys.excepthook)


def uninstall() -> None:
    """Undo `install()`."""
    hook = sys.excepthook
    if getattr(hook, "errkit", False):
        sys.excepthook = hook.previous

"""The IPython / Jupyter extension (`%load_ext errkit`): after a cell fails with an error errkit
recognises, its explanation is displayed under the traceback: HTML with a link where the front
end shows HTML, text otherwise. The traceback itself is IPython's, untouched."""

from __future__ import annotations


def _after_cell(result) -> None:
    exc = getattr(result, "error_in_exec", None)
    if exc is None:
        return
    try:
        from errkit.explain.hooks import for_exception

        text = for_exception(exc, "text")
        if not text:
            return
        bundle = {"text/plain": text}
        if not text.startswith("errkit: could not"):
            bundle["text/html"] = for_exception(exc, "html") or text
        from IPython.display import display

        display(bundle, raw=True)
    except Exception as err:  # noqa: BLE001 - never raise from a cell hook
        print(f"errkit: could not explain this error ({type(err).__name__})")


def load(ipython) -> None:
    if _after_cell not in ipython.events.callbacks["post_run_cell"]:
        ipython.events.register("post_run_cell", _after_cell)


def unload(ipython) -> None:
    if _after_cell in ipython.events.callbacks["post_run_cell"]:
        ipython.events.unregister("post_run_cell", _after_cell)

"""errkit: a declarative error catalogue. The command is `errkit` (errkit/cli.py); from Python,
`errkit.install()` explains uncaught exceptions under their traceback, `%load_ext errkit` does it
in IPython and Jupyter, and `pytest -p errkit` adds an "errkit" section to failing tests' reports.
`errkit.Matcher` is the matcher for a program or a map step of Dask or Beam (errkit/explain/matcher.py).
Nothing here imports more than the standard library until it is used."""


def install() -> None:
    """Print errkit's explanation under the traceback of an uncaught exception it recognises."""
    from errkit.integrations.excepthook import install as _install

    _install()


def uninstall() -> None:
    from errkit.integrations.excepthook import uninstall as _uninstall

    _uninstall()


def load_ipython_extension(ipython) -> None:
    """`%load_ext errkit`: explain a failing cell's exception under its traceback."""
    from errkit.integrations.ipython import load

    load(ipython)


def unload_ipython_extension(ipython) -> None:
    from errkit.integrations.ipython import unload

    unload(ipython)


def __getattr__(name: str):
    """`errkit.Matcher` (errkit/explain/matcher.py), imported when first asked for."""
    if name == "Matcher":
        from errkit.explain.matcher import Matcher

        return Matcher
    raise AttributeError(f"module 'errkit' has no attribute {name!r}")

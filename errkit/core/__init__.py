"""The core: what every side of errkit shares, on the standard library alone.

Value types, the regex engine, message templates, the expression language, text normalisation,
atomic writes, `[tool.errkit]` settings, the suggestion helpers and their evaluation, the
validators' runtime and the compiled index's format. Nothing here imports another part of errkit
(tests/test_architecture.py holds that), so the explain path and the generated validators can use
any of it without loading a YAML parser or a template engine.
"""


# The error every side raises for a problem with what the user asked for (a missing file, a bad
# name, an unreadable setting), and errkit/cli.py alone turns into one line on standard error and
# exit code 2. Here, in the package itself: each side raises it without importing another side,
# and a start of `errkit explain` loads no module for it.
class UsageError(Exception):
    """A problem with what the user asked for: printed as one line, exit 2."""

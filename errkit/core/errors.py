"""The error every side raises for a problem with what the user asked for (a missing file, a bad
name, an unreadable setting), and errkit/cli.py alone turns into one line on standard error and
exit code 2. A module of its own, in the core, so that each side can raise it without importing
another side or the command line."""


class UsageError(Exception):
    """A problem with what the user asked for: printed as one line, exit 2."""

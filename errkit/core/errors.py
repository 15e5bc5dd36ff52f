"""Errors the command line turns into one clear line and an exit code."""


class UsageError(Exception):
    """A problem with what the user asked for: printed as one line, exit 2."""

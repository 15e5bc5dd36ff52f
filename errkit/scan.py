"""`errkit scan` (issue 7): placeholder until the scanner lands."""

import sys


def run(args) -> int:
    print("errkit scan: not implemented yet", file=sys.stderr)
    return 2

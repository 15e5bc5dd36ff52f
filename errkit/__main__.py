"""`python -m errkit`: the `errkit` command."""

import sys

from errkit.cli import main

if __name__ == "__main__":
    sys.exit(main())

"""Command-line arguments of `errkit scan` (kept apart so `errkit --help` does not import the scanner)."""


def add_arguments(parser) -> None:
    parser.add_argument("paths", nargs="+", help="Python files or folders to scan")
    parser.add_argument("--json", action="store_true", help="one JSON object per raise site (JSON Lines)")
    parser.add_argument("--fail-on-uncatalogued", action="store_true", help="exit 1 listing sites no entry covers")
    parser.add_argument("--emit", metavar="DIR",
                        help="write a draft entry (DIR/drafts/RA9xx-<slug>.yaml, marked for review) for each uncatalogued site")
    parser.add_argument("--index", metavar="FILE",
                        help="compiled index to audit against (default: --catalog's catalogue alone, else the current "
                             "project's and every registered one)")

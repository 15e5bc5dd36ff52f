"""The `errkit` command: parse arguments, call the modules that do the work, print.

Imports of the working modules happen inside each command, so `errkit explain` loads only what
it needs (no ruamel.yaml, jinja2 or jax).
"""

import gc
import os
import sys

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


from errkit.explain.registry import LintFailed
from errkit.core import UsageError
from errkit.streams import end_now, quiet_stdout, tolerant_streams


def _path(text: str):
    from pathlib import Path  # not on the explain path: pathlib costs start-up time

    return Path(text)


def _catalog_dir(args):
    """`--catalog`, else the current project's `[tool.errkit] catalog`, else ./catalog."""
    from errkit.core.settings import SettingsError, catalog_folder

    try:
        return _path(catalog_folder(args.catalog))
    except SettingsError as err:
        raise UsageError(str(err)) from None


def _existing_catalog_dir(args):
    """_catalog_dir, which must exist: a missing catalogue is a usage error (exit 2) for every
    command that reads one, as for fmt and new."""
    root = _catalog_dir(args)
    if not root.is_dir():
        raise UsageError(f"{root}: no such catalogue folder (`errkit init` makes one; --catalog DIR names another)")
    return root


def _index(args):
    """The matcher index the command reads: `--catalog DIR`'s catalogue alone (as every command
    reads it), else the current project's index merged with the registered ones
    (errkit/explain/registry.py); clashes reported on stderr."""
    from errkit.explain import registry

    return registry.load(_catalog_dir(args) if args.catalog else None, not args.catalog, warn=registry.stderr_warn,
                         compile_catalogue=_compile_catalogue)


def _compile_catalogue(folder) -> dict | None:
    """`--catalog DIR` with a stale index: the generate side compiles it for the explain side."""
    from errkit.generate.index import compiled_index

    return compiled_index(folder)


def cmd_lint(args) -> int:
    from errkit.catalogue.lint import lint, lint_files

    paths = [_path(p) for p in args.paths]
    if len(paths) == 1 and not paths[0].is_file():  # a catalogue folder (or a missing one: reported)
        root = paths[0]
        loaded, findings = lint(root)
        count = len(loaded.entries)
    elif paths:  # files, as pre-commit passes them: each linted within its catalogue
        root = " ".join(str(p) for p in paths)
        loaded_all, findings = lint_files(paths)
        count = sum(len(loaded.entries) for loaded in loaded_all)
    else:
        root = _existing_catalog_dir(args)
        loaded, findings = lint(root)
        count = len(loaded.entries)
    if args.json:
        import json

        for f in findings:
            print(json.dumps({"path": f.path, "line": f.line, "col": f.col, "rule": f.rule, "message": f.message,
                              "severity": f.severity}, ensure_ascii=False))
    else:
        for f in findings:
            print(f)
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        print(f"{len(errors)} error(s) in {root}", file=sys.stderr)
        return EXIT_FINDINGS
    print(f"{root}: {count} entries, no problems", file=sys.stderr)
    return EXIT_OK


def cmd_fmt(args) -> int:
    from errkit.authoring.fmt import format_files

    root = _catalog_dir(args)
    paths = [_path(p) for p in args.files] if args.files else None
    changed, problems = format_files(root, paths, check=args.check)
    for line in problems:
        print(line, file=sys.stderr)
    for path in changed:
        print(("would reformat " if args.check else "reformatted ") + str(path))
    if problems:
        return EXIT_FINDINGS
    return EXIT_FINDINGS if (args.check and changed) else EXIT_OK


def cmd_new(args) -> int:
    from errkit.authoring.new import new_entry

    path = new_entry(_catalog_dir(args), args.area, args.slug, code=args.code, exception=args.exception)
    print(path)
    return EXIT_OK


def cmd_import(args) -> int:
    from errkit.authoring.records import import_records

    written, skipped = import_records(_path(args.file), _catalog_dir(args) if not args.into else _path(args.into),
                                      area=args.area, force=args.force)
    for line in skipped:
        print(line, file=sys.stderr)
    for path in written:
        print(path)
    return EXIT_OK if written or not skipped else EXIT_FINDINGS


def cmd_generate(args) -> int:
    from errkit.generate.command import run as generate_run

    return generate_run(_existing_catalog_dir(args), check=args.check)


def cmd_init(args) -> int:
    from errkit.authoring.init import init

    written, by_hand = init(_path("."), project=args.project, name=args.name, prefix=args.prefix, package=args.package,
                            docs_url=args.docs_url, repo_url=args.repo_url, catalog=args.catalog or "catalog",
                            site=args.site)
    for path in written:
        print(path)
    if by_hand:
        print(f"errkit init: to do by hand: {by_hand}", file=sys.stderr)
    print("errkit init: done. Next: `errkit new <area> <slug>` to add an entry, `errkit lint`, `errkit generate`.",
          file=sys.stderr)
    return EXIT_OK


def cmd_explain(args) -> int:
    from errkit.explain.command import run, run_report, wants_report

    if args.json and args.format != "text":
        raise UsageError("--json and --format are two ways to say the output's form: give one")
    include, exclude = getattr(args, "include", None) or [], getattr(args, "exclude", None) or []
    as_text = getattr(args, "as_text", False)
    if as_text:
        sources = [" ".join(args.text)] if args.text else []
    else:
        sources = args.text
    if wants_report(sources, args.format, as_text, asked=getattr(args, "report", False) or bool(include or exclude)):
        if args.open:
            raise UsageError("--open opens one answer's page: it has no meaning for a report of several files")
        from errkit.explain.matcher import Matcher

        workers = getattr(args, "workers", None)
        if workers is not None and workers < 1:
            raise UsageError(f"--workers {workers}: give 1 or more")
        status = run_report(sources, fmt="json" if args.json else args.format, matcher=Matcher(index=_index(args)),
                            include=include, exclude=exclude, workers=workers, quiet=getattr(args, "quiet", False))
    else:
        status = run(sources, as_json=args.json, show_all=args.all, index=_index(args), fmt=args.format, open_page=args.open,
                     colour=args.color, verbose=args.verbose)
    if getattr(args, "own_process", False):
        end_now(status)  # answered, or the report written with its workers joined: nothing left to do
    return status


def cmd_list(args) -> int:
    from errkit.core.escape import terminal

    index = _index(args)
    if args.json:
        import json

    for code, entry in index.entries.items():
        if args.json:
            print(json.dumps({"code": code, "slug": entry["slug"], "title": entry["title"], "area": entry["area"],
                              "exception": entry["exception"], "explain_only": entry["explain_only"],
                              "catalogue": index.catalogue(code)}, ensure_ascii=False))
            continue
        kind = "explain-only" if entry["explain_only"] else entry["exception"]
        # an installed catalogue's text: its control characters shown, never sent (errkit/core/escape.py)
        print(terminal(f"{code}  {entry['area']:<9} {kind:<19} {entry['title']}  ({index.catalogue(code)})"))
    return EXIT_OK


def cmd_show(args) -> int:
    from errkit.explain.render import Style, format_entry

    index = _index(args)
    code = index.lookup(args.code)
    if code is None:
        raise UsageError(f"no entry with code or slug {args.code!r} (see `errkit list`)")
    if args.json:
        import json

        print(json.dumps({"code": code, **index.entries[code], "catalogue": index.catalogue(code)}, ensure_ascii=False))
    else:
        print(format_entry(code, index.entries[code], Style(sys.stdout, args.color), index.catalogue(code)))
    return EXIT_OK


def cmd_scan(args) -> int:
    from errkit.scan import run

    # `--catalog X`: audited against X's catalogue alone, not the registered ones
    return run(args, index_loader=lambda: _index(args))


def cmd_docs(args) -> int:
    from errkit.generate.docs import run

    return run(_existing_catalog_dir(args), check=args.check)


EXPLAIN_EPILOG = """\
Every argument that names an existing file or folder is read as one (gzip, bz2 and zstd logs are
decompressed as they are read); to explain text that happens to name a file, give --text, or pipe
it in: `echo "..." | errkit explain -`. Several paths or a folder (walked recursively) give one
grouped report: per code, its count, the files and hosts it appeared in, first and last
occurrence, the values that varied (--json: one JSON document, shape in site/docs/triage.md).
Exit status: 0 errors found, 1 none, 2 a usage error, 3 a partial report (a worker reading a file
died: the file is named, the others are reported)."""


def _explain_args(p):
    p.epilog = EXPLAIN_EPILOG
    p.add_argument("text", nargs="*", help="error text, files or folders, '-' for standard input, or a code/slug")
    p.add_argument("--json", action="store_true", help="one JSON object per match (JSON Lines); with several files, the report as one JSON document")
    p.add_argument("--all", action="store_true", help="every distinct match in the input, with counts")
    p.add_argument("--format", choices=("text", "markdown", "html"), default="text",
                   help="markdown: a snippet for a bug report (message, code, values, fix, link), or the report as a table; "
                        "html: the report of log files as a page with a chart per host (needs errkit[report])")
    p.add_argument("--open", action="store_true", help="open the matched entry's page, with the values, in the browser")
    p.add_argument("--text", dest="as_text", action="store_true",
                   help="read the arguments as the error's text, even where they name files")
    p.add_argument("--report", action="store_true", help="the grouped report even for a single file or '-'")
    p.add_argument("--include", action="append", metavar="GLOB",
                   help="in folders, read only files whose name or path under the folder matches GLOB (repeatable)")
    p.add_argument("--exclude", action="append", metavar="GLOB", help="in folders, skip files matching GLOB (repeatable)")
    p.add_argument("--workers", type=int, metavar="N", help="processes reading files at once (default: one per core)")
    p.add_argument("--quiet", action="store_true", help="no progress bar on standard error")
    p.add_argument("--verbose", action="store_true", help="the whole explanation, not its first lines")
    _color_arg(p)
    p.set_defaults(func=cmd_explain)


def _color_arg(p):
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="ANSI colour: auto (the default) on a terminal only, unless NO_COLOR or FORCE_COLOR is set")


def _list_args(p):
    p.add_argument("--json", action="store_true", help="one JSON object per entry (JSON Lines)")
    p.set_defaults(func=cmd_list)


def _show_args(p):
    p.add_argument("code", help="code or slug")
    p.add_argument("--json", action="store_true")
    _color_arg(p)
    p.set_defaults(func=cmd_show)


def _lint_args(p):
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="a catalogue folder, or entry files (each linted within its catalogue); default: the catalogue")
    p.add_argument("--json", action="store_true", help="one JSON object per finding (JSON Lines)")
    p.set_defaults(func=cmd_lint)


def _fmt_args(p):
    p.add_argument("files", nargs="*", help="entry files or catalogue folders (default: the whole catalogue)")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    p.set_defaults(func=cmd_fmt)


def _new_args(p):
    p.add_argument("area", help="folder under the catalogue (inputs, config, mask, sharding, upstream, ...)")
    p.add_argument("slug", help="kebab-case name")
    p.add_argument("--code", help="code to use (default: the next free one of the area)")
    p.add_argument("--exception", default="ValueError", choices=("ValueError", "NotImplementedError", "TypeError"))
    p.set_defaults(func=cmd_new)


def _import_args(p):
    p.add_argument("file", help="a JSON file with one record or a list of records")
    p.add_argument("--into", metavar="DIR", help="catalogue folder to write into (default: --catalog)")
    p.add_argument("--area", default="imported", help="area folder for the new entries (default: imported)")
    p.add_argument("--force", action="store_true", help="import even when the catalogue already covers the wording")
    p.set_defaults(func=cmd_import)


def _init_args(p):
    p.add_argument("--project", help="catalogue name (default: pyproject's [project] name, else the folder's)")
    p.add_argument("--name", help="what raises the errors, in generated text (default: the project)")
    p.add_argument("--prefix", help="code prefix, 2-4 capital letters (default: from the project name)")
    p.add_argument("--package", help="import package that ships the compiled index (default: found from the project name)")
    p.add_argument("--docs-url", help="where the site will be published (default: mkdocs serve's local address)")
    p.add_argument("--repo-url", help="repository URL, for the pages' edit links")
    p.add_argument("--site", default="site", help="site folder (default: site)")
    p.set_defaults(func=cmd_init)


def _generate_args(p):
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 naming every stale file")
    p.set_defaults(func=cmd_generate)


def _scan_args(p):
    from errkit.scan.arguments import add_arguments as add_scan_arguments

    add_scan_arguments(p)
    p.set_defaults(func=cmd_scan)


def _docs_args(p):
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 naming every stale page")
    p.set_defaults(func=cmd_docs)


COMMANDS = {  # name: (help, how its arguments are declared)
    "explain": ("find the catalogued error in a message, traceback or log and explain it", _explain_args),
    "list": ("every catalogue entry, by code", _list_args),
    "show": ("one entry in full", _show_args),
    "lint": ("check every catalogue file; path:line:col: rule: message", _lint_args),
    "fmt": ("normalise catalogue files in place, keeping comments and key order", _fmt_args),
    "init": ("set up a catalogue, its settings and a site skeleton in this project", _init_args),
    "new": ("scaffold a new entry", _new_args),
    "import": ("turn dataset records (JSON) into entries", _import_args),
    "generate": ("write validators, matcher index, schema and site pages from the catalogue", _generate_args),
    "scan": ("find every raise site in Python code and audit catalogue coverage", _scan_args),
    "docs": ("render the troubleshooting site's pages into site/docs (also done by generate)", _docs_args),
}


_CLASSES: dict = {}


def _argparse_classes():
    """(parser class, --version action): argparse (and the gettext and locale it loads) is imported
    only when a parser is built; `errkit explain` usually needs none (see _fast_explain)."""
    if not _CLASSES:
        import argparse

        class _Formatter(argparse.HelpFormatter):
            """argparse's formatter imports shutil (and with it bz2, lzma) just to read the terminal width,
            on every run; os answers the same question."""

            def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
                if width is None:
                    try:
                        width = os.get_terminal_size().columns - 2
                    except OSError:
                        width = int(os.environ.get("COLUMNS", 80)) - 2
                super().__init__(prog, indent_increment, max_help_position, width)

        class _Parser(argparse.ArgumentParser):
            """An ArgumentParser (and, by inheritance, its sub-command parsers) using _Formatter, whose
            errors name the command's own usage and what was probably meant (`--jsno`: did you mean
            --json?); argparse's own suggestions (suggest_on_error) are Python 3.14's."""

            def __init__(self, *args, **kwargs):
                kwargs.setdefault("formatter_class", _Formatter)
                super().__init__(*args, **kwargs)
                self.commands: dict = {}  # name -> its parser (build_parser)

            def parse_args(self, args=None, namespace=None):
                parsed, extras = self.parse_known_args(args, namespace)
                if extras:  # an option the command does not know: the command's usage, not errkit's
                    owner = self.commands.get(getattr(parsed, "command", None), self)
                    owner.error("unrecognized arguments: " + " ".join(extras))
                return parsed

            def error(self, message):
                super().error(message + did_you_mean(self, message))

        class _Version(argparse.Action):
            """`--version`: the installed distribution's version, looked up only when asked."""

            def __init__(self, option_strings, dest, **kwargs):
                super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

            def __call__(self, parser, namespace, values, option_string=None):
                from importlib.metadata import PackageNotFoundError, version

                try:
                    number = version("errkit")
                except PackageNotFoundError:
                    number = "unknown (not installed)"
                print(f"errkit {number}")
                parser.exit()

        _CLASSES.update(parser=_Parser, version=_Version, suppress=argparse.SUPPRESS)
    return _CLASSES


def build_parser(only: str | None = None):
    """The command line; with `only`, just that command's parser is built (each one costs start-up
    time, and `errkit explain` should start fast)."""
    classes = _argparse_classes()
    parser = classes["parser"](prog="errkit", description="A declarative error catalogue for JAX attention kernels.")
    parser.add_argument("--catalog", metavar="DIR", help=CATALOG_HELP)
    parser.add_argument("--version", action=classes["version"], help="print errkit's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, declare) in COMMANDS.items():
        if only is None or name == only:
            command = parser.commands[name] = sub.add_parser(name, help=help_text)
            # after the command too; SUPPRESS: not given there, the value before the command stays
            command.add_argument("--catalog", metavar="DIR", default=classes["suppress"], help=CATALOG_HELP)
            declare(command)
    return parser


CATALOG_HELP = "catalogue folder (default: ./catalog)"


def did_you_mean(parser, message: str) -> str:
    """` (did you mean --json?)` for argparse's error `message` of `parser`: the closest of its
    options to an unknown one, or of its choices to an invalid one; "" when none is close."""
    import difflib
    import re

    unknown = re.match(r"unrecognized arguments: (.*)", message)
    invalid = re.search(r"invalid choice: '([^']*)'", message)
    if unknown:
        options = [o for action in parser._actions for o in action.option_strings if o.startswith("--")]
        words = [w.split("=", 1)[0] for w in unknown.group(1).split() if w.startswith("--")]
    elif invalid:
        action = next((a for a in parser._actions if a.choices and invalid.group(1) not in a.choices
                       and f"argument {a.metavar or '/'.join(a.option_strings) or a.dest}" in message), None)
        options, words = (list(action.choices) if action else []), [invalid.group(1)]
    else:
        return ""
    said = [close[0] for w in words for close in [difflib.get_close_matches(w, options, n=1, cutoff=0.6)] if close]
    return f" (did you mean {' or '.join(dict.fromkeys(said))}?)" if said else ""


def _command_named(argv: list[str]) -> str | None:
    """The command `argv` names, when it surely does (the first word that is not an option)."""
    rest = list(argv)
    while rest and rest[0].startswith("-"):
        if rest[0] == "--catalog" and len(rest) > 1:
            rest = rest[2:]
        elif rest[0].startswith("--catalog="):
            rest = rest[1:]
        else:
            return None  # --help, or an option only the full parser knows
    return rest[0] if rest and rest[0] in COMMANDS else None


class _Args:
    """The parsed command line of the fast path (what argparse's Namespace would hold)."""

    def __init__(self, **values):
        self.__dict__.update(values)


def _fast_explain(argv: list[str]):
    """`errkit explain`'s arguments when they are plain (its options, then or before the text, no
    help asked), without argparse: building a parser is a good part of explain's start-up. None:
    let argparse read them (and answer --help, or the errors)."""
    catalog, flags, text, rest = None, {"--json": False, "--all": False, "--open": False, "--verbose": False}, [], list(argv)
    colour = "auto"
    while rest and rest[0].startswith("--catalog"):
        if rest[0] == "--catalog" and len(rest) > 1:
            catalog, rest = rest[1], rest[2:]
        elif rest[0].startswith("--catalog="):
            catalog, rest = rest[0].partition("=")[2], rest[1:]
        else:
            return None
    if not rest or rest[0] != "explain":
        return None
    rest, texts_done = rest[1:], False
    while rest:
        word = rest.pop(0)
        if word in flags:
            flags[word] = True
            texts_done = bool(text)
        elif word == "--catalog" and rest:
            catalog = rest.pop(0)
            texts_done = bool(text)
        elif word.startswith("--catalog="):
            catalog = word.partition("=")[2]
            texts_done = bool(text)
        elif word == "--color" and rest and rest[0] in COLOURS or word.partition("=")[::2] in COLOR_WORDS:
            colour = rest.pop(0) if word == "--color" else word.partition("=")[2]
            texts_done = bool(text)
        elif word == "--":
            if texts_done:
                return None
            text += rest
            break
        elif word.startswith("-") and word != "-" or texts_done:
            return None  # an option only argparse knows, or text on both sides of an option
        else:
            text.append(word)
    return _Args(command="explain", catalog=catalog or None, text=text, json=flags["--json"], all=flags["--all"],
                 open=flags["--open"], verbose=flags["--verbose"], color=colour, format="text", func=cmd_explain)


COLOURS = ("auto", "always", "never")  # --color's choices (errkit/explain/render.py: COLOURS)
COLOR_WORDS = {("--color", c) for c in COLOURS}


def os_error(err: OSError) -> str:
    """An OSError in one line: what failed and where (`No space left on device: out/x.md`)."""
    from errkit.core.escape import terminal

    said = err.strerror or str(err) or type(err).__name__
    where = " -> ".join(str(f) for f in (err.filename, err.filename2) if f)
    return terminal(f"{said}: {where}" if where else said)


def main(argv: list[str] | None = None) -> int:
    """errkit's command line; `argv` None: errkit's own process (the console script, `python -m
    errkit`), which explain's answer ends at once when it is written (cmd_explain)."""
    own_process = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    return _main(argv, own_process)


def _main(argv: list[str], own_process: bool) -> int:
    # Explaining a paste is a short process whose objects live to its end: collecting cycles while
    # it imports and reads the index, and again when the interpreter exits, cost a twentieth of its
    # start (callgrind). The collector is restored on return to a caller that passed argv; errkit's
    # own process (argv None: the console script, `python -m errkit`) ends with main, or sooner
    # (cmd_explain: an answer ends it once written, errkit/streams.py end_now).
    paused = argv[:1] == ["explain"] and "--all" not in argv and gc.isenabled()
    if paused:
        gc.disable()
    tolerant_streams()
    args = _fast_explain(argv)
    if args is None:
        parser = build_parser(only=_command_named(argv))
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USAGE
    args.own_process = own_process
    status = EXIT_OK
    try:
        status = args.func(args)
        sys.stdout.flush()  # a reader that left shows here, not as Python's exit 120 after main
        return status
    except UsageError as err:
        from errkit.core.escape import terminal

        print(f"errkit: {terminal(err)}", file=sys.stderr)  # (it may quote an installed catalogue or a log)
        return EXIT_USAGE
    except LintFailed:  # the catalogue's lint errors are printed
        return EXIT_FINDINGS
    except BrokenPipeError as closed:
        # The reader went away (`errkit ... | head -1`): not an error worth a traceback, and the
        # exit status the command had without the pipe (explain's answer sets it before writing).
        quiet_stdout()
        return getattr(closed, "exit_status", status)
    except KeyboardInterrupt:
        print("errkit: interrupted", file=sys.stderr)
        return 130
    except OSError as err:  # a full disk, a read-only or forbidden place: the machine's, not a bug of ours
        quiet_stdout()  # (what could not be written is not tried again at exit)
        print(f"errkit: {os_error(err)}", file=sys.stderr)
        return EXIT_FINDINGS
    except Exception as err:  # a bug of ours: one clear line, the traceback only on request
        if os.environ.get("ERRKIT_DEBUG"):
            raise
        print(f"errkit: internal error: {type(err).__name__}: {err} (set ERRKIT_DEBUG=1 for the traceback)", file=sys.stderr)
        return 70
    finally:
        if paused and not own_process:
            gc.enable()


if __name__ == "__main__":
    sys.exit(main())

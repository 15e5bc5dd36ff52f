"""`errkit scan` over the whole installed jax package vs a plain `ast.parse` of every file.

Ours: the full audit minus printing (walk, read, parse, collect sites, templates, types, checks,
coverage against the matcher index). Baseline: read and `ast.parse` each of the same files, the
least any AST scanner must do. Prints files, sites, seconds and files/s, then one table row.
Target: ratio <= 1.5 (the scan costs at most half again a bare parse).

Equal footing: the scan pauses the garbage collector while it parses a file (an AST holds no
cycles), so the baseline parses each file under the same pause, with the scan's own helper; a
collector pass during one side's parse only would decide the ratio, not the work. `compare` runs
a full collection before every repeat of either side.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._timing import Result, Target, compare, fmt_time, report  # noqa: E402
from errkit import scan  # noqa: E402
from errkit.scan.files import gc_paused  # noqa: E402
from errkit.scan.messages import parse_template  # noqa: E402


def jax_root() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("jax")  # located, not imported: the scan reads source only
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("bench_scan: jax is not installed (pip install -e '.[kernel]')")
    return Path(list(spec.submodule_search_locations)[0])


def audit(root: Path, index) -> scan.ScanResult:
    parse_template.cache_clear()  # each repeat parses its templates, as a fresh `errkit scan` does
    result = scan.scan_paths([str(root)])
    coverage = scan.Coverage(index)
    for site in result.sites:
        site.covered_by = coverage.covered_by(site)
    return result


def parse_all(files: list[Path]) -> None:
    for path in files:
        try:
            with gc_paused():  # as the scan parses: see the module docstring
                ast.parse(path.read_bytes())
        except SyntaxError:
            pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of each side (median kept)")
    args = parser.parse_args()
    root = jax_root()
    files = list(scan.python_files([str(root)], lambda path, reason: None))
    index = scan.load_index(None)
    start = time.perf_counter()
    result = audit(root, index)
    once = time.perf_counter() - start
    ours, base, ratio = compare(lambda: audit(root, index), lambda: parse_all(files), number=1, repeat=args.repeat)
    uncatalogued = sum(1 for s in result.sites if not s.covered_by)
    print(f"jax {root}")
    print(f"files {result.files}  sites {len(result.sites)}  uncatalogued {uncatalogued}  skipped {len(result.problems)}")
    print(f"seconds {ours:.2f} (first run {once:.2f})  files/s {result.files / ours:.0f}  "
          f"(ast.parse alone: {base:.2f} s, {len(files) / base:.0f} files/s)")
    print()
    return report([Result(f"`errkit scan` of the installed jax ({result.files} files) vs `ast.parse` alone, per file",
                          fmt_time(ours / result.files), fmt_time(base / len(files)), ratio, Target("<=", 1.5))])


if __name__ == "__main__":
    sys.exit(main())

"""Mutation testing of errkit/core/ against the core's own tests (tests/core/), with mutmut 3.

    .venv/bin/pip install mutmut        # not a test dependency: the normal suite never runs it
    .venv/bin/python scripts/mutation.py                  # expr, bounds, template, values, helpers, normalise, regex
    .venv/bin/python scripts/mutation.py expr template    # some of them
    .venv/bin/python scripts/mutation.py --survivors      # and each survivor's diff (`mutmut show`)

mutmut runs in a scratch copy, build/mutation/ (ignored by git): errkit/, tests/conftest.py and
tests/core/ only, with a pyproject.toml of its own, so the repository's pytest configuration, its
other tests and the catalogue play no part, and nothing in the checkout changes. Every mutant of a
module is run against the tests of tests/core/ that call the mutated function (mutmut's own
selection). Hypothesis runs derandomized (tests/core/conftest.py, ERRKIT_MUTATION=1), so a score
does not depend on the examples one run happened to draw.

A mutant counts as killed when a test fails, or when the tests time out on it (an infinite loop the
mutation made: mutmut stops them after 4 x (the clean time of the tests that reach the function + 1 s);
mutmut's default, 15 x, lets each such mutant run for minutes). Survivors, and mutants no test
reaches, count against the score. Exit status 1 when the overall score is below --fail-under.
docs/mutation.md records the last scores and the survivors that are equivalent mutants.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "mutation"
MODULES = ("expr", "bounds", "template", "values", "helpers", "normalise", "regex")
KILLED = {1: "killed", 3: "killed"}  # mutmut's exit codes: pytest failed, or pytest's internal error
TIMEOUT = {36, 24, -24, 152, 255}  # mutmut's timeout codes (SIGXCPU and its own)


def prepare(modules: list[str], work: Path) -> None:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    shutil.copytree(ROOT / "errkit", work / "errkit", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (work / "tests").mkdir()
    shutil.copy2(ROOT / "tests" / "conftest.py", work / "tests" / "conftest.py")
    # test_index_format.py reads the catalogue and the site (tests/support.py): not the core's own
    shutil.copytree(ROOT / "tests" / "core", work / "tests" / "core",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "test_index_format.py"))
    only = ", ".join(f'"errkit/core/{m}.py"' for m in modules)
    (work / "pyproject.toml").write_text(
        "# written by scripts/mutation.py\n"
        "[tool.mutmut]\n"
        'source_paths = ["errkit"]\n'
        f"only_mutate = [{only}]\n"
        'pytest_add_cli_args_test_selection = ["tests/core"]\n'
        'pytest_add_cli_args = ["-p", "no:cacheprovider"]\n'
        "use_git_change_detection = false\n"
        "timeout_multiplier = 4.0\n"  # mutmut's 15 lets each infinite loop run for minutes
        "\n"
        "[tool.pytest.ini_options]\n"
        'testpaths = ["tests/core"]\n'
    )


def tally(work: Path, module: str) -> dict:
    meta = work / "mutants" / "errkit" / "core" / f"{module}.py.meta"
    codes = json.loads(meta.read_text())["exit_code_by_key"] if meta.exists() else {}
    out = {"total": len(codes), "killed": 0, "timeout": 0, "survived": [], "other": []}
    for name, code in sorted(codes.items()):
        if code in KILLED:
            out["killed"] += 1
        elif code in TIMEOUT:
            out["timeout"] += 1
        elif code == 0:
            out["survived"].append(name)
        else:
            out["other"].append(f"{name} (exit {code})")  # no tests, not checked, suspicious, ...
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE", help=f"some of {', '.join(MODULES)} (default: all)")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2, help="mutants run at once")
    parser.add_argument("--survivors", action="store_true", help="print each survivor's diff")
    parser.add_argument("--fail-under", type=float, default=90.0, help="exit 1 below this overall score (percent)")
    args = parser.parse_args(argv)
    modules = list(dict.fromkeys(args.modules or MODULES))
    unknown = [m for m in modules if m not in MODULES]
    if unknown:
        parser.error(f"not a module of errkit/core/ this script mutates: {', '.join(unknown)}")
    mutmut = Path(sys.executable).with_name("mutmut")
    if not mutmut.exists():
        print(f"mutmut is not installed next to {sys.executable}: pip install mutmut", file=sys.stderr)
        return 2
    prepare(modules, WORK)
    env = dict(os.environ, ERRKIT_MUTATION="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("HYPOTHESIS_PROFILE", None)
    run = subprocess.run([str(mutmut), "run", "--max-children", str(args.max_children)], cwd=WORK, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        print(run.stdout[-4000:], file=sys.stderr)
        print(f"mutmut run failed (exit {run.returncode})", file=sys.stderr)
        return 2
    print("mutation testing of errkit/core/ against tests/core/ (mutmut; timeouts count as killed)\n")
    print(f"{'module':<10} {'killed':>7} {'timeout':>7} {'survived':>8} {'other':>5} {'total':>6} {'score':>7}")
    killed = total = 0
    results = {m: tally(WORK, m) for m in modules}
    for module, r in results.items():
        dead = r["killed"] + r["timeout"]
        killed, total = killed + dead, total + r["total"]
        score = 100.0 * dead / r["total"] if r["total"] else 100.0
        print(f"{module:<10} {r['killed']:>7} {r['timeout']:>7} {len(r['survived']):>8} {len(r['other']):>5} {r['total']:>6} {score:>6.1f}%")
    overall = 100.0 * killed / total if total else 100.0
    print(f"{'overall':<10} {'':>7} {'':>7} {'':>8} {'':>5} {total:>6} {overall:>6.1f}%  ({killed} of {total} killed)")
    for module, r in results.items():
        for name in r["survived"] + r["other"]:
            print(f"survived: {name}")
            if args.survivors and name in r["survived"]:
                diff = subprocess.run([str(mutmut), "show", name], cwd=WORK, env=env, capture_output=True, text=True)
                print(diff.stdout)
    return 0 if overall >= args.fail_under else 1


if __name__ == "__main__":
    sys.exit(main())

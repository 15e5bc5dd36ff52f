"""errkit explain speed, side by side in one run.

Whole processes are timed from outside with `hyperfine -N` (Debian's package), using errkit as a
user gets it: the wheel built from this checkout, installed in a fresh virtual environment, run
from a folder outside the repository.

1. cold start: `errkit explain MSG` (the console script) vs `python -c pass` (the same
   interpreter), the discovery and index caches warm (hyperfine's warm-up runs fill them);
   and with the bundled catalogue plus two registered ones (a dist-info folder with an
   entry_points.txt on PYTHONPATH: real entry points) vs the bundled one alone, both under `env`
   with a PYTHONPATH folder so the two differ only by what the folder holds;
2. logs (benchmarks/logs.py), `errkit explain --all LOG` vs `grep -c Error LOG` (GNU grep counts
   every line, so it reads the whole file): English-prose noise (1 M lines, also against the
   1 M lines/s goal, against ripgrep given the catalogue's regexes, and against a Python loop of
   `"Error" in line` then every wording's regex with re2), tracebacks of other errors, JSON lines,
   and the worst realistic case (every line made of the catalogue's common words);
3. scaling (benchmarks/catalogues.py): the real catalogue's first 100 entries vs the real
   catalogue grown to 10,000 entries with real messages of installed packages; time per message
   on the exact path and on the approximate path (a message with a typo), index loaded;
4. the worst explain of 1 MB of adversarial input vs a benign 1 MB line (recorded);
5. 50,000 distinct uncatalogued exception lines vs 50,000 ordinary log lines, whole processes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import catalogues, logs  # noqa: E402
from benchmarks._timing import Result, Target, fmt_time, report  # noqa: E402
from errkit.explain.matching.index import INDEX_FILE
from errkit.explain.matching.chunks import explain_chunks  # noqa: E402
from errkit.explain.matching.index import Index  # noqa: E402
from errkit.explain.matching.approximate import approximate  # noqa: E402

MESSAGE = "num_q_heads=12 must be divisible by and num_kv_heads=8"


# -- whole processes ------------------------------------------------------------------------------


def installed_wheel(tmp: Path) -> Path:
    """The bin folder of a fresh venv holding the wheel built from this checkout."""
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(ROOT)], check=True,
                   stdout=subprocess.DEVNULL)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # the current pip, as a user installing today has: its console-script launcher no longer imports
    # `re` (pip 25.0, pypa/pip#13166); offline, the venv's own pip is kept (the row names it)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--upgrade", "pip"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wheel = next(dist.glob("errkit-*.whl"))
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return venv / "bin"


def hyperfine(commands: list[list[str]], cwd: Path, runs: int, warmup: int = 2, ignore_failure: bool = False,
              env: dict | None = None, rounds: int = 1, times_of: list | None = None) -> list[float]:
    """Median seconds of each command, as whole processes (no shell). hyperfine times one command's
    runs after another's: with `rounds`, the runs are split into that many hyperfine calls, the
    commands' order reversed each time, so that a slow spell of the machine falls on all of them.
    `times_of`, a list, receives each command's seconds of every run (the spread)."""
    if shutil.which("hyperfine") is None:
        raise SystemExit("bench_explain: hyperfine is not installed (apt-get install hyperfine)")
    out = cwd / "hyperfine.json"
    shown = [" ".join(_quote(a) for a in cmd) for cmd in commands]
    times: list[list[float]] = [[] for _ in commands]
    for round_ in range(rounds):
        order = list(range(len(commands)))[::-1 if round_ % 2 else 1]
        subprocess.run(["hyperfine", "-N", "--output=pipe", "--style=none", f"--warmup={warmup}",
                        f"--runs={max(1, runs // rounds)}", *(["--ignore-failure"] if ignore_failure else []),
                        "--export-json", str(out), *(shown[k] for k in order)], check=True, cwd=cwd,
                       stdout=subprocess.DEVNULL,
                       env=dict(os.environ, NO_COLOR="1", ERRKIT_CACHE_DIR=str(cwd / "errkit-cache"), **(env or {})))
        for k, result in zip(order, json.loads(out.read_text())["results"]):
            times[k] += result["times"]
    if times_of is not None:
        times_of.extend(times)
    return [statistics.median(t) for t in times]


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\"'\"'") + "'" if re.search(r"[^\w@%+=:,./-]", arg) else arg


# The console-script launcher pip wrote before 25.0 (distlib's template): it imports `re` first.
OLD_LAUNCHER = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from errkit.cli import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""


def pip_version(bin_dir: Path) -> str:
    out = subprocess.run([str(bin_dir / "python"), "-m", "pip", "--version"], capture_output=True, text=True).stdout
    return out.split()[1] if out.startswith("pip ") else "?"


def cold_start(bin_dir: Path, tmp: Path) -> list[Result]:
    """`errkit explain MSG` through the launcher the venv's pip wrote, and through the one older pips
    write (recorded), each against `python -c pass`, interleaved in one hyperfine run."""
    old = tmp / "errkit-old-launcher"
    old.write_text(OLD_LAUNCHER.format(python=bin_dir / "python"))
    old.chmod(0o755)
    ours, old_launcher, base = hyperfine([[str(bin_dir / "errkit"), "explain", MESSAGE], [str(old), "explain", MESSAGE],
                                          [str(bin_dir / "python"), "-c", "pass"]], tmp, runs=90, warmup=5, rounds=6)
    return [Result(f"cold start: `errkit explain MSG` (pip {pip_version(bin_dir)}'s launcher) vs `python -c pass`",
                   fmt_time(ours), fmt_time(base), ours / base, Target("<=", 2.0)),
            Result("same, through the launcher pip < 25 writes (it imports `re` first)", fmt_time(old_launcher),
                   fmt_time(base), old_launcher / base)]


def extra_catalogue(site: Path, dist: str, prefix: str) -> None:
    """Install a small catalogue (tests/fixtures/kernels, codes renamed to `prefix`) as a package
    registering its index under `errkit.catalogues`, the way pip leaves one in site-packages."""
    from errkit.cli import _compile_catalogue
    from errkit.explain.registry import catalog_index

    data = catalog_index(ROOT / "tests" / "fixtures" / "kernels", _compile_catalogue)
    rename = {code: prefix + code[2:] for code in data["entries"]}
    data["project"] = dist
    data["entries"] = {rename[code]: entry for code, entry in data["entries"].items()}
    for wording in data["wordings"]:
        wording["code"] = rename[wording["code"]]
    package = dist.replace("-", "_")
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text("")
    (site / package / "_index.json").write_text(json.dumps(data))
    info = site / f"{package}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[errkit.catalogues]\n{dist} = {package}:_index.json\n")


def registered_start(bin_dir: Path, tmp: Path) -> Result:
    extra, empty = tmp / "extra", tmp / "empty"
    empty.mkdir()
    extra_catalogue(extra, "extra-one", "YY")
    extra_catalogue(extra, "extra-two", "ZZ")
    check = subprocess.run(["env", f"PYTHONPATH={extra}", str(bin_dir / "errkit"), "list", "--json"], capture_output=True,
                           text=True, check=True, env=dict(os.environ, ERRKIT_CACHE_DIR=str(tmp / "errkit-cache")))
    names = {json.loads(line)["catalogue"] for line in check.stdout.splitlines()}
    assert {"extra-one", "extra-two"} < names, names  # both registered catalogues are read
    ours, base = hyperfine([["env", f"PYTHONPATH={extra}", str(bin_dir / "errkit"), "explain", MESSAGE],
                            ["env", f"PYTHONPATH={empty}", str(bin_dir / "errkit"), "explain", MESSAGE]],
                           tmp, runs=60, warmup=5, rounds=6)
    return Result("cold start: bundled + 2 registered catalogues vs bundled alone", fmt_time(ours), fmt_time(base),
                  ours / base, Target("<=", 1.1))


NAIVE_LOOP = '''
import json, sys, re2
from importlib.resources import files
index = json.loads(files("errkit").joinpath("_index.json").read_text(encoding="utf-8"))
regexes = [re2.compile(w["regex"]) for w in index["wordings"] if w["template"]]
found = 0
with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
    for line in log:
        if "Error" in line:
            for regex in regexes:
                if regex.search(line):
                    found += 1
                    break
print(found)
'''


def rg_patterns(index_data: dict) -> str:
    """The catalogue's regexes as ripgrep reads them: no group names, no escapes it refuses."""
    out = []
    for wording in index_data["wordings"]:
        if wording["template"] and wording.get("key"):  # a wording with no fixed text matches any line
            regex = re.sub(r"\(\?P<g\d+>", "(?:", wording["regex"])
            out.append(re.sub(r"\\([^A-Za-z0-9\\.\[\](){}*+?^$|])", r"\1", regex))
    return "\n".join(out) + "\n"


def found_in(bin_dir: Path, log: Path, expected) -> str:
    """How many of the log's errors errkit finds with the right entry, as "found N of M"."""
    proc = subprocess.run([str(bin_dir / "errkit"), "explain", "--all", "--json", str(log)], capture_output=True, text=True)
    got: dict[str, int] = {}
    for line in proc.stdout.splitlines():
        res = json.loads(line)
        if res["confidence"] == "exact":
            got[res["code"]] = got.get(res["code"], 0) + res["count"]
    right = sum(min(n, got.get(code, 0)) for code, n in expected.items())
    extra = sum(got.values()) - right
    return f"found {right:,} of {sum(expected.values()):,} errors" + (f", {extra} wrong" if extra else "")


def log_rows(bin_dir: Path, tmp: Path, english_lines: int, other_lines: int) -> list[Result]:
    rows = []
    index_data = json.loads(Path(INDEX_FILE).read_text(encoding="utf-8"))
    (tmp / "patterns.txt").write_text(rg_patterns(index_data), encoding="utf-8")
    (tmp / "naive.py").write_text(NAIVE_LOOP, encoding="utf-8")
    for kind in logs.KINDS:
        lines = english_lines if kind == "english" else other_lines
        text, expected = logs.make_log(kind, lines)
        log = tmp / f"{kind}.log"
        log.write_text(text, encoding="utf-8")
        del text
        found = found_in(bin_dir, log, expected)
        ours_cmd = [str(bin_dir / "errkit"), "explain", "--all", str(log)]
        size = f"{lines:,} lines, {log.stat().st_size / 1e6:.0f} MB, 1% errors; {found}"
        if kind == "english":
            commands = [ours_cmd, ["grep", "-c", "Error", str(log)], [str(bin_dir / "python"), str(tmp / "naive.py"), str(log)]]
            if shutil.which("rg"):
                commands.append(["rg", "-c", "-f", str(tmp / "patterns.txt"), str(log)])
            times = hyperfine(commands, tmp, runs=5, warmup=1)
            ours, grep, naive = times[:3]
            rows.append(Result(f"log, English-prose noise ({size}): `errkit explain --all` vs `grep -c Error`",
                               fmt_time(ours), fmt_time(grep), ours / grep, Target("<=", 10.0)))
            rows.append(Result("same log: lines/s vs the goal of 1,000,000 lines/s", f"{lines / ours:,.0f} lines/s",
                               "1,000,000 lines/s", lines / ours / 1e6, Target(">=", 1.0)))
            rows.append(Result("same log: vs a Python loop, `\"Error\" in line` then every wording's regex (re2)",
                               fmt_time(ours), fmt_time(naive), ours / naive))
            if len(times) > 3:
                rows.append(Result("same log: vs `rg -c -f` the catalogue's regexes (finds lines, explains nothing)",
                                   fmt_time(ours), fmt_time(times[3]), ours / times[3]))
        else:
            ours, grep = hyperfine([ours_cmd, ["grep", "-c", "Error", str(log)]], tmp, runs=5, warmup=1)
            rows.append(Result(f"log, {kind} ({size}): `errkit explain --all` vs `grep -c Error`",
                               fmt_time(ours), fmt_time(grep), ours / grep, Target("<=", 10.0)))
        log.unlink()
    return rows


def uncatalogued_row(bin_dir: Path, tmp: Path, lines: int = 50_000) -> Result:
    """Distinct exception lines no entry matches cost about what ordinary log lines cost."""
    other, plain = tmp / "uncatalogued.log", tmp / "ordinary.log"
    other.write_text(logs.uncatalogued_lines(lines), encoding="utf-8")
    plain.write_text(logs.ordinary_lines(lines), encoding="utf-8")
    errkit = str(bin_dir / "errkit")
    ours, base = hyperfine([[errkit, "explain", "--all", str(other)], [errkit, "explain", "--all", str(plain)]], tmp,
                           runs=10, warmup=2, ignore_failure=True)
    return Result(f"`explain --all`: {lines:,} distinct uncatalogued exception lines vs {lines:,} ordinary log lines",
                  fmt_time(ours), fmt_time(base), ours / base, Target("<=", 3.0))


# -- in process -----------------------------------------------------------------------------------


def _queries(catalogue) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(code, text) renderings of the catalogue's wordings, and the same with a typo in the longest word."""
    from errkit.catalogue import wordings

    exact, typos = [], []
    for entry in catalogue.entries:
        params = wordings.sample_params(entry)[0]
        for wording in wordings.wordings(entry):
            if not wording.template.literals or wording.variant.located_only:  # (recognised only at its raise site)
                continue
            exception, message = wording.variant.exception or entry.exception, wording.render(params)
            exact.append((entry.code, f"{exception}: {message}"))
            word = max(re.findall(r"[A-Za-z]{5,}", message) or [""], key=len)
            if word:
                typos.append((entry.code, f"{exception}: " + message.replace(word, word[:2] + word[3:], 1)))
    return exact, typos


def _per_message(fn, texts: list[str], repeat: int = 5) -> float:
    if not texts:
        raise SystemExit("bench_explain: no message to time")
    for text in texts:  # warm up: compiled regexes and lazily built tables
        fn(text)
    best = []
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            fn(text)
        best.append((time.perf_counter() - start) / len(texts))
    return statistics.median(best)


def scaling(small: int = 100, large: int = 10_000) -> list[Result]:
    from errkit.generate import index as index_gen

    base = catalogues.grown(small)
    exact, typos = _queries(base)
    timings, loads, accuracy = {}, {}, {}
    for n in (small, large):
        data = index_gen.build(catalogues.grown(n))
        text = json.dumps(data)
        start = time.perf_counter()
        index = Index(json.loads(text))
        explain_chunks(index, [exact[0][1]])
        approximate(index, typos[0][1])
        loads[n] = time.perf_counter() - start
        for code, text in exact:
            found, _, _ = explain_chunks(index, [text])
            assert found and found[0].match.code == code, f"{n} entries: {text!r} -> {found and found[0].match.code}"
        misses = [t for c, t in typos if not explain_chunks(index, [t])[0]]
        top = [c for c, t in typos if t in misses and (approximate(index, t) or [None])[0] and approximate(index, t)[0].code == c]
        accuracy[n] = (len(top), len(misses))
        timings[n] = (
            _per_message(lambda t: explain_chunks(index, [t]), [t for _, t in exact]),
            _per_message(lambda t: approximate(index, t), misses),
        )
    (s_exact, s_approx), (l_exact, l_approx) = timings[small], timings[large]
    top_small, top_large = accuracy[small], accuracy[large]
    return [
        Result(f"exact match per message, {large:,} vs {small} entries ({len(exact)} messages)",
               fmt_time(l_exact), fmt_time(s_exact), l_exact / s_exact, Target("<=", 3.0)),
        Result(f"approximate match per message (a typo), {large:,} vs {small} entries; right entry first: "
               f"{top_large[0]}/{top_large[1]} vs {top_small[0]}/{top_small[1]}",
               fmt_time(l_approx), fmt_time(s_approx), l_approx / s_approx, Target("<=", 3.0)),
        Result(f"index load and first explain, {large:,} vs {small} entries (JSON parse, prefilter compile)",
               fmt_time(loads[large]), fmt_time(loads[small]), loads[large] / loads[small]),
    ]


def worst_case(size: int = 1_000_000) -> Result:
    """The slowest explain of a 1 MB line built from a wording's own literals, vs a benign 1 MB line."""
    sys.path.insert(0, str(ROOT / "tests"))
    from support import adversarial_lines

    from errkit.catalogue import wordings

    index = Index.load()
    worst, worst_name, lines = 0.0, "", 0
    for entry in catalogues.real_catalogue().entries:
        for wording in wordings.wordings(entry):
            for line in adversarial_lines(wording, size):
                start = time.perf_counter()
                explain_chunks(index, [line + "\n"])
                elapsed = time.perf_counter() - start
                lines += 1
                if elapsed > worst:
                    worst, worst_name = elapsed, f"{entry.code} v{wording.index}"
    benign = "x" * size + "\n"
    start = time.perf_counter()
    explain_chunks(index, [benign])
    base = time.perf_counter() - start
    return Result(f"worst explain of 1 MB of adversarial input ({lines} inputs; worst: {worst_name}) vs a benign 1 MB line",
                  fmt_time(worst), fmt_time(base), worst / base)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000, help="lines of the English-noise log")
    parser.add_argument("--other-lines", type=int, default=1_000_000, help="lines of each other log")
    parser.add_argument("--large", type=int, default=10_000, help="entries of the large catalogue")
    parser.add_argument("--cold-only", action="store_true", help="only the cold-start rows")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        bin_dir = installed_wheel(tmp)
        rows += cold_start(bin_dir, tmp)
        rows.append(registered_start(bin_dir, tmp))
        if args.cold_only:
            return report(rows)
        rows += log_rows(bin_dir, tmp, args.lines, args.other_lines)
        rows.append(uncatalogued_row(bin_dir, tmp))
    rows += scaling(large=args.large)
    rows.append(worst_case())
    return report(rows)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

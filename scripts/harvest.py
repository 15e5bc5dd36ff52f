"""Harvest the error wordings of JAX's (or tokamax's) attention kernels from every release.

    python scripts/harvest.py                      # every release from 0.4.25 to the newest served
    python scripts/harvest.py --dist tokamax       # tokamax's attention ops, 0.0.1 to the newest served
    python scripts/harvest.py --check              # exit 1 when catalog/harvest/jax.json is stale
    python scripts/harvest.py --wheels DIR         # wheels already downloaded (jax-X-py3-none-any.whl)

For each release, `pip download --no-deps jax==X` fetches its wheel (pure Python; cached under
--cache). The index is asked once per Python from the running one up to PYTHONS' newest
(`pip index versions --python-version`), since a plain `pip index` lists only the releases the
running Python may install (jax 0.11.0 and later need Python >= 3.12); each release is downloaded
with `--python-version` set to the first of those Pythons that lists it. The attention kernels are
read straight out of the wheel, errkit's own scan (`errkit.scan.scan_paths`) finds every raise and
assert site, and the result is written as compact JSON: message template -> the sites raising it,
each with its exception class, file, function and, per run of consecutive releases, its line.
Tests read that file, never the network.

Run it with a Python that parses the newest release's kernels: jax 0.11.1 and later use PEP 695
generics (`class PipelineCallback[T]`, Python >= 3.12), so from there on the harvest needs
Python 3.12 or later with errkit's dependencies installed (errkit itself is imported from this
checkout), e.g. a Python 3.12 venv holding ruamel.yaml, jinja2, google-re2 and packaging. A file
the running Python cannot parse stops the harvest rather than leaving its sites out.

Scope (SCOPE below): the attention kernels under jax/experimental/pallas/ops (GPU flash, Mosaic GPU,
decode, paged; TPU flash, paged, ragged paged, splash), jax/_src/nn/functions.py less the functions
`jax.nn.dot_product_attention` never calls (NOT_ATTENTION), and the cuDNN attention of
jax/_src/cudnn (fused_attention_stablehlo.py; fusion.py and scaled_matmul_stablehlo.py hold no
attention code). A raise without a message has the template "": explain recognises it by its raise
site (file and function), so the catalogue's located wordings are held to those sites; asserts
without a message, which errkit's scan does not report, are added by a short AST walk (`bare_asserts`).

tokamax (`--dist tokamax`, written to catalog/harvest/tokamax.json): the files of the attention ops
package behind `tokamax.dot_product_attention` (tokamax/_src/ops/attention/*.py, its tests and test
helpers left out: api.py, base.py, arg_specs.py and each implementation, xla_chunked, jax_nn,
pallas_triton, pallas_mosaic_gpu, pallas_mosaic_tpu and their VJPs) and tokamax/_src/ops/op.py, the
Op base class whose __call__ every implementation runs through ('Not supported on cpu.', configs,
vjp). tokamax 0.0.13 and later need
Python >= 3.12 and are downloaded for it, as jax's newest are; 0.1.0 is a yanked empty placeholder
that the index does not list.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from errkit.scan import scan_paths, sites as scan_sites  # noqa: E402

# errkit's scan reports ValueError, NotImplementedError, TypeError and AssertionError (and classes
# deriving from them); cuDNN's version and GPU checks raise RuntimeError, which users meet as well.
scan_sites.BUILTINS = tuple(dict.fromkeys(scan_sites.BUILTINS + ("RuntimeError",)))

CACHE = Path(tempfile.gettempdir()) / "errkit-harvest-wheels"

# Files of a wheel that hold attention kernels (regexes over the path inside the wheel).
JAX_SCOPE = (
    r"jax/experimental/pallas/ops/(gpu/|tpu/)?[^/]*attention[^/]*\.py",  # ops/attention.py before 0.4.29
    r"jax/experimental/pallas/ops/tpu/(paged|ragged_paged|splash)_attention/[^/]+\.py",
    r"jax/_src/nn/functions\.py",
    r"jax/_src/cudnn/fused_attention_stablehlo\.py",
)
# Functions of jax/_src/nn/functions.py that jax.nn.dot_product_attention never calls.
JAX_NOT_ATTENTION = {"glu", "standardize", "softmax", "log_softmax", "_one_hot", "one_hot", "scaled_matmul", "scaled_dot_general",
                     "get_scaled_dot_general_config"}
# tokamax's attention ops: every module of the package but its tests and test helpers, and the Op
# base class every attention op runs through (its platform, config and vjp checks).
TOKAMAX_SCOPE = (r"tokamax/_src/ops/attention/(?!test_base\.py$)(?![^/]*_test\.py$)[^/]+\.py", r"tokamax/_src/ops/op\.py")

# distribution -> (its first release harvested, SCOPE, file -> functions left out)
DISTS = {
    "jax": ("0.4.25", JAX_SCOPE, {"jax/_src/nn/functions.py": JAX_NOT_ATTENTION}),
    "tokamax": ("0.0.1", TOKAMAX_SCOPE, {}),
}
DIST, FIRST, SCOPE, NOT_ATTENTION = "jax", *DISTS["jax"]  # set by select()


def select(dist: str) -> None:
    """Harvest `dist` (a key of DISTS) from here on."""
    global DIST, FIRST, SCOPE, NOT_ATTENTION
    DIST, (FIRST, SCOPE, NOT_ATTENTION) = dist, DISTS[dist]


# Pythons the index is asked for, oldest first; only those from the running one up are used.
PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14")


def pythons() -> list[str]:
    """The running Python and every newer one of PYTHONS."""
    running = Version(f"{sys.version_info.major}.{sys.version_info.minor}")
    return [f"{sys.version_info.major}.{sys.version_info.minor}"] + [p for p in PYTHONS if Version(p) > running]


def served_releases(pip: list[str]) -> dict[str, str]:
    """Every final release of the distribution the package index serves, oldest first, each with
    the first Python (of `pythons()`) the index lists it for: a release requiring a newer Python
    than the running one is downloaded for that Python."""
    served: dict[Version, str] = {}
    for python in pythons():
        out = subprocess.run(pip + ["index", "versions", "--python-version", python, DIST],
                             capture_output=True, text=True, check=True).stdout
        found = re.search(r"Available versions: (.*)", out)
        if not found:
            raise SystemExit(f"harvest: `pip index versions --python-version {python} {DIST}` listed no versions:\n{out}")
        for v in (Version(v.strip()) for v in found.group(1).split(",")):
            served.setdefault(v, python)
    return {str(v): served[v] for v in sorted(served) if not v.is_prerelease and not v.is_devrelease and v >= Version(FIRST)}


def wheel(pip: list[str], release: str, folders: list[Path], python: str | None = None) -> Path:
    """The release's wheel: from one of `folders`, else downloaded into the first (for `python`,
    `--python-version`, where given: pip refuses a release whose Requires-Python excludes the
    running one otherwise)."""
    name = f"{DIST}-{release}-py3-none-any.whl"
    for folder in folders:
        if (folder / name).exists():
            return folder / name
    folders[0].mkdir(parents=True, exist_ok=True)
    target = ["--python-version", python] if python else []
    subprocess.run(pip + ["download", "-q", "--no-deps", "--only-binary=:all:", *target, "-d", str(folders[0]), f"{DIST}=={release}"],
                   check=True)
    if not (folders[0] / name).exists():
        raise SystemExit(f"harvest: pip downloaded no {name}")
    return folders[0] / name


def sites_of(wheel_path: Path, report) -> list[dict]:
    """Every raise site in the release's attention kernels (template "" for a raise without a message)."""
    scope = [re.compile(p) for p in SCOPE]
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel_path) as archive:
        members = sorted(n for n in archive.namelist() if any(p.fullmatch(n) for p in scope))
        for member in members:
            archive.extract(member, tmp)
        result = scan_paths([str(Path(tmp) / m) for m in members], report)
        if result.problems:  # a file skipped is sites missed: refuse rather than write a short harvest
            raise SystemExit(f"harvest: {wheel_path.name}: {len(result.problems)} file(s) not scanned (see above); "
                             f"a release newer than this Python ({sys.version.split()[0]}) may use syntax it cannot parse "
                             f"(jax 0.11.1 and later: PEP 695 generics): run the harvest with a newer Python")
        out = [{"template": "", "exception": "AssertionError", "path": m, "function": function, "line": line}
               for m in members for function, line in bare_asserts(Path(tmp) / m)]
        for site in result.sites:
            out.append({"template": site.template, "exception": site.exception, "path": Path(os.path.relpath(site.abspath, tmp)).as_posix(),
                        "function": site.function, "line": site.line})
        return [s for s in out if s["function"].split(".")[0] not in NOT_ATTENTION.get(s["path"], ())]


def bare_asserts(path: Path) -> list[tuple[str, int]]:
    """(function, line of its first) for each function holding an `assert` without a message:
    errkit's scan reports asserts with a message only, yet explain recognises these by their raise
    site too (file and function)."""
    out: list[tuple[str, int]] = []

    def walk(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                walk(child, scope + [child.name])
            elif isinstance(child, ast.Assert) and child.msg is None:
                out.append((".".join(scope) or "<module>", child.lineno))
            elif isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                walk(child, scope)

    walk(ast.parse(path.read_text(encoding="utf-8")), [])
    first: dict[str, int] = {}
    for function, line in out:  # one site per function (its first bare assert): explain tells them apart no finer
        first.setdefault(function, line)
    return sorted(first.items())


def harvest(releases: list[str], wheels: dict[str, Path], report) -> dict:
    """template -> sites; each site (exception, path, function, k-th such raise) -> runs of
    consecutive releases with the same line."""
    order = {r: i for i, r in enumerate(releases)}
    runs: dict[tuple, list[list]] = {}
    for release in releases:
        seen: dict[tuple, int] = {}
        for site in sorted(sites_of(wheels[release], report), key=lambda s: (s["path"], s["line"])):
            base = (site["template"], site["exception"], site["path"], site["function"])
            k = seen[base] = seen.get(base, -1) + 1
            at = runs.setdefault(base + (k,), [])
            if at and order[at[-1][1]] == order[release] - 1 and at[-1][2] == site["line"]:
                at[-1][1] = release
            else:
                at.append([release, release, site["line"]])
    wordings: dict[str, list[dict]] = {}
    for (template, exception, path, function, _), at in sorted(runs.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][3], kv[0][4], kv[0][1])):
        wordings.setdefault(template, []).append({"exception": exception, "path": path, "function": function, "at": at})
    return {
        "dist": DIST,
        "command": "python scripts/harvest.py" + ("" if DIST == "jax" else f" --dist {DIST}"),
        "scope": list(SCOPE),
        "releases": releases,
        "wordings": dict(sorted(wordings.items())),
    }


def dumps(data: dict) -> str:
    """Compact, and still one wording per line so that a diff reads."""
    head = {k: v for k, v in data.items() if k != "wordings"}
    lines = [json.dumps(head, ensure_ascii=False, separators=(",", ":"))[:-1] + ',"wordings":{']
    items = list(data["wordings"].items())
    for i, (template, sites) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        lines.append(json.dumps(template, ensure_ascii=False) + ":" + json.dumps(sites, ensure_ascii=False, separators=(",", ":")) + comma)
    lines.append("}}")
    return "\n".join(lines) + "\n"


def releases_of(sites: list[dict], releases: list[str]) -> list[str]:
    """The harvested releases that raise a template (the union of its sites' runs)."""
    order = {r: i for i, r in enumerate(releases)}
    raised = set()
    for site in sites:
        for first, last, _ in site["at"]:
            raised.update(releases[order[first]:order[last] + 1])
    return [r for r in releases if r in raised]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", choices=sorted(DISTS), default="jax", help="the distribution to harvest (default jax)")
    parser.add_argument("--out", type=Path, help="where to write (default catalog/harvest/<dist>.json)")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where downloaded wheels are kept")
    parser.add_argument("--wheels", type=Path, action="append", default=[], help="a folder of wheels already downloaded")
    parser.add_argument("--releases", help="comma-separated releases instead of every one the index serves")
    parser.add_argument("--python", help="with --releases: the Python to download them for (--python-version; default the running one)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when --out differs from a fresh harvest")
    args = parser.parse_args(argv)
    select(args.dist)
    args.out = args.out or ROOT / "catalog" / "harvest" / f"{DIST}.json"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]

    def report(line: str) -> None:
        print(f"harvest: {line}", file=sys.stderr)

    served = served_releases(pip) if not args.releases else {}
    releases = sorted(args.releases.split(",") if args.releases else served, key=Version)
    wheels = {r: wheel(pip, r, [args.cache] + args.wheels, served.get(r) or args.python) for r in releases}
    data = harvest(releases, wheels, report)
    text = dumps(data)
    sites = sum(len(s) for s in data["wordings"].values())
    report(f"{len(releases)} releases ({releases[0]} to {releases[-1]}), {len(data['wordings'])} wordings, {sites} sites")
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            report(f"{args.out} is stale: run python scripts/harvest.py")
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    report(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

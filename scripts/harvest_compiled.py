"""Harvest the compiled side's error wordings from every jax release: jaxlib's Mosaic (TPU and GPU)
C++, the Pallas lowerings and the Mosaic GPU Python that attention users meet below the kernels'
own checks.

    python scripts/harvest_compiled.py --repo JAX_GIT_DIR            # writes catalog/harvest/compiled.json
    python scripts/harvest_compiled.py --repo JAX_GIT_DIR --check    # exit 1 when it is stale

JAX_GIT_DIR is a clone of github.com/jax-ml/jax with its tags (`git clone --bare`; nothing is
checked out): every release tag `jax-vX.Y.Z` from 0.4.25 on, and the clone's HEAD as `main`, is
read straight from git. The files of AREAS are harvested: C++ message sites through
scripts/cxx_messages.py (emitOpError, emitError, absl status errors, Mosaic TPU's NYI /
TPU_CHECK_OP / TPU_ASSERT_* macros), Python raise sites through errkit's own scan
(`errkit.scan.scan_paths`, as scripts/harvest.py, with RuntimeError and Exception subclasses: the
Pallas lowerings raise LoweringException and MosaicError). The result has the shape of
catalog/harvest/jax.json: message template -> the sites raising it, each with its call (C++) or
exception class (Python), file, function and, per run of consecutive releases, its line. Raises
without a message are left out (recognised by their site, not their words).

Not harvested, because their source is not public: libtpu (the TPU compiler: the Mosaic header
`Mosaic failed to compile TPU kernel`, most reasons users see, every TPU memory exhaustion) and,
from jax 0.8.2 on, the Mosaic TPU passes, which moved into libtpu (their wordings up to jax 0.8.1
are here). Those wordings are recorded by hand, each with the public report it was read in, in
catalog/harvest/reported.json (tests/catalogue/test_compiled_wordings.py holds both to the catalogue).

Run it with a Python that parses the newest release: jax 0.11.0 and later use PEP 695 generics,
so Python >= 3.12 with errkit's dependencies (ruamel.yaml, jinja2, packaging; errkit itself is
imported from this checkout). A file the running Python cannot parse stops the harvest.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import cxx_messages  # noqa: E402
from errkit.scan import scan_paths, sites as scan_sites  # noqa: E402

_spec = importlib.util.spec_from_file_location("harvest", ROOT / "scripts" / "harvest.py")
harvest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harvest)  # its output format (dumps) and RuntimeError among the scan's kinds

# The Pallas lowerings raise LoweringException / MosaicError (Exception subclasses), Mosaic GPU
# KeyError and IndexError as well.
scan_sites.BUILTINS = tuple(dict.fromkeys(scan_sites.BUILTINS + ("RuntimeError", "Exception", "KeyError", "IndexError")))

FIRST = (0, 4, 25)
HEAD = "main"
# (area, files (a regex over the path in the repository), how users meet its wordings)
AREAS = (
    ("mosaic-tpu-dialect", r"jaxlib/mosaic/dialect/tpu/(tpu_ops|tpu_dialect|layout|util|vreg_util|array_util)\.(cc|h)",
     "verifiers and layout helpers of the tpu dialect, after 'Mosaic failed to compile TPU kernel: ' or in a Pallas verification error"),
    ("mosaic-tpu-passes", r"jaxlib/mosaic/dialect/tpu/transforms/.*\.(cc|h)",
     "Mosaic TPU's passes (infer/apply vector layout, infer memref layout, canonicalize), after 'Mosaic failed to compile TPU kernel: '; in libtpu from jax 0.8.2"),
    ("mosaic-serde", r"jaxlib/mosaic/(dialect/tpu/transforms/)?serde\.cc",
     "the Mosaic kernel's (de)serialisation: a jaxlib and libtpu of different releases"),
    ("mosaic-gpu-cc", r"jaxlib/mosaic/gpu/[^/]+\.cc|jaxlib/mosaic/dialect/gpu/[^/]+\.cc",
     "Mosaic GPU's custom call, passes and assembly, as an XLA compile or run-time error"),
    ("tpu-custom-call", r"jax/_src/tpu_custom_call\.py", "the Mosaic custom call's lowering, in Python"),
    ("pallas-mosaic-tpu", r"jax/_src/pallas/mosaic/(lowering|pallas_call_registration|tpu_info|error_handling|core|verification|primitives)\.py",
     "the Pallas TPU lowering, in Python, before Mosaic"),
    ("pallas-core", r"jax/_src/pallas/(pallas_call|core)\.py", "pallas_call and BlockSpec checks of every backend"),
    ("pallas-triton", r"jax/_src/pallas/triton/(lowering|pallas_call_registration|core|primitives)\.py",
     "the Pallas GPU (Triton) lowering, wrapped as 'Exception while lowering eqn:' or raised as it is"),
    ("pallas-mosaic-gpu", r"jax/_src/pallas/mosaic_gpu/(lowering|pallas_call_registration|core|primitives)\.py",
     "the Pallas Mosaic GPU lowering"),
    ("mosaic-gpu-python", r"jax/experimental/mosaic/gpu/[^/]+\.py", "Mosaic GPU's kernel construction, in Python"),
)
LEFT_OUT = re.compile(r"(_test|test_util|_testing)\.(py|cc)$|/examples/|/testing/")


def area_of(path: str) -> str | None:
    if LEFT_OUT.search(path):
        return None
    return next((name for name, files, _ in AREAS if re.fullmatch(files, path)), None)


class Repo:
    """Files of a git repository's commits, read without a checkout."""

    def __init__(self, git_dir: str):
        self.git_dir = git_dir

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", self.git_dir, *args], capture_output=True, text=True, check=True).stdout

    def releases(self) -> list[tuple[str, str]]:
        """(release, ref) of every release tag from FIRST on, oldest first, then (main, HEAD)."""
        found = []
        for tag in self.git("tag", "--list", "jax-v*").split():
            m = re.fullmatch(r"jax-v(\d+(?:\.\d+){2,3})", tag)
            if m and tuple(int(x) for x in m.group(1).split(".")) >= FIRST:
                found.append((m.group(1), tag))
        found.sort(key=lambda rt: tuple(int(x) for x in rt[0].split(".")))
        return found + [(HEAD, "HEAD")]

    def files(self, ref: str) -> dict[str, str]:
        """path -> text of every harvested file at `ref`."""
        paths = [p for p in self.git("ls-tree", "-r", "--name-only", ref).splitlines() if area_of(p)]
        batch = subprocess.run(["git", "-C", self.git_dir, "cat-file", "--batch"], input="".join(f"{ref}:{p}\n" for p in paths).encode(),
                               capture_output=True, check=True).stdout
        out, pos = {}, 0
        for path in paths:
            header_end = batch.index(b"\n", pos)
            size = int(batch[pos:header_end].split()[2])
            out[path] = batch[header_end + 1:header_end + 1 + size].decode("utf-8", "replace")
            pos = header_end + 1 + size + 1
        return out


def sites_of(files: dict[str, str], report) -> list[dict]:
    """Every message site of one release's files (Python raises without a message left out)."""
    out = []
    python = {}
    for path, text in files.items():
        if path.endswith(".py"):
            python[path] = text
        else:
            out += [{"template": template, "exception": call, "path": path, "function": "", "line": line}
                    for line, call, template in cxx_messages.sites(text)]
    with tempfile.TemporaryDirectory() as tmp:
        for path, text in python.items():
            (Path(tmp) / path).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / path).write_text(text, encoding="utf-8")
        result = scan_paths([str(Path(tmp) / p) for p in python], report)
        if result.problems:  # a file skipped is sites missed: refuse rather than write a short harvest
            raise SystemExit(f"harvest_compiled: {len(result.problems)} file(s) not scanned (see above): "
                             f"run it with Python >= 3.12 (jax 0.11.0 and later use PEP 695 generics)")
        for site in result.sites:
            if site.template:
                out.append({"template": site.template, "exception": site.exception,
                            "path": Path(site.abspath).relative_to(tmp).as_posix(), "function": site.function, "line": site.line})
    return out


def harvest_repo(repo: Repo, report, releases: list[tuple[str, str]] | None = None) -> dict:
    """The harvest of every release (or of `releases`), in harvest.py's shape."""
    releases = releases or repo.releases()
    names = [r for r, _ in releases]
    order = {r: i for i, r in enumerate(names)}
    runs: dict[tuple, list[list]] = {}
    for release, ref in releases:
        seen: dict[tuple, int] = {}
        found = sites_of(repo.files(ref), report)
        for site in sorted(found, key=lambda s: (s["path"], s["line"])):
            base = (site["template"], site["exception"], site["path"], site["function"])
            k = seen[base] = seen.get(base, -1) + 1
            at = runs.setdefault(base + (k,), [])
            if at and order[at[-1][1]] == order[release] - 1 and at[-1][2] == site["line"]:
                at[-1][1] = release
            else:
                at.append([release, release, site["line"]])
        report(f"{release}: {len(found)} sites")
    wordings: dict[str, list[dict]] = {}
    for (template, exception, path, function, _), at in sorted(runs.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][3], kv[0][4], kv[0][1])):
        wordings.setdefault(template, []).append({"exception": exception, "path": path, "function": function, "at": at})
    commit, date = repo.git("log", "-1", "--format=%H %cs", "HEAD").split()
    return {
        "dist": "jax",
        "repo": "jax-ml/jax",
        "command": "python scripts/harvest_compiled.py --repo JAX_GIT_DIR",
        "head": {"release": HEAD, "commit": commit, "date": date},
        "areas": [[name, files, reached] for name, files, reached in AREAS],
        "releases": names,
        "wordings": dict(sorted(wordings.items())),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True, help="a git clone of jax-ml/jax with its tags")
    parser.add_argument("--out", type=Path, default=ROOT / "catalog" / "harvest" / "compiled.json")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when --out differs from a fresh harvest")
    args = parser.parse_args(argv)

    def report(line: str) -> None:
        print(f"harvest_compiled: {line}", file=sys.stderr)

    data = harvest_repo(Repo(args.repo), report)
    text = harvest.dumps(data)
    report(f"{len(data['releases'])} releases ({data['releases'][0]} to {data['releases'][-1]} at {data['head']['commit'][:10]}), "
           f"{len(data['wordings'])} wordings, {sum(len(s) for s in data['wordings'].values())} sites")
    if args.check:
        if not args.out.exists() or args.out.read_text(encoding="utf-8") != text:
            report(f"{args.out} is stale: run python scripts/harvest_compiled.py --repo {args.repo}")
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    report(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Shared test helpers (imported as `support`: a `conftest` module name is not unique across folders)."""

import itertools
import json
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "catalog"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@lru_cache(maxsize=None)
def bundled_catalogue():
    """The repository's catalogue, loaded once per test session (about 4 s a load): every test
    module that reads it shares this one immutable object."""
    from errkit.catalogue.load import load

    return load(CATALOG).catalogue


def made_once(tmp_path_factory, worker_id: str, name: str, make) -> dict:
    """What `make(folder)` returns (a JSON object), made once per test run: the pytest-xdist
    workers take turns on a lock, the first makes it in a folder they all see, the others read
    what it made (the pattern xdist documents for session fixtures). Without workers, a folder of
    this session's own."""
    from filelock import FileLock

    if worker_id == "master":
        return json.loads(json.dumps(make(tmp_path_factory.mktemp(name))))
    shared = tmp_path_factory.getbasetemp().parent / name
    made = shared / "made.json"
    with FileLock(f"{shared}.lock"):
        if not made.is_file():
            shutil.rmtree(shared, ignore_errors=True)  # one that failed half-way
            shared.mkdir()
            made.write_text(json.dumps(make(shared)))
        return json.loads(made.read_text())


def errkit_subprocess(*args, input=None, cwd=ROOT, env=None, timeout=120):
    """Run the real `errkit` entry point in a child process (for stdin/stdout/exit-code behaviour)."""
    return subprocess.run(
        [sys.executable, "-m", "errkit.cli", *map(str, args)],
        input=input, capture_output=True, cwd=cwd, env=env, timeout=timeout,
    )


# What every `mkdocs build` says at INFO; anything else it says (a page missing from the nav, a link
# to a heading that is not there, an unrecognised link) is a defect, even where `--strict` passes.
_MKDOCS_ROUTINE = ("Cleaning site directory", "Building documentation to directory", "Documentation built in")


def mkdocs_said(output: str) -> list[str]:
    """The messages of a `mkdocs build` (run without -q) beyond the routine ones."""
    said = []
    for line in output.splitlines():
        level, _, message = line.partition(" -  ")
        if level.strip() in ("DEBUG", "INFO", "WARNING", "ERROR") and not message.startswith(_MKDOCS_ROUTINE):
            said.append(line)
    return said


def raised_by(fn) -> BaseException:
    """The exception `fn()` raises (any class: upstream kernels raise several)."""
    try:
        fn()
    except Exception as err:  # noqa: BLE001 - every upstream exception class is wanted here
        return err
    raise AssertionError("the call did not raise")


def pasted_text(err: BaseException) -> str:
    """What a user pastes: `Class: message`, or the whole traceback when the message is empty."""
    import traceback

    if str(err):
        return f"{type(err).__name__}: {err}"
    return "".join(traceback.format_exception(err))


def explain_first(text: str) -> dict:
    """The first `errkit explain --json` result for `text`; fails unless it is an exact match."""
    import io
    import json

    from errkit.explain import command

    out = io.StringIO()
    rc = command.run([text], as_json=True, show_all=False, out=out, err=io.StringIO())
    results = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
    assert rc == 0 and results, f"no exact match for {text!r}"
    return results[0]


def adversarial_lines(wording, size):
    """Lines built from the wording's own literals and separators, meant to make a backtracking
    engine try every split: literal runs repeated without values, with half values, reordered."""
    runs = [r for r in wording.template.literals if r.strip()] or ["x"]
    pieces = [
        "".join(runs),
        "".join(r + "0, " for r in runs),
        "".join(reversed(runs)) + " ",
        runs[0] + "(" + "1, " * 8,
        " ".join(r.split()[0] for r in runs) + "='",
    ]
    for piece in pieces:
        yield (piece * (size // max(len(piece), 1) + 1))[:size]


def kernel_equations(jaxpr, skip=lambda name: False):
    """Every equation inside the pallas_call kernels of a closed jaxpr, but those of the kernels
    whose name ``skip`` is true of (the Mosaic TPU path's kernels end in ``_tpu``)."""
    found = []

    def walk(jaxpr, in_kernel):
        for eqn in jaxpr.eqns:
            if in_kernel:
                found.append(eqn)
            is_call = eqn.primitive.name == "pallas_call"
            if is_call and skip(str(eqn.params.get("name", ""))):
                continue
            inner = in_kernel or is_call
            for param in eqn.params.values():
                for sub in param if isinstance(param, (tuple, list)) else (param,):
                    sub = getattr(sub, "jaxpr", sub)
                    if hasattr(sub, "eqns"):
                        walk(sub, inner)
    walk(jaxpr.jaxpr, False)
    return found


def pairwise(*axes) -> list[tuple]:
    """Cases in which every value of each axis meets every value of each other axis at least once
    (a covering array of strength 2): greedily, the case of the full product that covers the most
    pairs not yet covered, the earliest on a tie, so the list is the same on every run. The full
    product of n axes of k values each is k**n cases; this is about k**2."""
    def pairs(case):
        return {(i, case[i], j, case[j]) for i, j in itertools.combinations(range(len(case)), 2)}

    product = list(itertools.product(*axes))
    todo = set().union(*map(pairs, product))
    cases = []
    while todo:
        best = max(product, key=lambda case: len(pairs(case) & todo))
        cases.append(best)
        todo -= pairs(best)
    return cases

"""tokamax's attention ops: every raise site with a message is catalogued, in its releases.

`catalog/harvest/tokamax.json` (`python scripts/harvest.py --dist tokamax`) holds every raise site
errkit's scan finds in tokamax/_src/ops/attention/*.py (its tests and test helpers left out) and
tokamax/_src/ops/op.py (the Op base class every implementation runs through) of
every tokamax release the package index serves, 0.0.1 to 0.0.17. Here, with no network and no
tokamax installed: each harvested wording, rendered with sample values, is recognised exactly by a
wording of catalog/tokamax/ (or of the entry named in SHARED) with every value read back; each
tokamax wording's `releases` range holds exactly the harvested releases whose sites it is matched
by. The newest release this Python parses (its wheel, downloaded once and never imported) and the
installed tokamax, where there is one, scan to exactly the harvest of their release.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest

from errkit.catalogue import releases
from errkit.explain.matching.blocks import scan
from errkit.explain.matching.index import Index
from errkit.explain.matching.line import match_line
from errkit.scan import Coverage
from errkit.scan.coverage import renderings
from errkit.scan.sites import RawSite, Site, assign_params
from support import CATALOG, ROOT

HARVEST = CATALOG / "harvest" / "tokamax.json"
DATA = json.loads(HARVEST.read_text(encoding="utf-8"))
RELEASES: list[str] = DATA["releases"]
AREA = CATALOG / "tokamax"

# Harvested templates held by an entry outside catalog/tokamax/: tokamax raises the very text of
# another kernel's wording (one entry per text; `overlapping-wording` forbids a second).
SHARED = {
    "{num_q_heads=} must be divisible by {num_kv_heads=}": ("RA105", "the GQA head-count text of this project's kernel and jax's ragged paged kernel"),
    "{num_q_heads=} must be divisible by and {num_kv_heads=}": ("RA105", "the same typo as x-algorithm's FA3 kernel, which RA105 holds"),
    "q, k, and v should all have the same dtype, got: {q.dtype}, {k.dtype}, {v.dtype}": ("RA104", "x-algorithm's FA3 wording, held by RA104"),
    "Only f16 and bf16 are supported, got dtype: {dtype}": ("RA106", "x-algorithm's FA3 wording, held by RA106"),
    "Only f16 and bf16 are supported, got dtype: {q.dtype}": ("RA106", "the same text (tokamax 0.0.1-0.0.3 printed q.dtype)"),
    # tokamax 0.0.1-0.0.8's Mosaic GPU kernel came from jax's attention_mgpu.py, with its texts
    **{t: ("RA231", "jax's attention_mgpu.py text, held by RA231") for t in (
        "{kv_seq_len=} must be a multiple of {block_kv=}", "{kv_seq_len=} must be a multiple of {config.block_kv_dkv=} * {compute_wgs=}",
        "{kv_seq_len=} must be a multiple of {config.block_kv_dq=}")},
    **{t: ("RA230", "jax's attention_mgpu.py text, held by RA230") for t in (
        "{q_seq_len=} must be a multiple of {block_q * 2=}", "{q_seq_len=} must be a multiple of {config.block_q_dkv=}",
        "{q_seq_len=} must be a multiple of {config.block_q_dq=} * {compute_wgs=}")},
}
# Harvested templates no wording can stand for, each with why. Held to set equality below: this
# list may only shrink.
EXEMPT = {
    "{msg('f16 and bf16')}": "the whole message is a lambda's result; RA928's wordings 'Only f16 and bf16 supported for {precision=}, got {x.dtype=}' "
                             "and 'Only {supported} supported for ...' are the texts msg() prints (checked in test_msg_texts_are_recognised)",
    "{msg(precision.supported_lhs_types)}": "the same lambda (RA928)",
    "TODO": "tokamax 0.0.17's placeholder NotImplementedError('TODO') in the new triton module: a wording 'TODO' would claim any such text",
}


def site_of(template: str, site: dict) -> Site:
    """The harvested site as errkit's scan sees it (params typed from the template)."""
    raw = RawSite(site["exception"], site["at"][-1][2], site["function"], template, {}, None)
    out = Site(site["path"], "/harvest/" + site["path"], raw, site["exception"], False)
    assign_params(out)
    return out


def raising(site: dict) -> list[str]:
    order = {r: i for i, r in enumerate(RELEASES)}
    out = set()
    for first, last, _ in site["at"]:
        out.update(RELEASES[order[first]:order[last] + 1])
    return [r for r in RELEASES if r in out]


CASES = [(t, s) for t, sites in DATA["wordings"].items() if t for s in sites]


@functools.lru_cache(maxsize=1)
def index() -> Index:
    return Index.load(str(ROOT / "errkit" / "_index.json"))


@functools.lru_cache(maxsize=1)
def tokamax_codes() -> set[str]:
    return {re.match(r"[A-Z]+[0-9]+", p.name).group(0) for p in AREA.glob("*.yaml")}


def found_for(template: str, site: dict):
    """(code, the matched wording, its values) for each sample rendering of the site, under a
    traceback whose last frame is the site."""
    s = site_of(template, site)
    frame = f'  File "/venv/lib/python3.12/site-packages/{site["path"]}", line {site["at"][-1][2]}, in {s.bare_function}'

    def read(text):
        found = next(iter(scan(index(), f"Traceback (most recent call last):\n{frame}\n    raise\n{site['exception']}: {text}\n")), None)
        return found if found is not None and found.exact and re.fullmatch(found.wording["regex"], text) else None

    out = [(text, read(text)) for text in renderings(s)]
    if out and all(found is None for _, found in out):  # as coverage does: the candidates' types when the guessed ones find nothing
        out = [(text, read(text)) for text in Coverage(index()).typed_renderings(s, [t for t, _ in out])] or out
    return out


@functools.lru_cache(maxsize=1)
def outcomes() -> dict[int, list]:
    return {n: found_for(*CASES[n]) for n in range(len(CASES))}


def test_the_harvest_holds_every_release_to_0_0_17():
    from packaging.version import Version

    assert DATA["dist"] == "tokamax" and RELEASES == sorted(RELEASES, key=Version)
    assert {"0.0.12", "0.0.13", "0.0.17"} <= set(RELEASES) and RELEASES[0] == "0.0.1"
    files = {s["path"] for sites in DATA["wordings"].values() for s in sites}
    assert {"tokamax/_src/ops/attention/api.py", "tokamax/_src/ops/op.py"} <= files and not any(f.endswith("_test.py") for f in files)
    assert len(CASES) > 150 and len(DATA["wordings"]) > 90
    scope = re.compile(DATA["scope"][0])  # the ops' modules, not their tests or test helpers
    assert scope.fullmatch("tokamax/_src/ops/attention/api.py") and scope.fullmatch("tokamax/_src/ops/attention/pallas_mosaic_gpu_vjp.py")
    assert not any(scope.fullmatch(f"tokamax/_src/ops/attention/{name}") for name in ("api_test.py", "test_base.py", "x/api.py"))


def test_every_harvested_tokamax_wording_is_catalogued_exactly():
    wrong, uncatalogued = [], set()
    for n, (template, site) in enumerate(CASES):
        results = outcomes()[n]
        if not results or any(found is None for _, found in results):
            uncatalogued.add(template)
            continue
        want = {SHARED[template][0]} if template in SHARED else tokamax_codes()
        for text, found in results:
            if found.code not in want:
                wrong.append(f"{site['path']} {site['function']}: {text!r} is read as {found.code}, want one of {sorted(want)}")
            lost = [v for v in map(str, found.params.values()) if v not in text]
            if lost:
                wrong.append(f"{text!r}: {found.code} reads {lost} not in the text")
    gaps = sorted(uncatalogued - EXEMPT.keys())
    assert not gaps, "uncatalogued tokamax wordings:\n" + "\n".join(gaps)
    stale = sorted(EXEMPT.keys() - uncatalogued)
    assert not stale, f"remove {stale} from EXEMPT: catalogued now, or no longer harvested"
    assert not wrong, "\n".join(wrong)
    assert not SHARED.keys() - DATA["wordings"].keys(), "a SHARED template is no longer harvested"


def test_each_tokamax_range_covers_exactly_the_releases_raising_its_wordings():
    raised_by: dict[tuple[str, int], set[str]] = {}
    for n, (template, site) in enumerate(CASES):
        for _, found in outcomes()[n]:
            if found is not None:
                raised_by.setdefault((found.code, found.wording["variant"]), set()).update(raising(site))
    wrong = []
    for w in index().wordings:
        record = w.get("releases")
        if w["code"] not in tokamax_codes():
            continue
        assert record and record["dist"] == "tokamax", f"{w['code']} wording {w['variant']}: every tokamax wording names its releases"
        inside = {r for r in RELEASES if releases.contains(record["bounds"], releases.release_tuple(r))}
        got = raised_by.get((w["code"], w["variant"]), set())
        if " supported for precision={precision}, got " in w["template"]:  # RA928's two texts of msg(): both exempt templates' releases
            got = {r for t in EXEMPT if t.startswith("{msg(") for s in DATA["wordings"][t] for r in raising(s)}
        if inside != got:
            want = "tokamax" + releases.specifier_for(sorted(got, key=RELEASES.index), RELEASES) if got else "(no harvested site: drop it)"
            wrong.append(f"{w['code']} wording {w['variant']} ({w['template']!r}): {record['specifier']!r}, want {want}")
    assert not wrong, "\n".join(wrong)


NEWEST_FOR_3_11 = "0.0.12"


def _newest_wheel() -> Path:
    """The newest harvested release's wheel (that this Python can parse), unpacked under ~/.cache/errkit-tests (ERRKIT_TEST_CACHE)
    once: its sources are only scanned, never imported, so none of tokamax's dependencies is needed.
    Without network it skips, except under CI (CI set), where it fails."""
    import os
    import subprocess
    import sys
    import zipfile

    # 0.0.13 and later are written for Python 3.12 (PEP 695 syntax): scanned where this Python reads them
    version = RELEASES[-1] if sys.version_info >= (3, 12) else NEWEST_FOR_3_11
    cache = Path(os.environ.get("ERRKIT_TEST_CACHE") or Path.home() / ".cache" / "errkit-tests")
    folder = cache / f"tokamax-{version}"
    if not (folder / "tokamax").is_dir():
        wheels = cache / f"tokamax-{version}-wheel"
        got = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                              "--python-version", f"{sys.version_info[0]}.{sys.version_info[1]}", "-d", str(wheels), f"tokamax=={version}"],
                             capture_output=True, text=True, timeout=300)
        found = sorted(wheels.glob("tokamax-*.whl")) if got.returncode == 0 else []
        if not found:
            message = f"tokamax {version}'s wheel could not be downloaded: {got.stderr.strip()[-300:]}"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
        partial = folder.with_name(folder.name + ".partial")
        with zipfile.ZipFile(found[0]) as wheel:
            wheel.extractall(partial)
        partial.rename(folder)
    return folder


def _installed() -> Path:
    tokamax = pytest.importorskip("tokamax")
    version = getattr(tokamax, "__version__", None)
    if version not in RELEASES:
        pytest.skip(f"tokamax {version} is not harvested")
    return Path(tokamax.__file__).parent.parent  # site-packages: paths below it read as the harvest's


def _version_at(package: Path) -> str:
    """The release whose files lie at `package`, from its dist-info folder's name."""
    (dist,) = package.glob("tokamax-*.dist-info")
    return dist.name[len("tokamax-"):-len(".dist-info")]


@pytest.mark.parametrize("where", ["newest wheel", "installed"])
def test_tokamax_scans_as_harvested(where):
    """The newest release's sources (from its wheel) and the installed tokamax's, where there is one,
    scan to exactly the harvest's sites of their release, every one catalogued."""
    from errkit import scan

    package = _newest_wheel() if where == "newest wheel" else _installed()
    version = _version_at(package)
    assert version in RELEASES, version
    scopes = [re.compile(p) for p in DATA["scope"]]
    files = [p for p in sorted((package / "tokamax" / "_src" / "ops").rglob("*.py"))
             if any(sc.fullmatch(p.relative_to(package).as_posix()) for sc in scopes)]
    result = scan.scan_paths([str(p) for p in files], report=lambda line: None)
    assert not result.problems and len(files) > 15
    scanned = {(Path(s.abspath).relative_to(package).as_posix(), s.function, s.template) for s in result.sites}
    harvested = {(s["path"], s["function"], t) for t, sites in DATA["wordings"].items() if t
                 for s in sites if version in raising(s)}
    assert scanned == harvested
    coverage = Coverage(index())
    missing = [f"{s.path}:{s.line}: {s.template}" for s in result.sites if s.template not in EXEMPT and coverage.covered_by(s) is None]
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("text, values", [
    # what msg() prints (tokamax's f-string run with jax 0.10.2's DotAlgorithmPreset and a float32 input)
    ("Only f16 and bf16 supported for precision=DotAlgorithmPreset.DEFAULT, got x.dtype=dtype('float32')",
     {"precision": "DotAlgorithmPreset.DEFAULT", "dtype": "float32"}),
    ("Only (<class 'numpy.float32'>,) supported for precision=DotAlgorithmPreset.F32_F32_F32, got x.dtype=dtype('bfloat16')",
     {"supported": "(<class 'numpy.float32'>,)", "precision": "DotAlgorithmPreset.F32_F32_F32", "dtype": "bfloat16"}),
])
def test_msg_texts_are_recognised(text, values):
    found = match_line(index(), f"NotImplementedError: {text}")
    assert found is not None and found.exact and found.code == "RA928", found and (found.code, found.exact)
    assert {k: str(v) for k, v in found.params.items() if v is not None} == values

"""Catalogues registered by installed packages (entry-point group `errkit.catalogues`), merged with
the current project's and `--catalog`'s; the discovery cache. Real entry points: a dist-info folder
with an entry_points.txt on PYTHONPATH, read by importlib.metadata in a child `python -m errkit`."""

import json
import marshal
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
from support import FIXTURES, ROOT

SMALL = FIXTURES / "kernels"  # XX101-XX103, project "fixture"
XX102 = "ValueError: length 100 is not a multiple of the block 64"  # only the fixture's XX102 matches it exactly
RA105 = "num_q_heads=12 must be divisible by and num_kv_heads=8"


def errkit(*args, cwd, env=None, timeout=300):
    proc = subprocess.run([sys.executable, "-m", "errkit", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def compiled(catalog=SMALL, project=None) -> dict:
    from errkit.explain.registry import catalog_index
    from errkit.generate.index import compiled_index

    data = catalog_index(catalog, compiled_index)
    if project:
        data["project"] = project
    return data


def install(site, dist: str, package: str, index: dict, name: str | None = None) -> None:
    """A package `package` shipping `index` as _index.json and registering it, as pip would leave it."""
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text("raise ImportError('errkit must not import a catalogue package')\n")
    (site / package / "_index.json").write_text(json.dumps(index))
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"  # as pip names it
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[errkit.catalogues]\n{name or dist} = {package}:_index.json\n")


def _cached(path) -> dict:
    """A discovery cache file's content (framed: errkit/explain/cache.py)."""
    from errkit.explain import cache

    return marshal.loads(cache.unframed(path.read_bytes()))


@pytest.fixture
def env(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    return dict(os.environ, PYTHONPATH=str(site), ERRKIT_CACHE_DIR=str(tmp_path / "cache")), site


def test_a_registered_catalogue_is_read_with_the_bundled_one(tmp_path, env):
    environ, site = env
    assert errkit("explain", XX102, cwd=tmp_path, env=environ)[0] == 1  # not installed yet: approximate at best
    install(site, "fixture-errors", "fixture_pkg", compiled())
    code, out, err = errkit("explain", "--json", XX102, cwd=tmp_path, env=environ)
    assert code == 0, err
    assert (json.loads(out)["code"], json.loads(out)["catalogue"]) == ("XX102", "fixture")
    code, out, err = errkit("explain", "--json", RA105, cwd=tmp_path, env=environ)
    assert json.loads(out)["catalogue"] == "errkit" and err == ""
    code, out, _ = errkit("list", cwd=tmp_path, env=environ)
    assert "XX102  " in out and "RA105  " in out


def test_discovery_is_cached_and_invalidated_when_packages_change(tmp_path, env):
    environ, site = env
    install(site, "fixture-errors", "fixture_pkg", compiled())
    assert errkit("explain", XX102, cwd=tmp_path, env=environ)[0] == 0
    cached = list((tmp_path / "cache").glob("catalogues-*"))
    assert len(cached) == 1
    (seen,) = _cached(cached[0])["seen"]
    assert ["fixture-errors", str(site / "fixture_pkg" / "_index.json")] in seen[1]
    # the cache answers: an entry point edited in place (no folder changes) is not read again
    points = site / "fixture_errors-1.0.dist-info" / "entry_points.txt"
    points.write_text(points.read_text().replace("fixture_pkg:_index.json", "fixture_pkg:elsewhere.json"))
    code, out, _ = errkit("explain", "--json", XX102, cwd=tmp_path, env=environ)
    assert code == 0
    # uninstalling changes the folder: the cache is stale and the catalogue is gone
    shutil.rmtree(site / "fixture_errors-1.0.dist-info")
    assert errkit("explain", XX102, cwd=tmp_path, env=environ)[0] == 1


def test_the_script_and_python_m_in_turn_each_read_the_cache(tmp_path, env):
    """`errkit` (its folder first on sys.path) and `python -m errkit` (the working directory first)
    have two fingerprints: one cache file keeps both, so neither reads the entry points again."""
    environ, site = env
    install(site, "fixture-errors", "fixture_pkg", compiled())
    script = [str(ROOT / "errkit" / "__main__.py")]  # run as a script: its folder first on sys.path
    for run in ([], script, [], script):
        proc = subprocess.run([sys.executable, *(run or ["-m", "errkit"]), "explain", XX102], cwd=tmp_path,
                              env=environ, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    (cached,) = (tmp_path / "cache").glob("catalogues-*")
    seen = _cached(cached)["seen"]
    assert len(seen) == 2 and seen[0][0] != seen[1][0]
    written = cached.stat().st_mtime_ns
    for run in ([], script):
        subprocess.run([sys.executable, *(run or ["-m", "errkit"]), "explain", XX102], cwd=tmp_path, env=environ,
                       capture_output=True, timeout=300, check=True)
    assert cached.stat().st_mtime_ns == written  # answered from the cache: not written again


def test_a_corrupt_cache_is_read_again(tmp_path, env):
    environ, site = env
    install(site, "fixture-errors", "fixture_pkg", compiled())
    assert errkit("explain", XX102, cwd=tmp_path, env=environ)[0] == 0
    (cached,) = (tmp_path / "cache").glob("catalogues-*")
    for garbage in ('{"format": 1, "fingerprint": ', "[1, 2]", '{"format": 1, "fingerprint": 3, "catalogues": 4}'):
        cached.write_text(garbage)
        code, _, err = errkit("explain", XX102, cwd=tmp_path, env=environ)
        assert (code, err) == (0, "")
    assert _cached(cached)["seen"][0][1]  # rewritten


def test_an_unwritable_cache_folder_is_no_error(tmp_path, env):
    environ, site = env
    install(site, "fixture-errors", "fixture_pkg", compiled())
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    environ["ERRKIT_CACHE_DIR"] = str(blocker / "cache")
    code, out, err = errkit("explain", XX102, cwd=tmp_path, env=environ)
    assert (code, err) == (0, "") and out.startswith("XX102")


def test_clashing_codes_are_reported_once_and_the_first_wins(tmp_path, env):
    environ, site = env
    first = compiled(project="alpha")
    second = compiled(project="beta")
    for entry in second["entries"].values():
        entry["title"] = "beta's title"
    install(site, "b-errors", "b_pkg", second)  # registered names decide the order, not install order
    install(site, "a-errors", "a_pkg", first)
    code, out, err = errkit("show", "XX101", cwd=tmp_path, env=environ)
    assert code == 0
    assert err.splitlines() == [f"errkit: code {c} is in both catalogues alpha and beta; using alpha"
                                for c in ("XX101", "XX102", "XX103")]
    assert "beta's title" not in out and out.rstrip().endswith("catalogue: alpha")


def test_the_same_catalogue_twice_is_read_once(tmp_path, env):
    """This repository's index (its [tool.errkit] index) and an installed copy of it: no clash, the
    project's copy answers (generate's edits show at once)."""
    environ, site = env
    data = json.loads((ROOT / "errkit" / "_index.json").read_text(encoding="utf-8"))
    json.loads(data["entries"]["RA105"])
    data["entries"]["RA105"] = json.dumps({**json.loads(data["entries"]["RA105"]), "title": "an old installed copy"})
    install(site, "errkit-copy", "copy_pkg", data)
    code, out, err = errkit("show", "RA105", cwd=ROOT, env=environ)
    assert (code, err) == (0, "")
    assert "an old installed copy" not in out


def test_scan_with_catalog_audits_that_catalogue_only(tmp_path, env):
    environ, _ = env
    code_dir = tmp_path / "src"
    code_dir.mkdir()
    (code_dir / "mod.py").write_text(textwrap.dedent('''
        def f(a, b):
            if a % b:
                raise ValueError(f"num_q_heads={a} must be divisible by and num_kv_heads={b}")
    '''))
    code, out, err = errkit("scan", "--fail-on-uncatalogued", code_dir, cwd=tmp_path, env=environ)
    assert code == 0 and "RA105" in out, err
    code, out, err = errkit("scan", "--json", code_dir, cwd=tmp_path, env=environ)
    assert (json.loads(out)["covered_by"], json.loads(out)["catalogue"]) == ("RA105", "errkit")
    code, out, err = errkit("scan", "--catalog", SMALL, "--fail-on-uncatalogued", code_dir, cwd=tmp_path, env=environ)
    assert code == 1 and "RA105" not in out and "1 uncatalogued" in err


def test_catalog_with_lint_errors_is_refused(tmp_path, env):
    environ, _ = env
    catalog = tmp_path / "catalog"
    shutil.copytree(SMALL, catalog)
    bad = catalog / "area" / "XX101-block.yaml"
    bad.write_text(bad.read_text().replace('message: "n={n} should', 'message: "n={m} should'))
    code, out, err = errkit("--catalog", catalog, "explain", XX102, cwd=tmp_path, env=environ)
    assert code == 1 and out == ""
    assert "XX101-block.yaml" in err and "lint error" in err


def test_catalog_uses_its_compiled_index_while_it_is_up_to_date(tmp_path, env):
    environ, _ = env
    project = tmp_path / "project"
    shutil.copytree(SMALL, project / "errs")
    (project / "pyproject.toml").write_text('[tool.errkit]\ncatalog = "errs"\nindex = "pkg/_index.json"\n')
    (project / "pkg").mkdir()
    data = compiled(project / "errs")
    data["entries"]["XX101"]["title"] = "title of the compiled index"
    (project / "pkg" / "_index.json").write_text(json.dumps(data))
    code, out, err = errkit("show", "XX101", "--catalog", project / "errs", cwd=tmp_path, env=environ)
    assert code == 0, err
    assert "title of the compiled index" in out
    later = time.time() + 10
    entry = project / "errs" / "area" / "XX102-shared.yaml"
    os.utime(entry, (later, later))  # an edit after the index was compiled: it is stale
    code, out, err = errkit("show", "XX101", "--catalog", project / "errs", cwd=tmp_path, env=environ)
    assert code == 0, err
    assert "title of the compiled index" not in out and "Block does not divide the length" in out


def test_the_parsed_index_cache_follows_the_index_files(tmp_path, env):
    environ, site = env
    data = compiled()
    install(site, "fixture-errors", "fixture_pkg", data)
    code, out, _ = errkit("show", "XX102", cwd=tmp_path, env=environ)
    assert code == 0 and "A wording two kernels raise" in out
    (cached,) = (tmp_path / "cache").glob("index-*")
    # a new compiled index (errkit generate, an upgrade): read at once, not the cached one
    data["entries"]["XX102"]["title"] = "a regenerated title"
    (site / "fixture_pkg" / "_index.json").write_text(json.dumps(data))
    code, out, _ = errkit("show", "XX102", cwd=tmp_path, env=environ)
    assert code == 0 and "a regenerated title" in out
    for garbage in (b"", b"\x00garbage", cached.read_bytes()[:100]):
        cached.write_bytes(garbage)
        code, out, err = errkit("show", "XX102", cwd=tmp_path, env=environ)
        assert (code, err) == (0, "") and "a regenerated title" in out


# -- installed catalogues are untrusted input: one that is broken or hostile costs a warning -------


def _hostile(index: dict, project: str, edit) -> dict:
    """A copy of `index` under another project name, with `edit(copy)` applied to it."""
    data = json.loads(json.dumps(index))
    data["project"] = project
    edit(data)
    return data


def _entry(data: dict, code: str) -> dict:
    entry = data["entries"][code]
    return json.loads(entry) if isinstance(entry, str) else entry


def _suggest(source: str):
    def edit(data):
        entry = _entry(data, "XX102")
        entry["fixes"][0]["suggest"]["padded length"] = source
        data["entries"]["XX102"] = entry
    return edit


def _first_wording(**changes):
    def edit(data):
        data["wordings"][0].update(changes)
    return edit


def _set(path, value):
    def edit(data):
        *where, last = path
        target = data
        for key in where:
            target = target[key] if not isinstance(target[key], str) else json.loads(target[key])
        target[last] = value
    return edit


def _entry_title(value):
    def edit(data):
        entry = _entry(data, "XX101")
        entry["title"] = value
        data["entries"]["XX101"] = entry
    return edit


UNUSABLE = {  # package -> (what is wrong with its index, in the warning)
    "nested_power": (_suggest("((n ** 64) ** 64) ** 64"), "a power of a power (its exponents multiply to 4096"),
    "bare_helper": (_suggest("divisors"), "the helper 'divisors' named without calling it"),
    "dunder": (_suggest("__import__('os').system('true')"), "call of \"__import__('os').system\""),
    # RE2 takes 0.8 s to compile this one and 3 s to search a 16 KB line with it
    "slow_regex": (_first_wording(regex="(?P<g0>1)(?P<g1>2)" + ".{0,1000}" * 16), "a regex that does not compile (pattern too large"),
    "big_regex": (_first_wording(regex="(?P<g0>1)(?P<g1>2)" + ".{0,100}" * 10), "a regex of 9010 RE2 instructions, over 5000"),
    "bad_regex": (_first_wording(regex="(?P<g0>[0-9]+)(?P<g1>[0-9]+"), "a regex that does not compile (missing ): (?P<g0>"),
    "no_group": (_first_wording(regex="length [0-9]+"), "no group 'g0' in its regex"),
    "capture_type": (_first_wording(captures=[["g0", "n", "complex"], ["g1", "block", "int"]]), "other than [group, param, type]"),
    "wrong_type": (_entry_title(7), "entry 'XX101': 'title' is of type int"),
    "wrong_shape": (_set(("wordings",), {"a": 1}), "the index: 'wordings' is of type dict"),
    "stray_code": (_first_wording(code="ZZ999"), "code 'ZZ999' is no entry of the index"),
    "old_format": (_set(("format",), 1), "index format 1; this errkit reads format 2"),
}


def test_unusable_installed_catalogues_are_skipped_with_one_warning_each(tmp_path, env):
    """Malformed, huge and hostile indexes, each in a package of its own, beside a good one: one
    line on stderr for each, naming its entry point and file, and explain answers from the good
    one, within seconds; the next start (from the cache) warns the same and answers the same."""
    environ, site = env
    good = compiled()
    install(site, "fixture-errors", "fixture_pkg", good)
    for package, (edit, _) in UNUSABLE.items():
        install(site, f"{package}-errors", package, _hostile(good, package, edit))
    install(site, "not_json-errors", "not_json", {})
    (site / "not_json" / "_index.json").write_text('{"project": "not_json", "entries": {')
    install(site, "huge-errors", "huge", {})
    with open(site / "huge" / "_index.json", "r+b") as handle:
        handle.truncate((64 << 20) + 1)  # sparse: over the limit at once, read never
    expected = {**{p: why for p, (_, why) in UNUSABLE.items()},
                "not_json": "not JSON", "huge": "67108865 bytes, over the 64 MB an index may have"}
    for run in ("first", "cached"):
        started = time.monotonic()
        code, out, err = errkit("explain", "--json", XX102, cwd=tmp_path, env=environ, timeout=60)  # a hang fails
        assert time.monotonic() - started < 20, run
        assert code == 0 and json.loads(out)["catalogue"] == "fixture", err
        lines = err.splitlines()
        assert len(lines) == len(expected), err
        for package, why in expected.items():
            (line,) = [line for line in lines if f"registered as '{package}-errors'" in line]
            assert line.startswith("errkit: skipped the catalogue ") and why in line, line
            assert str(site / package / "_index.json") in line
        assert "Traceback" not in err


def test_a_suggestion_over_a_bound_in_an_installed_catalogue_is_not_computed(tmp_path, env):
    """It vets, and only these values make it costly: explain answers, saying so, in a few seconds."""
    environ, site = env
    install(site, "fixture-errors", "fixture_pkg",
            _hostile(compiled(), "fixture", _suggest("[divisors(n * 10**16) for d in divisors(n * 10**16)]")))
    started = time.monotonic()
    code, out, err = errkit("explain", XX102, cwd=tmp_path, env=environ, timeout=60)  # a hang fails
    assert code == 0 and err == "", err
    assert "padded length: not computed: more than 2000000 steps" in out
    code, out, err = errkit("explain", "--json", XX102, cwd=tmp_path, env=environ, timeout=60)
    (suggestion,) = json.loads(out)["fixes"][0]["suggestions"]
    assert suggestion["label"] == "padded length" and suggestion["not_computed"] == "more than 2000000 steps"
    # each kernel that may have raised it (issue 47's raised_by cases) is refused the same way
    assert all(case["not_computed"] == "more than 2000000 steps" for case in suggestion.get("cases", []))
    assert time.monotonic() - started < 20


def test_the_only_catalogue_unusable_is_a_usage_error(tmp_path, env):
    environ, _ = env
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.errkit]\nindex = "pkg/_index.json"\n')
    (project / "pkg" / "_index.json").write_text(json.dumps(_hostile(compiled(), "fixture", _suggest("divisors"))))
    from errkit.explain import registry
    from errkit.core import UsageError

    with pytest.raises(UsageError, match="skipped the catalogue .*_index.json: entry 'XX102' fix 1 suggestion 'padded length'"):
        registry.merged([registry.Source("fixture", str(project / "pkg" / "_index.json"))])


def test_a_distribution_with_malformed_entry_points_is_skipped_with_one_warning(tmp_path, env):
    """A malformed entry_points.txt in any installed distribution made every `explain` and `list`
    exit 70 (importlib.metadata's TypeError): that distribution is skipped, the others are read."""
    environ, site = env
    install(site, "fixture-errors", "fixture_pkg", compiled())
    broken = site / "broken-1.0.dist-info"
    broken.mkdir()
    (broken / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n")
    (broken / "entry_points.txt").write_text("[errkit.catalogues]\na line without its value\n")
    code, out, err = errkit("explain", XX102, cwd=tmp_path, env=environ)
    assert code == 0 and "XX102" in out, err
    assert err.count("errkit: skipped the entry points of") == 1 and "broken-1.0.dist-info" in err, err
    code, out, err = errkit("list", cwd=tmp_path, env=environ)
    assert code == 0 and "XX101" in out and "RA105" in out, err

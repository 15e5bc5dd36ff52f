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


def errkit(*args, cwd, env=None):
    proc = subprocess.run([sys.executable, "-m", "errkit", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def compiled(catalog=SMALL, project=None) -> dict:
    from errkit.explain.registry import catalog_index
    from errkit.generate import compiled_index

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
    assert ["fixture-errors", str(site / "fixture_pkg" / "_index.json")] in marshal.loads(cached[0].read_bytes())["catalogues"]
    # the cache answers: an entry point edited in place (no folder changes) is not read again
    points = site / "fixture_errors-1.0.dist-info" / "entry_points.txt"
    points.write_text(points.read_text().replace("fixture_pkg:_index.json", "fixture_pkg:elsewhere.json"))
    code, out, _ = errkit("explain", "--json", XX102, cwd=tmp_path, env=environ)
    assert code == 0
    # uninstalling changes the folder: the cache is stale and the catalogue is gone
    shutil.rmtree(site / "fixture_errors-1.0.dist-info")
    assert errkit("explain", XX102, cwd=tmp_path, env=environ)[0] == 1


def test_a_corrupt_cache_is_read_again(tmp_path, env):
    environ, site = env
    install(site, "fixture-errors", "fixture_pkg", compiled())
    assert errkit("explain", XX102, cwd=tmp_path, env=environ)[0] == 0
    (cached,) = (tmp_path / "cache").glob("catalogues-*")
    for garbage in ('{"format": 1, "fingerprint": ', "[1, 2]", '{"format": 1, "fingerprint": 3, "catalogues": 4}'):
        cached.write_text(garbage)
        code, _, err = errkit("explain", XX102, cwd=tmp_path, env=environ)
        assert (code, err) == (0, "")
    assert marshal.loads(cached.read_bytes())["catalogues"]  # rewritten


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

"""The command line as users run it: `python -m errkit ...` in a child process, real files."""

import json
import os
import pty
import shutil
import subprocess
import sys
from importlib.metadata import version

import pytest
from support import FIXTURES, ROOT

SMALL = FIXTURES / "kernels"  # a small catalogue: XX101-XX103, project "fixture"
RA105 = "num_q_heads=12 must be divisible by and num_kv_heads=8"


def errkit(*args, cwd=ROOT, env=None, cache=None, stdout=subprocess.PIPE):
    environment = dict(os.environ, **(env or {}))
    if cache is not None:
        environment["ERRKIT_CACHE_DIR"] = str(cache)
    proc = subprocess.run([sys.executable, "-m", "errkit", *map(str, args)], cwd=cwd, env=environment,
                          stdout=stdout, stderr=subprocess.PIPE, timeout=300)
    out = proc.stdout.decode("utf-8") if proc.stdout is not None else ""
    return proc.returncode, out, proc.stderr.decode("utf-8")


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


def test_catalog_is_accepted_after_the_command(cache):
    before = errkit("--catalog", SMALL, "list", cache=cache)
    after = errkit("list", "--catalog", SMALL, cache=cache)
    assert before[0] == after[0] == 0, (before[2], after[2])
    assert before[1] == after[1]
    assert after[1].startswith("XX101  ") and "(fixture)" in after[1].splitlines()[0]
    code, out, _ = errkit("show", "XX102", "--catalog", SMALL, cache=cache)
    assert code == 0 and out.startswith("XX102")


def test_catalog_means_that_catalogue_alone_in_every_command(cache):
    """`--catalog DIR` reads that catalogue and nothing else: list, show and explain as scan and lint."""
    code, out, _ = errkit("--catalog", SMALL, "list", cache=cache)
    assert code == 0 and {line.split()[0][:2] for line in out.splitlines()} == {"XX"}, out
    assert errkit("--catalog", SMALL, "show", "RA105", cache=cache)[0] == 2
    code, out, err = errkit("--catalog", SMALL, "explain", "--json", RA105, cache=cache)
    assert (code, out) == (1, "") and "no catalogued error found" in err
    assert json.loads(errkit("explain", "--json", RA105, cache=cache)[1])["code"] == "RA105"  # without it: every catalogue


def test_version_and_python_m():
    code, out, err = errkit("--version")
    assert code == 0, err
    assert out.strip() == f"errkit {version('errkit')}"
    code, out, _ = errkit("--help")
    assert code == 0 and "explain" in out


def test_fmt_takes_a_folder(tmp_path):
    catalog = tmp_path / "catalog"
    shutil.copytree(SMALL, catalog)
    code, out, err = errkit("fmt", "--check", catalog)
    assert "directory" not in err
    would = sorted(line.removeprefix("would reformat ") for line in out.splitlines())
    assert would == sorted(str(p) for p in catalog.glob("area/*.yaml")), (out, err)
    assert code == 1
    code, out, err = errkit("fmt", catalog)
    assert code == 0, err
    assert errkit("fmt", "--check", catalog)[0] == 0


def test_lint_takes_files_within_their_catalogue(tmp_path):
    catalog = tmp_path / "catalog"
    shutil.copytree(SMALL, catalog)
    good = catalog / "area" / "XX102-shared.yaml"
    bad = catalog / "area" / "XX101-block.yaml"
    bad.write_text(bad.read_text().replace('message: "n={n} should', 'message: "n={m} should'))
    code, out, err = errkit("lint", good, cwd=tmp_path)
    assert code == 0, out + err
    assert "1 entries" not in err and "3 entries" in err  # linted within its catalogue (kernels known)
    code, out, err = errkit("lint", good, bad, cwd=tmp_path)
    assert code == 1
    lines = out.splitlines()
    assert lines and all(line.startswith("catalog/area/XX101-block.yaml:") for line in lines), out
    code, out, err = errkit("lint", tmp_path / "nope.yaml", cwd=tmp_path)
    assert code == 1 and "nope.yaml" in out


def test_lint_reports_a_yaml_file_at_the_top_level(tmp_path):
    catalog = tmp_path / "catalog"
    shutil.copytree(SMALL, catalog)
    assert errkit("lint", catalog)[0] == 0
    (catalog / "XX104-misplaced.yaml").write_text((catalog / "area" / "XX101-block.yaml").read_text())
    code, out, _ = errkit("lint", catalog, cwd=tmp_path)
    assert code == 1
    assert "catalog/XX104-misplaced.yaml:1:1: stray-file:" in out


def test_lint_json(tmp_path):
    catalog = tmp_path / "catalog"
    shutil.copytree(SMALL, catalog)
    (catalog / "stray.yaml").write_text("a: 1\n")
    bad = catalog / "area" / "XX101-block.yaml"
    bad.write_text(bad.read_text().replace('message: "n={n} should', 'message: "n={m} should'))
    code, out, _ = errkit("lint", "--json", catalog, cwd=tmp_path)
    assert code == 1
    found = [json.loads(line) for line in out.splitlines()]
    assert {f["rule"] for f in found} >= {"stray-file"} and len(found) >= 2
    for f in found:
        assert set(f) == {"path", "line", "col", "rule", "message", "severity"}
        assert isinstance(f["line"], int) and f["severity"] in ("error", "warning")
    assert {f["path"] for f in found} == {"catalog/stray.yaml", "catalog/area/XX101-block.yaml"}


def test_list_json(cache):
    code, out, _ = errkit("list", cache=cache)
    rows = out.splitlines()
    code_json, out_json, _ = errkit("list", "--json", cache=cache)
    assert code == code_json == 0
    found = [json.loads(line) for line in out_json.splitlines()]
    assert [f["code"] for f in found] == [row.split()[0] for row in rows]
    assert all(f["catalogue"] == "errkit" for f in found)
    assert {"code", "slug", "title", "area", "exception", "explain_only", "catalogue"} <= set(found[0])


@pytest.mark.parametrize("name", ["trace.txt", "logs/run", "out.LOG"])
def test_explain_of_a_missing_file(tmp_path, cache, name):
    code, out, err = errkit("explain", name, cwd=tmp_path, cache=cache)
    # the same message as for several paths (tests/explain/test_triage.py) and as site/docs/triage.md shows
    missing = f"errkit: no such file or folder: {name} (to explain it as text: --text, or pipe it to `errkit explain -`)\n"
    assert (code, out, err) == (2, "", missing)
    assert errkit("explain", name, "other.log", cwd=tmp_path, cache=cache)[2] == missing


def test_explain_of_an_unknown_code_answers_as_show(cache):
    shown = errkit("show", "RA999", cache=cache)
    explained = errkit("explain", "RA999", cache=cache)
    assert explained == shown
    assert shown[0] == 2 and "no entry with code" in shown[2]


def test_answers_name_their_catalogue(cache):
    code, out, _ = errkit("explain", RA105, cache=cache)
    assert code == 0 and out.rstrip().splitlines()[-1] == "  catalogue errkit"
    code, out, _ = errkit("explain", "--json", RA105, cache=cache)
    assert json.loads(out)["catalogue"] == "errkit"
    code, out, _ = errkit("show", "RA105", cache=cache)
    assert out.rstrip().splitlines()[-1] == "  catalogue: errkit"
    code, out, _ = errkit("show", "--json", "RA105", cache=cache)
    assert json.loads(out)["catalogue"] == "errkit"


def _on_a_terminal(env, cache):
    main, child = pty.openpty()
    try:
        code, _, err = errkit("explain", RA105, env=env, cache=cache, stdout=child)
        os.close(child)
        child = None
        out = b""
        while True:
            try:
                block = os.read(main, 65536)
            except OSError:  # the child side is closed: all read
                break
            if not block:
                break
            out += block
    finally:
        if child is not None:
            os.close(child)
        os.close(main)
    assert code == 0, err
    return out.decode("utf-8")


def test_an_empty_no_color_keeps_colour(cache):
    assert "\x1b[" in _on_a_terminal({"NO_COLOR": ""}, cache)
    assert "\x1b[" not in _on_a_terminal({"NO_COLOR": "1"}, cache)


def test_explain_reads_its_arguments_as_argparse_does(cache):
    """Plain explain arguments skip argparse (start-up time); an abbreviation (`--js`) goes
    through argparse: both must read the command line alike."""
    through_argparse = errkit("explain", "--js", RA105, cache=cache)
    assert through_argparse[0] == 0 and json.loads(through_argparse[1])["code"] == "RA105"
    for args in (("explain", "--json", RA105), ("explain", RA105, "--json"), ("explain", "--json", "--", RA105)):
        code, out, _ = errkit(*args, cache=cache)
        assert (code, json.loads(out)["code"]) == (0, "RA105"), args
    for args in (("--catalog", SMALL, "explain", "--json", "XX102"), ("explain", "--catalog", SMALL, "XX102", "--json")):
        code, out, _ = errkit(*args, cache=cache)
        assert (code, json.loads(out)["code"]) == (0, "XX102"), args
    assert errkit("explain", "--json", "XX102", cache=cache)[0] == 2  # no such entry in the bundled catalogue
    assert json.loads(errkit("explain", "--catalog", SMALL, "--json", "XX102", cache=cache)[1])["catalogue"] == "fixture"
    code, _, err = errkit("explain", "num_q_heads=12", "--json", "more", cache=cache)
    assert code == 2 and "unrecognized arguments" in err
    code, out, _ = errkit("explain", "--help", cache=cache)
    assert code == 0 and "--all" in out


def test_a_caller_of_main_gets_the_garbage_collector_back(capsys):
    """Explaining a paste pauses the collector (a short process's start); main() called with argv
    by another program (a notebook, a test) restores it, whatever the outcome."""
    import gc

    from errkit.cli import main

    assert gc.isenabled()
    assert main(["explain", "num_q_heads=12 must be divisible by and num_kv_heads=8"]) == 0
    assert gc.isenabled()
    assert main(["explain", "no catalogued error here"]) == 1
    assert gc.isenabled()
    capsys.readouterr()

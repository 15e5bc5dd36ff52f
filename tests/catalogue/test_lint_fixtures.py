"""`errkit lint`: the real catalogue is clean; each rule fires on its own small broken fixture."""

from pathlib import Path

import pytest

from support import CATALOG, FIXTURES

LINT_FIXTURES = sorted(p for p in (FIXTURES / "lint").iterdir() if p.is_dir())


def test_catalogue_lints_clean(run_cli):
    code, out, err = run_cli("lint", CATALOG)
    assert code == 0, out
    assert out == ""
    assert "no problems" in err


@pytest.mark.parametrize("fixture", LINT_FIXTURES, ids=lambda p: p.name)
def test_each_rule_reports_path_line_and_message(fixture: Path, run_cli):
    expected = (fixture / "expect.txt").read_text().strip()  # "file:line: rule"
    location, rule = expected.rsplit(": ", 1)
    code, out, err = run_cli("lint", ".", cwd=fixture)
    assert code == 1, out
    assert "Traceback" not in out + err
    hits = [line for line in out.splitlines() if line.startswith(location + ":") and f": {rule}: " in line]
    assert hits, f"expected {expected!r} in:\n{out}"
    message = hits[0].split(f": {rule}: ", 1)[1]
    assert len(message) > 10  # a real explanation, not just the rule name


def test_lint_reports_every_problem_at_once(tmp_path, run_cli):
    area = tmp_path / "area"
    area.mkdir()
    broken = (FIXTURES / "lint" / "undeclared-placeholder" / "area" / "XX101-first.yaml").read_text()
    broken = broken.replace("title: Heads do not divide", "titel: typo").replace("check: a % b == 0", "check: a.real")
    (area / "XX101-first.yaml").write_text(broken)
    code, out, _ = run_cli("lint", tmp_path)
    rules = {line.split(": ")[1] for line in out.splitlines()}
    assert code == 1
    assert {"unknown-key", "missing-field", "undeclared-placeholder", "forbidden-expression"} <= rules


def test_hostile_expressions_are_rejected_without_running(tmp_path, run_cli):
    marker = tmp_path / "pwned"
    area = tmp_path / "area"
    area.mkdir()
    base = (FIXTURES / "lint" / "undeclared-placeholder" / "area" / "XX101-first.yaml").read_text()
    base = base.replace('{c=}"', '{b=}"')
    hostile = [
        f"__import__('os').system('touch {marker}') == 0",
        "().__class__.__bases__[0].__subclasses__() == 0",
        "10**10**10 > a",
        "(lambda: a)() == 0",
        "[x for x in divisors(a) for y in divisors(x)] == 0",  # one level of comprehension only
        "'x' * 10**18 == a",
        "((a ** 64) ** 64) ** 64 > a",  # powers of powers: refused before anything runs
        "divisors == a",  # a helper named without calling it
        "min[0] > a",
    ]
    for i, source in enumerate(hostile):
        text = base.replace("code: XX101", f"code: XX{101 + i}").replace("slug: first", f"slug: s{i}")
        text = text.replace("must be divisible by", f"must be divisible {i} by")
        text = text.replace("check: a % b == 0", "check: " + repr(source).replace("\\'", "''"))
        (area / f"XX{101 + i}-s{i}.yaml").write_text(text)
    code, out, _ = run_cli("lint", tmp_path)
    assert code == 1
    assert not marker.exists()
    flagged = [line for line in out.splitlines() if "forbidden-expression" in line or "unknown-name" in line]
    assert len({line.split(":")[0] for line in flagged}) == len(hostile), out


@pytest.mark.parametrize("command", [["lint"], ["generate"], ["generate", "--check"], ["docs", "--check"], ["fmt", "--check"]])
def test_missing_folder_is_a_usage_error(run_cli, tmp_path, command):
    """One rule for every command that reads a catalogue: a missing folder is exit 2, one line."""
    code, out, err = run_cli(*command, "--catalog", tmp_path / "nope")
    assert code == 2, (out, err)
    assert err.strip().count("\n") == 0 and "nope: no such catalogue folder" in err, err
    assert not (tmp_path / "nope").exists()


def test_wordings_raised_in_different_files_may_overlap(tmp_path, run_cli):
    """Explain tells them apart by a traceback's last frame; in the same file (or with no raise
    site) they are an overlapping-wording finding."""
    source = FIXTURES / "lint" / "overlapping-wording" / "area"
    for name, where in (("XX101-first.yaml", "pkg/gpu/kernel.py:10 in f"), ("XX102-second.yaml", "pkg/tpu/kernel.py:20 in g")):
        text = (source / name).read_text().replace("\nparams:", f"\nlocation: {where}\nparams:", 1)
        (tmp_path / "area").mkdir(exist_ok=True)
        (tmp_path / "area" / name).write_text(text)
    code, out, _ = run_cli("lint", tmp_path)
    assert "overlapping-wording" not in out, out
    same = (tmp_path / "area" / "XX102-second.yaml")
    same.write_text(same.read_text().replace("pkg/tpu/kernel.py:20 in g", "pkg/gpu/kernel.py:30 in g"))
    code, out, _ = run_cli("lint", tmp_path)
    assert code == 1 and "overlapping-wording" in out, out


def test_costly_expressions_are_lint_findings_in_seconds(tmp_path):
    """What once linted clean and then ran for minutes in generate and explain: powers of powers
    (refused by vetting) and values that make a suggestion or check costly (stopped by the bounds
    of errkit/core/bounds.py, on the examples' values). In a child process with a timeout: a
    regression fails here instead of hanging the suite."""
    import subprocess
    import sys
    import time

    area = tmp_path / "area"
    area.mkdir()
    (tmp_path / "errkit.yaml").write_text('project: costly\nversion: "1"\ndocs_url: https://example.invalid/docs\n')
    base = (FIXTURES / "lint" / "costly-expression" / "area" / "XX101-first.yaml").read_text()
    costly = {
        "pairs": ('"[divisors(a * 10**10) for d in divisors(a * 10**10)]"', "costly-expression"),
        "power": ("((a ** 64) ** 64) ** 64", "forbidden-expression"),
        "repeated": ("divisors(a) * 10**12", "costly-expression"),
        "bare": ("divisors", "forbidden-expression"),
    }
    for i, (name, (source, _)) in enumerate(costly.items()):
        text = base.replace("code: XX101", f"code: XX{101 + i}").replace("slug: first", f"slug: {name}")
        text = text.replace("must be divisible by", f"must be divisible {i} by")
        text = text.replace("divisors(a) * 10**12", source)
        (area / f"XX{101 + i}-{name}.yaml").write_text(text)
    for command in ("lint", "generate"):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "errkit", "--catalog", str(tmp_path), command], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
        assert time.monotonic() - started < 20 and done.returncode == 1, done.stderr
        found = (done.stdout + done.stderr).splitlines()
        assert "Traceback" not in done.stdout + done.stderr
        for i, (name, (_, rule)) in enumerate(costly.items()):
            assert any(line.startswith(f"area/XX{101 + i}-{name}.yaml:16:") and f": {rule}: " in line for line in found), found
    assert "nothing written" in done.stderr


def test_a_group_needs_no_bindings(run_cli):
    """`bindings:` is optional: a group whose checks read its args alone lints clean (tests/fixtures/gate
    has such a group; tests/generate/test_lint_is_the_gate.py generates and imports its validators)."""
    settings = (FIXTURES / "gate" / "catalog" / "errkit.yaml").read_text(encoding="utf-8")
    assert "groups:" in settings and "bindings" not in settings
    code, out, err = run_cli("lint", FIXTURES / "gate" / "catalog")
    assert code == 0, out + err

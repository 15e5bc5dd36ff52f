"""Lint never crashes, and what it passes generates: each attack found on the catalogue (issue 27)
breaks a copy of a small clean catalogue (tests/fixtures/gate) one way; `errkit lint` and
`errkit generate`, run as a user runs them (child processes, with timeouts, so a regression fails
rather than hangs), report it as a finding at its file and line, never as an internal error or a
traceback; a failing check of lint itself is a finding too."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from errkit.catalogue import entry_rules, lint, load
from support import FIXTURES, errkit_subprocess

GATE = FIXTURES / "gate"
ENTRY = "catalog/area/XX101-first.yaml"
SETTINGS = "catalog/errkit.yaml"
LIMIT = 20  # seconds a command may take on this one-entry catalogue before the test fails


def billion_laughs(levels: int = 9) -> str:
    """Aliases of aliases under an unknown key: nine levels of nine make 9**9 (387 million) items."""
    lines = ["junk:", '  l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


# name: (file, old text, new text, the finding "file:line: rule", or None: lints clean and generates)
ATTACKS = {
    "title-ending-in-a-quote": (ENTRY, "title: b does not divide a", "title: 'b does not \"divide\"'", None),
    "title-with-backslash-and-nul": (ENTRY, "title: b does not divide a", 'title: "b \\\\N{x} \\0 \\u2028 \\"\\"\\""', None),
    "group-name-with-a-newline": (SETTINGS, "  pair:", '  "pair\\n":', f"{SETTINGS}:10: wrong-type"),
    "format-spec-int": (ENTRY, "{b=}", "{b:int}", f"{ENTRY}:5: bad-template"),
    "format-spec-huge-width": (ENTRY, "{b=}", "{b:>1000000000}", f"{ENTRY}:5: bad-template"),
    "format-spec-bare-hex": (ENTRY, "{b=}", "{b:x}", f"{ENTRY}:5: bad-template"),  # 10 is 'a': not read back
    "format-spec-prefixed-hex": (ENTRY, "{b=}", "{b:#x}", None),  # 0xa is read back
    "param-name-with-a-newline": (ENTRY, "  a: {type", '  "a\\n": {type', f"{ENTRY}:7: wrong-type"),
    "alias-of-a-param-name-with-a-newline": (ENTRY, 'message: "{a=}', 'aliases: {self.a: "a\\n"}\nmessage: "{self.a=}',
                                             f"{ENTRY}:5: wrong-type"),
    "alias-of-an-undeclared-param": (ENTRY, 'message: "{a=}', 'aliases: {self.a: c}\nmessage: "{self.a}',
                                     f"{ENTRY}:6: undeclared-placeholder"),
    "injection-in-a-param-default": (ENTRY, "description: First value.}",
                                     "description: First value., default: \"__import__('os').system('exit 3')\"}",
                                     f"{ENTRY}:7: unknown-key"),
    "code-with-a-newline": (ENTRY, "code: XX101", 'code: "XX101\\n"', f"{ENTRY}:1: wrong-type"),
    "slug-shadowing-a-builtin": (ENTRY, "slug: first", "slug: value", f"{ENTRY}:2: duplicate-slug"),
    "keyword-argument": (SETTINGS, "args: [a, b]", "args: [a, b, class]", f"{SETTINGS}:12: bad-param-name"),
    "lone-surrogate": (ENTRY, "title: b does not divide a", 'title: "b \\ud800"', f"{ENTRY}:3: yaml-syntax"),
    "billion-laughs": (ENTRY, "examples:", billion_laughs() + "examples:", f"{ENTRY}:19: yaml-anchor"),
}


def attacked(tmp_path: Path, name: str) -> Path:
    file, old, new, _ = ATTACKS[name]
    shutil.copytree(GATE, tmp_path, dirs_exist_ok=True)
    text = (tmp_path / file).read_text()
    assert old in text
    (tmp_path / file).write_text(text.replace(old, new, 1))
    return tmp_path


def errkit(project: Path, *args) -> tuple[int, str, float]:
    started = time.monotonic()
    done = errkit_subprocess(*args, cwd=project, timeout=LIMIT)
    output = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert "internal error" not in output and "Traceback" not in output, output
    assert "internal-lint-error" not in output, output  # a check that failed: a bug that is not fixed
    return done.returncode, output, time.monotonic() - started


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_an_attack_is_a_finding_at_its_line_or_generates(tmp_path, name, run_cli):
    """`errkit lint` in a child process (it may hang or blow up: a timeout), then `errkit generate`
    in this one (it lints first, as the child did)."""
    project = attacked(tmp_path, name)
    expected = ATTACKS[name][3]
    code, out, _ = errkit(project, "lint")
    generated, _, err = run_cli("generate", cwd=project)
    assert "internal error" not in err, err
    if expected is None:
        assert code == generated == 0, out + err
        title = (project / ENTRY).read_text().partition("title: ")[2].partition("\n")[0]
        namespace: dict = {}
        exec(compile((project / "pkg" / "_validators.py").read_text(), "_validators.py", "exec"), namespace)
        assert namespace["ERRORS"]["XX101"].title == load.plain_yaml().load(f"title: {title}")["title"]
        return
    location, rule = expected.rsplit(": ", 1)
    assert code == 1, out
    assert [line for line in out.splitlines() if line.startswith(location + ":") and f": {rule}: " in line], out
    assert generated == 1 and "nothing written" in err, err
    assert not (project / "pkg").exists()


def test_billion_laughs_is_refused_within_a_second(tmp_path):
    project = attacked(tmp_path, "billion-laughs")
    _, _, took = errkit(project, "lint")  # first in a child: a regression times out there
    assert took < 5, f"errkit lint took {took:.1f} s"
    started = time.monotonic()
    loaded = load.load(project / "catalog")
    assert time.monotonic() - started < 1.0
    assert [f.rule for f in loaded.findings] == ["yaml-anchor"]


def test_explain_on_an_attacked_catalogue_reports_its_findings(tmp_path):
    project = attacked(tmp_path, "format-spec-int")
    code, out, _ = errkit(project, "--catalog", "catalog", "explain", "ValueError: a=3 must be divisible by b=2")
    assert code == 1 and "bad-template" in out, out


def test_a_failing_check_is_a_finding_naming_it(tmp_path, monkeypatch):
    """Lint's checks are guarded: one that raises (a bug a catalogue reaches) is an
    internal-lint-error at the entry's file, the other checks' findings still reported."""
    shutil.copytree(GATE, tmp_path, dirs_exist_ok=True)
    (tmp_path / ENTRY).write_text((tmp_path / ENTRY).read_text().replace("{b=}", "{c=}"))

    def planted(entry, ctx):
        yield from ()
        raise KeyError("planted")

    monkeypatch.setattr(lint, "ENTRY_RULES", (planted, *entry_rules.ENTRY_RULES))
    _, findings = lint.lint(tmp_path / "catalog")
    crashed = [f for f in findings if f.rule == "internal-lint-error"]
    assert [(Path(f.path).name, f.line) for f in crashed] == [("XX101-first.yaml", 1)]
    assert "'planted'" in crashed[0].message and "KeyError" in crashed[0].message
    assert "undeclared-placeholder" in {f.rule for f in findings}


def test_a_failing_reader_is_a_finding_at_the_file(tmp_path, monkeypatch):
    shutil.copytree(GATE, tmp_path, dirs_exist_ok=True)

    def planted(path, area):
        raise RecursionError("planted")

    monkeypatch.setattr(load, "load_entry_file", planted)
    loaded = load.load(tmp_path / "catalog")
    assert loaded.entries == ()
    assert [(Path(f.path).name, f.rule) for f in loaded.findings] == [("XX101-first.yaml", "internal-lint-error")]


def test_a_finding_is_one_line_whatever_it_quotes(tmp_path):
    project = attacked(tmp_path, "group-name-with-a-newline")
    _, out, _ = errkit(project, "lint")
    assert all(line.startswith(("catalog/", "1 error")) for line in out.splitlines()), out

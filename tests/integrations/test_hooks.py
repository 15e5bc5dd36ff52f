"""Explanations where errors happen: under an uncaught exception's traceback
(`errkit.install()`), in IPython, in pytest's report, and this repository's pre-commit hooks.
Each through the real mechanism: a child Python process, a real InteractiveShell, a pytest run
(pytester), `pre-commit run` in a throw-away git repository. The IPython and pre-commit recipes
are taken from site/docs/guide/where-errors-happen.md as written (its console samples, the
environment variable's and pytest's, are run by tests/test_docs_samples.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from support import FIXTURES, ROOT, errkit_subprocess

pytest_plugins = ["pytester"]

GUIDE = ROOT / "site" / "docs" / "guide" / "where-errors-happen.md"


def recipe(name: str, language: str) -> str:
    """The guide's block after `<!-- recipe: NAME -->`."""
    (block,) = re.findall(rf"<!-- recipe: {name} -->\n```{language}\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    return block

RA105 = "num_q_heads=12 must be divisible by and num_kv_heads=8"
UPSTREAM_CODE = "RA500"  # JAX Pallas mha, catalog/upstream/RA500-*.yaml
KERNEL_ERROR = textwrap.dedent("""
    import sys
    import jax.numpy as jnp
    import errkit
    if sys.argv[1] == "on":
        errkit.install()
    from errkit_attention import ranker_attention
    q = jnp.zeros((1, 8, 12, 16), jnp.float32)
    kv = jnp.zeros((1, 8, 8, 16), jnp.float32)
    ranker_attention(q, kv, kv)
""")


def python(script: str, *args, env=None):
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})}, timeout=300)


# -- errkit.install() -----------------------------------------------------------------------------


def test_install_prints_the_fix_under_the_unchanged_traceback_of_a_real_kernel_error():
    off, on = python(KERNEL_ERROR, "off"), python(KERNEL_ERROR, "on")
    assert off.returncode == on.returncode == 1
    note = ("[RA105] Query heads are not a multiple of key/value heads - valid num_kv_heads: 1, 2, 3, 4, 6, 12"
            " - see https://errkit.github.io/errkit/0.1/errors/RA105/?num_q_heads=12&num_kv_heads=8")
    assert note in off.stderr.splitlines(), "the exception's own note: the first fix and the page with the values"
    assert on.stderr.startswith(off.stderr), "the traceback is printed first, exactly as without errkit"
    added = on.stderr[len(off.stderr):]
    assert added.lstrip().startswith("RA105  Query heads are not a multiple of key/value heads")
    assert "valid num_kv_heads: 1, 2, 3, 4, 6, 12" in added
    assert "/errors/RA105/?num_q_heads=12&num_kv_heads=8" in added
    assert "\x1b[" not in added, "no colour when stderr is not a terminal"


def test_install_explains_an_upstream_wording_and_leaves_other_errors_alone():
    upstream = "import errkit; errkit.install(); raise ValueError('Kernel differentiation is not supported if return_residuals is True.')"
    other = "import errkit; errkit.install(); raise KeyError('no such key')"
    done = python(upstream)
    assert done.returncode == 1
    assert done.stderr.split("return_residuals is True.", 1)[1].lstrip().startswith(UPSTREAM_CODE)
    plain = python(other)
    assert plain.returncode == 1 and plain.stderr.rstrip().endswith("KeyError: 'no such key'"), plain.stderr


def test_a_failure_inside_the_hook_is_one_line_and_the_traceback_survives():
    script = ("import errkit, errkit.explain.hooks as a\n"
              "def boom(*_): raise RuntimeError('index unreadable')\n"
              "a.load_index = boom\nerrkit.install()\n"
              f"raise ValueError({RA105!r})\n")
    done = python(script)
    assert done.returncode == 1
    lines = done.stderr.rstrip().splitlines()
    assert lines[-3] == f"ValueError: {RA105}" or f"ValueError: {RA105}" in done.stderr
    assert lines[-1] == "errkit: could not explain this error (RuntimeError: index unreadable)"
    assert "Traceback" in done.stderr and done.stderr.count("Traceback") == 1


def test_install_is_idempotent_and_undone():
    import errkit

    before = sys.excepthook
    errkit.install()
    errkit.install()
    try:
        assert sys.excepthook.previous is before
    finally:
        errkit.uninstall()
    assert sys.excepthook is before


def test_importing_errkit_costs_nothing_until_an_exception():
    done = python("import sys, errkit; errkit.install(); print(sorted(m for m in sys.modules if m.startswith('errkit')))")
    assert done.stdout.strip() == "['errkit', 'errkit.integrations', 'errkit.integrations.excepthook']"


# -- IPython --------------------------------------------------------------------------------------


@pytest.fixture
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance(colors="nocolor")
    published = []
    original = shell.display_pub.publish

    def publish(data, metadata=None, **kwargs):
        published.append(data)
        return original(data, metadata=metadata, **kwargs)

    shell.display_pub.publish = publish
    shell.published = published
    yield shell
    shell.run_cell("%unload_ext errkit")
    shell.display_pub.publish = original
    InteractiveShell.clear_instance()


def test_ipython_extension_shows_html_and_text_for_a_failing_cell(shell, capsys):
    assert recipe("ipython", "python") == "%load_ext errkit\n"
    assert shell.run_cell(recipe("ipython", "python")).success
    failed = shell.run_cell(f"raise ValueError({RA105!r})")
    assert isinstance(failed.error_in_exec, ValueError), "the cell's own error is unchanged"
    out = capsys.readouterr().out
    assert out.index(f"ValueError: {RA105}") < out.index("RA105  Query heads"), "the traceback first"
    (bundle,) = shell.published
    assert "valid num_kv_heads: 1, 2, 3, 4, 6, 12" in bundle["text/plain"]
    assert '<a href="https://errkit.github.io/errkit/0.1/errors/RA105/?num_q_heads=12&amp;num_kv_heads=8"' in bundle["text/html"]
    assert shell.run_cell("1 + 1").success and len(shell.published) == 1, "a passing cell shows nothing"
    shell.run_cell("raise KeyError('unknown')")
    assert len(shell.published) == 1, "an unrecognised error shows nothing"


# -- pytest ---------------------------------------------------------------------------------------

TESTS = f"""
def test_fails():
    raise ValueError({RA105!r})

def test_passes():
    assert True

def test_fails_otherwise():
    assert 1 == 2
"""


def test_pytest_plugin_adds_a_section_to_a_recognised_failure_only(pytester):
    pytester.makepyfile(TESTS)
    result = pytester.runpytest_subprocess("-p", "errkit")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert out.count("- errkit -") == 1, out
    section = out.split("- errkit -", 1)[1]
    assert "RA105  Query heads" in section and "valid num_kv_heads: 1, 2, 3, 4, 6, 12" in section
    assert out.index("test_fails ") < out.index("- errkit -") < out.index("test_fails_otherwise")


def test_pytest_plugin_is_off_unless_asked_and_on_with_the_ini_option(pytester):
    pytester.makepyfile(TESTS)
    assert "- errkit -" not in pytester.runpytest_subprocess().stdout.str()
    pytester.makeini("[pytest]\nerrkit = true\n")
    assert pytester.runpytest_subprocess().stdout.str().count("- errkit -") == 1


# -- pre-commit -----------------------------------------------------------------------------------


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}).stdout


def test_pre_commit_hooks_pass_a_clean_catalogue_and_fail_a_broken_entry(tmp_path):
    pre_commit = shutil.which("pre-commit", path=os.path.dirname(sys.executable))
    assert pre_commit, "pre-commit is a test dependency"
    rev = git("rev-parse", "HEAD", cwd=ROOT).strip()
    assert git("cat-file", "-e", f"{rev}:.pre-commit-hooks.yaml", cwd=ROOT) == ""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "site" / "catalog", repo / "catalog")
    assert errkit_subprocess("fmt", cwd=repo).returncode == 0  # the fixture's author never ran it
    assert errkit_subprocess("generate", cwd=repo).returncode == 0
    # the guide's configuration as written, but for where errkit is: this checkout at its last commit
    config = recipe("pre-commit", "yaml")
    assert config.count("https://github.com/errkit/errkit") == 1 and len(re.findall(r"rev: \w+", config)) == 1
    config = re.sub(r"rev: \w+", f"rev: {rev}", config.replace("https://github.com/errkit/errkit", str(ROOT)))
    (repo / ".pre-commit-config.yaml").write_text(config)
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "catalogue", cwd=repo)
    run = lambda: subprocess.run([pre_commit, "run", "--all-files"], cwd=repo, capture_output=True, text=True, timeout=900)  # noqa: E731
    clean = run()
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "errkit lint" in clean.stdout and "Passed" in clean.stdout
    assert {"errkit lint", "errkit fmt", "errkit generate --check"} <= set(re.findall(r"^(errkit[\w -]*?)\.{3,}", clean.stdout, re.M))
    entry = repo / "catalog" / "evil" / "XX102-plain.yaml"
    text = entry.read_text()
    assert "exception: TypeError\n" in text
    entry.write_text(text.replace("exception: TypeError\n", "exception: TypeErr\n"))
    broken = run()
    assert broken.returncode == 1
    assert "XX102-plain.yaml" in broken.stdout and "exception" in broken.stdout


def test_the_environment_variable_explains_a_script_one_cannot_edit(errkit_venv, tmp_path):
    """The installed wheel's errkit-hook.pth: ERRKIT_EXPLAIN=1 turns the hook on, unset it is off."""
    script = tmp_path / "script.py"
    script.write_text(f"raise ValueError({RA105!r})\n")
    run = lambda env: subprocess.run([errkit_venv.python, script], capture_output=True, text=True, cwd=tmp_path,  # noqa: E731
                                     env={**os.environ, "NO_COLOR": "1", **env}, timeout=120)
    on, off = run({"ERRKIT_EXPLAIN": "1"}), run({"ERRKIT_EXPLAIN": ""})
    assert on.returncode == off.returncode == 1
    assert on.stderr.startswith(off.stderr) and "valid num_kv_heads: 1, 2, 3, 4, 6, 12" in on.stderr[len(off.stderr):]
    assert "RA105" not in off.stderr
    quiet = subprocess.run([errkit_venv.python, "-c", "import sys; print('errkit' in sys.modules)"], capture_output=True,
                           text=True, env={k: v for k, v in os.environ.items() if k != "ERRKIT_EXPLAIN"}, timeout=60)
    assert quiet.stdout.strip() == "False", "without the variable nothing of errkit is imported at start-up"


@pytest.mark.slow
def test_the_environment_variable_works_in_an_editable_install_too(tmp_path):
    """The README's test command installs errkit editable into the venv the first command made:
    the switch must survive that (setup.py puts errkit-hook.pth into the editable wheel)."""
    from wheelhouse import _not_source, fresh_venv

    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=_not_source)
    venv = fresh_venv(tmp_path / "venv", "-e", source)
    script = tmp_path / "script.py"
    script.write_text(f"raise ValueError({RA105!r})\n")
    on = subprocess.run([venv.python, script], capture_output=True, text=True, cwd=tmp_path,
                        env={**os.environ, "NO_COLOR": "1", "ERRKIT_EXPLAIN": "1"}, timeout=120)
    assert on.returncode == 1 and "valid num_kv_heads: 1, 2, 3, 4, 6, 12" in on.stderr, on.stderr


# -- explain --format markdown, --open --------------------------------------------------------------

RA105_PAGE = "https://errkit.github.io/errkit/0.1/errors/RA105/?num_q_heads=12&num_kv_heads=8"


def test_explain_markdown_is_a_bug_report_snippet():
    done = errkit_subprocess("explain", "--format", "markdown", f"ValueError: {RA105}")
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert text.startswith("**RA105: Query heads are not a multiple of key/value heads**")
    assert f"```text\n{RA105}\n```" in text
    assert "- values: `num_q_heads=12`, `num_kv_heads=8`" in text
    assert "  - valid num_kv_heads: `1, 2, 3, 4, 6, 12`" in text
    assert f"- docs: <{RA105_PAGE}>" in text
    both = errkit_subprocess("explain", "--json", "--format", "markdown", RA105)
    assert both.returncode == 2 and b"give one" in both.stderr


def test_explain_open_opens_the_page_with_the_values(tmp_path):
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser"
    browser.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {opened}\n")
    browser.chmod(0o755)
    done = errkit_subprocess("explain", "--open", RA105, env={**os.environ, "BROWSER": str(browser)})
    assert done.returncode == 0, done.stderr
    assert opened.read_text() == RA105_PAGE
    assert f"errkit: opened {RA105_PAGE}" in done.stderr.decode()
    opened.unlink()
    named = errkit_subprocess("explain", "--open", "RA105", env={**os.environ, "BROWSER": str(browser)})
    assert named.returncode == 0 and opened.read_text() == RA105_PAGE.split("?")[0]

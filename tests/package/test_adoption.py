"""A kernel package adopts errkit from nothing, with only the documented commands.

tests/fixtures/adopt/tinyattn is a small package with no catalogue, settings or site. In a copy:
`errkit init`, `errkit new`, the entry filled in (its author's text: fixtures/adopt/entry.yaml),
a validate group added, `errkit lint`, `errkit generate`. Then it is installed with the errkit
wheel into a fresh virtual environment; from a folder outside both projects its function raises
the generated error without importing errkit, and `errkit explain` there recognises the message
through the package's registered catalogue. Its site builds with `mkdocs build --strict`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import FIXTURES, errkit_subprocess, mkdocs_said
from wheelhouse import fresh_venv  # noqa: F401 - the installed fixture uses it

ADOPT = FIXTURES / "adopt"
MESSAGE = "num_q_heads=12 is not a multiple of num_kv_heads=8"


def errkit(*args, cwd):
    done = errkit_subprocess(*args, cwd=cwd)
    assert done.returncode == 0, (args, done.stdout.decode(), done.stderr.decode())
    return done.stdout.decode()


HATCHLING = """[build-system]
requires = ["hatchling>=1.26"]
build-backend = "hatchling.build"
"""

# How an adopter's project may be laid out: the package under src/ or at the top, built by
# setuptools or hatchling (flit, pdm and poetry: test_init_packaging_for_every_backend).
LAYOUTS = {"src-setuptools": ("src", None), "flat-setuptools": ("flat", None), "src-hatchling": ("src", HATCHLING)}


def new_project(where: Path, layout: str) -> Path:
    """tinyattn written into an empty folder in `layout`: its pyproject.toml and its package."""
    tree, build_system = LAYOUTS[layout]
    project = where / "tinyattn"
    project.mkdir()
    pyproject = (ADOPT / "tinyattn" / "pyproject.toml").read_text()
    if build_system:
        pyproject = build_system + pyproject[pyproject.index("[project]"):]
    (project / "pyproject.toml").write_text(pyproject)
    package = project / ("src" if tree == "src" else "") / "tinyattn"
    shutil.copytree(ADOPT / "tinyattn" / "src" / "tinyattn", package)
    return project


@pytest.fixture(scope="module", params=list(LAYOUTS))
def adopted(request, tmp_path_factory) -> Path:
    """The fixture package after its author followed the tutorial: init, new, fill in, lint, generate."""
    project = new_project(tmp_path_factory.mktemp(request.param), request.param)
    errkit("init", "--prefix", "TA", "--name", "tinyattn's head grouping", cwd=project)
    created = errkit("new", "inputs", "heads-not-grouped", cwd=project).strip()
    assert created.endswith("TA100-heads-not-grouped.yaml"), created
    (project / created).write_text((ADOPT / "entry.yaml").read_text())
    settings = project / "catalog" / "errkit.yaml"
    settings.write_text(settings.read_text().replace("groups: {}\n", (ADOPT / "groups.yaml").read_text()))
    errkit("lint", cwd=project)
    errkit("generate", cwd=project)
    return project


def test_init_writes_settings_catalogue_and_site_and_refuses_a_second_time(adopted):
    pyproject = (adopted / "pyproject.toml").read_text()
    assert "[tool.errkit]" in pyproject and '[project.entry-points."errkit.catalogues"]' in pyproject
    assert (adopted / "site" / "mkdocs.yml").is_file() and (adopted / "site" / "docs" / "paste.md").is_file()
    again = errkit_subprocess("init", cwd=adopted)
    assert again.returncode == 2 and b"already has [tool.errkit]" in again.stderr
    assert (adopted / "pyproject.toml").read_text() == pyproject, "a refused init writes nothing"


def test_generate_writes_into_the_package_not_into_errkit(adopted):
    package = next(p.parent for p in adopted.rglob("tinyattn/__init__.py"))
    assert (package / "_errkit_index.json").is_file() and (package / "_errkit_errors.py").is_file()
    assert not (adopted / "errkit").exists(), "nothing may shadow the installed errkit package"
    index = json.loads((package / "_errkit_index.json").read_text())
    assert index["project"] == "tinyattn" and set(index["entries"]) == {"TA100"}
    assert errkit_subprocess("generate", "--check", cwd=adopted).returncode == 0


def test_generated_text_uses_the_projects_settings(adopted):
    """Nothing of this repository's catalogue leaks into another project's output."""
    generated = [p for p in adopted.rglob("*") if p.is_file() and p.suffix in (".py", ".md", ".json", ".yml")]
    for path in generated:
        text = path.read_text()
        for word in ("RA105", "ranker", "errkit.github.io", "errkit_attention"):
            assert word not in text, f"{path.relative_to(adopted)} mentions {word!r}"
    page = (adopted / "site" / "docs" / "errors" / "TA100.md").read_text()
    assert "raised by tinyattn's head grouping" in page
    # the name Python imports it by, in every layout (never `src.tinyattn...`)
    assert "Raised by tinyattn's head grouping as `tinyattn._errkit_errors.HeadsNotGroupedError`" in page
    assert "\ntinyattn._errkit_errors.HeadsNotGroupedError: num_q_heads=12" in page


def reproduce_snippet(page: str) -> str:
    """The python block of an entry page's "Reproduce" section."""
    section = page.split("\n## Reproduce\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"``` python\n(.*?)\n```", section, re.S).group(1)


def test_the_site_builds_strict(adopted, tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or "mkdocs"
    done = subprocess.run([mkdocs, "build", "--strict", "-f", str(adopted / "site" / "mkdocs.yml"), "-d", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr
    assert mkdocs_said(done.stderr) == [], "mkdocs said more than it always says (at INFO too)"
    page = (tmp_path / "out" / "errors" / "TA100" / "index.html").read_text()
    # the sections inside <div markdown> are rendered (md_in_html), and the page's links to them land
    assert '<h2 id="reproduce">Reproduce' in page and "## Reproduce" not in page
    assert 'href="#reproduce"' in page
    assert (tmp_path / "out" / "paste" / "index.html").is_file()


@pytest.fixture(scope="module")
def installed(adopted, errkit_wheel, tmp_path_factory):
    """A fresh virtual environment holding the errkit wheel and the adopted package (not editable)."""
    venv = fresh_venv(tmp_path_factory.mktemp("venv"), errkit_wheel, adopted)
    return venv


def test_installed_package_raises_its_generated_error_without_errkit(installed, tmp_path):
    script = (
        "import sys, tinyattn\n"
        "assert tinyattn.kv_head_of(12, 6) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('errkit', 'ruamel', 'jinja2', 're2')], sorted(sys.modules)\n"
        "tinyattn.kv_head_of(12, 8)\n"
    )
    done = subprocess.run([installed.python, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 1, done.stderr
    assert f"HeadsNotGroupedError: {MESSAGE}" in done.stderr
    assert "[TA100]" in done.stderr and "/0.1/errors/TA100/" in done.stderr


def test_the_pages_reproduce_snippet_raises_the_error_in_the_installed_package(adopted, installed, tmp_path):
    snippet = reproduce_snippet((adopted / "site" / "docs" / "errors" / "TA100.md").read_text())
    assert snippet.startswith("from tinyattn._errkit_errors import check_ta100\n"), snippet
    done = subprocess.run([installed.python, "-c", snippet], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 1 and f"HeadsNotGroupedError: {MESSAGE}" in done.stderr, done.stderr


def test_installed_explain_recognises_the_package_catalogue(installed, tmp_path):
    text = f"Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\ntinyattn._errkit_errors.HeadsNotGroupedError: {MESSAGE}\n"
    env = {**os.environ, "ERRKIT_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([installed.bin / "errkit", "explain", "--json", text], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[0])
    assert result["code"] == "TA100" and result["params"] == {"num_q_heads": 12, "num_kv_heads": 8}
    assert result.get("catalogue") == "tinyattn"
    human = subprocess.run([installed.bin / "errkit", "explain", MESSAGE], capture_output=True, text=True,
                           cwd=tmp_path, env=env, timeout=120)
    assert human.returncode == 0 and "TA100" in human.stdout and "1, 2, 3, 4, 6, 12" in human.stdout, human.stdout
    # the bundled catalogue is still there, beside it
    bundled = subprocess.run([installed.bin / "errkit", "explain", "--json", "num_q_heads=12 must be divisible by and num_kv_heads=8"],
                             capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert json.loads(bundled.stdout.splitlines()[0])["code"] == "RA105"


def test_the_notes_link_opens_in_mkdocs_serve(adopted, tmp_path):
    """init's default docs_url is the preview's address: the link every note prints
    (<docs_url>/<version>/errors/<CODE>/) answers under `mkdocs serve`, and so does its home."""
    import socket
    import time
    import urllib.request
    from urllib.parse import urlsplit

    package = next(p.parent for p in adopted.rglob("tinyattn/__init__.py"))
    link = json.loads(json.loads((package / "_errkit_index.json").read_text())["entries"]["TA100"])["docs_url"]
    assert link.startswith("http://127.0.0.1:8000/"), link
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or "mkdocs"
    server = subprocess.Popen([mkdocs, "serve", "--no-livereload", "-a", f"127.0.0.1:{port}", "-f",
                               str(adopted / "site" / "mkdocs.yml")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        def get(path):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
                return response.status, response.read().decode()

        deadline = time.monotonic() + 120
        while True:
            try:
                get("/")
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, server.stderr.read().decode()[-2000:]
                time.sleep(0.5)
        status, page = get(urlsplit(link).path)
        assert status == 200 and "TA100" in page and "Page not found" not in page
        status, home = get("/")
        assert status == 200 and "tinyattn" in home
    finally:
        server.terminate()
        server.wait(timeout=30)

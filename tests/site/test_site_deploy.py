"""The versioned deployment, as CI publishes it: scripts/publish_site.sh (the real `mike deploy
--update-aliases VERSION latest`, `mike set-default latest`, and the release's 404 page put at the
branch root) into a throw-away git repository holding a copy of the site and the catalogue (no
push). Its gh-pages branch is then served on 127.0.0.1 as GitHub Pages serves a project site (the
branch under docs_url's path; a missing address gets the branch root's 404.html with status 404)
and checked in a real chromium: the version's pages load, canonical links and the sitemap carry
the version, an address without a version reaches the latest release's page, and a mistyped
address at any depth shows the site's own 404 page with every request answered.

One deploy per module (about 15 s); needs mike (the docs extra) and Debian's chromium (skips
without them, except under CI).
"""

from __future__ import annotations

import gzip
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from support import CATALOG, ROOT
from site_build import SITE, serve
from test_site_pages import CATALOGUE, ENTRIES

SETTINGS = CATALOGUE.settings
VERSION = SETTINGS.version
DOCS = SETTINGS.docs_url.rstrip("/")  # https://errkit.github.io/errkit
PREFIX = urlsplit(DOCS).path.rstrip("/") + "/"  # /errkit/: where the host serves the gh-pages branch
SCRIPT = ROOT / "scripts" / "publish_site.sh"
MIKE = shutil.which("mike", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
GIT_ENV = {"GIT_AUTHOR_NAME": "errkit test", "GIT_AUTHOR_EMAIL": "test@errkit.invalid",
           "GIT_COMMITTER_NAME": "errkit test", "GIT_COMMITTER_EMAIL": "test@errkit.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "NO_MKDOCS_2_WARNING": "1"}
# The hosts the site may still call: Material's repository widget (GitHub's API). The site
# makes the widget static; then this is empty.
ELSEWHERE: set = set()  # no request may leave the site (the repository widget is off)
SAMPLE = [ENTRIES[0].code, ENTRIES[-1].code]  # entries opened in the browser


def _git(*args, cwd, env):
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """The gh-pages branch after one release was published, checked out into a folder."""
    if MIKE is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs the deployment test: mike is not installed (pip install -e '.[docs]')")
        pytest.skip("mike is not installed (pip install -e '.[docs]')")
    tmp = tmp_path_factory.mktemp("deploy")
    repo = tmp / "repo"
    shutil.copytree(SITE, repo / "site", ignore=shutil.ignore_patterns("build"))
    shutil.copytree(CATALOG, repo / "catalog")
    (repo / "scripts").mkdir()
    shutil.copy2(SCRIPT, repo / "scripts" / SCRIPT.name)
    env = {**os.environ, **GIT_ENV, "PATH": f"{Path(MIKE).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    _git("init", "-q", "-b", "main", cwd=repo, env=env)
    _git("add", "-A", cwd=repo, env=env)
    _git("commit", "-q", "-m", "the project", cwd=repo, env=env)
    done = subprocess.run(["sh", "scripts/publish_site.sh", VERSION], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    pages = tmp / "gh-pages"
    _git("worktree", "add", "-q", "--detach", str(pages), "gh-pages", cwd=repo, env=env)
    return pages


class _Pages(http.server.SimpleHTTPRequestHandler):
    """GitHub Pages for a project site: the branch under PREFIX, folders answered by their
    index.html only, and every missing address by the branch root's 404.html, status 404 (the
    host's own bare 404 where the branch has none)."""

    def log_message(self, *args):
        pass

    def translate_path(self, path):
        path = urlsplit(path).path
        if path.startswith(PREFIX) or path + "/" == PREFIX:
            return super().translate_path("/" + path[len(PREFIX):])
        return os.path.join(self.directory, ".outside-the-site")

    def list_directory(self, path):
        self.send_error(404)

    def send_error(self, code, message=None, explain=None):
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.is_file():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


@pytest.fixture(scope="module")
def host(published):
    """The address of the published site (http://127.0.0.1:PORT/errkit/)."""
    for base in serve(published, _Pages):
        yield base.rstrip("/") + PREFIX


# -- the branch, its canonical links and sitemap ---------------------------------------------------


def test_branch_holds_the_version_its_alias_and_the_root_404(published):
    versions = json.loads((published / "versions.json").read_text())
    assert versions == [{"version": VERSION, "title": VERSION, "aliases": ["latest"]}]
    # GitHub Pages refuses to publish a branch holding a symlink: `latest` is redirect pages.
    assert not [p for p in published.rglob("*") if p.is_symlink()]
    assert f"../../../{VERSION}/errors/" in (published / "latest" / "errors" / SAMPLE[0] / "index.html").read_text()
    assert (published / "404.html").read_bytes() == (published / VERSION / "404.html").read_bytes()
    assert "latest/" in (published / "index.html").read_text()  # mike set-default


def _canonical(page: Path) -> str:
    found = re.findall(r'<link rel="canonical" href="([^"]*)"', page.read_text(encoding="utf-8"))
    assert len(found) == 1, page
    return found[0]


def test_canonical_links_and_the_sitemap_carry_the_version(published):
    built = published / VERSION
    # Each entry's canonical address is the one its exception prints.
    for entry in ENTRIES:
        assert _canonical(built / "errors" / entry.code / "index.html") == SETTINGS.page_url(entry.code)
    canonical = {}
    for page in built.rglob("index.html"):
        rel = page.parent.relative_to(built).as_posix()
        canonical[page] = _canonical(page)
        assert canonical[page] == f"{DOCS}/{VERSION}/" + ("" if rel == "." else rel + "/"), page
    sitemap = (built / "sitemap.xml").read_text(encoding="utf-8")
    assert gzip.decompress((built / "sitemap.xml.gz").read_bytes()).decode() == sitemap
    locations = re.findall(r"<loc>([^<]*)</loc>", sitemap)
    assert len(locations) == len(set(locations)) == len(canonical)
    assert set(locations) == set(canonical.values())


def test_every_address_the_exceptions_print_is_served(host):
    """The page each entry's exception links to, and the same address without its version."""
    for entry in ENTRIES:
        printed = SETTINGS.page_url(entry.code)
        assert printed.startswith(DOCS + "/")
        with urllib.request.urlopen(host + printed[len(DOCS) + 1:]) as answer:
            assert answer.status == 200 and f'<link rel="canonical" href="{printed}">' in answer.read().decode()
        with pytest.raises(urllib.error.HTTPError) as missing:  # the host's 404.html: its script sends the reader on
            urllib.request.urlopen(f"{host}errors/{entry.code}/")
        assert missing.value.code == 404 and b"Page not found" in missing.value.read()


# -- in chromium -----------------------------------------------------------------------------------


class _Requests:
    """Every request a browser context makes; those to other hosts are refused (the site may make
    none) and noted."""

    def __init__(self, context, origin: str):
        self.origin = origin
        self.made, self.elsewhere = [], []
        context.route(lambda url: not url.startswith(origin), self._refuse)
        context.on("request", lambda r: self.made.append(r))

    def _refuse(self, route):
        self.elsewhere.append(route.request.url)
        route.abort("blockedbyclient")

    def clear(self):
        self.made.clear()
        self.elsewhere.clear()

    def documents(self):
        return [(r.url, r.response().status) for r in self.made if r.resource_type == "document"]

    def check(self, shown: str):
        """Every request went to the site and got its file, except the unfinished ones of a page
        that went on to `shown` (the address now shown); documents are checked by the caller."""
        assert {urlsplit(url).hostname for url in self.elsewhere} <= ELSEWHERE, self.elsewhere
        shown = shown.split("#")[0]
        loads = [r for r in self.made if r.url.startswith(self.origin) and r.resource_type != "document"]
        assert loads, "the page loaded nothing"
        for request in loads:
            if request.failure == "net::ERR_ABORTED" and request.headers.get("referer") != shown:
                continue  # left by the host's 404 page when it sent the reader on
            assert request.failure is None, (request.url, request.failure)
            assert request.response().status < 400, (request.url, request.response().status)


@pytest.fixture(scope="module")
def context(browser, host):  # noqa: F811
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    requests = _Requests(context, host[: -len(PREFIX) + 1])
    yield context, requests
    context.close()


def test_the_version_pages_load(context, host):
    context, requests = context
    page = context.new_page()
    for address in (f"{VERSION}/", f"{VERSION}/errors/{SAMPLE[0]}/", f"{VERSION}/paste/"):
        requests.clear()
        answer = page.goto(host + address, wait_until="networkidle")
        assert answer.status == 200, address
        requests.check(page.url)
        assert page.locator("article h1").count() == 1, address
        assert page.evaluate("getComputedStyle(document.querySelector('.md-header')).position") == "sticky"
    # The root goes to the latest release (mike set-default), and `latest` to the version, address kept.
    kept = f"errors/{SAMPLE[-1]}/?num_q_heads=12#fixes"
    for address, shown in (("", f"{VERSION}/"), (f"latest/{kept}", f"{VERSION}/{kept}")):
        requests.clear()
        page.goto(host + address)
        page.wait_for_url(host + shown)
        page.wait_for_load_state("networkidle")
        requests.check(page.url)
        assert page.locator("article h1").count() == 1, address
    page.close()


UNVERSIONED = [f"errors/{SAMPLE[0]}/", f"errors/{SAMPLE[-1]}/?num_q_heads=12&num_kv_heads=8#fixes", "paste/", "errors/"]


@pytest.mark.parametrize("address", UNVERSIONED)
def test_an_address_without_a_version_reaches_the_latest_release(context, host, address):
    context, requests = context
    page = context.new_page()
    requests.clear()
    page.goto(host + address)
    page.wait_for_url(f"{host}{VERSION}/{address}")
    page.wait_for_load_state("networkidle")
    requests.check(page.url)
    assert [status for _, status in requests.documents()] == [404, 200]  # the host's 404 page, then the entry's
    path = urlsplit(address).path
    assert page.evaluate("document.querySelector('link[rel=canonical]').href") == f"{DOCS}/{VERSION}/{path}"
    assert page.locator("article h1").count() == 1
    page.close()


MISTYPED = ["nope", "errors/no/such/page/", f"{VERSION}/errors/RA10/", f"{VERSION}/nope.html",
            f"{VERSION}/a/b/c/d/e/f/g/", "latest/errors/RA10/"]


@pytest.mark.parametrize("address", MISTYPED)
def test_a_mistyped_address_shows_the_sites_own_404_page(context, host, address):
    context, requests = context
    page = context.new_page()
    requests.clear()
    page.goto(host + address)
    # An address without a version goes on to the latest release, and is missing there too.
    versioned = address.split("/")[0] in (VERSION, "latest")
    page.wait_for_url(host + address if versioned else f"{host}{VERSION}/{address}")
    page.wait_for_load_state("networkidle")
    assert page.locator("article h1").inner_text() == "Page not found"
    requests.check(page.url)
    documents = requests.documents()
    assert [status for _, status in documents] == [404] * (1 if versioned else 2), documents
    # Material's styles and errkit's are applied, and the version selector found versions.json.
    assert page.evaluate("getComputedStyle(document.querySelector('.md-header')).position") == "sticky"
    loaded = {urlsplit(r.url).path for r in requests.made if r.response() and r.response().status == 200}
    assert f"{PREFIX}{VERSION}/assets/errkit/site.css" in loaded
    assert f"{PREFIX}versions.json" in loaded
    # Its links lead to pages that exist.
    for link in page.locator("article a").evaluate_all("links => links.map(a => a.href)"):
        assert page.request.get(link).status == 200, link
    page.close()


# -- versions and codes the site does not have (issue 29 item 5) ---------------------------------


@pytest.mark.parametrize("address", [f"0.2/errors/{SAMPLE[0]}/?num_q_heads=14&num_kv_heads=4#fixes",
                                     f"v9.9/errors/{SAMPLE[-1]}/", "1.0rc1/paste/"])
def test_an_unknown_version_reaches_the_same_page_of_the_latest(context, host, address):
    context, requests = context
    page = context.new_page()
    requests.clear()
    page.goto(host + address)
    rest = address.split("/", 1)[1]
    page.wait_for_url(f"{host}{VERSION}/{rest}")
    page.wait_for_load_state("networkidle")
    assert [status for _, status in requests.documents()] == [404, 200]
    assert page.locator("article h1").inner_text() != "Page not found"
    page.close()


@pytest.mark.parametrize("typed, meant", [("ra105", ["RA105"]), ("RA1055", ["RA105"]), ("Ra-105", ["RA105"]),
                                          ("RA10", ["RA100", "RA101", "RA102", "RA103", "RA104"])])
def test_a_mistyped_code_offers_the_nearest_and_keeps_the_values(context, host, typed, meant):
    context, requests = context
    page = context.new_page()
    query = "?num_q_heads=14&num_kv_heads=4"
    for address in (f"{VERSION}/errors/{typed}/{query}", f"errors/{typed}/{query}"):  # the latter goes to the latest first
        page.goto(host + address)
        page.wait_for_url(f"{host}{VERSION}/errors/{typed}/{query}")
        box = page.locator("#errkit-did-you-mean[data-ready=yes]")
        box.wait_for(timeout=15000)
        assert page.locator("article h1").inner_text() == "Page not found"
        assert "Did you mean" in box.inner_text() and "keeps the values" in box.inner_text()
        links = box.locator("a").evaluate_all("links => links.map(a => [a.textContent, a.href])")
        assert [code for code, _ in links] == meant
        assert [href for _, href in links] == [f"{host}{VERSION}/errors/{code}/{query}" for code in meant]
    if meant == ["RA105"]:
        page.locator("#errkit-did-you-mean a").first.click()
        page.wait_for_selector("#errkit-values[data-ready=yes]", timeout=15000)
        values = page.locator("#errkit-values").inner_text()
        assert "From the address: num_q_heads=14, num_kv_heads=4" in values
        # the page names no raising kernel: the values valid for every kernel of the fix, then each kernel's own
        # (issue 47), among them our kernel's divisors of 14
        assert "valid num_kv_heads" in values and "1, 2, 7, 14" in values, values
    page.close()


@pytest.fixture(scope="module")
def two_releases(published, tmp_path_factory):
    """The published branch as it reads once a newer release (9.9) took `latest`: VERSION is old."""
    pages = tmp_path_factory.mktemp("two-releases") / "pages"
    shutil.copytree(published, pages, ignore=shutil.ignore_patterns(".git"))
    shutil.copytree(pages / VERSION, pages / "9.9")
    (pages / "versions.json").write_text(json.dumps([{"version": "9.9", "title": "9.9", "aliases": ["latest"]},
                                                     {"version": VERSION, "title": VERSION, "aliases": []}]))
    for base in serve(pages, _Pages):
        yield base.rstrip("/") + PREFIX


def test_an_old_release_says_so_and_the_selector_lists_the_versions(browser, two_releases):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{two_releases}{VERSION}/errors/{SAMPLE[0]}/")
    banner = page.locator("[data-md-component=outdated]")
    banner.wait_for(state="visible", timeout=15000)
    assert "older release" in banner.inner_text()
    page.locator(".md-version__current").first.wait_for()
    versions = page.locator(".md-version__link").evaluate_all("links => links.map(a => a.textContent.trim())")
    assert "9.9" in versions and VERSION in versions
    page.goto(f"{two_releases}9.9/errors/{SAMPLE[0]}/")
    page.locator(".md-version__current").first.wait_for()
    assert not page.locator("[data-md-component=outdated]").is_visible()
    assert not errors, errors  # Material's banner script, overridden: its URL of a relative base threw
    context.close()


# -- other projects' sites ------------------------------------------------------------------------


def test_the_skeleton_publishes_the_same_way():
    """`errkit init` gives other projects the same mike settings and 404 page."""
    import yaml

    from errkit.generate.render import environment

    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    env = environment()
    for page in ("404.html", "main.html"):  # an adopter's site gets the same theme overrides as ours
        assert env.get_template(f"skeleton/overrides/{page}.j2").render() == (SITE / "overrides" / page).read_text()
    skeleton = yaml.load(env.get_template("skeleton/mkdocs.yml.j2").render(
        project="tinyattn", name="tinyattn", prefix="TA", catalog="catalog", site="site", repo_url="",
        site_url="https://example.org/tinyattn/", distribution="tinyattn"), Loader=_Loader)
    ours = yaml.load((SITE / "mkdocs.yml").read_text(), Loader=_Loader)

    def mike(config):
        return [p["mike"] for p in config["plugins"] if isinstance(p, dict) and "mike" in p]

    expected = {"canonical_version": None, "alias_type": "redirect", "version_selector": True}
    assert mike(skeleton) == mike(ours) == [expected]
    assert skeleton["theme"]["custom_dir"] == ours["theme"]["custom_dir"] == "overrides"
    assert skeleton["extra"]["version"]["provider"] == ours["extra"]["version"]["provider"] == "mike"
    # ours alone names the default version, for the old-version banner of its overrides/main.html
    assert ours["extra"]["version"]["default"] == "latest"

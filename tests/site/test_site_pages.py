"""The troubleshooting site: generated pages, escaping, regexes and expressions translated to
JavaScript, `mkdocs build --strict` (and Zensical), and a real headless Chromium on the built site.
The JavaScript itself runs against the Python it ports in tests/site/test_paste_page_js.py.

Needs Debian's chromium (for the browser test); without it that test skips, except under CI (CI
set), where a missing chromium fails the run.
"""

from __future__ import annotations

import html.parser
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from errkit.generate import js
from errkit.explain import answer
from errkit.explain.matching.index import Index
from errkit.explain.matching.chunks import explain_chunks
from errkit.core import runtime
from errkit.core import helpers as fixes
from errkit.core import index_format
from errkit.generate import index as index_module
from errkit.generate import examples, markdown, site
from errkit.generate.assets import site_index
from errkit.generate.files import orphans
from errkit.generate.render import HEADER
from site_build import EVIL, SITE, serve
from support import bundled_catalogue

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CATALOG = ROOT / "catalog"
CATALOGUE = bundled_catalogue()
ENTRIES = sorted(CATALOGUE.entries, key=lambda e: e.code)
ASSETS = SITE / "docs" / "assets" / "errkit"
ARTIFACTS = ROOT / "artifacts" / "screenshots"
SECTIONS = ("The message", "What it means", "Why it happens", "Fixes")


def run_cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "errkit.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


# -- generation -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def files():
    return site.pages(CATALOGUE)


def test_one_page_per_entry_at_its_stable_address(files):
    for entry in ENTRIES:
        page = files[f"site/docs/errors/{entry.code}.md"]
        assert HEADER in page.split("\n---\n", 1)[1][:400], "the header comment follows the front matter"
        assert f"# {entry.code}: " in page
        assert CATALOGUE.settings.page_url(entry.code).endswith(f"/errors/{entry.code}/")
    generated_pages = {p for p in files if p.startswith("site/docs/errors/")}
    assert generated_pages == {f"site/docs/errors/{e.code}.md" for e in ENTRIES} | {"site/docs/errors/index.md"}
    for rel, text in files.items():
        head = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text
        assert HEADER in head[:400], f"{rel} carries the generated-file header"


def test_az_index_sorts_past_a_leading_article_and_headings_read_mid_sentence(files):
    rows = re.findall(r"^\| \[(.+?)\]\((RA\d+)\.md\)", files["site/docs/errors/index.md"], re.M)
    titles = [title.replace("\\", "") for title, _ in rows]
    assert len(titles) == len(ENTRIES)

    def key(title):
        return re.sub(r"^(a|an|the) ", "", title.lstrip("`'\"(["), flags=re.I).casefold()

    assert [key(t) for t in titles] == sorted(key(t) for t in titles), "A-Z on the words after A, An or The"
    vmem = titles.index("A TPU kernel needs more VMEM than its scoped limit (upstream)")
    assert key(titles[vmem - 1]) < "tpu kernel" < key(titles[vmem + 1]), titles[vmem - 1: vmem + 2]
    for rel, text in files.items():
        if rel.endswith(".md"):
            assert not re.search(r"^#+ .*\b(What|for) (This|The|A|An|Our) ", text, re.M), rel


def test_generated_site_is_committed_and_has_no_orphans(files):
    stale = [rel for rel, text in files.items() if not (ROOT / rel).exists() or (ROOT / rel).read_text("utf-8") != text]
    assert stale == [], "run `errkit docs` (or `errkit generate`) and commit the site"
    assert orphans(ROOT, site.docs_folder(CATALOGUE), files) == [], "run `errkit docs`: it deletes pages of removed entries"


def test_entry_page_layout_and_edit_link(files):
    for entry in ENTRIES:
        page = files[f"site/docs/errors/{entry.code}.md"]
        for heading in SECTIONS:
            assert f"\n## {heading}\n" in page, (entry.code, heading)
        if entry.prevention:
            assert "\n## Prevention\n" in page
        if entry.variants:
            assert "\n## You may also see this as\n" in page
        if any(code in CATALOGUE.by_code() for code in entry.related):
            assert "\n## Related\n" in page
        yaml_path = site.source_path(CATALOGUE, entry)
        assert re.fullmatch(r"catalog/[^/]+/[A-Z]+[0-9]+-[a-z0-9-]+\.yaml", yaml_path)
        assert (ROOT / yaml_path).is_file()
        assert f"]({CATALOGUE.settings.repo_url}/edit/main/{yaml_path})" in page
        assert f".md)" not in page.split("Edit this entry", 1)[1].split("\n", 1)[0], "never edit the generated page"


def test_index_pages_list_every_entry(files):
    for rel in ("site/docs/errors/index.md", "site/docs/by-area.md", "site/docs/by-tag.md", "site/docs/by-exception.md"):
        page = files[rel]
        for entry in ENTRIES:
            if rel.endswith("by-tag.md") and not entry.tags:
                continue
            assert f"{entry.code}.md)" in page, (rel, entry.code)


def test_orphaned_pages_are_reported_and_deleted(tmp_path):
    shutil.copytree(EVIL, tmp_path / "catalog")
    assert run_cli("--catalog", tmp_path / "catalog", "docs").returncode == 0
    assert run_cli("--catalog", tmp_path / "catalog", "docs", "--check").returncode == 0
    (tmp_path / "catalog" / "evil" / "XX102-plain.yaml").unlink()
    text = (tmp_path / "catalog" / "evil" / "XX101-injection.yaml").read_text()
    (tmp_path / "catalog" / "evil" / "XX101-injection.yaml").write_text(text.replace("related: [XX102]\n", "").replace(" see XX102", ""))
    (tmp_path / "site" / "docs" / "hand-written.md").write_text("# Mine\n")
    check = run_cli("--catalog", tmp_path / "catalog", "docs", "--check")
    assert check.returncode == 1 and "orphan: site/docs/errors/XX102.md" in check.stderr
    generate = run_cli("--catalog", tmp_path / "catalog", "generate", "--check")
    assert "site/docs/errors/XX102.md was generated for an entry that no longer exists" in generate.stderr
    assert run_cli("--catalog", tmp_path / "catalog", "docs").returncode == 0
    assert not (tmp_path / "site" / "docs" / "errors" / "XX102.md").exists()
    assert (tmp_path / "site" / "docs" / "hand-written.md").exists(), "hand-written pages are never touched"
    assert run_cli("--catalog", tmp_path / "catalog", "docs", "--check").returncode == 0


# -- escaping -------------------------------------------------------------------------------------


def test_markdown_escaping_units():
    assert markdown.text("<b>*x*</b> & [y](z)") == r"&lt;b&gt;\*x\*&lt;/b&gt; &amp; \[y\]\(z\)"
    assert markdown.prose("use `<b>` here\n\nnext *para*") == "use `<b>` here\n\nnext *para*", "emphasis is kept"
    assert markdown.prose("a * b * c, f(*args, **kw), x*y*z") == r"a \* b \* c, f\(\*args, \*\*kw\), x\*y\*z", "not emphasis"
    assert markdown.prose("*<b>[x](javascript:y)</b>* **`c`**") == r"*&lt;b&gt;\[x\]\(javascript:y\)&lt;/b&gt;* \*\*`c`\*\*", \
        "emphasis holds escaped text; around a code span it stays as written"
    assert markdown.prose("a stray ` tick") == "a stray &#96; tick"
    assert markdown.prose("1024.\n# x") == r"1024\. \# x", "lines join: nothing can start a block"
    assert markdown.prose("see RA105", lambda w: "[RA105](RA105.md)") == "see [RA105](RA105.md)"
    assert markdown.fence("a\n```\nb").startswith("````")
    assert markdown.code("x`y") == "``x`y``"
    assert markdown.yaml_string('<i>"q"</i>') == json.dumps("&lt;i&gt;&quot;q&quot;&lt;/i&gt;")
    assert markdown.comment("a-->b") == "a- ->b" and "--" not in markdown.comment("a--->b")
    assert markdown.url("https://x.org/a(b)<c>") == "https://x.org/a%28b%29%3Cc%3E"
    with pytest.raises(ValueError):
        markdown.url("javascript:alert(1)")


def _front_matter(page: str) -> str:
    return page.split("\n---\n", 1)[0]


def _section(page: str, heading: str) -> str:
    """The text of an entry page's `## heading` section ('' when it has none)."""
    parts = page.split(f"\n## {heading}\n", 1)
    return parts[1].split("\n## ", 1)[0] if len(parts) == 2 else ""


def test_related_links_go_both_ways(files):
    by_code = CATALOGUE.by_code()
    for entry in ENTRIES:
        for other in entry.related:
            if other not in by_code or other == entry.code:
                continue
            assert f"]({other}.md)" in _section(files[f"site/docs/errors/{entry.code}.md"], "Related"), (entry.code, other)
            assert f"]({entry.code}.md)" in _section(files[f"site/docs/errors/{other}.md"], "Related"), \
                f"{entry.code} names {other}, so {other} shows {entry.code}"
    ra105 = _section(files["site/docs/errors/RA105.md"], "Related")
    namers = sorted(e.code for e in ENTRIES if "RA105" in e.related)
    assert len(namers) >= 2 and all(f"- [{code}: " in ra105 for code in namers), ra105
    listed = re.findall(r"^- \[([A-Z]+[0-9]+): ", ra105, re.M)
    assert len(listed) == len(set(listed)), "each related entry once"


def test_tags_link_to_their_place_on_the_by_tag_page(files):
    by_tag = files["site/docs/by-tag.md"]
    for entry in ENTRIES:
        page = files[f"site/docs/errors/{entry.code}.md"]
        for tag in entry.tags:
            anchor = markdown.anchor(tag)
            assert f"[{markdown.text(tag)}](../by-tag.md#{anchor})" in page, (entry.code, tag)
            heading = by_tag.split(f"{{ #{anchor} }}\n", 1)
            assert len(heading) == 2 and f"](errors/{entry.code}.md)" in heading[1].split("\n## ", 1)[0], (entry.code, tag)
        if entry.tags:
            assert "hide:\n  - tags\n" in _front_matter(page) + "\n", "Material's chips (not links) are hidden"


def test_descriptions_are_title_and_message(files):
    page = files["site/docs/errors/RA105.md"]
    assert ('description: "Query heads are not a multiple of key/value heads: '
            'num_q_heads=12 must be divisible by num_kv_heads=8"\n') in _front_matter(page)
    for entry in ENTRIES:
        front = _front_matter(files[f"site/docs/errors/{entry.code}.md"])
        description = json.loads(re.search(r"^description: (.*)$", front, re.M).group(1))
        assert description == html.escape(site.description(entry), quote=True)
        assert description.startswith(html.escape(entry.title.rstrip("."), quote=True) + (": " if entry.message else ""))
        assert len(description) < len(entry.title) + len(entry.message) + 400, "title and message, not the explanation"


def test_a_to_z_is_sorted_by_title_with_codes_beside(files):
    rows = [line for line in files["site/docs/errors/index.md"].splitlines() if line.startswith("| [")]
    codes = [re.search(r"\| \[([A-Z]+[0-9]+)\]\(\1\.md\) \|", row).group(1) for row in rows]
    assert sorted(codes) == sorted(e.code for e in ENTRIES)
    titles = [re.sub(r"^(a|an|the) ", "", re.sub(r"^[^A-Za-z0-9]+", "", CATALOGUE.get(code).title), flags=re.I).casefold()
              for code in codes]
    assert titles == sorted(titles), "A-Z by title, past a leading A, An or The"
    assert codes != sorted(codes)
    first = CATALOGUE.get(codes[0])
    assert rows[0].startswith(f"| [{markdown.prose(first.title, None, True)}]({first.code}.md) | [{first.code}]({first.code}.md) |")


def _explained_values(index: Index, text: str) -> list[str]:
    """`errkit explain`'s values for `text`, each as an entry page lists it: '- label: `value`' (beside a
    value, the label without its "(none: ...)" note: runtime.labelled)."""
    found, _, _ = explain_chunks(index, [text])
    res = answer.result(index, found[0].match)
    return [f"- {markdown.prose(runtime.labelled(s['label'], s['value']))}: {markdown.code(runtime.shown(s['value']))}"
            for fix in res["fixes"] for s in fix["suggestions"] if "value" in s]


def test_static_pages_show_the_suggestions_for_the_example(files):
    # the page's example is the text `errkit explain` answers: its values are explain's for that text.
    # RA105's wording is raised verbatim by four kernels and nothing in the text says which: the values
    # valid for all of them (issue 47), each one's own below (1, 2, 3, 4, 6, 12 for ours)
    page = files["site/docs/errors/RA105.md"]
    fixes_section = _section(page, "Fixes")
    assert "- valid num\\_kv\\_heads: `2, 4`" in fixes_section
    assert "raised by errkit's ranker attention kernel \\(errkit\\_attention\\.ranker\\_attention\\): `1, 2, 3, 4, 6, 12`" in fixes_section
    shown = re.sub(r'^<div id="errkit-values" .*$', "", page, flags=re.M)  # the script's data holds the expressions
    assert "divisors(num_q_heads)" not in shown, "no raw expression where the example gives values"
    top = page.split("\n## ", 1)[0]
    assert "With the example's values: valid num\\_kv\\_heads `2, 4`; nearest valid num\\_kv\\_heads `4`." in top
    index = Index(index_module.build(CATALOGUE))
    for entry in ENTRIES:  # every page's example answered as explain answers its text
        example = examples.raised_message(entry)
        if example is None or not entry.bad_examples:
            continue
        fixes_section = _section(files[f"site/docs/errors/{entry.code}.md"], "Fixes")
        for value in _explained_values(index, example):  # (the page may say more: its example fills what a wording does not print)
            assert value in fixes_section, (entry.code, value)
    for entry in ENTRIES:
        fixes = _section(files[f"site/docs/errors/{entry.code}.md"], "Fixes")
        for fix, computed in zip(entry.fixes, examples.example_suggestions(entry, CATALOGUE)):
            for s in computed:
                if "value" in s:
                    assert f"{markdown.prose(runtime.labelled(s['label'], s['value']))}: {markdown.code(runtime.shown(s['value']))}" in fixes, (entry.code, s)


def test_pages_open_with_message_meaning_and_first_fix(files):
    for entry in ENTRIES:
        page = files[f"site/docs/errors/{entry.code}.md"]
        top = page.split("\n## ", 1)[0].split(f"# {entry.code}: ", 1)[1]
        example = examples.raised_message(entry)
        assert (f"{site._sections(entry, CATALOGUE, CATALOGUE.by_code())['raised_as']}: {example}" if example is not None
                else entry.message) in top, entry.code
        assert markdown.prose(markdown.first_sentence(entry.explanation)) in top or "](" in top
        if entry.fixes:
            assert re.search(r"\*\*(Fix|Alternative) [0-9]+:\*\*", top), entry.code
            first = next((f for f in entry.fixes if not f.alternative), entry.fixes[0])
            if first.before and first.after:
                diff = site.change(first.before, first.after)
                assert markdown.fence(diff, "diff") in top, entry.code
                assert [line[1:] for line in diff.splitlines() if line[0] in " -"] == first.before.rstrip("\n").splitlines()
                assert [line[1:] for line in diff.splitlines() if line[0] in " +"] == first.after.rstrip("\n").splitlines()
            elif first.before or first.after:
                assert markdown.fence(first.before or first.after, "python") in top, entry.code
        assert top.index("```") < top.index("[All fixes](#fixes)"), "the answer before the metadata"


def test_reproduce_raises_the_entry(files):
    pytest.importorskip("jax")
    sys.path.insert(0, str(ROOT))
    shown = 0
    for entry in ENTRIES:
        found = examples.reproduce(entry, CATALOGUE)
        page = files[f"site/docs/errors/{entry.code}.md"]
        if found is None:
            assert "\n## Reproduce\n" not in page
            continue
        assert markdown.fence(found["code"], found["lang"]) in _section(page, "Reproduce"), entry.code
        if entry.explain_only:
            continue
        assert found["lang"] == "python", entry.code
        try:
            exec(compile(found["code"], f"<reproduce {entry.code}>", "exec"), {"__name__": "reproduce"})  # noqa: S102 - the catalogue's own code
        except Exception as err:  # noqa: BLE001 - what it raises is the point
            assert getattr(err, "code", None) == entry.code, (entry.code, err)
            shown += 1
        else:
            pytest.fail(f"{entry.code}: its Reproduce block raises nothing")
    assert shown >= 20
    assert "ranker_attention(q, k, v" in examples.reproduce(CATALOGUE.get("RA105"), CATALOGUE)["code"], "the kernel call"


class _Html(html.parser.HTMLParser):
    """Tags, attributes and text of a page's article."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.depth = [], [], 0

    def handle_starttag(self, tag, attrs):
        if tag == "article":
            self.depth += 1
        if self.depth:
            self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag == "article":
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.text.append(data)


def _article(path: Path) -> _Html:
    parser = _Html()
    parser.feed(path.read_text("utf-8"))
    return parser


def test_catalogue_text_renders_as_plain_text(evil_site):
    page = evil_site / "out" / "errors" / "XX101" / "index.html"
    article = _article(page)
    text = "".join(article.text)
    raw = page.read_text("utf-8")
    # the template's own (the gate, then the fold after the fixes); none from the catalogue
    ours = [("script", {"src": "../../assets/errkit/values.js"}), ("script", {"src": "../../assets/errkit/values.js", "data-fold": None})]
    assert [t for t in article.tags if t[0] == "script"] == ours
    for tag, attrs in [t for t in article.tags if t not in ours]:
        assert tag not in ("script", "img", "iframe", "style", "svg", "marquee", "b"), (tag, attrs)
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        assert not any(str(v).strip().lower().startswith("javascript:") for v in attrs.values()), (tag, attrs)
        assert tag not in ("ol", "blockquote") and not (tag == "div" and "admonition" in attrs.get("class", "")), tag
        if tag == "h1":
            assert "not" not in attrs.get("id", "")
    assert raw.count("<table") == 1, "only the generated values table"
    for shown in ('<script>alert("explanation")</script>', "plain text with bold, _italic_", "[a link](javascript:alert(3))",
                  "<img src=x onerror=alert(4)>", "# not a heading", '!!! danger "not an admonition"',
                  '{: onclick="alert(5)" }', "<!-- not a comment -->", "&amp; &lt;b&gt;", "\\*escaped\\*",
                  '--8<-- "README.md"', "<a href=javascript:alert(7)>click</a> emph", "<svg onload=alert(10)>",
                  "<b>upstream</b> [src](javascript:alert(11))", "<marquee>note</marquee>", "<b>label</b>",
                  '<img src=x onerror=alert("param")> n | cell', "a stray ` backtick"):
        assert shown in text, shown
    # `*x*` and `**x**` in prose are emphasis, holding only escaped text; `\*x\*` stays as written
    for shown in ("<strong>bold</strong>", "<em>emph</em>", "<strong>n</strong>"):
        assert shown in raw, shown
    assert "<b>inside code</b>" in text, "code spans keep their text"
    assert 'x = "</script><script>alert(8)</script>"' in text, "before/after code verbatim"
    title = re.search(r"<title>(.*?)</title>", raw, re.S).group(1)
    assert "<script>" not in title and "&lt;script&gt;" in title
    for other in (evil_site / "out" / "index.html", evil_site / "out" / "errors" / "index.html", evil_site / "out" / "by-tag" / "index.html"):
        assert "<script>alert" not in other.read_text("utf-8")


def test_evil_catalogue_in_the_json_index_is_data(evil_site):
    data = json.loads((evil_site / "site" / "docs" / "assets" / "errkit" / "index.json").read_text())
    assert data["entries"]["XX101"]["title"].startswith('<script>alert("title")')
    js = (evil_site / "site" / "docs" / "assets" / "errkit" / "suggest.js").read_text()
    assert "<\\/b>" in js and "</b>" not in js and "</script" not in js


# -- regexes and expressions in JavaScript ---------------------------------------------------------


def test_regex_translation_units():
    assert js.regex_to_js(r"(?P<g0>-?[0-9]+)\ must\ be") == r"(?<g0>-?[0-9]+) must be"
    assert js.regex_to_js(r"a.b$") == r"a[^\n]b(?=\n?$)"
    assert js.regex_to_js(r"x\sy") == "x[" + js._SPACE + "]y"
    assert js.regex_to_js(r"[^'\\\n]{2,}\{\}") == r"[^'\\\n]{2,}\{\}"
    assert js.regex_to_js(r"a{,3}(?P=g)") == r"a{0,3}\k<g>"
    assert js.regex_to_js(r"[]a-]") == r"[\]a-]"
    for bad in (r"\d+", r"\w", r"\bx", r"(?i)x", r"(?>x)", r"(?(1)a|b)", r"a*+"):
        with pytest.raises(js.Unsupported):
            js.regex_to_js(bad)
    with pytest.raises(ValueError):
        js.check_regex(r"a\nb", r"a.b", ["a\nb"])


def test_every_wording_regex_is_translated_and_checked():
    data = site_index(CATALOGUE)
    py = index_module.build(CATALOGUE)
    assert [w["regex"] for w in data["wordings"]] == [js.regex_to_js(w["regex"]) for w in py["wordings"]]
    assert {k: v for k, v in data.items() if k not in ("wordings", "entries") + index_format.SITE_TOP_KEYS} == \
        {k: v for k, v in py.items() if k not in ("wordings", "entries")}, "the paste page reuses the explain index"


def test_helpers_have_javascript_twins():
    assert js.JS_HELPERS == set(fixes.HELPERS)
    runtime = (ASSETS / "runtime.js").read_text()
    for name in fixes.HELPERS:
        assert re.search(rf"\n    {name}: [a-z_]+,\n", runtime), f"runtime.js h.{name}"


# -- building the site ----------------------------------------------------------------------------


def test_mkdocs_config_matches_the_catalogue():
    import yaml as _yaml  # PyYAML comes with mkdocs

    class _Loader(_yaml.SafeLoader):
        pass

    _Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    config = _yaml.load((SITE / "mkdocs.yml").read_text(), Loader=_Loader)
    settings = CATALOGUE.settings
    assert config["site_url"].rstrip("/") == settings.docs_url.rstrip("/")
    assert "repo_url" not in config, "the repository widget calls api.github.com from the reader's browser"
    assert settings.repo_url in [link["link"] for link in config["extra"]["social"]]
    assert config["docs_dir"] == "docs" and config["site_dir"] == "build"
    for script in config["extra_javascript"] + config["extra_css"]:
        assert (SITE / "docs" / script).is_file(), script
    def pages(items):  # a nav item is {title: page} or {section: [items]}
        for item in items:
            value = next(iter(item.values()))
            yield from pages(value) if isinstance(value, list) else [value]

    nav_files = list(pages(config["nav"]))
    assert "adopt.md" in nav_files and "guide/explain.md" in nav_files
    for page in nav_files:
        assert (SITE / "docs" / page).is_file(), page
    hand_written = {str(p.relative_to(SITE / "docs")) for p in (SITE / "docs").rglob("*.md")
                    if not p.relative_to(SITE / "docs").parts[0] == "errors" and not p.name.startswith("by-")}
    assert hand_written <= set(nav_files), hand_written - set(nav_files)  # no hand-written page left out of the nav


def _check_built(out: Path):
    for entry in ENTRIES:
        page = out / "errors" / entry.code / "index.html"
        assert page.is_file(), entry.code
        article = _article(page)
        headings = [a.get("id") for t, a in article.tags if t == "h2"]
        for heading in SECTIONS:
            assert re.sub(r"[^a-z]+", "-", heading.lower()) in headings, (entry.code, heading, headings)
        edits = [a["href"] for t, a in article.tags if t == "a" and "errkit-edit" in a.get("class", "")]
        assert edits == [f"{CATALOGUE.settings.repo_url}/edit/main/{site.source_path(CATALOGUE, entry)}"]
    for asset in ("runtime.js", "suggest.js", "match.js", "dom.js", "paste.js", "values.js", "index.json", "site.css"):
        assert (out / "assets" / "errkit" / asset).is_file()
    assert (out / "paste" / "index.html").is_file()


def test_built_tag_links_and_emphasis(built_site):
    by_tag = (built_site / "by-tag" / "index.html").read_text("utf-8")
    for entry in ENTRIES:
        raw = (built_site / "errors" / entry.code / "index.html").read_text("utf-8")
        links = re.findall(r'<a class="errkit-tag" href="\.\./\.\./by-tag/#([^"]+)">([^<]+)</a>', raw)
        assert [tag for _, tag in links] == list(entry.tags), (entry.code, links)
        for anchor, _ in links:
            assert f'id="{anchor}"' in by_tag, anchor
        if entry.tags:
            assert re.search(r'<nav class="md-tags"\s+hidden', raw), entry.code
    assert "the type's <em>name</em>" in (built_site / "errors" / "RA210" / "index.html").read_text("utf-8")


def test_mkdocs_build_strict_one_page_per_entry(built_site):
    _check_built(built_site)
    pages = {p.parent.name for p in (built_site / "errors").glob("*/index.html")}
    assert pages == {e.code for e in ENTRIES}


@pytest.fixture(scope="module")
def zensical_site(fresh_site):
    pytest.importorskip("zensical", reason="zensical is not installed (pip install -e '.[docs]')")
    done = subprocess.run([sys.executable, "-m", "zensical", "build", "--strict", "-f", fresh_site / "mkdocs.yml"],
                          capture_output=True, text=True, timeout=180, cwd=fresh_site)
    assert done.returncode == 0, done.stdout + done.stderr
    return fresh_site / "build"


def test_zensical_builds_the_same_site(zensical_site):
    _check_built(zensical_site)
    assert (zensical_site / "search.json").is_file()


# -- a real browser -------------------------------------------------------------------------------


# Real messages as upstream kernels print them, with the entry, values and a suggestion each must give.
UPSTREAM = [
    ("Traceback (most recent call last):\n  File \"/home/me/train.py\", line 41, in <module>\n"
     "    config = attention_mgpu.TuningConfig(block_q=96, block_kv=128, max_concurrent_steps=2)\n"
     "  File \"<string>\", line 7, in __init__\n"
     "  File \"/usr/lib/python3.11/site-packages/jax/experimental/pallas/ops/gpu/attention_mgpu.py\", line 58, in __post_init__\n"
     "    raise ValueError(f\"{self.block_q=} must be a multiple of 64\")\n"
     "ValueError: self.block_q=96 must be a multiple of 64\n"),
    "ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8",
]


def _expected(text: str) -> dict | None:
    index = Index(index_module.build(CATALOGUE))
    found, _, _ = explain_chunks(index, [text])
    return answer.result(index, found[0].match) if found else None


def test_browser_entry_page_search_and_paste(browser, served):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    cases = [(t, _expected(t)) for t in UPSTREAM]
    cases = [(t, r) for t, r in cases if r is not None]
    assert cases, "the catalogue recognises the upstream messages"
    text, want = cases[0]
    entry = CATALOGUE.get(want["code"])
    errors: list[str] = []

    for scheme in ("light", "dark"):
        context = browser.new_context(viewport={"width": 1280, "height": 1000}, color_scheme=scheme)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))

        # an entry page renders its sections
        page.goto(served + f"errors/{entry.code}/")
        assert entry.code in page.locator("article h1").inner_text()
        headings = page.locator("article h2").all_inner_texts()
        for heading in SECTIONS:
            assert any(h.strip().startswith(heading) for h in headings), (heading, headings)
        edit = page.locator("article a.errkit-edit")
        assert edit.get_attribute("href").endswith(site.source_path(CATALOGUE, entry))
        scheme_attr = page.locator("body").get_attribute("data-md-color-scheme")
        assert scheme_attr == ("default" if scheme == "light" else "slate")
        page.screenshot(path=str(ARTIFACTS / f"entry-{scheme}.png"), full_page=True)

        # the paste page, reached by instant navigation from the home page
        page.goto(served)
        page.locator("nav.md-nav--primary a", has_text="Paste your error").first.click()
        page.wait_for_url(re.compile(r".*/paste/$"))
        page.wait_for_selector("#errkit-paste[data-ready=yes]", timeout=15000)
        for paste, expected in cases:
            page.fill("#errkit-input", paste)
            page.click("#errkit-explain")
            card = page.locator(f".errkit-result--primary[data-code={expected['code']}]")
            card.wait_for(timeout=10000)
            for name, value in expected["params"].items():
                shown = card.locator(f"tr[data-param={name}] .errkit-value").inner_text()
                assert shown == runtime.shown(value), (name, shown, value)
            for fix in expected["fixes"]:
                for s in fix["suggestions"]:
                    if "value" in s:
                        assert f"{s['label']}: {runtime.shown(s['value'])}" in card.inner_text()
        page.fill("#errkit-input", text)
        page.click("#errkit-explain")
        page.locator(f".errkit-result--primary[data-code={want['code']}]").wait_for()
        page.screenshot(path=str(ARTIFACTS / f"paste-{scheme}.png"), full_page=True)
        if scheme == "light":
            page.locator(".errkit-result--primary a.errkit-open").click()
            page.wait_for_url(re.compile(rf".*/errors/{want['code']}/(\?[^#]*)?$"))
            assert want["code"] in page.locator("article h1").inner_text()
        context.close()

    # search finds an entry by its code and by words of its message
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.goto(served)
    words = examples.raised_message(entry)  # the message as a reader pastes it into search
    for query in (entry.code, words):
        page.locator(".md-search__input").first.click()
        page.locator(".md-search__input").first.fill("")
        page.locator(".md-search__input").first.press_sequentially(query, delay=20)
        hit = page.locator(f".md-search-result__item a[href*='errors/{entry.code}/']")
        hit.first.wait_for(timeout=15000)
        page.keyboard.press("Escape")
    context.close()
    assert not errors, errors


def test_browser_paste_page_on_the_zensical_build(browser, zensical_site):
    """The paste page's plain JavaScript also runs in Zensical's theme (its instant navigation too)."""
    for base in serve(zensical_site):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(base)
        page.locator("a", has_text="Paste your error").first.click()
        page.wait_for_url(re.compile(r".*/paste/$"))
        page.wait_for_selector("#errkit-paste[data-ready=yes]", timeout=15000)
        text, want = next((t, r) for t, r in ((t, _expected(t)) for t in UPSTREAM) if r is not None)
        page.fill("#errkit-input", text)
        page.click("#errkit-explain")
        page.locator(f".errkit-result--primary[data-code={want['code']}]").wait_for(timeout=10000)
        page.screenshot(path=str(ARTIFACTS / "paste-zensical.png"), full_page=True)
        page.close()
        assert not errors, errors

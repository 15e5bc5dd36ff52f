"""Search finds errors by their words, in a real browser on the real built site.

One chromium page types into Material's search box (the real lunr worker, with the site's
`separator` and fields from mkdocs.yml and the queries rewritten by assets/errkit/search.js) and
reads the result list, for every entry: its message as raised (rendered from its first bad
example) lists it first for at least 95 % of the entries and within the first three for all; its
class name finds it; a typo finds RA105; index pages never appear. A query that looks like an
error offers "Explain this", a link to the paste page with the text in the fragment (#text=), and
the home page's paste box sends its text there the same way.

The module builds the site once (test_site's fixtures) and runs one browser session (about 45 s).
Needs the answer-first entry pages and the paste page's #text= reading of branch i18-pages: on the
older entry layout RA716's message ranks it 12th, and the paste page leaves its box empty.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest

from errkit.generate.examples import raised_message
from errkit.generate.validators import module_name
from test_site_pages import CATALOGUE, ENTRIES

INDEX_PAGES = re.compile(r"/(errors/|by-area/|by-tag/|by-exception/)$")
ENTRY_PAGE = re.compile(r"/errors/([A-Z]+[0-9]+)/$")


def _module() -> str:
    return module_name(CATALOGUE)


def _messages() -> list[tuple[str, str]]:
    """(code, the entry's message as raised) for every entry whose message renders."""
    out = []
    for entry in ENTRIES:
        example = raised_message(entry)
        if example:
            out.append((entry.code, example))
    return out


class Search:
    """Material's search box on one page: type a query, read the pages the result list shows."""

    def __init__(self, page):
        self.page = page
        self.box = page.locator(".md-search__input").first

    def open(self):
        """Focus the box and wait for the search worker's index: a query typed while the result
        list still says "Initializing search" can come back empty (seen once under a loaded CI)."""
        self.box.click()
        self.page.wait_for_function(
            """() => { const meta = document.querySelector('.md-search-result__meta');
                       return meta && meta.textContent.trim() && !/^Initializing/.test(meta.textContent.trim()); }""",
            timeout=30000)

    def _set(self, text: str):
        self.box.fill(text)
        self.box.press("End")  # Material reads the box on keyup

    def query(self, text: str) -> list[str]:
        """Addresses of the result list's pages, best first (an empty list: no results)."""
        self._set("")
        self.page.wait_for_function("() => !document.querySelector('.md-search-result__list > li')")
        self._set(text)
        self.page.wait_for_function(
            """() => document.querySelector('.md-search-result__list > li') ||
                     /^No matching/.test(document.querySelector('.md-search-result__meta').textContent)""")
        return self.page.evaluate(
            """() => [...document.querySelectorAll('.md-search-result__list > li.md-search-result__item')]
                     .map(li => li.querySelector('a').href.split(/[?#]/)[0])""")


def _codes(hrefs: list[str]) -> list[str]:
    return [m.group(1) for m in map(ENTRY_PAGE.search, hrefs) if m]


@pytest.fixture(scope="module")
def search(browser, served):  # noqa: F811
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(served)
    box = Search(page)
    box.open()
    yield box
    context.close()
    assert not errors, errors


def test_message_as_raised_lists_its_entry_first(search, record_property):
    messages = _messages()
    assert len(messages) >= 150, "the catalogue's messages render from their examples"
    ranks: dict[str, int] = {}
    for code, message in messages:
        hrefs = search.query(message)
        assert not [h for h in hrefs if INDEX_PAGES.search(h)], (message, "index pages are left out of search")
        codes = _codes(hrefs)
        ranks[code] = codes.index(code) if code in codes else len(codes) + 100
    first = sum(1 for r in ranks.values() if r == 0) / len(ranks)
    record_property("search_first", round(100 * first, 1))
    record_property("search_top3", round(100 * sum(1 for r in ranks.values() if r < 3) / len(ranks), 1))
    print(f"\nmessage as raised: first for {100 * first:.1f} % of {len(ranks)} entries")
    assert {c: r + 1 for c, r in ranks.items() if r >= 3} == {}, "every entry's message lists it within the first three"
    assert first >= 0.95, {c: r + 1 for c, r in ranks.items() if r}


def test_class_name_finds_its_entry(search):
    named = [e for e in ENTRIES if not e.explain_only and e.class_name]
    assert named
    for entry in named:
        codes = _codes(search.query(entry.class_name))
        assert codes[:1] == [entry.code], (entry.class_name, codes[:3])
    # the whole dotted name, as a traceback prints it, too
    entry = CATALOGUE.get("RA105")
    assert _codes(search.query(f"{_module()}.{entry.class_name}"))[:1] == ["RA105"]


def test_a_typo_still_finds_the_entry(search):
    assert "RA105" in _codes(search.query("divisble"))
    assert _codes(search.query("num_q_heads divisble"))[:1] == ["RA105"]


def test_index_pages_never_appear(search):
    for query in ("Errors by area", "by exception class", "Errors A–Z", "inputs", "ValueError", "gqa"):
        hrefs = search.query(query)
        assert hrefs, query
        assert not [h for h in hrefs if INDEX_PAGES.search(h)], (query, hrefs)


def test_an_error_message_offers_explain_this(search, served):
    page = search.page
    offer = page.locator("#errkit-search-explain")
    for words in ("divisble", "GqaHeadCountError", "block size"):
        search.query(words)
        assert offer.is_hidden(), words
    text = f"{_module()}.GqaHeadCountError: num_q_heads=12 must be divisible by num_kv_heads=8"
    for query in (text, "num_q_heads=12 must be divisible by num_kv_heads=8",
                  "ValueError: something went wrong", "q, k and v must all be 4D, got: three arrays of another rank"):
        search.query(query)
        assert offer.is_visible(), query
        href = offer.locator("a").get_attribute("href")
        assert href.startswith(f"{served}paste/#text="), href
        assert unquote(href.split("#text=", 1)[1]) == query
    search.query(text)
    offer.locator("a").click()
    page.wait_for_url(re.compile(r".*/paste/#text="))
    assert unquote(page.url.split("#text=", 1)[1]) == text
    assert not page.evaluate("document.getElementById('__search').checked"), "the search dialog closes"
    # the paste page reads #text= (values helper's paste.js): the text is in its box, explained
    page.wait_for_selector("#errkit-paste[data-ready=yes]")
    assert page.input_value("#errkit-input") == text
    page.locator(".errkit-result--primary[data-code=RA105]").wait_for()
    page.goto(served)
    search.open()


def test_home_page_paste_box_sends_to_the_paste_page(browser, served):  # noqa: F811
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(served)
    text = "ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8\n  (and a second line)"
    page.fill("#errkit-home-paste textarea", text)
    page.locator("#errkit-home-paste button[type=submit]").click()
    page.wait_for_url(re.compile(r".*/paste/#text="))
    assert page.url.startswith(f"{served}paste/#text=")
    assert unquote(page.url.split("#text=", 1)[1]) == text
    page.wait_for_selector("#errkit-paste[data-ready=yes]")
    assert page.input_value("#errkit-input") == text
    page.locator(".errkit-result--primary[data-code=RA105]").wait_for()
    page.close()


def test_the_search_index_is_fetched_when_the_reader_reaches_for_search(browser, served):  # noqa: F811
    """A page loads without the search index (most of its bytes); focusing the search field, as
    the "/" shortcut does, fetches it and search answers."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    fetched = []
    page.on("request", lambda r: fetched.append(r.url) if r.url.endswith("search/search_index.json") else None)
    page.goto(served + "errors/RA105/")
    page.wait_for_load_state("networkidle")
    assert fetched == [], "the index was fetched before the reader reached for search"
    page.keyboard.press("/")
    page.locator(".md-search__input").first.press_sequentially("RA105", delay=20)
    page.locator(".md-search-result__item a[href*='errors/RA105/']").first.wait_for(timeout=15000)
    assert len(fetched) == 1
    page.goto(served + "?q=RA220")  # an address that opens search sends it at once
    page.locator(".md-search-result__item a[href*='errors/RA220/']").first.wait_for(timeout=15000)
    page.close()


def test_the_search_index_leaves_out_code_and_repeated_sections(built_site):
    """Reproduce (code) and Related (other entries' titles) are on the pages but not in Material's
    search index, which every page loads; the ranks above are measured on the index without them.
    ('What <kernel> requires', the same rules on each page of a kernel, stays: without it a search for
    RA220's words, 'must multiple', no longer lists RA220 in test_browser_entry_page_search_and_paste.)"""
    import json

    docs = json.loads((built_site / "search" / "search_index.json").read_text("utf-8"))["docs"]
    sections = {d["location"].split("#", 1)[1]: d["text"] for d in docs if d["location"].startswith("errors/RA") and "#" in d["location"]}
    left_in = sorted(s for s, text in sections.items()
                     if text and s in ("reproduce", "related"))
    assert not left_in, left_in  # (Material keeps an empty record for an excluded section's anchor)
    assert {"fixes", "the-message", "you-may-also-see-this-as"} <= set(sections)
    page = (built_site / "errors" / "RA105" / "index.html").read_text("utf-8")
    assert 'id="reproduce"' in page and 'id="related"' in page, "still on the page"

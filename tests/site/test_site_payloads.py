"""The fixture catalogue full of injections (tests/fixtures/site/catalog: every entry field, and its
settings' `name`, which every entry page of the catalogue's own errors names) generated, built, and
loaded in Debian's chromium: no payload runs, each is shown as text.

Before issue 48 the settings' `name` was written raw into every entry page: a lint-clean `<script>`
in it ran on every load."""

from __future__ import annotations

from site_build import serve

PAGES = ["errors/XX101/", "errors/XX102/", "errors/", "by-tag/", "by-area/", "by-exception/", ""]


def test_no_catalogue_text_runs_in_chromium(evil_site, browser):
    name = "<script>window.pwned = \"name\"</script><img src=x onerror=alert(\"name\")> *kernel*"
    for address in serve(evil_site / "out"):
        tab = browser.new_page()
        events: list[str] = []
        tab.on("dialog", lambda d: (events.append(d.message), d.dismiss()))
        tab.on("pageerror", lambda exc: events.append(str(exc)))
        for page in PAGES:
            tab.goto(address + page)
            tab.wait_for_load_state("load")
            assert tab.evaluate("typeof window.pwned") == "undefined", (page, tab.evaluate("window.pwned"))
            assert tab.locator("article script:not([src])").count() == 0, page
            for anchor in tab.locator("article a").all():
                assert not (anchor.get_attribute("href") or "").lower().startswith("javascript:"), page
            if page == "errors/XX102/":  # raised by the catalogue's own kernel: its name, as text
                assert name in tab.inner_text("article"), tab.inner_text("article")[:500]
        assert not events, events
        tab.close()

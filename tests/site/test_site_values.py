"""Entry pages answer first, with the reader's values, in a real browser on
the real built site: the address's values give the fixes computed for them (values.js over the
paste page's own code), the paste page keeps its text in the address fragment so Back restores the
paste and its result, and the first screen of an entry on a phone holds the message and the first
fix with its code. Screenshots of an entry page with values, 390 and 1280 px, light and dark, go to
artifacts/screenshots/.
"""

from __future__ import annotations

import re

import pytest

from errkit.core import runtime
from errkit.core.suggest import suggestions
from site_build import serve
from test_site_pages import ARTIFACTS, CATALOGUE

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 1000}


def _expected(code: str, params: dict) -> list[list[str]]:
    """Per fix of the entry, `label: value` of each suggestion `errkit explain` computes for params
    when nothing tells which kernel raised the error (an entry page's address holds only values): the
    value valid for every kernel of the fix (errkit/core/suggest.py)."""
    from errkit.catalogue import kernels

    entry = CATALOGUE.get(code)
    out = []
    for fix, suggest, cases in zip(entry.fixes, kernels.suggestion_sources(entry, CATALOGUE.kernels),
                                   kernels.case_sources(entry, CATALOGUE.kernels)):
        found = suggestions({"suggest": suggest, "sets": dict(fix.sets), "cases": cases}, params)
        out.append([f"{s['label']}: {runtime.shown(s['value'])}" for s in found if "value" in s])
    return out


@pytest.fixture(scope="module")
def errors_seen():
    seen: list[str] = []
    yield seen
    assert not seen, seen


def _page(browser, errors_seen, viewport=DESKTOP, scheme="light"):
    context = browser.new_context(viewport=viewport, color_scheme=scheme)
    page = context.new_page()
    page.on("pageerror", lambda exc: errors_seen.append(str(exc)))
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    return context, page, requests


def _suggestions(page) -> list[list[str]]:
    return page.eval_on_selector_all(
        "#errkit-values li[data-fix]",
        "items => items.map(li => Array.from(li.querySelectorAll('.errkit-suggestion')).map(s => Array.from(s.childNodes)"
        ".filter(n => !(n.classList && n.classList.contains('errkit-cases'))).map(n => n.textContent).join('')))")


def _cases(page) -> list[list[str]]:
    """Each suggestion's values in its cases (each kernel's own, what the message cannot show)."""
    return page.eval_on_selector_all(
        "#errkit-values li[data-fix]",
        "items => items.map(li => Array.from(li.querySelectorAll('.errkit-suggestion')).map(s => "
        "Array.from(s.querySelectorAll('.errkit-case')).map(c => c.textContent)))")


def test_entry_address_with_values_shows_the_fixes_for_them(browser, served, errors_seen):
    context, page, requests = _page(browser, errors_seen)
    page.goto(served + "errors/RA105/?num_q_heads=12&num_kv_heads=8")
    page.wait_for_selector("#errkit-values[data-ready=yes]", timeout=15000)
    box = page.locator("#errkit-values")
    assert box.is_visible()
    assert "For your values" in box.inner_text()
    assert page.locator("#errkit-values code[data-param=num_q_heads]").inner_text() == "num_q_heads=12"
    shown = _suggestions(page)
    # the address tells no kernel: the values valid for every kernel raising RA105, each one's own below (issue 47)
    assert shown[0][0] == "valid num_kv_heads: 2, 4"
    assert "raised by errkit's ranker attention kernel (errkit_attention.ranker_attention): 1, 2, 3, 4, 6, 12" in _cases(page)[0][0]
    assert shown == _expected("RA105", {"num_q_heads": 12, "num_kv_heads": 8}), "the same numbers as errkit explain"

    # other values, other fixes (not the example's); a shape read from commas, as query_string writes it
    page.goto(served + "errors/RA105/?num_q_heads=10&num_kv_heads=4")
    page.wait_for_selector("#errkit-values[data-ready=yes]")
    assert _suggestions(page) == _expected("RA105", {"num_q_heads": 10, "num_kv_heads": 4})
    assert _suggestions(page)[0][0] == "valid num_kv_heads: 2"
    assert "raised by errkit's ranker attention kernel (errkit_attention.ranker_attention): 1, 2, 5, 10" in _cases(page)[0][0]
    page.goto(served + "errors/RA102/?q_shape=8,64,8,128&k_shape=1,512,2,128")
    page.wait_for_selector("#errkit-values[data-ready=yes]")
    assert _suggestions(page) == _expected("RA102", {"q_shape": (8, 64, 8, 128), "k_shape": (1, 512, 2, 128)})
    assert _suggestions(page)[0] == ["k shape that fits q: 8, 512, 2, 128"]

    # without values the block stays hidden; a value that is not the entry's is reported, not used
    page.goto(served + "errors/RA105/")
    page.wait_for_selector("#errkit-values[data-ready=no-values]", state="attached")
    assert not page.locator("#errkit-values").is_visible()
    page.goto(served + "errors/RA105/?num_q_heads=12&num_kv_heads=8&block_q=%3Cb%3E")
    page.wait_for_selector("#errkit-values[data-ready=yes]")
    assert "Not read" in page.locator("#errkit-values").inner_text() and "block_q" in page.locator("#errkit-values").inner_text()
    assert page.locator("#errkit-values b").count() == 0
    assert not [u for u in requests if u.endswith("errkit/index.json")], "the page carries its own data: no index is loaded"
    context.close()


# What Material's instant navigation does on an internal link (its sitemap names the published
# site's addresses, so a local server's pages load whole): the new page's article put in place of the
# old one, the address changed, and each script of the new article run again as a new element.
SWAP = """async (address) => {
  const html = await (await fetch(address)).text();
  const article = new DOMParser().parseFromString(html, "text/html").querySelector("article");
  history.pushState({}, "", address);
  const old = document.querySelector("article");
  old.replaceWith(document.adoptNode(article));
  for (const script of Array.from(article.querySelectorAll("script"))) {
    const fresh = document.createElement("script");
    for (const attr of Array.from(script.attributes)) fresh.setAttribute(attr.name, attr.value);
    script.replaceWith(fresh);
  }
}"""


def test_a_swapped_in_entry_loads_its_part_and_folds_its_examples(browser, served, errors_seen):
    """Instant navigation from one entry with values to another: the bundle has run, the second
    entry's part of suggest.js has not; values.js appends it and fills the box once it ran."""
    context, page, requests = _page(browser, errors_seen)
    page.goto(served + "errors/RA105/?num_q_heads=12&num_kv_heads=8")
    page.wait_for_selector("#errkit-values[data-ready=yes][data-folded=yes]", timeout=15000)
    page.evaluate("() => { window.errkitSameDocument = true; }")
    page.evaluate(SWAP, served + "errors/RA102/?q_shape=8,64,8,128&k_shape=1,512,2,128")
    page.wait_for_selector("#errkit-values[data-ready=yes][data-folded=yes]", timeout=15000)
    assert page.evaluate("() => window.errkitSameDocument === true")
    assert _suggestions(page) == _expected("RA102", {"q_shape": (8, 64, 8, 128), "k_shape": (1, 512, 2, 128)})
    assert page.locator("details.errkit-example-fold").count() == page.locator(".errkit-example[data-fix]").count() > 0
    loaded = [u.split("/assets/errkit/", 1)[1] for u in requests if "/assets/errkit/" in u and u.endswith(".js")]
    assert loaded.count("values.bundle.js") == 1 and {"suggest/RA105.js", "suggest/RA102.js"} <= set(loaded), loaded
    context.close()


def test_back_from_an_entry_restores_the_paste_and_its_result(browser, served, errors_seen):
    context, page, _ = _page(browser, errors_seen)
    text = "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nValueError: num_q_heads=12 must be divisible by num_kv_heads=8"
    page.goto(served + "paste/")
    page.wait_for_selector("#errkit-paste[data-ready=yes]", timeout=15000)
    page.fill("#errkit-input", text)
    page.click("#errkit-explain")
    card = page.locator(".errkit-result--primary[data-code=RA105]")
    card.wait_for()
    assert "#text=" in page.url
    result = card.inner_text()

    page.locator(".errkit-result--primary a.errkit-open").click()
    page.wait_for_url(re.compile(r".*/errors/RA105/\?num_q_heads=12&num_kv_heads=8$"))
    page.wait_for_selector("#errkit-values[data-ready=yes]")
    assert _suggestions(page)[0][0] == "valid num_kv_heads: 2, 4", "the entry opened with the pasted values"
    assert "raised by errkit's ranker attention kernel (errkit_attention.ranker_attention): 1, 2, 3, 4, 6, 12" in _cases(page)[0][0]

    page.go_back()
    page.wait_for_url(re.compile(r".*/paste/#text=.*"))
    page.wait_for_selector("#errkit-paste[data-ready=yes]")
    page.locator(".errkit-result--primary[data-code=RA105]").wait_for()
    assert page.input_value("#errkit-input") == text
    assert page.locator(".errkit-result--primary[data-code=RA105]").inner_text() == result

    # the address alone (shared, or reloaded) gives the same paste and result
    shared = page.url
    other, fresh, _ = _page(browser, errors_seen)
    fresh.goto(shared)
    fresh.locator(".errkit-result--primary[data-code=RA105]").wait_for(timeout=15000)
    assert fresh.input_value("#errkit-input") == text
    other.close()

    # clearing the paste clears the fragment
    page.click("#errkit-clear")
    assert "#text=" not in page.url
    context.close()


def _within_first_screen(page, locator) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"]


def test_phone_first_screen_has_the_message_and_the_first_fix(browser, served, errors_seen):
    context, page, _ = _page(browser, errors_seen, viewport=PHONE)
    page.goto(served + "errors/RA105/")
    article = page.locator("article")
    message = article.locator("pre").first
    assert "num_q_heads=12 must be divisible by num_kv_heads=8" in message.inner_text()
    assert _within_first_screen(page, message), message.bounding_box()
    fix = article.locator("p", has_text="Fix 1:").first
    assert "Set num_kv_heads to a divisor of num_q_heads" in fix.inner_text()
    assert _within_first_screen(page, fix), fix.bounding_box()
    change = article.locator("pre").nth(1)  # the fix's before and after, as a diff
    assert "-num_q_heads, num_kv_heads = 12, 8" in change.inner_text()
    assert "+num_q_heads, num_kv_heads = 12, 4" in change.inner_text()
    assert _within_first_screen(page, change), change.bounding_box()
    context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_screenshots_of_an_entry_with_values(browser, served, errors_seen, viewport):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        context, page, _ = _page(browser, errors_seen, viewport=viewport, scheme=scheme)
        page.goto(served + "errors/RA105/?num_q_heads=12&num_kv_heads=8")
        page.wait_for_selector("#errkit-values[data-ready=yes]", timeout=15000)
        path = ARTIFACTS / f"entry-values-{viewport['width']}-{scheme}.png"
        page.screenshot(path=str(path))
        assert path.stat().st_size > 10_000
        context.close()


def test_values_from_the_address_are_text_on_the_evil_catalogue(browser, evil_site, errors_seen):
    """The fixture catalogue full of injections: the address's values and the catalogue's prose are
    put in the page as text (emphasis as <em>), never as HTML."""
    for base in serve(evil_site / "out"):
        context, page, _ = _page(browser, errors_seen)
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(base + "errors/XX101/?n=-1&%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E=1")
        page.wait_for_selector("#errkit-values[data-ready=yes]", timeout=15000)
        box = page.locator("#errkit-values")
        assert page.locator("#errkit-values li[data-fix='1'] em").inner_text() == "emph"
        assert "<a href=javascript:alert(7)>click</a>" in box.inner_text()
        assert box.locator("a, img, script, b").count() == 0
        assert "<b>label</b>: 0" in box.inner_text(), "n + 1 for n=-1"
        assert "<img src=x onerror=alert(1)>" in box.inner_text(), "an unknown name is reported as text"
        assert not dialogs
        context.close()


# -- the page never contradicts the reader's values (issue 29 item 1) ------------------------------

# The visible text of the article: innerText leaves out what is not rendered (display: none, a
# closed <details>' content).
VISIBLE = "document.querySelector('article').innerText"


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_the_entry_example_never_recommends_the_readers_failing_value(browser, served, errors_seen, viewport):
    context, page, _ = _page(browser, errors_seen, viewport=viewport)
    page.goto(served + "errors/RA105/?num_q_heads=14&num_kv_heads=4")
    page.wait_for_selector("#errkit-values[data-ready=yes][data-folded=yes]", timeout=15000)
    assert _suggestions(page)[0][0] == "valid num_kv_heads: 2"
    assert "raised by errkit's ranker attention kernel (errkit_attention.ranker_attention): 1, 2, 7, 14" in _cases(page)[0][0]
    shown = page.evaluate(VISIBLE)
    # the example (12 query heads) suggests 4 kv heads, the reader's failing value for 14
    for example in ("12, 4", "1, 2, 3, 4, 6, 12", "With the example's values"):
        assert example not in shown, example
    assert not page.locator(".errkit-example--first").is_visible()
    # under Fixes: each fix's suggestions for the reader's values, its worked example folded and labelled
    yours = page.locator(".errkit-example-yours[data-fix='1']")
    assert "valid num_kv_heads: 2\n" in yours.inner_text() and "raised by errkit's ranker attention kernel (errkit_attention.ranker_attention): 1, 2, 7, 14" in yours.inner_text()
    folds = page.locator("details.errkit-example-fold")
    assert folds.count() == 2
    for n in range(2):
        assert folds.nth(n).locator("summary").inner_text() == "The entry's example (num_q_heads=12, num_kv_heads=8), not your values"
        assert folds.nth(n).get_attribute("open") is None
    folds.first.locator("summary").click()  # the reader may still open it
    assert "num_q_heads, num_kv_heads = 12, 4" in folds.first.inner_text()

    # without values: the example as it was, nothing folded
    page.goto(served + "errors/RA105/")
    page.wait_for_selector("#errkit-values[data-ready=no-values]", state="attached")
    shown = page.evaluate(VISIBLE)
    assert "+num_q_heads, num_kv_heads = 12, 4" in shown and "With the example's values" in shown
    assert page.locator("details.errkit-example-fold").count() == 0
    context.close()


# -- no layout shift (issue 29 item 2) -------------------------------------------------------------

# Every layout shift of the page, without recent input, summed (the Layout Instability API): installed
# before the page's own scripts run, read once the box is filled and two frames are drawn.
SHIFTS = """window.__shift = 0;
new PerformanceObserver(list => list.getEntries().forEach(e => { if (!e.hadRecentInput) window.__shift += e.value; }))
  .observe({ type: "layout-shift", buffered: true });"""
TWO_FRAMES = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(window.__shift))))"


@pytest.mark.parametrize("address", ["errors/RA105/?num_q_heads=14&num_kv_heads=4",
                                     "errors/RA102/?q_shape=8,64,8,128&k_shape=1,512,2,128",
                                     "errors/RA810/?used=31415337&limit=16777216"])
def test_values_box_is_in_the_first_paint_no_layout_shift(browser, served, errors_seen, address):
    context, page, requests = _page(browser, errors_seen, viewport=PHONE)
    page.add_init_script(SHIFTS)
    page.goto(served + address)
    page.wait_for_selector("#errkit-values[data-ready=yes][data-folded=yes]", timeout=15000)
    shift = page.evaluate(TWO_FRAMES)
    assert shift <= 0.1, f"cumulative layout shift {shift:.3f} at 390 px"
    assert shift < 0.01, f"cumulative layout shift {shift:.3f}: the box should be laid out in the first paint"
    loaded = [u.split("/assets/errkit/", 1)[1] for u in requests if "/assets/errkit/" in u and u.endswith(".js")]
    code = address.split("/")[1]
    # the bundle and the entry's own part of suggest.js, never every entry's (500 KB)
    assert {"values.bundle.js", f"suggest/{code}.js"} <= set(loaded), loaded
    assert not {"runtime.js", "match.js", "suggest.js"} & set(loaded), loaded
    assert [name for name in loaded if name.startswith("suggest/")] == [f"suggest/{code}.js"], loaded
    context.close()


# -- values read or not, with the reason (issue 29 item 6) -----------------------------------------


def test_values_not_read_say_why_and_sizes_read_in_binary_units(browser, served, errors_seen):
    context, page, _ = _page(browser, errors_seen)
    box = page.locator("#errkit-values")

    page.goto(served + "errors/RA105/?num_q_heads=%EF%BC%91%EF%BC%94&num_kv_heads=4")  # full-width 14
    page.wait_for_selector("#errkit-values[data-ready=yes]", timeout=15000)
    assert "Not read: num_q_heads=１４ (not ASCII digits (write it as 0-9))" in box.inner_text()
    assert page.locator("#errkit-values code[data-param=num_kv_heads]").inner_text() == "num_kv_heads=4"

    page.goto(served + "errors/RA105/?num_q_heads=%EF%BC%91%EF%BC%94")  # nothing else: still said, not dropped
    page.wait_for_selector("#errkit-values[data-ready=unread]")
    assert box.is_visible() and "Not read: num_q_heads=１４" in box.inner_text()
    assert "+num_q_heads, num_kv_heads = 12, 4" in page.evaluate(VISIBLE), "nothing read: the example stays"

    page.goto(served + "errors/RA105/?num_q_heads=0&num_kv_heads=4")
    page.wait_for_selector("#errkit-values[data-ready=yes]")
    assert _suggestions(page)[0][0] == "valid num_kv_heads: none computed: num_q_heads=0 is below 1"

    page.goto(served + "errors/RA105/?num_q_heads=10000000000000&num_kv_heads=8")  # past the old bound, 10^12
    page.wait_for_selector("#errkit-values[data-ready=yes]")
    assert _suggestions(page) == _expected("RA105", {"num_q_heads": 10**13, "num_kv_heads": 8})
    assert _suggestions(page)[0][0].startswith("valid num_kv_heads: 2, 4, 8, 16, 32, 64, 80, 128, 160, 256, ")
    assert any(c.startswith("raised by errkit's ranker attention kernel (errkit_attention.ranker_attention): 1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 40, 50, 64, 80, ") for c in _cases(page)[0][0])
    page.goto(served + "errors/RA105/?num_q_heads=99999999999973&num_kv_heads=8")  # a prime near 10^14
    page.wait_for_selector("#errkit-values[data-ready=yes]")
    # an odd prime: some kernels take even counts only (TPU paged attention's megacore_mode='kv_head'), a
    # case any other count could fit: none valid in every case, each case's own below
    assert _suggestions(page)[0][0] == "valid num_kv_heads: none satisfies every constraint"
    assert any(c.startswith("without megacore_mode, with float32 kv_pages") and c.endswith(": 1") for c in _cases(page)[0][0])
    assert "raised by errkit's ranker attention kernel (errkit_attention.ranker_attention): 1, 99999999999973" in _cases(page)[0][0]
    page.goto(served + "errors/RA105/?num_q_heads=18446744073709551617&num_kv_heads=8")  # 2^64 + 1
    page.wait_for_selector("#errkit-values[data-ready=yes]")
    assert _suggestions(page)[0][0] == "valid num_kv_heads: not computed: divisors of a number over 2**64 are not computed"
    assert _suggestions(page)[1] == ["nearest valid num_q_heads: 18446744073709551616, 18446744073709551624"], "what can be computed still is"

    page.goto(served + "errors/RA810/?used=31415337&limit=16777216")
    page.wait_for_selector("#errkit-values[data-ready=yes]")
    assert page.locator("#errkit-values code[data-param=used]").inner_text() == "used=31415337 bytes (29.96 MiB)"
    assert _suggestions(page)[0] == ["vmem_limit_bytes at least: 31457280 bytes (30.00 MiB)"]
    context.close()


# -- paste results come first (issue 29 item 3) ----------------------------------------------------

RA105_PASTE = ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
               "ValueError: num_q_heads=14 must be divisible by num_kv_heads=4")


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_paste_result_comes_first_and_the_view_moves_to_it(browser, served, errors_seen, viewport):
    context, page, _ = _page(browser, errors_seen, viewport=viewport)
    page.goto(served + "paste/")
    page.wait_for_selector("#errkit-paste[data-ready=yes]", timeout=15000)
    page.fill("#errkit-input", RA105_PASTE)
    page.click("#errkit-explain")
    card = page.locator(".errkit-result--primary[data-code=RA105]")
    card.wait_for()
    assert page.evaluate("document.activeElement.matches('.errkit-result--primary')"), "the result has the focus"
    assert _within_first_screen(page, card.locator(".errkit-result__title")), card.bounding_box()
    assert _within_first_screen(page, card.locator(".errkit-suggestion").first)
    # the card's parts, top to bottom: the fixes with their values, then what was read, then the rest
    order = card.evaluate("""card => Array.from(card.querySelectorAll(
        '.errkit-fixes, table[data-errkit=values], .errkit-result__facts, .errkit-result__means')).map(e => e.className || 'values')""")
    assert order == ["errkit-fixes", "values", "errkit-result__facts", "errkit-result__means"], order
    # as `errkit explain` answers the paste: four kernels raise this wording, the text tells none of them (issue 47)
    first = card.locator(".errkit-suggestion").first.inner_text()
    assert first.startswith("valid num_kv_heads: 2\n") and "raised by errkit's ranker attention kernel (errkit_attention.ranker_attention): 1, 2, 7, 14" in first, first

    # typing leaves the caret where it is
    page.fill("#errkit-input", "")
    page.locator("#errkit-input").press_sequentially("ValueError: num_q_heads=12 must be divisible by num_kv_heads=8")
    page.locator(".errkit-result--primary[data-code=RA105] .errkit-suggestion", has_text="1, 2, 3, 4, 6, 12").wait_for()
    assert page.evaluate("document.activeElement.id") == "errkit-input"
    context.close()


def test_a_long_paste_is_not_written_into_the_address_until_asked(browser, served, errors_seen):
    context, page, _ = _page(browser, errors_seen)
    page.goto(served + "paste/")
    page.wait_for_selector("#errkit-paste[data-ready=yes]", timeout=15000)
    log = "\n".join(f"step {n}: loss={n / 7:.6f} lr=0.0003 tokens/s=123456" for n in range(400)) + "\n" + RA105_PASTE
    page.fill("#errkit-input", log)
    page.click("#errkit-explain")
    page.locator(".errkit-result--primary[data-code=RA105]").wait_for()
    assert "#text=" not in page.url, "over the limit: not copied into the address"
    assert len(page.url) < 200
    share = page.locator(".errkit-share__button")
    assert "Make a share link" in share.inner_text()
    share.click()
    assert "#text=" in page.url
    assert page.locator(".errkit-share__link").input_value() == page.url
    # that link gives the same paste and result
    other, fresh, _ = _page(browser, errors_seen)
    fresh.goto(page.url)
    fresh.locator(".errkit-result--primary[data-code=RA105]").wait_for(timeout=15000)
    assert fresh.input_value("#errkit-input") == log
    other.close()
    # a short paste is still kept in the address (Back restores it)
    page.fill("#errkit-input", RA105_PASTE)
    page.click("#errkit-explain")
    assert "#text=" in page.url and page.locator(".errkit-share__button").count() == 0
    context.close()


def _longest_first_changes(n: int = 3) -> list[str]:
    """The entries whose first fix's diff (shown at the top of the page) has the longest lines."""
    from errkit.generate import site

    ranked = []
    for entry in CATALOGUE.entries:
        fix = next((f for f in entry.fixes if not f.alternative), entry.fixes[0] if entry.fixes else None)
        diff = site.change(fix.before, fix.after) if fix else None
        if diff:
            ranked.append((-max(len(line) for line in diff.splitlines()), entry.code))
    return [code for _, code in sorted(ranked)[:n]]


@pytest.mark.parametrize("code", _longest_first_changes())
def test_the_first_fix_diff_wraps_on_a_phone(browser, served, errors_seen, code):
    context, page, _ = _page(browser, errors_seen, viewport=PHONE)
    page.goto(served + f"errors/{code}/")
    diff = page.locator(".errkit-example--first .language-diff pre > code")
    assert diff.count() == 1, code
    widths = diff.evaluate("code => [code.scrollWidth, code.clientWidth]")
    assert widths[0] <= widths[1] + 1, f"{code}: the diff scrolls sideways ({widths})"
    context.close()

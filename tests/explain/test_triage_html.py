"""`errkit explain --all --format html`: a self-contained page whose chart (matplotlib's SVG, one bar
segment per code and host) renders in Debian's chromium, with no request leaving the page."""

import subprocess
import sys
from pathlib import Path

import pytest


ERRKIT = Path(sys.executable).with_name("errkit")
LINES = {
    "host-000.log": ["ValueError: num_q_heads=12 must be divisible by num_kv_heads=8"] * 3,
    "host-001.log": ["ValueError: num_q_heads=16 must be divisible by num_kv_heads=6",
                     "ValueError: cap_method must be one of 'tanh', 'soft_sign', 'none', got 'softsign'",
                     "ValueError: cap_method must be one of 'tanh', 'soft_sign', 'none', got '<script>alert(1)</script>'"],
    "host-002.log": ["INFO all fine <script>alert(1)</script>"],
}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("html")
    for name, lines in LINES.items():
        (root / name).write_text("".join(f"2026-11-29T10:00:0{n}Z {line}\n" for n, line in enumerate(lines)))
    done = subprocess.run([str(ERRKIT), "explain", "--all", "--format", "html", str(root)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = root / "report.html"
    out.write_text(done.stdout)
    return out


def test_the_chart_renders_in_chromium_and_nothing_is_fetched(page, chromium):
    tab = chromium.new_page()
    requests, errors = [], []
    tab.on("request", lambda r: requests.append(r.url))
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.goto(page.as_uri())
    box = tab.locator("#chart svg").bounding_box()
    assert box and box["width"] > 300 and box["height"] > 150
    # one stacked segment per (code, host): RA105 on host-000 and host-001, RA204 on host-001
    drawn = tab.evaluate("""() => [...document.querySelectorAll('#chart svg [id^="bars-"]')]
        .map(g => [g.id, g.getBoundingClientRect().height]).filter(([, h]) => h > 1)""")
    assert sorted({gid for gid, _ in drawn}) == ["bars-RA105", "bars-RA204"], drawn
    assert sum(1 for gid, _ in drawn if gid == "bars-RA105") == 2 and sum(1 for gid, _ in drawn if gid == "bars-RA204") == 1
    assert tab.locator("#errors tbody tr").count() == 2
    table = tab.locator("#errors").inner_text()
    assert "host-000 (3)" in table and "<script>alert(1)</script>" in table  # shown as text, not run
    assert requests == [page.as_uri()] and errors == []
    tab.close()


def test_the_page_escapes_what_the_logs_hold(page):
    html = page.read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script" not in html and "Content-Security-Policy" in html and "default-src 'none'" in html

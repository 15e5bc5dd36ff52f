"""Screenshots in Chromium of what a user reads: the HTML report of `errkit explain --all` over a
generated fleet's logs (ISO, gzip, glog with its header, a cloud logger's JSON lines, a quiet host)
and an entry page of the built site opened with a reader's values. Each asserts through the DOM
what the screenshot shows: every value seen with its count (one every host shared too), the
first and last line's message text in one time format, a chart as wide as the page whose legend
lies whole inside it, each of the reader's values whole on the screen.

The screenshots go to the test's folder and to artifacts/screenshots/ (report-1280.png,
report-chart.png, entry-values-all-390.png, entry-values-all-1280.png)."""

from __future__ import annotations

import gzip
import random
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from test_site_pages import ARTIFACTS

ERRKIT = Path(sys.executable).with_name("errkit")
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
ONE_FORMAT = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}")

# (code, wording, the values each occurrence draws from): block_q=96 is every host's, never varied
KINDS = [
    ("RA105", "ValueError: num_q_heads={} must be divisible by num_kv_heads={}", ("num_q_heads", "num_kv_heads"),
     [(12, 8), (16, 6), (20, 8), (20, 6)]),
    ("RA230", "ValueError: q_seq_len={} must be a multiple of block_q={}", ("q_seq_len", "block_q"),
     [(1000, 96), (2000, 96), (500, 96)]),
    ("RA211", "ValueError: BlockSizes block_q and block_kv must be powers of two in [16, 1024], got block_q={}, block_kv={}",
     ("block_q", "block_kv"), [(96, 128)]),
]
NOISE = ["step 120: loss=2.314 lr=3e-4", "checkpoint saved to /ckpt/step_120", "compiling the train step"]


def fleet(folder: Path, seed: int = 52) -> tuple[dict, Counter]:
    """Six hosts' logs in five formats, seeded; returns ({code: occurrences}, Counter of (code,
    param, value)), counted here from what was written, not by errkit."""
    rng = random.Random(seed)
    counts: Counter = Counter()
    values: Counter = Counter()

    def errors(n: int) -> list[str]:
        out = []
        for _ in range(n):
            code, wording, params, choices = KINDS[rng.randrange(len(KINDS))]
            picked = rng.choice(choices)
            counts[code] += 1
            values.update((code, p, v) for p, v in zip(params, picked))
            out.append(wording.format(*picked))
        return out

    def lines(messages: list[str]) -> list[str]:
        mixed = [m for message in messages for m in (rng.choice(NOISE), message)]
        return mixed + [rng.choice(NOISE)]

    for host, stamp in (("host-00", "2026-11-29T10:00:{:02d}Z"), ("host-01", "2026-11-29 10:01:{:02d},120")):
        text = "".join(f"{stamp.format(n)} {line}\n" for n, line in enumerate(lines(errors(rng.randint(3, 6)))))
        (folder / f"{host}.log").write_text(text)
    text = "".join(f"2026-11-29T10:02:{n:02d}.250Z {line}\n" for n, line in enumerate(lines(errors(rng.randint(3, 6)))))
    (folder / "host-02.log.gz").write_bytes(gzip.compress(text.encode()))
    # glog: its lines carry no year (the header's is theirs) and the earliest times of the fleet
    body = "".join(f"E1129 08:00:{n:02d}.123456  6454 train.cc:72] {line}\n" for n, line in enumerate(lines(errors(4))))
    (folder / "worker-3.log").write_text(
        "Log file created at: 2026/11/29 08:00:00\nRunning on machine: tpu-w-3\n" + body)
    import json

    (folder / "host-04.jsonl").write_text("".join(
        json.dumps({"severity": "ERROR", "message": line, "timestamp": f"2026-11-29T11:03:{n:02d}.5+01:00"}) + "\n"
        for n, line in enumerate(lines(errors(rng.randint(3, 6))))))
    (folder / "host-05.log").write_text("".join(f"2026-11-29T10:05:00Z {rng.choice(NOISE)}\n" for _ in range(20)))
    return dict(counts), values


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> tuple[Path, dict, Counter]:
    root = tmp_path_factory.mktemp("fleet")
    logs = root / "logs"
    logs.mkdir()
    counts, values = fleet(logs)
    done = subprocess.run([str(ERRKIT), "explain", "--all", "--format", "html", "--quiet", str(logs)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr  # (matplotlib's layout warnings among them)
    page = root / "report.html"
    page.write_text(done.stdout)
    return page, counts, values


def _saved(path: Path) -> None:
    assert path.stat().st_size > 10_000
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, ARTIFACTS / path.name)


def test_the_report_shows_every_value_and_a_whole_legend(report_page, chromium, tmp_path):
    page, counts, values = report_page
    context = chromium.new_context(viewport=DESKTOP)
    tab = context.new_page()
    tab.goto(page.as_uri())
    tab.screenshot(path=str(tmp_path / "report-1280.png"), full_page=True)
    tab.locator("#chart").screenshot(path=str(tmp_path / "report-chart.png"))
    _saved(tmp_path / "report-1280.png")
    _saved(tmp_path / "report-chart.png")

    assert tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "the page scrolls sideways"
    rows = {tab.locator("#errors tbody tr").nth(i).locator("td").first.inner_text(): tab.locator("#errors tbody tr").nth(i)
            for i in range(tab.locator("#errors tbody tr").count())}
    assert sorted(rows) == sorted(counts)
    for code, row in rows.items():
        cells = row.locator("td")
        assert cells.nth(2).inner_text() == f"{counts[code]:,}"
        # every value with its count, varied or not, each line on the screen
        said = [li.inner_text() for li in cells.nth(7).locator("li").all()]
        for li in cells.nth(7).locator("li").all():
            assert li.is_visible()
        for (c, param, value), n in values.items():
            if c != code:
                continue
            (line,) = [s for s in said if s.startswith(f"{param}:") or s.startswith(f"{param} (")]
            alone = sum(1 for (c2, p2, _) in values if (c2, p2) == (code, param)) == 1
            assert (line == f"{param}: {value} (all {n})") if alone else (f"{value} (x{n})" in line), (line, value, n)
        # first and last: the time in one format, the file and line, the message's text
        for cell in (cells.nth(5), cells.nth(6)):
            assert ONE_FORMAT.fullmatch(cell.locator(".when").inner_text()), cell.inner_text()
            text = cell.locator(".text")
            assert text.is_visible() and re.search(r"\d+ must be|got block_q=96", text.inner_text()), text.inner_text()
    first = rows["RA105"].locator("td").nth(5)
    assert first.locator("code").inner_text().endswith("worker-3.log:" + first.locator("code").inner_text().rsplit(":", 1)[1])
    assert first.locator(".when").inner_text().startswith("2026-11-29 08:00:"), "glog's year is its header's"

    # the chart: as wide as the page's text, its legend inside it, each label whole (matplotlib
    # draws text as paths and writes it in a comment beside them)
    chart = tab.locator("#chart svg").bounding_box()
    body = tab.evaluate("(() => { const r = document.querySelector('#chart').getBoundingClientRect(); return r.width; })()")
    assert chart["width"] >= 0.98 * body and chart["width"] >= 0.8 * DESKTOP["width"] - 100, (chart, body)
    legend = tab.evaluate("""() => {
        const g = document.querySelector('#chart svg g#legend');
        const boxes = [...g.querySelectorAll('path, use')].map(p => p.getBoundingClientRect())
            .filter(r => r.width > 0 && r.height > 0).map(r => [r.left, r.top, r.right, r.bottom]);
        const walker = document.createTreeWalker(g, NodeFilter.SHOW_COMMENT);
        const said = [];
        while (walker.nextNode()) said.push(walker.currentNode.data.trim().split(/\\s+/).join(' '));
        return {boxes, said};
    }""")
    assert legend["boxes"], "no legend drawn"
    for left, top, right, bottom in legend["boxes"]:
        assert chart["x"] - 0.5 <= left and right <= chart["x"] + chart["width"] + 0.5, (left, right, chart)
        assert chart["y"] - 0.5 <= top and bottom <= chart["y"] + chart["height"] + 0.5, (top, bottom, chart)
    titles = {code: row.locator("td").nth(1).inner_text() for code, row in rows.items()}
    for code, title in titles.items():
        assert f"{code} {title}" in legend["said"], (code, title, legend["said"])
    context.close()


def test_an_entry_page_shows_every_value_of_the_address(browser, served, tmp_path):
    address = "errors/RA102/?q_shape=8,64,8,128&k_shape=1,512,2,128"
    for viewport in (PHONE, DESKTOP):
        context = browser.new_context(viewport=viewport)
        tab = context.new_page()
        tab.goto(served + address)
        tab.wait_for_selector("#errkit-values[data-ready=yes]", timeout=15000)
        tab.locator("#errkit-values").scroll_into_view_if_needed()
        shot = tmp_path / f"entry-values-all-{viewport['width']}.png"
        tab.screenshot(path=str(shot))
        _saved(shot)
        for param, value in (("q_shape", "8, 64, 8, 128"), ("k_shape", "1, 512, 2, 128")):
            code = tab.locator(f"#errkit-values code[data-param={param}]")
            assert code.is_visible() and re.sub(r"[()\s]", "", code.inner_text()) == f"{param}={value}".replace(" ", "")
            box = code.bounding_box()
            assert 0 <= box["x"] and box["x"] + box["width"] <= viewport["width"], (param, box)
        context.close()

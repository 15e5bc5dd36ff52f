"""One matcher for terminal and browser? (issue 50, item 3): the paste page's first answer with the
Python matcher run in the browser by Pyodide, loaded only when a reader pastes, against today's
JavaScript port (assets/errkit/match.js), in Debian's chromium as Lighthouse's default mobile run
throttles it (devtools throttling: 562.5 ms request latency, 1,474.6 Kbit/s down, 675 Kbit/s up,
4x CPU slowdown), each page opened cold (no cache), files served gzipped as GitHub Pages serves them.

    npm pack pyodide@314.0.8 && tar -xzf pyodide-314.0.8.tgz      # the npm registry's Pyodide
    python scripts/browser_matcher.py --pyodide package/ [--runs 3] [--json out.json]

For each page: the bytes a first answer costs (after the page's own load), the time from the paste
to the first answer on screen, and a second paste's. The Python side is errkit's explain modules
(errkit/core, errkit/explain) zipped as a wheel's files would be, and errkit/_index.json. Pyodide
has no google-re2: the Python matcher there runs on Python's `re` (errkit/core/regex.py's fallback).
The decision and its figures: docs/architecture.md, "The paste page's matcher"."""

from __future__ import annotations

import argparse
import gzip
import http.server
import io
import json
import shutil
import statistics
import sys
import tempfile
import threading
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "site" / "docs" / "assets" / "errkit"
MESSAGE = "ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8"
# Lighthouse 12's mobile defaults (constants.throttling.mobileSlow4G) as devtools applies them
LATENCY_MS, DOWN_KBPS, UP_KBPS, CPU_SLOWDOWN = 150 * 3.75, 1638.4 * 0.9, 750 * 0.9, 4

PORT_PAGE = """<!doctype html><meta charset="utf-8"><title>port</title>
<script src="runtime.js"></script><script src="suggest.js"></script><script src="match.js"></script>
<pre id="out"></pre>
<script>
var loading = null;  // the index, fetched on the first paste (as paste.js does)
window.explainNow = async function (text) {
  loading = loading || fetch("index.json").then(function (r) { return r.json(); }).then(function (d) { return new ErrkitMatch.Index(d); });
  var index = await loading;
  var found = ErrkitMatch.explain(index, text);
  document.getElementById("out").textContent = found.length ? found[0].code : "none";
  return found.length ? found[0].code : null;
};
</script>"""

PYODIDE_PAGE = """<!doctype html><meta charset="utf-8"><title>pyodide</title>
<pre id="out"></pre>
<script type="module">
let ready = null;
async function start() {
  const { loadPyodide } = await import("./pyodide/pyodide.mjs");
  const py = await loadPyodide({ indexURL: "./pyodide/" });
  const [zip, index] = await Promise.all([fetch("errkit.zip").then(r => r.arrayBuffer()), fetch("_index.json").then(r => r.text())]);
  py.unpackArchive(zip, "zip", { extractDir: "/home/pyodide" });
  py.FS.writeFile("/home/pyodide/errkit/_index.json", index);
  py.runPython("import sys; sys.path.insert(0, '/home/pyodide')\\n"
    + "from errkit.explain.matching.index import Index\\nfrom errkit.explain.answer import answers\\nINDEX = Index.load()");
  return py;
}
window.explainNow = async function (text) {
  ready = ready || start();  // Pyodide is fetched on the first paste only
  const py = await ready;
  py.globals.set("text", text);
  const code = py.runPython("found, _, _ = answers(INDEX, [text]); found[0]['code'] if found else None");
  document.getElementById("out").textContent = code || "none";
  return code;
};
</script>"""


class Gzipped(http.server.SimpleHTTPRequestHandler):
    """Every file gzipped (level 6), as GitHub Pages sends text and WebAssembly."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".mjs": "text/javascript", ".js": "text/javascript", ".json": "application/json"}

    def log_message(self, *args):
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if not path.is_file() or "gzip" not in self.headers.get("Accept-Encoding", ""):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), 6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        return io.BytesIO(body)


def errkit_zip() -> bytes:
    """errkit's explain side as the browser would get it: errkit/__init__.py, core/, explain/."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(ROOT / "errkit" / "__init__.py", "errkit/__init__.py")
        for folder in ("core", "explain"):
            for path in sorted((ROOT / "errkit" / folder).rglob("*.py")):
                archive.write(path, str(path.relative_to(ROOT)))
    return out.getvalue()


def build(folder: Path, pyodide: Path) -> None:
    for name in ("runtime.js", "suggest.js", "match.js", "index.json"):
        shutil.copy(ASSETS / name, folder / name)
    shutil.copy(ROOT / "errkit" / "_index.json", folder / "_index.json")
    (folder / "errkit.zip").write_bytes(errkit_zip())
    shutil.copytree(pyodide, folder / "pyodide")
    (folder / "port.html").write_text(PORT_PAGE, encoding="utf-8")
    (folder / "pyodide.html").write_text(PYODIDE_PAGE, encoding="utf-8")


def measure(url: str, runs: int) -> dict:
    """Cold visits of `url`: the bytes fetched after the page's load until the first answer, the
    time from the paste to it, and a second paste's."""
    from playwright.sync_api import sync_playwright

    firsts, seconds, sizes = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        for _ in range(runs):
            page = browser.new_page()
            cdp = page.context.new_cdp_session(page)
            cdp.send("Network.enable")
            cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
            cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": LATENCY_MS,
                                                         "downloadThroughput": DOWN_KBPS * 1024 / 8,
                                                         "uploadThroughput": UP_KBPS * 1024 / 8})
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
            fetched = []
            cdp.on("Network.loadingFinished", lambda event: fetched.append(event["encodedDataLength"]))
            page.goto(url, wait_until="load")
            page.wait_for_timeout(200)
            before = sum(fetched)
            first = page.evaluate("""async (text) => { const t = performance.now(); const code = await window.explainNow(text);
                                     return [performance.now() - t, code]; }""", MESSAGE)
            assert first[1] == "RA105", first
            sizes.append(sum(fetched) - before)
            second = page.evaluate("""async (text) => { const t = performance.now(); await window.explainNow(text);
                                      return performance.now() - t; }""", MESSAGE)
            firsts.append(first[0] / 1000)
            seconds.append(second / 1000)
            page.close()
        browser.close()
    return {"first_answer_s": statistics.median(firsts), "first_answers_s": firsts, "second_answer_s": statistics.median(seconds),
            "bytes_to_first_answer": statistics.median(sizes)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyodide", type=Path, required=True, help="the unpacked npm package `pyodide` (its package/ folder)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--pages", nargs="+", default=["port", "pyodide"], choices=["port", "pyodide"])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build(folder, args.pyodide)
        handler = lambda *a, **k: Gzipped(*a, directory=str(folder), **k)  # noqa: E731
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        try:
            figures = {page: measure(base + f"{page}.html", args.runs) for page in args.pages}
        finally:
            server.shutdown()
        raw = {name: (folder / name).stat().st_size for name in ("match.js", "runtime.js", "suggest.js", "index.json",
                                                                 "errkit.zip", "_index.json")}
        raw.update({f"pyodide/{p.name}": p.stat().st_size for p in (folder / "pyodide").iterdir() if p.is_file()})
    figures["raw_bytes"] = raw
    figures["throttling"] = {"latency_ms": LATENCY_MS, "down_kbps": DOWN_KBPS, "up_kbps": UP_KBPS, "cpu_slowdown": CPU_SLOWDOWN}
    text = json.dumps(figures, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""errkit explain speed, side by side in one run:

1. cold start of `errkit explain "<message>"` vs `python -c pass` (target <= 2.0x);
2. lines/s on a generated 1M-line log with 1% error lines vs a naive loop of every regex over
   every line (target >= 20x faster);
3. match time per message with 100 vs 10,000 synthetic entries (target <= 3x slower at 100x).
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import MappingProxyType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._timing import HEADER  # noqa: E402
from errkit import explain  # noqa: E402
from errkit.generate import index as index_gen  # noqa: E402
from errkit.match import Index  # noqa: E402
from errkit.model import Catalogue, Entry, Fix, Param, Settings  # noqa: E402

MESSAGE = "num_q_heads=12 must be divisible by and num_kv_heads=8"


def _ok(value: float, target: str) -> str:
    return "ok" if eval(f"{value} {target}") else "MISSED"  # noqa: S307 - literal targets below


def cold_start(runs: int = 15) -> str:
    import compileall

    import errkit as package

    # As after `pip install`, which byte-compiles the package: an editable checkout under
    # PYTHONDONTWRITEBYTECODE would otherwise recompile every module on every start.
    compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)
    errkit = str(Path(sys.executable).with_name("errkit"))
    env = dict(os.environ, NO_COLOR="1")
    ours_cmd = [errkit, "explain", MESSAGE] if os.path.exists(errkit) else [sys.executable, "-m", "errkit.cli", "explain", MESSAGE]
    base_cmd = [sys.executable, "-c", "pass"]
    ours, base = [], []
    for _ in range(runs):
        for cmd, sink in ((ours_cmd, ours), (base_cmd, base)):
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
            sink.append(time.perf_counter() - start)
    a, b = statistics.median(ours), statistics.median(base)
    return f"| cold start: `errkit explain MSG` vs `python -c pass` | {a * 1e3:.1f} ms | {b * 1e3:.1f} ms | {a / b:.2f}x | <= 2.0x | {_ok(a / b, '<= 2.0')} |"


def make_log(lines: int, error_every: int = 100) -> str:
    rng = random.Random(0)
    errors = [
        "ValueError: num_q_heads=12 must be divisible by and num_kv_heads=8",
        "ValueError: q, k, and v should all be 4D, got: q.ndim=3, k.ndim=4, v.ndim=4",
        "ValueError: kv_seq_len=1000 must be a multiple of block_kv=128",
        "NotImplementedError: Only f16 and bf16 are supported, got dtype: float32",
    ]
    out = []
    for i in range(lines):
        if i % error_every == error_every - 1:
            out.append(f"2026-11-29 10:{i // 60 % 60:02d}:{i % 60:02d},{i % 1000:03d} ERROR trainer: {rng.choice(errors)}")
        else:
            out.append(f"2026-11-29 10:{i // 60 % 60:02d}:{i % 60:02d},{i % 1000:03d} INFO trainer: step {i} loss={rng.random():.4f} lr=3e-4 tokens={rng.randint(1, 99999)}")
    return "\n".join(out) + "\n"


def log_throughput(lines: int = 1_000_000, naive_lines: int = 50_000) -> str:
    import re

    index = Index.load()
    text = make_log(lines)
    chunks = [text[i:i + 4_000_000] for i in range(0, len(text), 4_000_000)]
    fixed = []  # cut on line boundaries, as explain's reader does
    carry = ""
    for c in chunks:
        c = carry + c
        cut = c.rfind("\n") + 1
        fixed.append(c[:cut])
        carry = c[cut:]
    start = time.perf_counter()
    found, _, _ = explain.explain_chunks(index, fixed)
    ours = lines / (time.perf_counter() - start)
    assert sum(f.count for f in found) == lines // 100, "every error line must be found"

    regexes = [re.compile(w["regex"]) for w in index.wordings if w["template"]]
    sample = text.splitlines()[:naive_lines]
    start = time.perf_counter()
    hits = 0
    for line in sample:
        for regex in regexes:
            if regex.search(line):
                hits += 1
                break
    naive = naive_lines / (time.perf_counter() - start)
    ratio = ours / naive
    return (f"| log scan, {lines:,} lines, 1% errors: ours vs naive regex loop ({len(regexes)} regexes) | "
            f"{ours:,.0f} lines/s | {naive:,.0f} lines/s | {ratio:.1f}x faster | >= 20x | {_ok(ratio, '>= 20')} |")


WORDS = ["block", "stride", "tile", "page", "heads", "rank", "lanes", "warps", "stages", "chunk", "window", "segment"]
RELATIONS = ["must be divisible by", "must be at most", "must equal", "must be a multiple of", "exceeds the limit of"]


def synthetic_catalogue(n: int) -> Catalogue:
    rng = random.Random(n)
    entries = []
    real = Entry(code="RA105", slug="gqa-head-count", title="GQA", area="inputs", exception="ValueError",
                 message="{num_q_heads=} must be divisible by {num_kv_heads=}", explanation="x",
                 params=MappingProxyType({"num_q_heads": Param("num_q_heads", "int", "q"), "num_kv_heads": Param("num_kv_heads", "int", "kv")}),
                 fixes=(Fix("x", MappingProxyType({"valid": "divisors(num_q_heads)"})),))
    entries.append(real)
    for i in range(n - 1):
        a, b = rng.sample(WORDS, 2)
        message = f"{{{a}_size=}} {rng.choice(RELATIONS)} {{{b}_size=}} in kernel_{i}_{rng.choice(WORDS)}"
        params = {f"{a}_size": Param(f"{a}_size", "int", "a"), f"{b}_size": Param(f"{b}_size", "int", "b")}
        entries.append(Entry(code=f"SY{i % 1000:03d}", slug=f"synthetic-{i}", title="synthetic", area="synthetic",
                             exception="ValueError", message=message, explanation="x", params=MappingProxyType(params),
                             fixes=(Fix("x"),)))
    settings = Settings(project="bench", version="0", docs_url="http://127.0.0.1", validators="x.py", groups=MappingProxyType({}))
    return Catalogue(Path("."), settings, tuple(entries))


def scaling(sizes=(100, 10_000), number: int = 20_000) -> str:
    timings = {}
    line = "ValueError: " + "num_q_heads=12 must be divisible by num_kv_heads=8"
    for n in sizes:
        data = index_gen.build(synthetic_catalogue(n))
        index = Index(data)
        assert index.match_line(line).code == "RA105"
        start = time.perf_counter()
        for _ in range(number):
            index.match_line(line)
        timings[n] = (time.perf_counter() - start) / number
    small, large = timings[sizes[0]], timings[sizes[1]]
    ratio = large / small
    return (f"| match time per message, {sizes[1]:,} vs {sizes[0]:,} entries | {large * 1e6:.1f} us | {small * 1e6:.1f} us | "
            f"{ratio:.2f}x | <= 3.0x | {_ok(ratio, '<= 3.0')} |")


def worst_case(size: int = 1_000_000) -> str:
    """The slowest explain of a 1 MB line built from a wording's own literals, vs a benign 1 MB line."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from support import adversarial_lines

    from errkit import patterns
    from errkit.load import load

    index = Index.load()
    catalogue = load(Path(__file__).resolve().parent.parent / "catalog").catalogue
    worst, worst_name = 0.0, ""
    lines = 0
    for entry in catalogue.entries:
        for wording in patterns.wordings(entry):
            for line in adversarial_lines(wording, size):
                start = time.perf_counter()
                explain.explain_chunks(index, [line + "\n"])
                elapsed = time.perf_counter() - start
                lines += 1
                if elapsed > worst:
                    worst, worst_name = elapsed, f"{entry.code} v{wording.index}"
    benign = "x" * size + "\n"
    start = time.perf_counter()
    explain.explain_chunks(index, [benign])
    base = time.perf_counter() - start
    return (f"| worst explain of 1 MB of adversarial input ({lines} inputs; worst: {worst_name}) vs a benign 1 MB line | "
            f"{worst * 1e3:.1f} ms | {base * 1e3:.1f} ms | {worst / base:.1f}x | (recorded) | ok |")


def main() -> list[str]:
    return [cold_start(), log_throughput(), scaling(), worst_case()]


if __name__ == "__main__":
    print(HEADER)
    for row in main():
        print(row, flush=True)

"""The benchmarks' inputs build: a crash there shows only when someone runs benchmarks/run.py."""

from __future__ import annotations

import sys

from errkit.generate import index as index_gen
from support import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import catalogues  # noqa: E402


def test_a_part_of_the_real_catalogue_keeps_its_kernels_and_indexes():
    real = catalogues.real_catalogue()
    part = catalogues.grown(len(real.entries) // 2)
    assert dict(part.kernels) == dict(real.kernels)
    assert any("valid(" in source for e in part.entries for f in e.fixes for source in f.suggest.values())
    assert len(index_gen.build(part)["entries"]) == len(real.entries) // 2

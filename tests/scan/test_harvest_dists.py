"""scripts/harvest.py harvests another distribution than jax (`--dist tokamax`): its own scope,
its own output file, jax's harvest as before. No network: a small wheel made here."""

from __future__ import annotations

import importlib.util
import zipfile

import pytest

from support import ROOT


@pytest.fixture()
def harvest():
    from errkit.scan import sites

    builtins = sites.BUILTINS  # the script adds RuntimeError to the scan's kinds: only for its own run
    spec = importlib.util.spec_from_file_location("harvest_script", ROOT / "scripts" / "harvest.py")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sites.BUILTINS = builtins


def wheel(tmp_path, files: dict[str, str]):
    path = tmp_path / "tokamax-0.0.12-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def test_tokamax_scope_is_the_attention_ops_and_op_py(harvest, tmp_path):
    harvest.select("tokamax")
    assert harvest.DIST == "tokamax" and harvest.FIRST == "0.0.1"
    ops = "tokamax/_src/ops/"
    path = wheel(tmp_path, {
        ops + "attention/api.py": "def f(impl):\n    raise ValueError(f'Unknown implementation: {impl}')\n",
        ops + "attention/api_test.py": "def t():\n    raise ValueError('a test')\n",
        ops + "attention/test_base.py": "def t():\n    raise ValueError('a test helper')\n",
        ops + "op.py": "def g(d):\n    raise NotImplementedError(f'Not supported on {d}.')\n",
        ops + "ragged_dot/api.py": "def h():\n    raise ValueError('not attention')\n",
    })
    sites = harvest.sites_of(path, report=lambda line: None)
    assert sorted((s["path"], s["template"]) for s in sites) == [
        (ops + "attention/api.py", "Unknown implementation: {impl}"), (ops + "op.py", "Not supported on {d}.")]
    data = harvest.harvest(["0.0.12"], {"0.0.12": path}, report=lambda line: None)
    assert data["dist"] == "tokamax" and data["command"] == "python scripts/harvest.py --dist tokamax"


def test_jax_stays_the_default(harvest):
    assert harvest.DIST == "jax" and harvest.FIRST == "0.4.25"
    assert harvest.NOT_ATTENTION == {"jax/_src/nn/functions.py": harvest.JAX_NOT_ATTENTION}

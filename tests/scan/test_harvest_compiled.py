"""scripts/harvest_compiled.py and its C++ lexer (scripts/cxx_messages.py): the message templates
C++ sources spell, and the harvest of a small git repository with two release tags (no network)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import cxx_messages  # noqa: E402


SOURCE = r'''
#define NYI(msg)                            \
  op->emitOpError("not implemented: " msg); \
  return failure();
// return op.emitOpError("in a comment");
LogicalResult f(Operation &op) {
  if (a) return op.emitOpError("Expected a tiled memref");
  if (b) return op->emitOpError("Not Implemented: The last dim size is not ")
                << ctx.target_shape[1] << " in original base memref";
  if (c) NYI("unsupported shape cast");
  TPU_CHECK_OP(d == e, "a {brace} and \"quotes\"\n");
  TPU_ASSERT_EQ_OP(vregs.dimensions().size(), 2);
  TPU_ASSERT_LOC(loc, layout.has_value());
  if (g) return emitError(loc, "cannot statically prove that index in dimension ")
         << dim << " is a multiple of " << tiling[dim];
  if (h) return absl::InvalidArgumentError(absl::StrCat("Bad ", n, "!"));
  if (i) return emitOpError(absl::StrFormat("Target core type (%s) must be %d%%", a, f(b, c)));
  const char* s = "emitOpError(\"not a call\")";
  return mlir::emitError(loc) << R"(raw "text")" << x;
}
'''


def test_message_sites_of_cxx_source():
    assert cxx_messages.sites(SOURCE) == [
        (7, "emitOpError", "Expected a tiled memref"),
        (8, "emitOpError", "Not Implemented: The last dim size is not {ctx.target_shape[1]} in original base memref"),
        (10, "NYI", "not implemented: unsupported shape cast"),  # the file's own NYI prefix
        (11, "TPU_CHECK_OP", 'a {{brace}} and "quotes"'),  # literal braces doubled, as in a Python format string
        (12, "TPU_ASSERT_EQ_OP", "Internal error: assert failed: vregs.dimensions().size() == 2 ({vregs.dimensions().size()} vs. {2})"),
        (13, "TPU_ASSERT_LOC", "Internal error: assert failed: layout.has_value()"),
        (14, "emitError", "cannot statically prove that index in dimension {dim} is a multiple of {tiling[dim]}"),
        (16, "InvalidArgumentError", "Bad {n}!"),
        (17, "emitOpError", "Target core type ({a}) must be {f(b,c)}%"),
        (19, "emitError", 'raw "text"{x}'),
    ]


def test_without_its_own_nyi_a_file_says_not_implemented():
    assert cxx_messages.sites('void f() { NYI("x"); }') == [(1, "NYI", "Not implemented: x")]


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00", "HOME": str(repo)})


@pytest.fixture()
def harvester():
    from errkit.scan import sites

    builtins = sites.BUILTINS  # the script widens the scan's kinds for its own run
    spec = importlib.util.spec_from_file_location("harvest_compiled", ROOT / "scripts" / "harvest_compiled.py")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sites.BUILTINS = builtins


def test_a_repository_with_two_releases(harvester, tmp_path):
    repo = tmp_path / "jax"
    passes = repo / "jaxlib/mosaic/dialect/tpu/transforms"
    lowering = repo / "jax/_src/pallas/triton"
    passes.mkdir(parents=True)
    lowering.mkdir(parents=True)
    git(repo, "init", "-q")
    (passes / "infer_vector_layout.cc").write_text('void f() {\n  op.emitOpError("unsupported shape cast");\n}\n')
    (passes / "infer_vector_layout_test.cc").write_text('void t() { op.emitOpError("a test"); }\n')
    (lowering / "lowering.py").write_text("def lower(n):\n    raise NotImplementedError('Scalar prefetch not supported in Triton lowering.')\n")
    (repo / "README.md").write_text('emitOpError("not source")\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "tag", "jax-v0.4.25")
    git(repo, "tag", "jax-v0.4.20")  # before the first release harvested
    (passes / "infer_vector_layout.cc").write_text('// moved\nvoid f() {\n  op.emitOpError("infer-vector-layout: unsupported shape cast");\n}\n')
    git(repo, "commit", "-q", "-am", "two")
    git(repo, "tag", "jax-v0.4.26")
    (lowering / "lowering.py").write_text("def lower(n):\n    raise NotImplementedError(f'scalar prefetch not implemented in the Triton backend: {n}')\n")
    git(repo, "commit", "-q", "-am", "three")

    data = harvester.harvest_repo(harvester.Repo(str(repo)), report=lambda line: None)
    assert data["releases"] == ["0.4.25", "0.4.26", "main"]
    cc, py = "jaxlib/mosaic/dialect/tpu/transforms/infer_vector_layout.cc", "jax/_src/pallas/triton/lowering.py"
    assert data["wordings"] == {
        "infer-vector-layout: unsupported shape cast": [{"exception": "emitOpError", "path": cc, "function": "", "at": [["0.4.26", "main", 3]]}],
        "scalar prefetch not implemented in the Triton backend: {n}": [{"exception": "NotImplementedError", "path": py, "function": "lower", "at": [["main", "main", 2]]}],
        "Scalar prefetch not supported in Triton lowering.": [{"exception": "NotImplementedError", "path": py, "function": "lower", "at": [["0.4.25", "0.4.26", 2]]}],
        "unsupported shape cast": [{"exception": "emitOpError", "path": cc, "function": "", "at": [["0.4.25", "0.4.25", 2]]}],
    }
    out = tmp_path / "compiled.json"
    assert harvester.main(["--repo", str(repo), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["wordings"] == data["wordings"]
    assert harvester.main(["--repo", str(repo), "--out", str(out), "--check"]) == 0
    out.write_text(out.read_text().replace("0.4.26", "0.4.27"))
    assert harvester.main(["--repo", str(repo), "--out", str(out), "--check"]) == 1

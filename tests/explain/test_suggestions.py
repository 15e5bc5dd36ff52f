"""Fixes as explain shows them: suggestions within every constraint the kernel has on a value (or
saying plainly that none exists), and fixes within the library that raised the error first."""

from __future__ import annotations

import io
import json
import re

import pytest

from errkit.explain import command
from support import bundled_catalogue

CATALOGUE = bundled_catalogue()
# How this project's kernel is named in a fix: leaving the upstream library for it is an alternative.
OWN_KERNEL = re.compile(r"errkit_attention\.(sharded_)?ranker_attention|this project's kernel")


def suggestions(text: str) -> dict[str, object]:
    out = io.StringIO()
    command.run([text], as_json=True, show_all=False, out=out, err=io.StringIO())
    result = json.loads(out.getvalue().splitlines()[0])
    return {s["label"]: s.get("value") for fix in result["fixes"] for s in fix["suggestions"]}


@pytest.mark.parametrize("text, largest", [
    ("kv_seq_len=4992 should be divisible by block_k_major=512", [384]),  # not 128: 384 divides 4992 too
    ("kv_seq_len=1000 should be divisible by block_k_major=128", []),  # no multiple of 128 divides 1000
    ("block_q=512 should be smaller or equal to q_seq_len=256", [256]),  # the last query block may be partial
])
def test_tpu_flash_block_suggestions_respect_every_constraint(text, largest):
    got = suggestions(text)["largest valid block, at most the one asked for (none: pad, or one block over all keys)"]
    assert got == largest
    for block in got:
        dim = int(re.search(r"(?:q|kv)_seq_len=(\d+)", text).group(1))
        assert block <= dim and ("block_q" in text or (dim % block == 0 and block % 128 == 0))


def test_a_suggestion_no_value_satisfies_says_so():
    out = io.StringIO()
    command.run(["kv_seq_len=1000 should be divisible by block_k_major=128"], as_json=False, show_all=False, out=out, err=io.StringIO())
    assert "largest valid block, at most the one asked for (none: pad, or one block over all keys): none\n" in out.getvalue() + "\n"
    assert ": None" not in out.getvalue() and ": (none)" not in out.getvalue()


@pytest.mark.parametrize("entry", [e for e in CATALOGUE.entries if e.explain_only], ids=lambda e: e.code)
def test_upstream_fixes_stay_within_their_library_first(entry):
    """Someone using JAX's (or x-algorithm's) kernel gets the fix within it first; switching to this
    project's kernel is offered last, as an alternative."""
    for n, fix in enumerate(entry.fixes):
        names_ours = bool(OWN_KERNEL.search(fix.summary))
        assert names_ours == fix.alternative, f"fix {n + 1}: {fix.summary!r}"
        if not fix.alternative:
            assert not OWN_KERNEL.search((fix.before or "") + (fix.after or "")), f"fix {n + 1}'s code uses this project's kernel"
    assert not entry.fixes or not entry.fixes[0].alternative


def test_every_fix_shows_before_and_after_code():
    """Every fix is shown as the code a reader has and the code it becomes, both non-empty
    and different (test_fix_snippets runs them, or the fix says why it cannot: unverified)."""
    missing = [f"{entry.code} fix {n}: {part}" for entry in CATALOGUE.entries for n, fix in enumerate(entry.fixes, 1)
               for part in ("before", "after") if not (getattr(fix, part) or "").strip()]
    assert not missing, "these fixes have no code for:\n" + "\n".join(missing)
    same = [f"{entry.code} fix {n}" for entry in CATALOGUE.entries for n, fix in enumerate(entry.fixes, 1)
            if fix.before.strip() == fix.after.strip()]
    assert not same, "these fixes' before and after code are the same:\n" + "\n".join(same)


# Fixes whose code needs a mesh of several devices: `unverified` in the snippet suite (one CPU
# device), run here in a child process given that many CPU host devices (one child per count).
# The cuDNN ones run with verify.cudnn's stand-in (its checks and its custom partitioning run for
# real; the fused kernel gives zeros). Devices -> (code, fix number).
MULTI_DEVICE_FIXES = {
    3: [("RA682", 2)],
    4: [("RA557", 1), ("RA557", 2), ("RA557", 3), ("RA558", 1), ("RA558", 2)],
}
CHILD = """
import json, sys
root, devices, fixes = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
sys.path[:0] = [root, root + "/tests"]
import jax
from errkit.catalogue.load import load
from snippet_shims import on_cpu
from support import pasted_text
assert jax.device_count() == devices, jax.devices()
entries = {e.code: e for e in load(root + "/catalog").entries}
out = {}
for code, n in fixes:
    entry = entries[code]
    fix = entry.fixes[n - 1]
    for part in ("before", "after"):
        try:
            exec(on_cpu("\\n".join([fix.setup or entry.setup or "", getattr(fix, part), fix.then or entry.then or ""])), {"__name__": "snippet"})
            out[f"{code} {n} {part}"] = None
        except Exception as err:
            out[f"{code} {n} {part}"] = pasted_text(err)
print(json.dumps(out))
"""


@pytest.mark.parametrize("devices", sorted(MULTI_DEVICE_FIXES), ids=lambda d: f"{d}-devices")
def test_multi_device_fixes_run_on_that_many_host_devices(devices):
    import os
    import subprocess
    import sys

    pytest.importorskip("jax")
    from support import ROOT, explain_first

    fixes = MULTI_DEVICE_FIXES[devices]
    by_code = {e.code: e for e in CATALOGUE.entries}
    for code, n in fixes:
        unverified = by_code[code].fixes[n - 1].unverified
        assert unverified and "devices" in unverified, f"{code} fix {n}: a fix run here says why the snippet suite cannot run it"
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS=f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}".strip())
    child = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(devices), json.dumps(fixes)],
                           capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert child.returncode == 0, child.stderr[-3000:]
    out = json.loads(child.stdout.splitlines()[-1])
    failures = []
    for code, n in fixes:
        before, after = out[f"{code} {n} before"], out[f"{code} {n} after"]
        if before is None:
            failures.append(f"{code} fix {n}: the 'before' snippet ran without error")
        elif explain_first(before)["code"] != code:
            failures.append(f"{code} fix {n}: the 'before' snippet raised another error: {before[-300:]}")
        if after is not None:
            failures.append(f"{code} fix {n}: the 'after' snippet raised {after[-300:]}")
    assert not failures, "\n".join(failures)


def test_a_dtype_the_kernel_refuses_is_never_suggested():
    """RA104's casts (issue 26 item 4): k and v in int32 share a dtype, but the kernel refuses int32
    (RA106), so no cast to it is suggested; the float32 pair still gives q's cast."""
    import io
    import json

    from errkit.explain import command

    def values(text):
        out = io.StringIO()
        command.run([text], as_json=True, show_all=False, out=out, err=io.StringIO())
        res = json.loads(out.getvalue())
        return [s.get("value") for fix in res["fixes"] for s in fix["suggestions"]]

    assert "int32" not in values("q, k and v must have the same dtype, got: bfloat16, int32, int32")
    assert "float32" in values("q, k and v must have the same dtype, got: bfloat16, float32, float32")

"""A triage's file with no catalogued error says why (issue 52: a vLLM log listed with 0 matches and
no hint): how many of its lines name an error no wording matches, and the first of them (an
exception's line before a logger's ERROR line), in the JSON, text, markdown and HTML reports, through
the real command. The vLLM lines are excerpts of public bug reports, cited below."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ERRKIT = Path(sys.executable).with_name("errkit")

# https://github.com/vllm-project/vllm/issues/19415 (the engine's start-up log, as posted)
VLLM_START = """\
DEBUG 07-10 14:48:53 [utils.py:485] Waiting for 1 local, 0 remote core engine proc(s) to start.
DEBUG 07-10 14:49:03 [utils.py:485] Waiting for 1 local, 0 remote core engine proc(s) to start.
NCCL version 2.26.2+cuda12.2
ERROR 07-10 14:49:36 [core.py:515] EngineCore failed to start.
ERROR 07-10 14:49:36 [core.py:515] Traceback (most recent call last):
ERROR 07-10 14:49:36 [core.py:515]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 506, in run_engine_core
ERROR 07-10 14:49:36 [core.py:515]     engine_core = EngineCoreProc(*args, **kwargs)
"""
# https://github.com/noonghunna/club-3090/issues/60 (a vLLM worker's lines, as posted)
VLLM_WORKER = """\
(EngineCore pid=77) ERROR 05-05 07:35:19 [core.py:1136]   File "/usr/local/lib/python3.12/dist-packages/torch/_ops.py", line 1269, in __call__
(EngineCore pid=77) ERROR 05-05 07:35:19 [core.py:1136]     return self._op(*args, **kwargs)
(EngineCore pid=77) ERROR 05-05 07:35:19 [core.py:1136]            ^^^^^^^^^^^^^^^^^^^^^^^^^
(EngineCore pid=77) ERROR 05-05 07:35:19 [core.py:1136] RuntimeError: CUDA driver error: out of memory
(EngineCore pid=77) Traceback (most recent call last):
"""
OURS = "ValueError: num_q_heads=12 must be divisible by num_kv_heads=8\n"
QUIET = "step 1 done\nstep 2 done\n"


@pytest.fixture()
def logs(tmp_path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a-vllm-start.log").write_text(VLLM_START)
    (folder / "b-vllm-worker.log").write_text(VLLM_WORKER)
    (folder / "c-host.log").write_text(OURS)
    (folder / "d-quiet.log").write_text(QUIET)
    return folder


def _run(*args, found: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([str(ERRKIT), "explain", "--all", "--quiet", *map(str, args)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == (0 if found else 1) and "Traceback" not in done.stderr, done.stderr
    return done


def test_the_json_report_says_what_a_file_without_matches_holds(logs):
    files = {Path(f["file"]).name: f for f in json.loads(_run("--json", logs).stdout)["files"]}
    assert files["c-host.log"]["matches"] == 1 and files["c-host.log"]["unmatched"] is None
    start = files["a-vllm-start.log"]
    assert start["matches"] == 0
    # no exception named: the logger's first ERROR line, every ERROR line counted
    assert start["unmatched"] == {"lines": 4, "first": {"line": 4, "text": "ERROR 07-10 14:49:36 [core.py:515] EngineCore failed to start."}}
    worker = files["b-vllm-worker.log"]["unmatched"]
    # the exception's line comes first, whatever ERROR lines come before it
    assert worker["first"] == {"line": 4, "text": "(EngineCore pid=77) ERROR 05-05 07:35:19 [core.py:1136] RuntimeError: CUDA driver error: out of memory"}
    assert worker["lines"] == 4
    assert files["d-quiet.log"]["matches"] == 0 and files["d-quiet.log"]["unmatched"] is None


def test_text_markdown_and_html_reports_name_each_file_and_why(logs):
    text = _run(logs).stdout
    section = text[text.index("no catalogued error in 3 file(s)"):]
    assert "a-vllm-start.log  4 line(s) name an error no wording matches; the first, line 4: ERROR 07-10" in section
    assert "b-vllm-worker.log  4 line(s) name an error no wording matches; the first, line 4: (EngineCore" in section
    assert "d-quiet.log  no line names an error" in section and "c-host.log" not in section
    assert "errkit explain on such a line gives the entries closest to it" in section

    md = _run("--format", "markdown", logs).stdout
    assert "No catalogued error:" in md and "a-vllm-start.log`: 4 line(s) name an error" in md

    page = _run("--format", "html", logs).stdout
    assert "<h2>No catalogued error</h2>" in page and "RuntimeError: CUDA driver error: out of memory" in page


def test_a_files_text_is_escaped_in_the_hint(tmp_path):
    log = tmp_path / "evil.log"
    log.write_text("RuntimeError: \x1b]0;owned\x07 <script>alert(1)</script>\n")
    text = _run(log, "--report", found=False).stdout
    assert "\x1b" not in text and "\x07" not in text and "RuntimeError: " in text
    page = _run("--format", "html", log, found=False).stdout
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page

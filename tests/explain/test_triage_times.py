"""The times and hosts triage reads from log formats other than ISO-stamped lines
(errkit/explain/triage.py timestamp, glog_time, glog_header, host_field): glog and absl prefixes,
whose year is in the file's glog header when anywhere; a JSON line's time field wherever it is in
the line; the address in Ray's prefix of a worker's line; a JSON line's machine or pod field.

The glog lines and header are shaped as in public reports: libtpu's log in
https://github.com/jax-ml/jax/issues/13260 (header `Log file created at: 2024/02/06 23:21:41`,
`Running on machine: t1v-n-6a2b8934-w-0`, lines `I0206 23:21:41.495393    6454 ...cc:726]`), absl's
Python logging in https://github.com/google-research/maxim/issues/27 (`I1016 22:01:30.441240 23844
xla_bridge.py:173]`) and Ray's prefix in https://github.com/grpc/grpc/issues/38703 (`(pid=) I1114
09:32:22.280168 13509 tpu_hal.cc:448]`); Ray's prefixes as in
https://github.com/kingoflolz/mesh-transformer-jax/issues/43 (`(pid=9454, ip=10.164.0.9)`) and
https://github.com/ray-project/ray/issues/63828 (`(EngineCore pid=14183) ValueError: ...`); Cloud
Logging's labels as in https://github.com/kubernetes/kubernetes/issues/50845
(`"compute.googleapis.com/resource_name": "gke-...-0840"`, `"container.googleapis.com/pod_name"`)."""

from __future__ import annotations

import json

import pytest

from errkit.explain.triage import glog_header, host_field, timestamp
from tests.explain.test_triage import errkit, report

HEADER = """\
Log file created at: 2024/02/06 23:21:41
Running on machine: t1v-n-6a2b8934-w-0
Binary: Built on Jun 22 2023 03:38:13 (1687430275)
Log line format: [IWEF]mmdd hh:mm:ss.uuuuuu threadid file:line] msg
"""
ERROR = "ValueError: num_q_heads=12 must be divisible by num_kv_heads=8"


@pytest.mark.parametrize("line, year, shown, key", [
    # libtpu's glog line without a year; with the header's year; the next year after the header's day
    ("I0206 23:21:41.495393    6454 b295d63588a.cc:726] Process id 6454", None,
     "0206 23:21:41.495393", "--02-06T23:21:41.495393"),
    ("I0206 23:21:41.495393    6454 b295d63588a.cc:726] Process id 6454", (2024, ("02", "06")),
     "0206 23:21:41.495393", "2024-02-06T23:21:41.495393"),
    ("E0101 00:00:01.5 77 tpu.cc:1] x", (2024, ("12", "31")), "0101 00:00:01.5", "2025-01-01T00:00:01.500000"),
    # absl's Python logging; Ray's prefix before it; glog 0.7's year in the line
    ("I1016 22:01:30.441240 23844 xla_bridge.py:173] Remote TPU is not linked into jax", None,
     "1016 22:01:30.441240", "--10-16T22:01:30.441240"),
    ("(pid=) I1114 09:32:22.280168 13509 tpu_hal.cc:448] Registered plugin", (2030, ("01", "01")),
     "1114 09:32:22.280168", "2030-11-14T09:32:22.280168"),
    ("W20240206 23:21:41.000001 6454 x.cc:1] y", (2019, ("01", "01")), "20240206 23:21:41.000001",
     "2024-02-06T23:21:41.000001"),
    # 29 February without a year is a date; a thirteenth month, a 24th hour are none
    ("E0229 10:00:00.000000 1 a.cc:1] x", None, "0229 10:00:00.000000", "--02-29T10:00:00.000000"),
    ("E1306 10:00:00.000000 1 a.cc:1] x", None, None, None),
    ("E0206 24:00:00.000000 1 a.cc:1] x", None, None, None),
    # no thread id, a word that only starts like a level, too far in the line: no time
    ("E0206 10:00:00.000000 a.cc:1] x", None, None, None),
    ("FILE0206 10:00:00.000000 1 a.cc:1] x", None, None, None),
    (" " * 80 + "E0206 10:00:00.000000 1 a.cc:1] x", None, None, None),
    # a date in the message after a glog prefix is not the line's time; an ISO stamp first is
    ("I0206 23:21:41.495393 6454 b.cc:804] Built on 2023-06-22 03:38:13", None,
     "0206 23:21:41.495393", "--02-06T23:21:41.495393"),
    ("2022-10-16 22:01:30.601621: E external/xla/subprocess.cc:287] Call to CreateProcess failed", None,
     "2022-10-16 22:01:30.601621", "2022-10-16T22:01:30.601621"),
])
def test_glog_and_absl_times(line, year, shown, key):
    assert timestamp(line, year) == ((shown, key) if shown else None)


def test_a_json_line_time_field_anywhere_in_the_line():
    # a log exported as JSON keeps its keys in order: the time can come after a long message
    record = {"insertId": "x" * 60, "textPayload": ERROR + " " * 40, "severity": "ERROR",
              "timestamp": "2026-11-29T10:00:06.25Z"}
    assert timestamp(json.dumps(record)) == ("2026-11-29T10:00:06.25Z", "2026-11-29T10:00:06.250000")
    no_time = {"insertId": "x" * 60, "textPayload": "2026-11-29T10:00:06Z " + ERROR, "note": "time"}
    assert timestamp(json.dumps(no_time)) is None  # a date in a message far in the line is not its time
    # the time field before a date the message holds near the line's start
    dated = {"msg": "run of 2026-01-01 10:00:00 failed: " + ERROR, "ts": "2026-11-29 10:00:06,5"}
    assert timestamp(json.dumps(dated)) == ("2026-11-29 10:00:06,5", "2026-11-29T10:00:06.500000")
    assert timestamp(json.dumps({"msg": "run of 2026-01-01 10:00:00 failed"})) == (
        "2026-01-01 10:00:00", "2026-01-01T10:00:00.000000")  # no time field: the first ISO one


def test_glog_header():
    assert glog_header(HEADER.encode()) == {"year": (2024, ("02", "06")), "machine": "t1v-n-6a2b8934-w-0"}
    assert glog_header(b"I0206 23:21:41.495393 6454 a.cc:1] Running on machine: x\n") == {}


def test_a_glog_file_gives_its_machine_and_year_to_the_report(tmp_path):
    """Two hosts' libtpu-style logs: the host is the header's machine (not the file's name), the
    times are the header's year (a 1 January after the header's 6 February is of the next year:
    the latest), first and last are by time across the files; a line with a host field keeps it."""
    worker0 = HEADER + f"I0206 23:21:41.495393    6454 a.cc:726] start\nE0206 23:25:00.000001    6454 a.cc:9] {ERROR}\n"
    worker1 = (HEADER.replace("w-0", "w-1") + f"E0206 23:22:00.100000    77 a.cc:9] {ERROR}\n"
               f"E0101 00:00:03.000000    77 a.cc:9] host=tpu-z {ERROR}\n")
    (tmp_path / "tpu_driver.t1v-n-6a2b8934-w-0.root.log.INFO.20240206-232141.6454").write_text(worker0)
    (tmp_path / "tpu_driver.t1v-n-6a2b8934-w-1.root.log.INFO.20240206-232141.77").write_text(worker1)
    doc, _ = report(tmp_path)
    (error,) = doc["errors"]
    assert error["code"] == "RA105" and error["count"] == 3
    assert error["hosts"] == {"t1v-n-6a2b8934-w-0": 1, "t1v-n-6a2b8934-w-1": 1, "tpu-z": 1}
    assert [f["host"] for f in doc["files"]] == ["t1v-n-6a2b8934-w-0", "t1v-n-6a2b8934-w-1"]
    assert (error["first"]["time"], error["first"]["line"]) == ("0206 23:22:00.100000", 5)
    assert "w-1" in error["first"]["file"]
    assert (error["last"]["time"], error["last"]["line"]) == ("0101 00:00:03.000000", 6)
    # shown in the report's one format, with the header's year (the next one for 1 January)
    assert (error["first"]["when"], error["last"]["when"]) == ("2024-02-06 23:22:00.100", "2025-01-01 00:00:03.000")
    code, text, _ = errkit("explain", "--all", tmp_path)
    assert code == 0 and "2024-02-06 23:22:00.100  " in text and "t1v-n-6a2b8934-w-0" in text
    assert "2025-01-01 00:00:03.000  " in text and "0206 23:22" not in text


@pytest.mark.parametrize("line, host", [
    ("(pid=9454, ip=10.164.0.9) jax runtime initialization starting", "10.164.0.9"),
    ("\x1b[36m(RayTrainWorker pid=812, ip=10.130.0.5)\x1b[0m " + ERROR, "10.130.0.5"),
    ("(EngineCore pid=14183) ValueError: Received incompatible devices for jitted computation.", None),
    ("(pid=1, ip=10.0.0.1) host=tpu-a " + ERROR, "tpu-a"),  # a host field says more than an address
    ("the run used ip=10.0.0.1) as its (pid=3, ip=10.0.0.2)" + " " * 120 + "x", "10.0.0.2"),
    (" " * 120 + "(pid=3, ip=10.0.0.2) too far in the line", None),
])
def test_the_address_in_a_ray_prefix_is_the_host(line, host):
    assert host_field(line) == host


def test_a_ray_driver_log_counts_each_worker_address(tmp_path):
    lines = [f"(RayTrainWorker pid={pid}, ip={ip}) {ERROR}" for pid, ip in
             ((812, "10.130.0.5"), (813, "10.130.0.6"), (812, "10.130.0.5"))]
    (tmp_path / "driver.log").write_text("2026-11-29 10:00:00,000 INFO starting\n" + "\n".join(lines) + "\n")
    doc, _ = report(tmp_path)
    (error,) = doc["errors"]
    assert error["hosts"] == {"10.130.0.5": 2, "10.130.0.6": 1}


GKE = {"labels": {"compute.googleapis.com/resource_name": "gke-tpu-pool-e9ca3824-0840",
                  "container.googleapis.com/pod_name": "trainer-0-fd4kj"},
       "resource": {"type": "k8s_container", "labels": {"pod_name": "trainer-0-fd4kj", "cluster_name": "c"}},
       "textPayload": ERROR, "timestamp": "2026-11-29T10:00:06Z"}


@pytest.mark.parametrize("record, host", [
    (GKE, "gke-tpu-pool-e9ca3824-0840"),  # the machine before the pod
    ({"resource": {"labels": {"pod_name": "trainer-3", "namespace_name": "ml"}}, "textPayload": ERROR}, "trainer-3"),
    ({"resource": {"labels": {"node_name": "tpu-node-2"}}, "jsonPayload": {"message": ERROR}, "pod_id": "p"}, "tpu-node-2"),
    ({"kubernetes": {"host": "node-7", "pod_name": "trainer-1"}, "log": ERROR}, "node-7"),  # fluent-bit's
    ({"msg": ERROR, "note": "the pod_name\" field is text"}, None),
])
def test_a_json_line_machine_or_pod_field_is_the_host(record, host):
    assert host_field(json.dumps(record)) == host


def test_machine_and_pod_fields_are_read_in_json_lines_only():
    assert host_field('2026-11-29 ERROR x: "pod_name": "trainer-3" ' + ERROR) is None

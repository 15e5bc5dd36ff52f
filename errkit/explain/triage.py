"""Triage of many log files (`errkit explain --all PATH...`): each file's catalogued errors summed per
code (count, hosts, first and last occurrence, the values seen), memory flat in a file's size
(blocks stream through), and the per-file summaries merged in the order the files were given (the
same answer whatever the number of workers: errkit/explain/workers.py reads the files, or the
parts of a large one, errkit/explain/parts.py).

A file's summary is a plain dict (picklable, JSON-able): the same for the command's workers, for
`errkit.Matcher.triage` and for a map step of Dask or Beam (site/docs/triage.md)."""

import os

from errkit.core.suggest import jsonable
from errkit.explain.matching.index import Index
from errkit.explain.matching.chunks import Reading, scan_chunks
from errkit.explain.matching.together import same_block, same_raise

MAX_VALUES = 20  # distinct values of a param kept per code (the report shows them)
MAX_DISTINCT = 1000  # distinct values counted per param and code, past which "1000+" is said
MAX_HOSTS = 1000  # hosts counted by name per code; the matches of any other host are counted in "other_hosts"
MAX_GIVEN = 4096  # params objects remembered per code as given already (_add), past which none are
MAX_TEXT = 300  # characters of a first or last occurrence's text kept
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".zst", ".zstd")
LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".stderr", ".stdout", ".jsonl", ".json")


def host_of(name: str) -> str:
    """A file's host: its name without folder, compression and log suffixes (`logs/host-017.log.gz`
    -> `host-017`); standard input is `stdin`."""
    if name == "-":
        return "stdin"
    base = os.path.basename(name)
    for suffixes in (COMPRESSED_SUFFIXES, LOG_SUFFIXES):
        for suffix in suffixes:
            if base.lower().endswith(suffix) and len(base) > len(suffix):
                base = base[:-len(suffix)]
                break
    return base


_PATTERNS: dict = {}


def _patterns():
    """The regexes of timestamps (ISO, a JSON line's time field, glog's), of a host field and of
    glog's file header, compiled on first use (Python's re: a log run only)."""
    if not _PATTERNS:
        import re

        _PATTERNS["time"] = re.compile(
            r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?(?![\d])")
        _PATTERNS["json_time"] = re.compile(r'"(?:@?timestamp|time|ts|asctime|datetime)"\s*:\s*"')
        # glog and absl: `I0206 23:21:41.495393    6454 file.cc:726] ...` (glog 0.7: the year too, I20240206)
        _PATTERNS["glog"] = re.compile(
            r"(?<![A-Za-z0-9])[IWEF]((\d{4})?(\d{2})(\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?) +\d+ ")
        _PATTERNS["host"] = re.compile(r"(?:\bhost(?:name)?=|\"host(?:name)?\"\s*:\s*\")([A-Za-z0-9_.:\-]+)")
        _PATTERNS["json_host"] = re.compile(
            r'"(?:[a-z.]+\.googleapis\.com/)?(resource_name|node_name|pod_name|pod_id)"\s*:\s*"([A-Za-z0-9_.:\-]+)"')
        _PATTERNS["ray"] = re.compile(r"\((?:[A-Za-z_][\w.-]* )?pid=\d+, ip=([0-9A-Fa-f][0-9A-Fa-f.:]*)\)")
        _PATTERNS["created"] = re.compile(rb"(?m)^Log file created at: (\d{4})/(\d{2})/(\d{2}) ")
        _PATTERNS["machine"] = re.compile(rb"(?m)^Running on machine: ([A-Za-z0-9_.:\-]+)")
    return _PATTERNS


RAY_REACH = 120  # characters of a line where Ray's prefix is looked for (host_field; colour codes may come first)
GLOG_HEAD = 4096  # bytes at a file's start where glog's header is looked for (glog_header)


def glog_header(head: bytes) -> dict:
    """What glog's file header (`Log file created at: 2024/02/06 23:21:41`, `Running on machine:
    t1v-n-6a2b8934-w-0`) at the start of a log tells: {"year": (2024, ("02", "06")), "machine": ...},
    each when present. Its lines have no year (`I0206 23:21:41.495393`): the header's is theirs."""
    found = {}
    created = _patterns()["created"].search(head)
    if created is not None:
        year, month, day = created.groups()
        found["year"] = (int(year), (month.decode(), day.decode()))
    machine = _patterns()["machine"].search(head)
    if machine is not None:
        found["machine"] = machine.group(1).decode()
    return found


def timestamp(line: str, year: tuple | None = None) -> tuple[str, str] | None:
    """(the timestamp as written, its sort key: ISO, UTC when it names a zone): a JSON line's time
    field (`"timestamp": "..."`, an ISO value) wherever it is, else the first ISO one in the line's
    first 80 characters, unless a glog or absl prefix comes before it (glog_time: a date in the
    message is not the line's time); None when there is none."""
    patterns = _PATTERNS or _patterns()
    json_line = line[:1] == "{"
    m = None
    if json_line:
        field = patterns["json_time"].search(line)
        m = None if field is None else patterns["time"].match(line, field.end())
    if m is None:
        m = patterns["time"].search(line, 0, 80)
    if m is None or (m.start() and not json_line):  # a glog prefix before it is the line's time, not a date in its message
        glog = glog_time(line, year, 80 if m is None else m.start())
        if glog is not None or m is None:
            return glog
    date, clock, fraction, zone = m.groups()
    text = f"{date}T{clock}.{(fraction + '000000')[:6]}" if fraction else f"{date}T{clock}"
    if not zone and _valid_date(date) and _valid_clock(clock):
        # datetime.fromisoformat(text).isoformat(timespec="microseconds"), without making one
        return m.group(0), text if fraction else text + ".000000"
    from datetime import datetime, timezone

    if zone:
        text += "+00:00" if zone == "Z" else (zone if ":" in zone else f"{zone[:3]}:{zone[3:]}")
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is not None:
        when = when.astimezone(timezone.utc).replace(tzinfo=None)
    return m.group(0), when.isoformat(timespec="microseconds")


def glog_time(line: str, year: tuple | None = None, within: int = 80) -> tuple[str, str] | None:
    """(the glog or absl time as written, `0206 23:21:41.495393`, its sort key) in the line's first
    `within` characters, or None. Its year: its own (glog 0.7 writes `I20240206`), else `year`
    from the file's header (glog_header: the year it was created, the next one for a month and day
    before that day's), else none: the key is then `--02-06T23:21:41.495393` (ISO 8601's date
    without a year), which sorts before every key with a year. Taken as written, as glog writes
    local time."""
    m = _patterns()["glog"].search(line, 0, within)
    if m is None:
        return None
    shown, own, month, day, clock, fraction = m.groups()
    if own is not None:
        date = f"{own}-{month}-{day}"
    elif year is not None:
        date = f"{year[0] + ((month, day) < year[1])}-{month}-{day}"
    else:
        date = None
    if not _valid_date(date or f"2000-{month}-{day}") or not _valid_clock(clock):
        return None  # (2000: a leap year, for a 29 February without a year)
    key = f"{date or f'--{month}-{day}'}T{clock}.{((fraction or '') + '000000')[:6]}"
    return shown, key


def _valid_clock(clock: str) -> bool:
    """Whether `hh:mm:ss` (two digits each) is a time of day, as datetime reads it."""
    return clock < "24" and clock[3:5] < "60" and clock[6:8] < "60"


_DATES: dict[str, bool] = {}  # a date as written -> whether it is one (a log has few)


def _valid_date(date: str) -> bool:
    valid = _DATES.get(date)
    if valid is None:
        from datetime import date as day

        try:
            day.fromisoformat(date)
            valid = True
        except ValueError:
            valid = False
        if len(_DATES) < 4096:
            _DATES[date] = valid
    return valid


JSON_HOSTS = ("resource_name", "node_name", "pod_name", "pod_id")  # a JSON line's host fields after "host", in order


def host_field(line: str) -> str | None:
    """The host a log line names (`host=host-017`, or a JSON line's `"host": "host-017"`; else a
    JSON line's machine or pod field as Cloud Logging and Kubernetes write them, the first of
    JSON_HOSTS it has, `"compute.googleapis.com/resource_name"` and `"pod_name"` included; else
    the address in Ray's prefix of a worker's line, `(RayTrainWorker pid=9454, ip=10.164.0.9)`, in
    its first RAY_REACH characters), or None."""
    if "host" in line:
        m = _patterns()["host"].search(line)
        if m is not None:
            return m.group(1)
    if line[:1] == "{" and ('_name"' in line or '"pod_id"' in line):
        found = {m.group(1): m.group(2) for m in _patterns()["json_host"].finditer(line)}
        for key in JSON_HOSTS:
            if key in found:
                return found[key]
    if "ip=" in line:
        m = _patterns()["ray"].search(line, 0, RAY_REACH)
        if m is not None:
            return m.group(1)
    return None


def _occurrence(file: str, line: int, when, text: str) -> dict:
    return {"file": file, "line": line, "time": when[0] if when else None, "text": text[:MAX_TEXT],
            "_key": when[1] if when else None}


def triage(index: Index, blocks, name: str, host: str | None = None, warn=None) -> dict:
    """One file's summary: {"file", "host", "lines", "bytes", "matches", "skipped", "codes": {code:
    {"count", "hosts", "first", "last", "earliest", "latest", "values"}}}. `blocks` are its bytes
    (errkit/explain/inputs.py); weak matches (a note line, a page link) of a code that also
    matched in full are left out, as `errkit explain --all` leaves them out of one file."""
    from errkit.explain.reading import line_chunks

    host_given = host is not None
    host = host_of(name) if host is None else host
    reading = Reading()
    size = [0]
    head = b""  # the file's first GLOG_HEAD bytes, until glog's header is read from them
    header: dict = {}

    def counted(stream):
        nonlocal host, head
        for block in stream:
            if len(head) < GLOG_HEAD:
                head += block[:GLOG_HEAD - len(head)]
                header.update(glog_header(head))
                if not host_given and "machine" in header:  # glog's header names the machine
                    host = header["machine"]
            size[0] += len(block)
            yield block

    counts = Counts()
    chunks = line_chunks(counted(blocks))
    for match, where, on, merged in occurrences(index, chunks, name, lambda: host, header, warn, reading):
        if not merged:
            counts.add(match, where, on)
    unended = bool(reading.tail) and not reading.tail.endswith(b"\n")  # a last line without its newline counts
    return counts.summary(name, host, reading.line - 1 + unended, size[0])


def occurrences(index: Index, chunks, name: str, host, header: dict, warn=None, reading: Reading | None = None, **part):
    """Each match of an input in order, as (match, where, host, merged): `where` its occurrence
    (file, line, time, text), `host()` the file's host (a line may name its own), `merged` whether
    the next match ends the same error (issue 26's same_block: then the next one carries this one's
    values, and its time when it has none, and this one is not counted). `part`: scan_chunks' for
    a part of a file (errkit/explain/parts.py)."""
    pending = None  # the last match's (match, where, host): told once the next one says whether it ends its error
    for match, chunk in scan_chunks(index, chunks, warn, reading, **part):
        end = chunk.find(b"\n", match.offset)
        raw = chunk[match.offset:end if end >= 0 else len(chunk)][:4096].decode("utf-8", "replace")
        where = _occurrence(name, match.line, timestamp(raw, header.get("year")), match.text or raw.strip())
        merged = pending is not None and same_block(pending[0], match, chunk)
        if not merged and pending is not None and same_raise(pending[0], match, chunk):
            continue  # the same raise printed again (its note line, its traceback's last line): counted once
        if merged:
            # one error printed over several lines: one occurrence, at its last line, with every
            # value, as `errkit explain --all` counts it (its time: the first line that has one)
            match.params = {**pending[0].params, **match.params}
            if where["time"] is None:
                where["time"], where["_key"] = pending[1]["time"], pending[1]["_key"]
        if pending is not None:
            yield (*pending, merged)
        pending = (match, where, host_field(raw) or host())
    if pending is not None:
        yield (*pending, False)


class Counts:
    """A file's matches counted per code, in order (`add`), or its parts' tallies folded in
    (`fold`); weak matches (a note line, a page link) apart, until `summary`."""

    def __init__(self):
        self.codes: dict[str, dict] = {}
        self.weak: dict[str, dict] = {}
        self._known: dict[tuple, dict] = {}  # (weak, code, param) -> {a value's key: its place in seen} (_add)
        self._given: dict[tuple, dict] = {}  # (weak, code) -> the params objects given already, their places (_add)

    def add(self, match, where: dict, host: str) -> None:
        _add(self.weak if match.weak else self.codes, match, where, host, self._known, self._given)

    def fold(self, other: "Counts") -> None:
        """`other`'s counts after this one's, as if its matches were added here one by one."""
        for into, groups in ((self.codes, other.codes), (self.weak, other.weak)):
            for code, group in groups.items():
                _fold(into, code, group)

    def summary(self, name: str, host: str, lines: int, size: int) -> dict:
        codes = self.codes
        for code, group in self.weak.items():
            if code not in codes:
                codes[code] = group
        return {"file": name, "host": host, "lines": lines, "bytes": size, "matches": sum(g["count"] for g in codes.values()),
                "skipped": None, "codes": codes}


def _fold(codes: dict, code: str, group: dict) -> None:
    """A code's group of later matches folded into `codes` (what _add gives, added one by one)."""
    into = codes.get(code)
    if into is None:
        codes[code] = {**group, "hosts": dict(group["hosts"]), "values": {p: dict(r, seen=list(r["seen"]), counts=list(r["counts"]), keys=list(r["keys"]))
                                                                         for p, r in group["values"].items()}}
        return
    into["count"] += group["count"]
    for host, n in group["hosts"].items():
        _host(into, host, n)
    if group.get("other_hosts"):  # (past MAX_HOSTS in a part: counted as others, as merged() counts a file's)
        into["other_hosts"] = into.get("other_hosts", 0) + group["other_hosts"]
    into["last"] = group["last"]
    if group["earliest"] is not None and (into["earliest"] is None or group["earliest"]["_key"] < into["earliest"]["_key"]):
        into["earliest"] = group["earliest"]
    if group["latest"] is not None and (into["latest"] is None or group["latest"]["_key"] >= into["latest"]["_key"]):
        into["latest"] = group["latest"]
    _fold_values(into["values"], group["values"])


def _fold_values(into: dict, values: dict) -> None:
    """The value records of later matches (`values`: param -> record) folded into `into`."""
    for param, record in values.items():
        _seen(into, param, record["seen"], record["keys"], record["counts"], record["other"])
        if record["more"]:
            into[param]["more"] = True


def _add(codes: dict, match, where: dict, host: str, known: dict | None = None, given: dict | None = None) -> None:
    """Count `match` in its code's group, and each of its values. `known`: (weak, code, param) ->
    {a value's key: its place in the record's `seen` (-1: counted in `other`)}, what _seen answered
    (places never move: `seen` only grows); `given`: (weak, code) -> {id: (a params object given
    already, its values' records and places)} (a remembered line's match shares its template's params,
    matching/found.py again: only counted)."""
    group = codes.get(match.code)
    if group is None:
        group = codes[match.code] = {"count": 0, "hosts": {}, "first": where, "last": where, "earliest": None,
                                     "latest": None, "values": {}}
    group["count"] += 1
    _host(group, host, 1)
    group["last"] = where
    if where["_key"] is not None:
        if group["earliest"] is None or where["_key"] < group["earliest"]["_key"]:
            group["earliest"] = where
        if group["latest"] is None or where["_key"] >= group["latest"]["_key"]:
            group["latest"] = where
    values = group["values"]
    objects = None
    if given is not None:
        objects = given.setdefault((match.weak, match.code), {})
        hit = objects.get(id(match.params))
        if hit is not None and hit[0] is match.params:
            for record, at in hit[1]:  # (each record stays its param's: values only grow)
                if at >= 0:
                    record["counts"][at] += 1
                else:
                    record["other"] += 1
            return
        if len(objects) >= MAX_GIVEN:  # (memory flat in a log's distinct values)
            objects.clear()
    places = []
    for param, value in match.params.items():
        value = jsonable(value)
        key = repr(value)  # jsonable values: repr tells 1 from 1.0 and '1'
        cached = None if known is None else known.setdefault((match.weak, match.code, param), {})
        at = None if cached is None else cached.get(key)
        if at is None:
            at = _seen(values, param, [value], counts=[0])[0]
            if cached is not None and len(cached) < MAX_DISTINCT:
                cached[key] = at
        record = values[param]
        if at >= 0:
            record["counts"][at] += 1
        else:
            record["other"] += 1
        places.append((record, at))
    if objects is not None:
        objects[id(match.params)] = (match.params, places)  # (kept: its id is not reused while it is held)


def _host(group: dict, host: str, count: int) -> None:
    """Count `count` matches of `host` in a code's group: by name for its first MAX_HOSTS hosts,
    in "other_hosts" past them (memory flat in a log's distinct host names)."""
    hosts = group["hosts"]
    if host in hosts or len(hosts) < MAX_HOSTS:
        hosts[host] = hosts.get(host, 0) + count
    else:
        group["other_hosts"] = group.get("other_hosts", 0) + count


def _seen(values: dict, param: str, new: list, keys_new=None, counts=None, other: int = 0) -> list[int]:
    """Add values to a param's record ({"seen": its first MAX_VALUES distinct values, "counts": the
    occurrences of each, "keys": up to MAX_DISTINCT keys of distinct values, the keys of `seen`
    first, "more": whether more were seen than counted, "other": the occurrences of values not in
    `seen`}), `counts[i]` occurrences of `new[i]` (1 each when None) and `other` of others, whose
    keys past those of `new` are `keys_new`. Returns each new value's place in `seen` (-1: not kept
    there, counted in "other")."""
    record = values.get(param)
    if record is None:
        record = values[param] = {"seen": [], "counts": [], "keys": [], "more": False, "other": 0}
    keys = record["keys"]
    places = {key: at for at, key in enumerate(keys[:len(record["seen"])])}
    known = set(keys)
    out = []
    for i, value in enumerate(new):
        n = 1 if counts is None else counts[i]
        key = repr(value)  # jsonable values: repr tells 1 from 1.0 and '1'
        at = places.get(key)
        if at is None and key not in known:
            if len(record["seen"]) < MAX_VALUES:
                at = places[key] = len(record["seen"])
                record["seen"].append(value)
                record["counts"].append(0)
            if len(known) < MAX_DISTINCT:
                known.add(key)
                keys.append(key)
            else:
                record["more"] = True
        if at is None:
            record["other"] += n
            out.append(-1)
        else:
            record["counts"][at] += n
            out.append(at)
    record["other"] += other
    for key in keys_new or ():
        if key not in known:
            if len(known) < MAX_DISTINCT:
                known.add(key)
                keys.append(key)
            else:
                record["more"] = True
    return out


def skipped(name: str, reason: str) -> dict:
    """The summary of a file that was not read (binary, unreadable, corrupt)."""
    return {"file": name, "host": host_of(name), "lines": 0, "bytes": 0, "matches": 0, "skipped": reason, "codes": {}}


def merged(summaries: list[dict]) -> dict:
    """The per-file summaries summed per code, in the order given: {code: {"count", "files": {file:
    count}, "hosts": {host: count}, "first", "last", "earliest", "latest", "values"}}. Only the
    order of `summaries` matters, never the order the workers finished in."""
    out: dict[str, dict] = {}
    for summary in summaries:
        for code, group in summary["codes"].items():
            into = out.get(code)
            if into is None:
                into = out[code] = {"count": 0, "files": {}, "hosts": {}, "first": group["first"], "last": None,
                                    "earliest": None, "latest": None, "values": {}}
            into["count"] += group["count"]
            into["files"][summary["file"]] = into["files"].get(summary["file"], 0) + group["count"]
            for host, n in group["hosts"].items():
                _host(into, host, n)
            if group.get("other_hosts"):
                into["other_hosts"] = into.get("other_hosts", 0) + group["other_hosts"]
            into["last"] = group["last"]
            if group["earliest"] is not None and (into["earliest"] is None
                                                  or group["earliest"]["_key"] < into["earliest"]["_key"]):
                into["earliest"] = group["earliest"]
            if group["latest"] is not None and (into["latest"] is None
                                                or group["latest"]["_key"] >= into["latest"]["_key"]):
                into["latest"] = group["latest"]
            _fold_values(into["values"], group["values"])
    return out


def summarise(matcher, name: str, stdin=None, warn=None, reading=None) -> dict:
    """The summary of one file (or `-`), read with `matcher`'s index; a file that is not a log is a
    skipped summary, told through `warn`. `reading(name, bytes, lines)` hears of each block read
    (progress inside a file)."""
    from errkit.explain.inputs import Skipped, text_blocks

    told = None if warn is None else (lambda line: warn(f"{line} ({name})"))  # noqa: E731
    try:
        blocks = text_blocks(name, stdin)
        return matcher.triage(blocks if reading is None else _told(blocks, name, reading), name, warn=told)
    except Skipped as why:
        if warn is not None:
            warn(f"errkit: skipped {why}")
        return skipped(name, str(why))


def _told(blocks, name: str, reading):
    for block in blocks:
        reading(name, len(block), block.count(b"\n"))
        yield block

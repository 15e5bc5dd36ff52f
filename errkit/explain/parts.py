"""One large log file read by several workers, a part each (`errkit explain --all`, issue 50): the
file is cut at line starts, each worker scans its part and OVERLAP bytes of each neighbour's, and
the parts' summaries are joined in order into the file's, the one reading it alone gives.

What joins them: the matcher's state where one part ends (where the next line to read starts,
past a traceback's frames; the error a match may continue: errkit/explain/matching/together.py)
depends on what came before. Both workers scan the overlap between two parts; the first match
there that both found with the same values (its place and its values are the whole state from
there on) is where the later part takes over. The matches of the overlaps are kept one by one,
those between them counted in the worker (triage.Counts). Should no such match be found (an overlap
with matches, none of them the same in both: never seen in the logs measured), the file is read
again whole, in one process.

Only plain files are split (a compressed stream cannot be read from its middle), at least
PART_MIN bytes a part."""

import os

from errkit.core.index_format import READ_WINDOW, TIE_CONTEXT

PART_MIN = 16 << 20  # bytes: a smaller part costs more to start and join than it saves
OVERLAP = 1 << 20  # bytes each worker scans of each neighbouring part
CONTEXT = 2 * TIE_CONTEXT  # bytes before a part's first line read around it (the windows before a match)
MARGIN = 4 * READ_WINDOW  # bytes after a part's last line read around it (the windows after a match)


class NoJoin(Exception):
    """Two parts' overlap gave no match that both found the same: the file is read whole."""


def parts_of(path: str, wanted: int) -> list[int] | None:
    """The cuts of a file into at most `wanted` parts of PART_MIN bytes or more: [0, cut, ..., size],
    each cut a line's start; None when it is not split (too small, not plain UTF-8 text, not a file)."""
    from errkit.core.normalise import text_encoding
    from errkit.explain.reading import compression

    try:
        size = os.path.getsize(path)
        with open(path, "rb") as handle:
            head = handle.read(8192)
            if compression(head[:4]) is not None or text_encoding(head) is not None or b"\x00" in head:
                return None  # compressed, UTF-16 or with a byte-order mark, or binary: read whole
            count = min(wanted, size // PART_MIN)
            if count < 2:
                return None
            cuts = [0]
            for k in range(1, count):
                cut = _line_start(handle, size * k // count, size)
                if cut - cuts[-1] >= 2 * OVERLAP + CONTEXT and size - cut >= 2 * OVERLAP + CONTEXT:
                    cuts.append(cut)
    except OSError:
        return None
    return cuts + [size] if len(cuts) > 1 else None


def _line_start(handle, at: int, size: int) -> int:
    """The first line's start at or after `at`."""
    if at == 0:
        return 0
    handle.seek(at - 1)
    while at < size:
        block = handle.read(1 << 16)
        if not block:
            break
        nl = block.find(b"\n")
        if nl >= 0:
            return at + nl
        at += len(block)
    return size


def bounds(cuts: list[int], k: int, path: str, overlap: int | None = None) -> tuple[int, int, int, int]:
    """Part k's (scan from, scan to, overlap before ends, overlap after starts): it scans the lines
    starting in [from, to), `overlap` bytes (OVERLAP) into each neighbour, each end a line's start.
    Every part of a file is read with the overlap its cuts were made for: a worker is given it."""
    size = cuts[-1]
    reach = OVERLAP if overlap is None else overlap
    with open(path, "rb") as handle:
        begin = 0 if k == 0 else _line_start(handle, cuts[k] - reach, size)
        end = size if k == len(cuts) - 2 else _line_start(handle, cuts[k + 1] + reach, size)
        head_end = begin if k == 0 else _line_start(handle, cuts[k] + reach, size)
        tail_begin = end if k == len(cuts) - 2 else _line_start(handle, cuts[k + 1] - reach, size)
    return begin, end, head_end, tail_begin


def summarise_part(index, path: str, name: str, host: str, header: dict, cuts: list[int], k: int, warn=None,
                   overlap: int | None = None) -> dict:
    """Part k of the file: its matches in the overlaps one by one (`head`, `tail`: (at, line, match,
    where, host, merged)), the others counted (`counts`: triage.Counts), the line number at its end
    and the lines in its overlap before (to number the next parts' lines), its tail bytes."""
    from errkit.explain.matching.chunks import Reading
    from errkit.explain.triage import Counts, occurrences

    begin, end, head_end, tail_begin = bounds(cuts, k, path, overlap)
    size = cuts[-1]
    with open(path, "rb") as handle:
        low = 0 if begin == 0 else _line_start(handle, max(0, begin - CONTEXT), begin)
        handle.seek(low)
        context = handle.read(begin - low)
        head_lines = 0
        if k > 0:
            head_lines = handle.read(head_end - begin).count(b"\n")
            handle.seek(begin)
        stop = min(size, end + MARGIN)

        def blocks():
            at = begin
            while at < stop:
                block = handle.read(min(1 << 20, stop - at))
                if not block:
                    return
                at += len(block)
                yield block

        reading = Reading()
        counts = Counts()
        head: list = []
        tail: list = []
        until = None if end == size else end
        for match, where, on, merged in occurrences(index, blocks(), name, lambda: host, header, warn, reading,
                                                    context=context, at=begin, until=until):
            if match.at < head_end:
                head.append((match.at, match.line, _bare(match), where, on, merged))
            elif match.at >= tail_begin:
                tail.append((match.at, match.line, _bare(match), where, on, merged))
            elif not merged:
                counts.add(match, where, on)
    last = reading.line if until is None else reading.until_line
    return {"head": head, "tail": tail, "counts": counts, "end_line": last, "head_lines": head_lines, "tail_bytes": reading.tail}


def _bare(match):
    """What the counts read of a match, to send back from a worker (its wording stays there)."""
    from types import SimpleNamespace

    return SimpleNamespace(code=match.code, weak=match.weak, params=match.params)


def joined(parts: list[dict], name: str, host: str, size: int) -> dict:
    """The file's summary from its parts' (summarise_part), in order; NoJoin when two of them find no
    state in common in their overlap."""
    from errkit.explain.triage import Counts

    counts = Counts()
    offset = 0  # lines before part k's first
    take_from = None  # where part k's matches start being its (the join with the part before)
    for k, part in enumerate(parts):
        following = parts[k + 1] if k + 1 < len(parts) else None
        join = None if following is None else _join(part["tail"], following["head"])
        for at, line, match, where, on, merged in part["head"]:
            if take_from is None or at >= take_from:
                _take(counts, match, where, on, merged, line + offset)
        _shift(part["counts"], offset)
        counts.fold(part["counts"])
        for at, line, match, where, on, merged in part["tail"]:
            if join is None or at < join:
                _take(counts, match, where, on, merged, line + offset)
        if following is not None:
            # the next part's first line: this part's line at its scan's end, less the lines both scanned
            offset = offset + part["end_line"] - 1 - following["head_lines"]
        take_from = join
    tail = parts[-1]["tail_bytes"]
    lines = offset + parts[-1]["end_line"] - 1 + (bool(tail) and not tail.endswith(b"\n"))
    return counts.summary(name, host, lines, size)


def _join(tail: list, head: list) -> int | None:
    """Where the later part takes over: the first match of the overlap both parts found with the
    same values (None when neither found any there); NoJoin when none is the same in both."""
    if not tail and not head:
        return None
    before = {record[0]: record for record in tail}
    for record in head:
        other = before.get(record[0])
        if other is not None and _same(other, record):
            return record[0]
    raise NoJoin


def _same(a: tuple, b: tuple) -> bool:
    (_, _, ma, wa, ha, _), (_, _, mb, wb, hb, _) = a, b
    return (ma.code, ma.weak, ma.params, ha, wa["time"], wa["_key"], wa["text"]) == \
        (mb.code, mb.weak, mb.params, hb, wb["time"], wb["_key"], wb["text"])


def _take(counts, match, where: dict, host: str, merged: bool, line: int) -> None:
    if not merged:
        counts.add(match, dict(where, line=line), host)


def _shift(counts, offset: int) -> None:
    """The line numbers of a part's counted matches made the file's (each occurrence once)."""
    done = set()
    for groups in (counts.codes, counts.weak):
        for group in groups.values():
            for key in ("first", "last", "earliest", "latest"):
                where = group[key]
                if where is not None and id(where) not in done:
                    done.add(id(where))
                    where["line"] += offset

"""The releases of an upstream distribution that raise a wording: `releases: "jax>=0.4.31,<0.5.3"`.

A requirement is a distribution name and a PEP 440 specifier limited to what a range of releases
needs: `>=`, `>`, `<=`, `<`, `==` and `!=` with plain release numbers (no pre-releases, wildcards,
extras or markers). `packaging` parses it here, at lint and generate time; the index stores the
bounds as number lists, so the explain side compares versions without importing anything.

The releases that really exist come from the harvested data (`<catalogue>/harvest/<dist>.json`,
written by `scripts/harvest.py`): a range is shown by the first and last harvested release inside
it ("jax 0.4.31 to 0.5.2", "jax 0.4.31 and later").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

OPERATORS = (">=", ">", "<=", "<", "==", "!=")
HARVEST = "harvest"  # folder of the catalogue holding <dist>.json


class ReleasesError(ValueError):
    pass


@dataclass(frozen=True)
class Releases:
    dist: str  # canonical distribution name
    bounds: tuple[tuple[str, tuple[int, ...]], ...]  # (operator, release numbers), as written

    @property
    def specifier(self) -> str:
        return ",".join(op + ".".join(map(str, nums)) for op, nums in self.bounds)

    def __contains__(self, release: str | tuple[int, ...]) -> bool:
        return contains(self.bounds, release_tuple(release) if isinstance(release, str) else release)

    def index_record(self, harvested: list[str] | None) -> dict:
        """What errkit/_index.json holds for the wording."""
        return {
            "dist": self.dist,
            "specifier": self.specifier,
            "bounds": [[op, list(nums)] for op, nums in self.bounds],
            "shown": shown(self, harvested),
        }


def release_tuple(text: str) -> tuple[int, ...]:
    """'0.4.31' -> (0, 4, 31); ReleasesError for anything but a plain release number."""
    try:
        version = Version(text)
    except InvalidVersion:
        raise ReleasesError(f"{text!r} is not a version") from None
    if version.pre or version.post is not None or version.dev is not None or version.local or version.epoch:
        raise ReleasesError(f"{text!r}: only plain release numbers (like 0.4.31) are allowed")
    return version.release


def _key(nums: tuple[int, ...]) -> tuple[int, ...]:
    """Release numbers compared as PEP 440 does: trailing zeros do not count (0.5 == 0.5.0)."""
    nums = tuple(nums)
    while len(nums) > 1 and nums[-1] == 0:
        nums = nums[:-1]
    return nums


def contains(bounds, release: tuple[int, ...]) -> bool:
    r = _key(release)
    for op, nums in bounds:
        n = _key(nums)
        if not {">=": r >= n, ">": r > n, "<=": r <= n, "<": r < n, "==": r == n, "!=": r != n}[op]:
            return False
    return True


def parse(text: str) -> Releases:
    """A requirement string -> Releases; ReleasesError says what is wrong with it."""
    try:
        req = Requirement(text)
    except InvalidRequirement as err:
        raise ReleasesError(f"cannot parse {text!r}: {str(err).splitlines()[0]}") from None
    if req.extras or req.marker is not None or req.url:
        raise ReleasesError(f"{text!r}: extras, markers and URLs mean nothing here; write e.g. 'jax>=0.4.31,<0.5.3'")
    if not len(req.specifier):
        raise ReleasesError(f"{text!r} names no releases; write e.g. '{req.name}>=0.4.31,<0.5.3'")
    bounds = []
    # the specifiers in the order the author wrote them (SpecifierSet sorts them)
    for part in text.strip()[len(req.name):].split(","):
        part = part.strip()
        if part.startswith(("===", "~=")):
            raise ReleasesError(f"{text!r}: {part!r} uses an operator other than {', '.join(OPERATORS)}")
        op = next((o for o in sorted(OPERATORS, key=len, reverse=True) if part.startswith(o)), None)
        if op is None:
            raise ReleasesError(f"{text!r}: {part!r} uses an operator other than {', '.join(OPERATORS)}")
        bounds.append((op, release_tuple(part[len(op):].strip())))
    releases = Releases(canonicalize_name(req.name), tuple(bounds))
    if is_empty(releases.bounds):
        raise ReleasesError(f"{text!r} is an empty range: no release satisfies it")
    return releases


def is_empty(bounds) -> bool:
    """Whether no release number at all satisfies the bounds."""
    lows = [(_key(n), op == ">") for op, n in bounds if op in (">=", ">")]
    highs = [(_key(n), op == "<") for op, n in bounds if op in ("<=", "<")]
    pins = {_key(n) for op, n in bounds if op == "=="}
    excluded = {_key(n) for op, n in bounds if op == "!="}
    if len(pins) > 1:
        return True
    if pins:
        return not contains(bounds, next(iter(pins)))
    low = max(lows, default=None)  # the highest lower bound; exclusive wins a tie
    high = min(highs, key=lambda h: (h[0], not h[1]), default=None)  # the lowest; exclusive wins a tie
    if low is None or high is None:
        return False
    if low[0] < high[0]:
        return False  # releases between two different numbers always exist (0.4.31.1, ...)
    if low[0] > high[0] or low[1] or high[1]:
        return True
    return low[0] in excluded  # >=x,<=x is x alone


# -- the harvested releases -----------------------------------------------------------------------


@lru_cache(maxsize=16)
def _read_harvest(path: str, mtime: float) -> tuple[str, ...]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return tuple(data["releases"])


def harvested(root: Path, dist: str) -> list[str] | None:
    """The releases of `dist` harvested for the catalogue under `root`, oldest first; None when
    none were."""
    path = Path(root) / HARVEST / f"{canonicalize_name(dist)}.json"
    try:
        return list(_read_harvest(str(path), path.stat().st_mtime))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def index_record(text: str | None, root: Path) -> dict | None:
    """A wording's `releases` as errkit/_index.json holds it: None, or dist, specifier, bounds
    (number lists, for the explain side to compare without packaging) and `shown`."""
    if text is None:
        return None
    parsed = parse(text)  # generate runs lint first: a broken one never gets here
    return parsed.index_record(harvested(root, parsed.dist))


def inside(releases: Releases, known: list[str]) -> list[str]:
    return [r for r in known if release_tuple(r) in releases]


def shown(releases: Releases, known: list[str] | None) -> str:
    """'jax 0.4.31 to 0.5.2', 'jax 0.4.31 and later', 'jax 0.5.2 and earlier', 'jax 0.4.31'."""
    hits = inside(releases, known) if known else []
    if not hits:
        return f"{releases.dist} {releases.specifier}"
    ops = {op for op, _ in releases.bounds}
    first, last = hits[0], hits[-1]
    upper_open = not ops & {"<", "<=", "=="}
    lower_open = not ops & {">", ">=", "=="}
    if upper_open and lower_open:
        text = f"every {releases.dist} release"
    elif upper_open:
        text = f"{releases.dist} {first} and later"
    elif lower_open:
        text = f"{releases.dist} {last} and earlier"
    elif first == last:
        text = f"{releases.dist} {first}"
    else:
        text = f"{releases.dist} {first} to {last}"
    span = known[known.index(first):known.index(last) + 1]
    skipped = [r for r in span if r not in hits]
    return text + (f" except {', '.join(skipped)}" if skipped else "")


def specifier_for(raising: list[str], known: list[str]) -> str:
    """The shortest specifier this module writes for exactly the `raising` releases among the
    harvested `known` ones: '>=first' (and '<the release after the last' unless the last is the
    newest harvested), with '!=' for each release skipped in between."""
    order = [r for r in known if r in set(raising)]
    if not order:
        raise ReleasesError("no harvested release raises it")
    i, j = known.index(order[0]), known.index(order[-1])
    parts = [f">={order[0]}"]
    parts += [f"!={r}" for r in known[i:j + 1] if r not in order]
    if j + 1 < len(known):
        parts.append(f"<{known[j + 1]}")
    return ",".join(parts)

"""The life of a wording, read from its release range: "raised since jax 0.4.29; no longer raised
since jax 0.4.36".

What the range says and nothing more: its lower bound is the release the wording was first raised
in (`>=0.4.29`: since 0.4.29; `>0.4.29`: after it; `==0.5.3`: in 0.5.3 only), its upper bound the
release it stopped (`<0.4.36`: no longer raised since 0.4.36; `<=0.4.35`: no longer raised after
0.4.35). It reads the range as the index stores it (errkit/catalogue/releases.py's
`index_record`: `dist` and `bounds`, number lists), so an entry page (errkit/generate/site.py) and
`errkit explain` (errkit/explain/answer.py) say the same words. Standard library only: the explain
path imports it.
"""



def _release(nums) -> str:
    return ".".join(str(n) for n in nums)


def _key(nums) -> tuple[int, ...]:
    nums = tuple(nums)
    while len(nums) > 1 and nums[-1] == 0:
        nums = nums[:-1]
    return nums


def life(record: dict | None) -> dict | None:
    """A releases record (`{"dist": "jax", "bounds": [[">=", [0, 4, 29]], ["<", [0, 4, 36]]], ...}`)
    -> `{"since": "0.4.29", "until": "0.4.36", "text": "raised since jax 0.4.29; no longer raised
    since jax 0.4.36"}`; `since` is the first release raising it (None without a `>=` or `==`
    bound), `until` the first release no longer raising it (None without a `<` bound: still
    raised, as far as the catalogue knows). None for no record."""
    if not record:
        return None
    dist, bounds = record["dist"], [(op, tuple(nums)) for op, nums in record["bounds"]]
    lows = [(n, op) for op, n in bounds if op in (">=", ">")]  # the numbers as written (0.7.0 stays 0.7.0)
    highs = [(n, op) for op, n in bounds if op in ("<", "<=")]
    pins = [n for op, n in bounds if op == "=="]
    excluded = [n for op, n in bounds if op == "!="]
    since = until = None
    parts = []
    if pins:
        since = _release(pins[0])
        parts.append(f"raised in {dist} {since} only")
    else:
        if lows:
            # the highest lower bound; of two equal ones, the exclusive one (">") is the tighter
            nums, op = max(lows, key=lambda low: (_key(low[0]), low[1] == ">"))
            if op == ">=":
                since = _release(nums)
                parts.append(f"raised since {dist} {since}")
            else:
                parts.append(f"raised after {dist} {_release(nums)}")
        if highs:
            nums, op = min(highs, key=lambda high: (_key(high[0]), high[1] == "<="))
            if op == "<":
                until = _release(nums)
                parts.append(f"no longer raised since {dist} {until}")
            else:
                parts.append(f"no longer raised after {dist} {_release(nums)}")
        if not parts:
            parts.append(f"raised in every {dist} release")
    if excluded:
        skipped = ", ".join(f"{dist} {_release(n)}" for n in excluded)
        if parts[0].startswith("raised in every"):
            parts[0] += f" except {skipped}"
        else:
            parts.insert(1, f"not in {skipped}")
    return {"since": since, "until": until, "text": "; ".join(parts)}


def _end(record: dict) -> tuple[tuple[int, ...], str, str] | None:
    """(sort key, "since" or "after", release) of the range's upper end; None when it has none."""
    bounds = [(op, tuple(nums)) for op, nums in record["bounds"]]
    ends = [(_key(n), "since" if op == "<" else "after", _release(n)) for op, n in bounds if op in ("<", "<=", "==")]
    # the lowest; of a `<x` and a `<=x`, `<x` ends first
    return min(ends, key=lambda e: (e[0], e[1] == "after")) if ends else None


def _version_key(text: str) -> tuple[int, ...]:
    return _key(int(x) for x in text.split("."))


def summary(records: list[dict | None]) -> str | None:
    """An entry's life from its wordings' records (its own message first, then its variants):
    "raised since jax 0.4.25; no longer raised since jax 0.4.38" when every wording has an end
    (the last end is named), "raised since jax 0.4.25; 2 of its 4 wordings no longer raised (since
    jax 0.4.27, 0.4.31)" when some are still raised. None when no wording has a range, or the
    wordings' ranges are of several distributions (each wording says its own)."""
    known = [r for r in records if r]
    if not known or len({r["dist"] for r in known}) > 1:
        return None
    dist = known[0]["dist"]
    parts = []
    sinces = [life(r)["since"] for r in known]
    if all(sinces):
        parts.append(f"raised since {dist} {min(sinces, key=_version_key)}")
    ends = [_end(r) for r in known]
    done = [e for e in ends if e]
    if done and len(done) == len(ends):
        key, word, release = max(done, key=lambda e: (e[0], e[1] == "after"))
        parts.append(f"no longer raised {word} {dist} {release}")
    elif done:
        words = {word for _, word, _ in done}
        releases = list(dict.fromkeys(release for _, _, release in sorted(done)))
        said = (f"{words.pop()} {dist} {', '.join(releases)}" if len(words) == 1
                else ", ".join(dict.fromkeys(f"{word} {dist} {release}" for _, word, release in sorted(done))))
        parts.append(f"{len(done)} of its {len(ends)} wordings no longer raised ({said})")
    return "; ".join(parts) if parts else None

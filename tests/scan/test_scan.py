"""`errkit scan`: raise sites, message templates, coverage, drafts and bad input."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from errkit import scan
from errkit.catalogue.load import yaml
from errkit.explain.matching.index import INDEX_FILE, Index

ROOT = Path(__file__).resolve().parents[2]
TREE = Path(__file__).resolve().parents[1] / "fixtures" / "scan" / "tree"


def jax_ops() -> Path:
    jax = pytest.importorskip("jax")
    return Path(jax.__file__).parent / "experimental" / "pallas" / "ops"


def sites_of(tmp_path: Path, code: str, name: str = "mod.py") -> list[scan.Site]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    result = scan.scan_paths([str(path)])
    assert not result.problems
    return result.sites


def one(tmp_path: Path, code: str) -> scan.Site:
    sites = sites_of(tmp_path, code)
    assert len(sites) == 1, [(s.line, s.template) for s in sites]
    return sites[0]


@pytest.fixture
def empty_index(tmp_path) -> Path:
    """The real index with every wording removed: nothing is covered."""
    data = json.loads(Path(INDEX_FILE).read_text(encoding="utf-8"))
    data.update(entries={}, wordings=[])
    path = tmp_path / "empty_index.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# -- hand-made lists: real code no one here wrote -----------------------------------------------------

# Written by reading jax 0.10.2's source (every `raise` and every `assert` with a message).
GPU_ATTENTION = [
    (243, "ValueError", "This kernel expects q, k, and v to have the same head dimension, but found {q.shape=}, {k.shape=}, {v.shape=}."),
    (248, "ValueError", "{q_seq_len=} must be a multiple of {block_q=}"),
    (250, "ValueError", "{kv_seq_len=} must be a multiple of {block_k=}"),
    (537, "ValueError", "Kernel differentiation is not supported if return_residuals is True."),
    (552, "ValueError", "Backward block sizes must all be set."),
    (569, "ValueError", "q_seq_len and kv_seq_len must be divided into the same number of blocks for the fused backward pass."),
    (649, "ValueError", "Invalid backward pass implementation: {backward_pass_impl}"),
]

TPU_FLASH_ATTENTION = [
    (75, "ValueError", "{prefix}{suffix}={minor} should be smaller than {prefix}_major{suffix}={major}"),
    (80, "ValueError", "{prefix}{suffix}={minor} should divide {prefix}_major{suffix}={major}"),
    (156, "ValueError", "Batch size mismatch: got {batch_size}, {batch_size_k} and {batch_size_v} (for q, k, v respectively)"),
    (161, "ValueError", "Head count mismatch: got {num_heads}, {num_heads_k}, {num_heads_v} (for q, k, v respectively)"),
    (166, "ValueError", "Model dimension mismatch: got {d_model} and {d_model_k} (for q and k respectively)"),
    (171, "NotImplementedError", "V model dimension unequal to KV model dimension unsupported"),
    (175, "ValueError", "KV sequence length mismatch: got {kv_seq_len} and {kv_seq_len_v}"),
    (180, "ValueError", "Attention bias shape mismatch: expected ({batch_size=}, {num_heads=}, {q_seq_len=}, {kv_seq_len=}), got {ab.shape}"),
    (186, "ValueError", "Q segment ids shape mismatch: expected ({batch_size=}, {q_seq_len=},), got {segment_ids.q.shape}"),
    (191, "ValueError", "KV segment ids shape mismatch: expected ({batch_size=}, {kv_seq_len=},), got {segment_ids.kv.shape}"),
    (247, "NotImplementedError", "Higher-order AD not supported"),
    (265, "NotImplementedError", "Higher-order AD not supported"),
    (268, "ValueError", "Program is being differentiated, but not all backward blocks are specified"),
    (415, "NotImplementedError", "kv block size must be a multiple of {NUM_LANES}"),
    (444, "NotImplementedError", "{block_k=} should be a multiple of {MIN_BLOCK_SIZE}"),
    (461, "NotImplementedError", "{head_dim=} should be a multiple of {MIN_BLOCK_SIZE} if larger"),
    (522, "NotImplementedError", "kv block size must be a multiple of {NUM_LANES}"),
    (864, "NotImplementedError", ""),  # `raise NotImplementedError(\n)`: no message
    (1204, "NotImplementedError", "kv block size must be a multiple of {NUM_LANES}"),
    (1590, "NotImplementedError", ""),
    (1630, "NotImplementedError", ""),
    (1709, "ValueError", "{block_name}={block} should be smaller or equal to {dim_name}={dim}"),
    (1713, "ValueError", "{dim_name}={dim} should be divisible by {block_name}={block}"),
]

# Asserts with messages (the two files above have none); assertions without a message are not sites.
GPU_DECODE_ATTENTION = [
    (157, "AssertionError", "{k_seq_len=} must be divisible by {k_splits=}"),
    (160, "AssertionError", "{k_seq_len=} divided by {k_splits=} must be >= 16."),
    (162, "AssertionError", "block_k must be >= 16"),
    (167, "AssertionError", "Sequence length ({k_seq_len=}) split by {k_splits=} must by divisible by {block_k=}"),
    (323, "NotImplementedError", "When normalize_output is False, attention residuals must be returned."),
]


@pytest.mark.parametrize("relative, expected", [
    ("gpu/attention.py", GPU_ATTENTION),
    ("tpu/flash_attention.py", TPU_FLASH_ATTENTION),
    ("gpu/decode_attention.py", GPU_DECODE_ATTENTION),
])
def test_jax_attention_sites_match_the_hand_made_list(relative, expected):
    result = scan.scan_paths([str(jax_ops() / relative)])
    assert result.files == 1 and not result.problems
    assert [(s.line, s.exception, s.template) for s in result.sites] == expected


def test_jax_sites_record_function_condition_and_types():
    sites = {s.line: s for s in scan.scan_paths([str(jax_ops() / "tpu" / "flash_attention.py")]).sites}
    site = sites[75]
    assert site.function == "BlockSizes.__post_init__.verify_major_minor"
    assert site.condition == "minor > major"
    assert site.params == {"prefix": "str", "suffix": "str", "minor": "int", "major": "int"}
    assert site.check == "minor <= major"
    assert sites[180].params["ab_shape"] == "shape"
    assert sites[180].check == "ab_shape == (batch_size, num_heads, q_seq_len, kv_seq_len)"
    assert sites[1590].condition == "save_residuals"


# -- template forms ---------------------------------------------------------------------------------


def test_fstring_self_documenting(tmp_path):
    site = one(tmp_path, '''
        def f(x, q):
            raise ValueError(f"{x=} and {q.shape = } are wrong")
    ''')
    assert site.template == "{x=} and {q.shape = } are wrong"
    assert site.params == {"x": "str", "q_shape": "shape"}


def test_fstring_self_documenting_expression(tmp_path):
    site = one(tmp_path, '''
        def f(a, b, block_q):
            raise ValueError(f"got {a * b=}, want a multiple of {block_q * 2=}")
    ''')
    assert site.template == "got {a * b=}, want a multiple of {block_q * 2=}"
    assert site.param_of == {"a * b": "a_b", "block_q * 2": "block_q_2"}


def test_fstring_equals_sign_that_is_not_self_documenting(tmp_path):
    site = one(tmp_path, '''
        def f(name, value, x):
            raise ValueError(f"{name}={value} and x={x}")
    ''')
    assert site.template == "{name}={value} and x={x}"


def test_fstring_format_spec_and_conversion(tmp_path):
    site = one(tmp_path, '''
        def f(ratio, count, mode, width):
            raise ValueError(f"{ratio:.2f} of {count:,} for {mode!r:>8} {width:{width}}")
    ''')
    assert site.template == "{ratio:.2f} of {count:,} for {mode!r:>8} {width}"
    assert site.params == {"ratio": "float", "count": "int", "mode": "str", "width": "str"}


def test_fstring_literal_braces_are_escaped(tmp_path):
    site = one(tmp_path, '''
        def f(x):
            raise ValueError(f"expected {{a: 1}}, got {x}" " (see {docs})")
    ''')
    assert site.template == "expected {{a: 1}}, got {x} (see {{docs}})"


def test_percent_format(tmp_path):
    site = one(tmp_path, '''
        def f(n, name, ratio, args):
            raise TypeError("%d items for %r at %5.1f%% (%-6s)" % (n, name, ratio, args))
    ''')
    assert site.template == "{n} items for {name!r} at {ratio:5.1f}% ({args:<6})"
    assert site.params == {"n": "int", "name": "str", "ratio": "float", "args": "str"}


def test_percent_format_with_a_mapping_and_a_single_value(tmp_path):
    sites = sites_of(tmp_path, '''
        def f(v, w):
            raise ValueError("bad %(what)s here" % {"what": v})

        def g(w):
            raise ValueError("only %s" % w)
    ''')
    assert [s.template for s in sites] == ["bad {v} here", "only {w}"]


def test_str_format(tmp_path):
    site = one(tmp_path, '''
        def f(a, b, x, y):
            raise ValueError("{} and {name} with {0.shape} and {1!r:>4}".format(a, y, name=b))
    ''')
    assert site.template == "{a} and {b} with {a.shape} and {y!r:>4}"


def test_implicit_and_explicit_concatenation(tmp_path):
    sites = sites_of(tmp_path, '''
        def f(x, y):
            raise ValueError(
                "first part, "
                f"then {x}, "
                "then the end"
            )

        def g(x, y):
            raise ValueError("got " + str(x) + " and " + repr(y))
    ''')
    assert [s.template for s in sites] == ["first part, then {x}, then the end", "got {x} and {y!r}"]


def test_message_built_in_a_variable(tmp_path):
    sites = sites_of(tmp_path, '''
        def f(x, y):
            msg = f"{x=} is too large"
            if y:
                msg += f" for {y}"
            msg += "; lower it"
            raise ValueError(msg)

        def g(x):
            message = "plain %s" % x
            err = message
            raise ValueError(err)
    ''')
    # A branch that may or may not add to the message ends the search: the start is kept as a field.
    assert [s.template for s in sites] == ["{msg}; lower it", "plain {x}"]


def test_message_variable_assigned_just_before(tmp_path):
    site = one(tmp_path, '''
        def f(x):
            if x < 0:
                msg = (
                    f"x must be non-negative, got {x}"
                )
                raise ValueError(msg)
    ''')
    assert site.template == "x must be non-negative, got {x}"
    assert site.condition == "x < 0"
    assert site.check == "x >= 0"
    assert site.params == {"x": "int"}  # ordered in the condition: a number


def test_message_variable_set_in_branches_stays_a_field(tmp_path):
    site = one(tmp_path, '''
        def f(x):
            if x:
                msg = "a"
            else:
                msg = "b"
            raise ValueError(msg)
    ''')
    assert site.template == "{msg}"


def test_assert_with_message(tmp_path):
    sites = sites_of(tmp_path, '''
        def f(n, k):
            assert n % k == 0, f"{n=} must be divisible by {k=}"
            assert n > 0
            assert k, "k must be set"
    ''')
    assert [(s.exception, s.template, s.condition, s.check) for s in sites] == [
        ("AssertionError", "{n=} must be divisible by {k=}", "n % k != 0", "n % k == 0"),
        ("AssertionError", "k must be set", "not k", None),
    ]


def test_raise_without_message(tmp_path):
    sites = sites_of(tmp_path, '''
        def f():
            raise NotImplementedError

        def g():
            raise NotImplementedError()
    ''')
    assert [(s.function, s.template) for s in sites] == [("f", ""), ("g", "")]


def test_guard_conditions(tmp_path):
    sites = sites_of(tmp_path, '''
        def f(impl, x, y):
            if impl == "a":
                pass
            elif impl == "b":
                raise ValueError("b is not supported")
            else:
                raise ValueError(f"unknown {impl}")
            if not (x < y):
                raise ValueError(f"{x=} must be below {y=}")
            if x in [i for i in range(3)]:
                raise ValueError(f"{x=} is reserved")
    ''')
    # elif/else branches raise under the negation of every test above them: no simple condition.
    assert [(s.condition, s.check) for s in sites] == [
        ("impl == 'b'", None), (None, None), ("not x < y", "x < y"), (None, None)]


@pytest.mark.parametrize("test", [
    "(lambda: x)()", "[i for i in x]", "{i for i in x}", "{i: i for i in x}", "any(i for i in x)", "(y := x)",
    "[*x]", "f'{x}' == 'a'", "await x", "(yield x)", "(yield from x)",
])
def test_condition_with_a_construct_that_is_not_simple(tmp_path, test):
    site = one(tmp_path, f'''
        async def f(x):
            if {test}:
                raise ValueError("bad")
    ''' if "await" in test else f'''
        def f(x):
            if {test}:
                raise ValueError("bad")
    ''')
    assert site.condition is None


def test_condition_longer_than_200_characters_is_not_kept(tmp_path):
    long = " or ".join(f"x == {i}" for i in range(30))
    assert one(tmp_path, f"def f(x):\n    if {long}:\n        raise ValueError('bad')\n").condition is None
    assert one(tmp_path, "def f(x):\n    if x == 'lambda: for * yield':\n        raise ValueError('bad')\n").condition == \
        "x == 'lambda: for * yield'"  # the words alone do not make it complex


def test_custom_subclasses_defined_in_the_tree():
    result = scan.scan_paths([str(TREE)])
    got = [(Path(s.path).name, s.function, s.exception, s.base, s.template) for s in result.sites]
    assert got == [
        ("_generated.py", "check_ra999", "ValueError", "ValueError", "a wording no catalogue has, {x=}"),
        ("ops.py", "Kernel.check", "BlockError", "ValueError", "{total=} must be a multiple of {block=}"),
        ("ops.py", "Kernel.config.inner", "ConfigError", "ValueError", "unknown mode {mode!r}"),
        ("ops.py", "plain", "NotImplementedError", "NotImplementedError", ""),
    ]


def test_subclass_defined_outside_the_scanned_files_is_unknown():
    result = scan.scan_paths([str(TREE / "pkg" / "ops.py")])
    assert [s.exception for s in result.sites] == ["NotImplementedError"]


def test_odd_code_never_crashes(tmp_path):
    sites = sites_of(tmp_path, '''
        import functools
        x = 1
        raise ValueError(*args)
        raise ValueError(lambda: 1)
        raise ValueError({"a": 1})
        raise ValueError(f"{x!r:{x}}" % x)
        raise ValueError("%*d and %(k)s" % x)
        raise ValueError("{:{w}} {}".format(*a))
        raise ValueError("{".format(x))
        raise ValueError(message=f"kw {x}")
        raise get_error()("x")
        async def f():
            raise TypeError(f"{await g()}")
        match x:
            case 1:
                raise TypeError(f"one {x}")
    ''')
    assert [(s.line, s.template) for s in sites] == [
        (4, ""), (5, "{(lambda: 1)}"), (6, "{ {'a': 1}}"), (7, "{f'{x!r:{x}}' % x}"), (8, "{x[1]} and {k}"),
        (9, "{a[0]} {a[1]}"), (10, "{'{'.format(x)}"), (11, "kw {x}"), (14, "{await g()}"), (17, "one {x}"),
    ]


# -- coverage ---------------------------------------------------------------------------------------


def test_a_catalogued_wording_is_covered(tmp_path):
    index = Index.load()
    wording = next(w for w in index.wordings if w["template"] and "{" in w["template"] and w["variant"] == 0)
    site = one(tmp_path, f'''
        def f({", ".join(sorted({c[1] for c in wording["captures"]}))}):
            raise ValueError(f{wording["template"]!r})
    ''')
    assert scan.Coverage(index).covered_by(site) == wording["code"]


def test_an_uncatalogued_wording_is_not_covered(tmp_path):
    site = one(tmp_path, '''
        def f(x):
            raise ValueError(f"no catalogue says {x} like this")
    ''')
    assert scan.Coverage(Index.load()).covered_by(site) is None


def test_a_wording_that_only_contains_a_catalogued_one_is_not_covered(tmp_path):
    index = Index.load()
    wording = next(w for w in index.wordings if w["template"] and "{" not in w["template"])
    site = one(tmp_path, f'''
        def f():
            raise ValueError({("Unrelated context: " + wording["template"])!r})
    ''')
    assert scan.Coverage(index).covered_by(site) is None


def index_with(message: str, types: dict[str, str], code: str = "RA997") -> Index:
    """The real index plus one wording, compiled the way `errkit generate` compiles one."""
    from errkit.core import template
    from errkit.generate.index import choose_keys, key_candidates

    data = json.loads(Path(INDEX_FILE).read_text(encoding="utf-8"))
    tpl = template.parse(message)
    regex, captures = template.to_regex(tpl, lambda f: (f.name, types[f.name], False))
    key = choose_keys([key_candidates(SimpleNamespace(template=tpl, variant=SimpleNamespace(located_only=False)))])[0]
    wording = dict(data["wordings"][0], code=code, template=message, regex=regex, location=None, key=key,
                   captures=[[c.group, c.param, c.type] for c in captures], literal_chars=len("".join(tpl.literals)))
    data["wordings"].append(wording)
    return Index(data)


def test_coverage_does_not_depend_on_guessed_types(tmp_path):
    site = one(tmp_path, '''
        def f(batch_axis, mesh_axes):
            raise ValueError(f"{batch_axis=} is not an axis of the mesh (axes: {mesh_axes})")
    ''')
    assert site.params["batch_axis"] == "int"  # the name reads like a count
    index = index_with("{batch_axis=} is not an axis of the mesh (axes: {mesh_axes})", {"batch_axis": "str", "mesh_axes": "str"})
    assert scan.Coverage(index).covered_by(site) == "RA997"


@pytest.mark.parametrize("template, covered", [
    ("{prefix}{suffix}={minor} should be smaller than {prefix}_major{suffix}={major}", True),  # block_k_dq=... (RA600)
    ("{prefix}{suffix}={minor} should be larger than {prefix}_major{suffix}={major}", False),  # no such wording
    ("{prefix}{suffix}={minor} should be smaller than {prefix}_minor{suffix}={major}", False),  # '_major' is fixed text
])
def test_a_site_whose_fields_name_what_it_prints_is_covered_by_the_wordings_it_can_print(tmp_path, template, covered):
    """jax's BlockSizes check is one helper called with (block_k, ''), (block_q, '_dkv')...: no sample
    value is a name, but each wording of RA600 is one of its renderings; fixed text that differs is not."""
    site = one(tmp_path, f'''
        def verify_major_minor(prefix, suffix, major, minor):
            raise ValueError(f"{template}")
    ''')
    assert scan.Coverage(Index.load()).covered_by(site) == ("RA600" if covered else None)


def test_empty_message_is_covered_by_location(tmp_path):
    site = one(tmp_path, '''
        def reference_bwd():
            raise NotImplementedError
    ''')
    data = json.loads(Path(INDEX_FILE).read_text(encoding="utf-8"))
    assert scan.Coverage(Index(data)).covered_by(site) is None
    located = dict(data["wordings"][0], code="RA998", template="", regex="", captures=[], literal_chars=0, key=None,
                   location=f"{tmp_path.name}/mod.py:3 in reference_bwd")  # no key: recognised by its location
    data["wordings"].append(located)
    assert scan.Coverage(Index(data)).covered_by(site) == "RA998"
    located["location"] = f"{tmp_path.name}/mod.py in other_function"
    assert scan.Coverage(Index(data)).covered_by(site) is None


def test_message_without_fixed_text_is_covered_by_location(tmp_path):
    site = one(tmp_path, '''
        def tpu_version(kind):
            raise ValueError(f"{kind}")
    ''')
    data = json.loads(Path(INDEX_FILE).read_text(encoding="utf-8"))
    assert scan.Coverage(Index(data)).covered_by(site) is None
    located = dict(data["wordings"][0], code="RA996", template="{kind}", regex="(?P<g0>[^\\n]*?)", captures=[["g0", "kind", "str"]],
                   literal_chars=0, key=None, exception="ValueError", location=f"{tmp_path.name}/mod.py:3 in tpu_version")
    data["wordings"].append(located)
    assert scan.Coverage(Index(data)).covered_by(site) == "RA996"
    located["location"] = f"{tmp_path.name}/other.py:3 in tpu_version"  # another file: not asked at all
    assert scan.Coverage(Index(data)).covered_by(site) is None


def test_generated_module_counts_as_covered():
    sites = scan.scan_paths([str(TREE)]).sites
    coverage = scan.Coverage(Index.load())
    assert [coverage.covered_by(s) for s in sites if s.generated] == ["generated"]
    assert all(coverage.covered_by(s) is None for s in sites if not s.generated)


# -- the command ------------------------------------------------------------------------------------


def test_table_output(run_cli):
    code, out, err = run_cli("scan", TREE, cwd=ROOT)
    lines = out.splitlines()
    assert code == 0
    assert lines[0].split() == ["path:line", "function", "exception", "covered-by", "catalogue", "template"]
    assert lines[2].split(None, 5) == ["tests/fixtures/scan/tree/pkg/ops.py:10", "Kernel.check", "BlockError", "-", "-",
                                      "{total=} must be a multiple of {block=}"]
    assert lines[1].split()[3] == "generated"
    assert lines[4].endswith("(no message)")
    assert "4 site(s), 3 uncatalogued" in err


def test_table_names_the_catalogue_of_a_covered_site(run_cli, tmp_path):
    source = tmp_path / "heads.py"
    source.write_text("def split(num_q_heads, num_kv_heads):\n"
                      "    raise ValueError(f'{num_q_heads=} must be divisible by and {num_kv_heads=}')\n")
    code, out, _ = run_cli("scan", source, cwd=ROOT)
    assert code == 0
    assert out.splitlines()[1].split()[3:5] == ["RA105", "errkit"], out


def test_json_output(run_cli):
    code, out, _ = run_cli("scan", TREE / "pkg" / "errors.py", TREE / "pkg" / "ops.py", "--json", cwd=ROOT)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert rows[0] == {
        "path": "tests/fixtures/scan/tree/pkg/ops.py", "line": 10, "function": "Kernel.check", "exception": "BlockError",
        "template": "{total=} must be a multiple of {block=}", "params": {"total": "int", "block": "int"},
        "condition": "total % block != 0", "covered_by": None, "catalogue": None,
    }
    assert len(rows) == 3


def test_fail_on_uncatalogued_lists_the_gaps(run_cli):
    code, out, err = run_cli("scan", TREE, "--fail-on-uncatalogued", cwd=ROOT)
    assert code == 1
    assert "3 uncatalogued site(s):" in err
    assert "tests/fixtures/scan/tree/pkg/ops.py:10: BlockError: {total=} must be a multiple of {block=}" in err
    assert "_generated.py" not in err


def test_our_kernel_has_no_uncatalogued_site(run_cli):
    code, out, err = run_cli("scan", "errkit_attention/", "--fail-on-uncatalogued", cwd=ROOT)
    assert code == 0, err
    assert "0 uncatalogued" in err


def test_a_hand_written_raise_in_the_kernel_fails_the_audit(run_cli, tmp_path):
    kernel = tmp_path / "kernel"
    shutil.copytree(ROOT / "errkit_attention", kernel, ignore=shutil.ignore_patterns("__pycache__"))
    (kernel / "extra.py").write_text('def f(x):\n    raise ValueError(f"hand-written {x}")\n', encoding="utf-8")
    code, out, err = run_cli("scan", kernel, "--fail-on-uncatalogued")
    assert code == 1
    assert "1 uncatalogued site(s):" in err and "extra.py:2: ValueError: hand-written {x}" in err


# -- bad input --------------------------------------------------------------------------------------


@pytest.fixture
def bad_tree(tmp_path) -> Path:
    root = tmp_path / "bad"
    root.mkdir()
    (root / "good.py").write_text('raise ValueError("still scanned")\n', encoding="utf-8")
    (root / "broken.py").write_text("def f(:\n    pass\n", encoding="utf-8")
    (root / "binary.py").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)))
    (root / "latin1.py").write_bytes('raise ValueError("caf\xe9")\n'.encode("latin-1"))
    (root / "declared.py").write_bytes('# -*- coding: latin-1 -*-\nraise ValueError("caf\xe9")\n'.encode("latin-1"))
    os.symlink("self.py", root / "self.py")  # a link to itself
    sub = root / "sub"
    sub.mkdir()
    os.symlink("..", sub / "up")  # a folder link back to an ancestor
    return root


def test_bad_files_are_reported_and_skipped(run_cli, bad_tree, tmp_path):
    code, out, err = run_cli("scan", bad_tree, "--json", cwd=tmp_path)
    assert code == 0
    assert [json.loads(line)["template"] for line in out.splitlines()] == ["café", "still scanned"]
    lines = err.splitlines()
    for expected in (
        "bad/binary.py: binary file; skipped",
        "bad/broken.py: syntax error at line 1: invalid syntax; skipped",
        "bad/latin1.py: not UTF-8 text (byte 21); skipped",
        "bad/self.py: symlink loop; skipped",
        "bad/sub/up: symlink loop (links back to a folder above it); skipped",
    ):
        assert expected in lines, err
    assert "errkit scan: 2 file(s), 5 skipped, 2 site(s), 2 uncatalogued" in lines


def test_missing_path_is_reported_and_the_rest_scanned(run_cli, tmp_path):
    (tmp_path / "ok.py").write_text('raise TypeError("fine")\n', encoding="utf-8")
    code, out, err = run_cli("scan", "nope.py", "ok.py", cwd=tmp_path)
    assert code == 0
    assert "nope.py: no such file or directory; skipped" in err.splitlines()
    assert "ok.py:1" in out


def test_nothing_scannable_exits_2(run_cli, tmp_path):
    os.symlink("loop.py", tmp_path / "loop.py")
    code, out, err = run_cli("scan", "nope.py", "loop.py", cwd=tmp_path)
    assert code == 2
    assert err.splitlines() == ["nope.py: no such file or directory; skipped", "loop.py: symlink loop; skipped",
                                "errkit scan: nothing could be scanned"]


# -- drafts -----------------------------------------------------------------------------------------


def fill_prose(root: Path) -> int:
    """Replace every TODO prose field with text, as a reviewer would; the number of files."""
    files = sorted(root.glob("drafts/*.yaml"))
    for path in files:
        data = yaml().load(path.read_text(encoding="utf-8"))
        data["title"] = "A reviewed title"
        data["explanation"] = "What it means, written by a reviewer.\n"
        data["triggers"] = ["A concrete input."]
        data["fixes"] = [{"summary": "What to change."}]
        for param in (data.get("params") or {}).values():
            param["description"] = "What the value is."
        with path.open("w", encoding="utf-8") as handle:
            yaml().dump(data, handle)
    return len(files)


def attention_kernels(family: str) -> list[str]:
    return sorted(str(p) for p in (jax_ops() / family).rglob("*.py") if "attention" in str(p.relative_to(jax_ops())))


@pytest.mark.parametrize("family", ["gpu", "tpu"])
def test_drafts_for_the_jax_attention_kernels_lint_clean(run_cli, tmp_path, empty_index, family):
    kernels = attention_kernels(family)
    out_dir = tmp_path / "drafts-out"
    code, out, err = run_cli("scan", *kernels, "--index", empty_index, "--emit", out_dir)
    assert code == 0, err
    texts = [p.read_text(encoding="utf-8") for p in sorted(out_dir.glob("drafts/RA*.yaml"))]
    assert len(texts) >= 20
    assert all("# DRAFT written by `errkit scan --emit` into this catalogue's drafts/ folder" in t
               and "explain_only: true" in t for t in texts)
    assert f"errkit scan: {len(texts)} draft(s) written" in err and "no free code" not in err
    code, out, err = run_cli("lint", out_dir)
    assert code == 1, out  # a draft cannot be published before review: its TODOs are findings, nothing else
    rules = {line.split(": ")[1] for line in out.splitlines() if ": " in line}
    assert rules == {"unfinished-draft"}, out
    assert fill_prose(out_dir) == len(texts)
    code, out, err = run_cli("lint", out_dir)
    assert code == 0, out
    assert f"{len(texts)} entries, no problems" in err


def test_draft_content(run_cli, tmp_path, empty_index):
    code, _, err = run_cli("scan", jax_ops() / "tpu" / "flash_attention.py", "--index", empty_index, "--emit", tmp_path / "out")
    drafts = {p.name: yaml().load(p.read_text(encoding="utf-8")) for p in (tmp_path / "out" / "drafts").glob("*.yaml")}
    batch = next(d for d in drafts.values() if d["message"].startswith("Batch size mismatch"))
    assert batch["exception"] == "ValueError"
    assert dict(batch["params"]["batch_size_k"]) == {"type": "int", "description": "TODO: what `batch_size_k` is."}
    assert batch["check"] == "not (batch_size != batch_size_k or batch_size != batch_size_v)"
    assert batch["variants"][0]["location"] == "jax/experimental/pallas/ops/tpu/flash_attention.py:156 in flash_attention"
    bias = next(d for d in drafts.values() if d["message"].startswith("Attention bias"))
    assert bias["message"] == ("Attention bias shape mismatch: expected ({batch_size=}, {num_heads=}, {q_seq_len=}, "
                               "{kv_seq_len=}), got {ab_shape}")
    assert dict(bias["variants"][0]["aliases"]) == {"ab.shape": "ab_shape"}
    assert list(bias["examples"]["good"][0]["ab_shape"]) == [4, 4, 4, 4]
    lanes = next(d for d in drafts.values() if d["message"].startswith("kv block size"))
    assert [v["location"].split(":")[1] for v in lanes["variants"]] == ["415 in _body", "522 in _flash_attention_kernel_single_batch_single_step", "1204 in body"]
    assert "check" not in lanes and "examples" not in lanes  # `if rem:` reads a name the message does not print
    assert scan.empty_messages_allowed()  # the catalogue format recognises an empty message by its location
    empty = next(d for d in drafts.values() if d.get("location", "").endswith(":1590 in _mha_reference_fwd"))
    assert (empty["message"], empty["exception"], "variants" in empty) == ("", "NotImplementedError", False)
    # numbered as `errkit new drafts ...` numbers a new area: the first hundred no code uses, in order
    assert sorted(d["code"] for d in drafts.values()) == [f"RA{100 + i}" for i in range(len(drafts))]
    assert sorted(p for p in drafts) == sorted(f"{d['code']}-{d['slug']}.yaml" for d in drafts.values())


def test_overlapping_wordings_merge_into_one_draft(run_cli, tmp_path, empty_index):
    (tmp_path / "src.py").write_text(textwrap.dedent('''
        def f(a, b, name):
            if a:
                raise ValueError(f"{a} must be positive")
            if b:
                raise ValueError(f"{name}={b} must be positive")  # one token where {a} prints one: they overlap
            raise ValueError(f"{name} is something else entirely")
    '''), encoding="utf-8")
    code, _, err = run_cli("scan", tmp_path / "src.py", "--index", empty_index, "--emit", tmp_path / "out")
    files = sorted((tmp_path / "out" / "drafts").glob("*.yaml"))
    assert len(files) == 2
    merged = yaml().load(files[0].read_text(encoding="utf-8"))
    assert [v["message"] for v in merged["variants"]] == ["{a} must be positive", "{name}={b} must be positive"]
    assert fill_prose(tmp_path / "out") == 2 and run_cli("lint", tmp_path / "out")[0] == 0


def test_emitting_twice_drafts_nothing_new(run_cli, tmp_path, empty_index):
    source = jax_ops() / "gpu" / "attention.py"
    run_cli("scan", source, "--index", empty_index, "--emit", tmp_path / "out")
    first = sorted(p.name for p in (tmp_path / "out" / "drafts").glob("*.yaml"))
    code, _, err = run_cli("scan", source, "--index", empty_index, "--emit", tmp_path / "out")
    assert "errkit scan: 0 draft(s) written" in err
    assert "already drafted as RA100" in err
    assert sorted(p.name for p in (tmp_path / "out" / "drafts").glob("*.yaml")) == first
    assert fill_prose(tmp_path / "out") == len(first) and run_cli("lint", tmp_path / "out")[0] == 0

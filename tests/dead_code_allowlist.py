"""Names vulture reports as unused that are used, each with the reason (tests/test_architecture.py
runs vulture over errkit/ with this file; an entry may only go when its reason does)."""

# ruff: noqa
# fmt: off
load_ipython_extension  # errkit/__init__.py: IPython calls it by name (`%load_ext errkit`)
unload_ipython_extension  # errkit/__init__.py: IPython calls it by name
__getattr__  # errkit/__init__.py: Python calls a module's __getattr__ for `errkit.Matcher` (PEP 562)
pytest_addoption  # errkit/integrations/pytest_plugin.py: a pytest hook, called by name
pytest_runtest_makereport  # errkit/integrations/pytest_plugin.py: a pytest hook, called by name
preserve_quotes  # errkit/catalogue/load.py: ruamel.yaml reads the attribute (round trip keeps quotes)
max_mem  # errkit/explain/matching/keys.py: RE2's option object reads the attribute
log_errors  # errkit/explain/screen.py: RE2's option object reads the attribute
says  # errkit/catalogue/model.py Rule.says: read by the site's entry template (entry.md.j2)
enforced  # errkit/catalogue/model.py Rule.enforced: read by the site's entry template (entry.md.j2)
mtime  # errkit/catalogue/releases.py _read_harvest: part of the lru_cache key (a rewritten file is read again)
namespace  # errkit/cli.py: argparse.Action.__call__'s signature
option_string  # errkit/cli.py: argparse.Action.__call__'s signature
CatalogueError  # errkit/core/runtime.py: carried into every generated validators module (errkit/generate/carry.py)
specifier_for  # errkit/catalogue/releases.py: the release range a harvest shows, used by tests/catalogue/test_release_ranges.py to say what to write
catalog_index  # errkit/explain/registry.py: a catalogue folder's index, used by benchmarks/bench_explain.py and tests
fixture  # errkit/catalogue/rules.py Rule.fixture: the broken catalogue tests/catalogue/test_rules.py lints for each rule
SITE_TOP_KEYS  # errkit/core/index_format.py: the site index's extra keys, part of the format's definition (tests/core/test_index_format.py holds generate to it)
SITE_ENTRY_KEYS  # errkit/core/index_format.py: as SITE_TOP_KEYS, for the site index's entry records
LINE_BREAKS  # errkit/core/index_format.py: read by the browser's matcher only (JS_CONSTANTS, written into match.js by errkit generate)

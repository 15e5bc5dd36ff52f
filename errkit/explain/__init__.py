"""The explain side: the installed catalogues, reading pasted text, matching it against the compiled
index, the answer and its renderings; a fleet's triage and errkit.Matcher. Standard library and RE2
(matplotlib and rich only for a triage's HTML chart and progress bar, imported there); imports only errkit.core, never
the catalogue or generate sides (tests/test_architecture.py holds that), so `errkit explain` starts
without ruamel.yaml, jinja2 or packaging."""

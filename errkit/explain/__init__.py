"""The explain side: the installed catalogues, reading pasted text, matching it against the compiled
index, the answer and its renderings. Standard library and RE2 only; imports only errkit.core, never
the catalogue or generate sides (tests/test_architecture.py holds that), so `errkit explain` starts
without ruamel.yaml, jinja2 or packaging."""

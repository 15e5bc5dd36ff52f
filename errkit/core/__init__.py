"""The core: what every side of errkit shares, on the standard library alone.

Value types, the regex engine, message templates, the expression language, text normalisation,
atomic writes, `[tool.errkit]` settings, the suggestion helpers and their evaluation, the
validators' runtime and the compiled index's format. Nothing here imports another part of errkit
(tests/test_architecture.py holds that), so the explain path and the generated validators can use
any of it without loading a YAML parser or a template engine.
"""

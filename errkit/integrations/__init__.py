"""Where errors happen: the excepthook (`errkit.install()`, `ERRKIT_EXPLAIN=1` through
errkit-hook.pth), the IPython extension and the pytest plugin. Imports only errkit.core and
errkit.explain, and nothing until an exception is explained."""

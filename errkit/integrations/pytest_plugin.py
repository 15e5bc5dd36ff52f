"""pytest plugin (entry point `errkit` in the `pytest11` group): a failing test whose exception
errkit recognises gets an "errkit" section in its report, with the entry and the fix.

Registered for every pytest run once errkit is installed, but off unless asked for: `pytest -p
errkit`, or `errkit = true` in the ini options. It imports nothing of errkit until a test fails.
"""

from __future__ import annotations

import pytest

INI = "errkit"


def pytest_addoption(parser) -> None:
    parser.addini(INI, type="bool", default=False,
                  help="errkit: explain recognised errors of failing tests in an 'errkit' report section")


def _enabled(config) -> bool:
    asked = config.getoption("plugins", default=None) or []
    return "errkit" in asked or bool(config.getini(INI))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed and call.excinfo is not None and _enabled(item.config):
        from errkit.explain.hooks import for_exception

        text = for_exception(call.excinfo.value, "text")
        if text:
            report.sections.append(("errkit", text))
    return report

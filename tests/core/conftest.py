import os

import pytest

from hypothesis import settings

from errkit.core import expr

# scripts/mutation.py: the same examples on every run of every mutant, so that a mutation score
# does not depend on what one run happened to draw.
if os.environ.get("ERRKIT_MUTATION"):
    settings.register_profile("mutation", parent=settings.get_profile("ci"), derandomize=True)
    settings.load_profile("mutation")


@pytest.fixture(autouse=True)
def _fresh_expression_cache():
    """expr.evaluate keeps each vetted expression's code: every test vets what it evaluates (a
    mutant of the vetting must meet the test, not code an earlier run cached)."""
    expr._vetted_code.cache_clear()
    yield

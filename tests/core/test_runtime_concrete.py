"""errkit/core/runtime.py concrete_min / concrete_max, the values a bound check reads off an array:
numpy's min and max as ints, or None for a traced or empty array. A small array is reduced as a
list and its host copy kept for the next call on the same array (a check of min then max reads it
once); a large one is reduced by numpy and not kept. Planted while writing: the kept copy reused
for any array -> test_another_array_is_read_again fails; min and max swapped for small arrays ->
test_the_same_values_as_numpy fails."""

from __future__ import annotations

import numpy as np
import pytest

from errkit.core import runtime

ARRAYS = [
    np.array([3, 100], np.int32), np.array([7], np.int8), np.array(5, np.int64), np.array([[4, -2], [9, 0]], np.int16),
    np.array([2**63 - 1, -2**63], np.int64), np.array([2**64 - 1, 0], np.uint64), np.array([True, False]),
    np.array([1.9, -2.5], np.float32), np.arange(runtime._FEW + 5, dtype=np.int32)[::-1],
]


@pytest.mark.parametrize("array", ARRAYS, ids=lambda a: f"{a.dtype}{a.shape}")
def test_the_same_values_as_numpy(array):
    assert runtime.concrete_min(array) == int(array.min()) and runtime.concrete_max(array) == int(array.max())
    assert type(runtime.concrete_min(array)) is int


def test_another_array_is_read_again():
    first, second = np.array([1, 2], np.int32), np.array([10, 20], np.int32)
    assert (runtime.concrete_min(first), runtime.concrete_max(first)) == (1, 2)
    assert (runtime.concrete_min(second), runtime.concrete_max(second)) == (10, 20)
    assert runtime.concrete_max(first) == 2


def test_a_numpy_array_changed_in_place_is_read_as_it_is_now():
    bound = np.array([3, 100], np.int32)
    assert runtime.concrete_max(bound) == 100
    bound[1] = 7
    assert runtime.concrete_max(bound) == 7


def test_a_large_arrays_copy_is_not_kept():
    big = np.arange(runtime._FEW + 1)
    runtime.concrete_min(big)
    assert runtime._last_read is None or runtime._last_read[0] is not big


@pytest.mark.parametrize("value", [None, "not an array", np.zeros((0,), np.int32), np.zeros((2, 0), np.int32)])
def test_no_value_for_what_holds_none(value):
    assert runtime.concrete_min(value) is None and runtime.concrete_max(value) is None


def test_a_jax_array_and_a_traced_one():
    jax = pytest.importorskip("jax")
    bound = jax.numpy.array([3, 100], jax.numpy.int32)
    assert (runtime.concrete_min(bound), runtime.concrete_max(bound)) == (3, 100)
    seen = []
    jax.jit(lambda b: seen.append(runtime.concrete_max(b)) or b)(bound)
    assert seen == [None]

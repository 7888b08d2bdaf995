"""How the kernels keep their first compilation short (``_kernels/_jit.py``'s docstring)."""
import numba
import numpy as np

from skbayes_mh._kernels._common import flag, integer


@numba.njit
def _switched(x, double):
    return 2.0 * x if double else x


@numba.njit
def _calls_with_flags(x):
    return _switched(x, flag(True)) + _switched(x, flag(False))


def test_a_helper_called_with_flags_compiles_once_and_keeps_each_value():
    assert _calls_with_flags(3.0) == 9.0
    # One specialisation for a plain bool, not one per constant.
    assert [tuple(map(str, signature)) for signature in _switched.signatures] == [
        ("float64", "bool")]


def test_flag_passes_runtime_booleans_through():
    @numba.njit
    def through(values):
        return [flag(v > 0.0) for v in values]

    assert through(np.array([1.0, -1.0, 0.0])) == [True, False, False]


@numba.njit
def _shifted(x, start):
    return x + start


@numba.njit
def _calls_with_a_constant_and_a_variable(x, start):
    return _shifted(x, integer(0)) + _shifted(x, start)


def test_a_helper_called_with_integer_constants_compiles_once_and_keeps_each_value():
    assert _calls_with_a_constant_and_a_variable(3, 4) == 10
    # One specialisation for int64, not another for the literal 0.
    assert [tuple(map(str, signature)) for signature in _shifted.signatures] == [
        ("int64", "int64")]


def test_drawing_rows_from_the_start_and_from_a_count_compiles_once():
    from skbayes_mh._kernels.pool import draw_rows as shared, make_pool

    # A dispatcher of its own: other tests in this process call the package's with their
    # own argument types.
    draw_rows = numba.njit(shared.py_func)

    @numba.njit
    def draw_twice(pool, rng):
        draw_rows(pool, integer(0), 2, rng)  # as Firefly's explicit resampling does
        draw_rows(pool, np.int64(2), 2, rng)  # as a growing minibatch does
        return pool[0][:4].copy()

    rows = draw_twice(make_pool(10, True), np.random.default_rng(0))
    # Four distinct rows of ten (drawn without replacement), from one specialisation.
    assert len(set(rows.tolist())) == 4 and rows.min() >= 0 and rows.max() < 10
    assert len(draw_rows.signatures) == 1

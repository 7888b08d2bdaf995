"""How the kernels keep their first compilation short (``_kernels/_jit.py``'s docstring)."""
import numba
import numpy as np

from skbayes_mh._kernels._common import flag


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

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


_PAIR = numba.types.UniTuple(numba.types.float64, 2)
_SQUARE = numba.types.FunctionType(numba.types.float64(numba.types.float64))


@numba.njit
def _square(x):
    return x * x


def test_a_tuple_passed_by_address_is_read_back_and_only_as_its_own_type():
    """The chain loops pass the data layouts' specs to their ops as one address
    (``layouts.py``): the reader gets what was stored, and a value of another type is refused
    when compiling, not misread."""
    import pytest
    from numba.core.errors import TypingError

    from skbayes_mh._kernels._common import address_of, value_at

    read_pair, read_second = value_at(_PAIR), value_at(_PAIR, 1)

    @numba.njit
    def round_trip(a, b):
        address = address_of((a, b), _PAIR)
        return read_pair(address)[0], read_second(address)

    assert round_trip(1.5, -2.5) == (1.5, -2.5)

    @numba.njit
    def wrong_type(a):
        return read_second(address_of((a, a), _PAIR))

    with pytest.raises(TypingError, match="address_of"):
        wrong_type(1)


def test_a_function_passed_as_its_addresses_is_the_function():
    """Python passes the models' functions and the ops as the addresses of their compiled
    code (``_jit.function_addresses``); the kernel calls them through those."""
    from skbayes_mh._kernels._common import function_at
    from skbayes_mh._kernels._jit import function_addresses

    make = function_at(_SQUARE)

    @numba.njit
    def call(c_address, jit_address, x):
        return make(c_address, jit_address)(x)

    c_address, jit_address = function_addresses(_square, _SQUARE)
    assert c_address != 0
    assert call(c_address, jit_address, 3.0) == 9.0
    assert call(c_address, 0, -4.0) == 16.0  # through the C entry alone
    assert function_addresses(_square, _SQUARE) == (c_address, jit_address)  # looked up once

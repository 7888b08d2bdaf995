"""How the kernels keep their first compilation short (``_kernels/_jit.py``'s docstring),
and how entry kernels compile on first use (``_kernels/_entry.py``)."""
import numba
import numpy as np
import pytest

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


_ELSEWHERE = r"""
import json
from skbayes_mh._kernels import _entry, layouts

def compiled_elsewhere(kernel):
    started = kernel.compile_elsewhere()
    process = _entry._compiling_elsewhere.get((kernel, 0))
    dispatcher = kernel.prepare(0)
    return {"started": started, "returncode": None if process is None else process.returncode,
            "loaded": sum(dispatcher.stats.cache_hits.values()),
            "compiled": sum(dispatcher.stats.cache_misses.values()),
            "again": kernel.compile_elsewhere()}

results = {"cached_elsewhere": compiled_elsewhere(layouts.no_data_pass)}
_entry._COMPILE_ELSEWHERE = "raise SystemExit(3)\n"  # a helper process that fails
results["failed_elsewhere"] = compiled_elsewhere(layouts.no_batch_values)
print(json.dumps(results))
"""


def test_a_kernel_compiled_in_another_process_is_loaded_here_and_a_failed_one_compiled():
    """``EntryKernel.compile_elsewhere`` (a first fit's chain loop): another process compiles
    the kernel into numba's disk cache while this one goes on, and ``prepare`` waits for it
    and loads it from there instead of compiling; if that process fails, ``prepare``
    compiles the kernel itself. A kernel already prepared or cached starts nothing."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    from skbayes_mh._passes import pass_threads

    if pass_threads() < 2:
        pytest.skip("compiling in another process needs a second core")
    with tempfile.TemporaryDirectory() as cache:
        environment = {**os.environ, "NUMBA_CACHE_DIR": cache}
        run = subprocess.run([sys.executable, "-c", _ELSEWHERE], env=environment,
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr
        results = json.loads(run.stdout.splitlines()[-1])
        # A fresh process finds the first kernel in the cache: nothing to start.
        fresh = subprocess.run(
            [sys.executable, "-c", "from skbayes_mh._kernels import layouts; "
             "print(layouts.no_data_pass.compile_elsewhere())"],
            env=environment, capture_output=True, text=True, timeout=600)
    assert results["cached_elsewhere"] == {"started": True, "returncode": 0, "loaded": 1,
                                           "compiled": 0, "again": False}
    assert results["failed_elsewhere"] == {"started": True, "returncode": 3, "loaded": 0,
                                           "compiled": 1, "again": False}
    assert fresh.stdout.split() == ["False"], fresh.stderr


@pytest.mark.parametrize("acceptance, proposal", [
    ("metropolis", "auto"), ("minibatch", "auto"), ("metropolis", "slice"),
    ("firefly", "auto")])
def test_a_fit_compiles_elsewhere_the_loop_its_chains_run(monkeypatch, acceptance, proposal):
    """A fit starts compiling its chains' loop elsewhere before its setup: the kernel its
    chains then run, for each kind of update."""
    from skbayes_mh import MinibatchMHLogisticRegression
    from skbayes_mh._kernels._entry import EntryKernel
    from skbayes_mh._kernels.firefly import firefly_linear
    from skbayes_mh._kernels.mh import CHAIN_KERNELS

    loops = {firefly_linear, *CHAIN_KERNELS.values()}
    asked, ran = [], set()
    call = EntryKernel.__call__

    def recording_call(kernel, *args):
        if kernel in loops:
            ran.add(kernel)
        return call(kernel, *args)

    monkeypatch.setattr(EntryKernel, "compile_elsewhere", lambda kernel, index=0: asked.append(
        kernel))
    monkeypatch.setattr(EntryKernel, "__call__", recording_call)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] + rng.logistic(size=300) > 0).astype(int)
    MinibatchMHLogisticRegression(acceptance=acceptance, proposal=proposal, n_chains=2,
                                  n_warmup=20, n_draws=20, n_jobs=1, random_state=0).fit(X, y)
    assert len(asked) == 1 and ran == {asked[0]}


_ONE_DECISION = r"""
import numpy as np
from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh._kernels.decisions import DECISIONS
rng = np.random.default_rng(0)
X = rng.normal(size=(20_000, 2))
y = (X[:, 0] + rng.logistic(size=20_000) > 0).astype(int)
MinibatchMHLogisticRegression(acceptance=ACCEPTANCE, n_chains=1, n_warmup=10, n_draws=10,
                              random_state=0).fit(X, y)
print(sorted(op.__name__ for op in DECISIONS.values() if op.dispatchers[0] is not None))
"""


@pytest.mark.parametrize("acceptance, prepared", [
    ("metropolis", "metropolis_op"), ("barker", "barker_op"),
    ("minibatch", "minibatch_barker_op"), ("austerity", "austerity_op"),
    ("confidence", "confidence_op")])
def test_a_fit_prepares_its_own_tests_decision_only(acceptance, prepared):
    """The chain loops call the test's decision through ``Test.decide``: a fresh process
    prepares (compiles, or loads from the cache) that test's decision, not the others'
    (the registry holds all five: importing the package imports every test's module)."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c",
                          _ONE_DECISION.replace("ACCEPTANCE", repr(acceptance))],
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("\n")[-2] == repr([prepared])


def _package_dispatchers():
    """``(module, name)`` of every numba function defined at a module's level in the
    package (its kernels', families' and priors' helpers)."""
    import importlib
    import pkgutil

    import skbayes_mh
    from numba.core.dispatcher import Dispatcher

    found = []
    for info in pkgutil.walk_packages(skbayes_mh.__path__, "skbayes_mh."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in sorted(vars(module).items()):
            if (isinstance(value, Dispatcher) and value.py_func.__module__ == info.name
                    and value.py_func.__name__ == name):
                found.append((info.name, name))
    return found


_UNPICKLED_BY_NAME = r"""
import importlib, pickle, sys
found = pickle.loads(sys.stdin.buffer.read())
print(sorted(f"{module}.{name}" for (module, name), value in found
             if value is not getattr(importlib.import_module(module), name)))
"""


def test_another_process_receives_the_packages_numba_functions_as_its_own():
    """A module-level numba function of the package, pickled (inside a fit's target and
    model, to a loky, Dask or Ray worker), arrives in another process as that process's
    own function of the same name, which loads from numba's disk cache, and not as a new
    dispatcher without the cache (which compiled each family's links again in every
    worker: ``_kernels/_jit.py``, ``known_by_name``). A function made inside a function
    still goes by value and works there."""
    import importlib
    import pickle
    import subprocess
    import sys

    picklers = [pickle.dumps]  # numba pickles a function's code with its own cloudpickle
    try:  # what loky (when installed), Dask and Ray pickle with
        import cloudpickle
    except ImportError:
        pass
    else:
        picklers.append(cloudpickle.dumps)
    dispatchers = _package_dispatchers()
    assert len(dispatchers) > 100  # the families' links and the kernels' helpers
    payload = [((module, name), getattr(importlib.import_module(module), name))
               for module, name in dispatchers]
    for dumps in picklers:
        run = subprocess.run([sys.executable, "-c", _UNPICKLED_BY_NAME],
                             input=dumps(payload), capture_output=True, timeout=300)
        assert run.returncode == 0, run.stderr.decode()
        assert run.stdout.decode().split("\n")[-2] == "[]", dumps

    @numba.njit
    def made_here(x):
        return 3.0 * x

    made_here(1.0)
    run = subprocess.run([sys.executable, "-c", "import pickle, sys; "
                          "print(pickle.loads(sys.stdin.buffer.read())(2.0))"],
                         input=pickle.dumps(made_here), capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr.decode()
    assert float(run.stdout.decode()) == 6.0

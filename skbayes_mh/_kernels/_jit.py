"""The house numba decorator, the types entry-kernel signatures are built from, the status
codes and a function's addresses; entry kernels are in ``_entry.py``, the cache's place
and freshness in ``_cache.py``.

Helpers are plain :data:`jit` functions: numba compiles them for the types they are called
with and caches them on disk. The *entry kernels*, which Python calls with a model's
first-class functions (a link, or a user's log-likelihood), have explicit signatures, so
that every user function reaches one compiled, cached kernel through a function pointer
instead of a specialisation per function. They are compiled when first called, not at
import, and a notice is printed when that takes a while (the first call after install).

What a first compilation costs, and how the kernels keep it down: numba compiles every
jitted function into a library of its own, with a CPython wrapper, and optimises and emits
machine code for that library *and everything it calls*, then again for each caller's
library. So a function with one caller (a chain loop under its entry kernel, one
Hamiltonian path, one decision) is ``jit(inline="always")``: it becomes part of its caller
instead of another level of the call chain. Large functions with several callers stay
functions of their own (numba copies an inlined body once per call site): the subsampling
tests' decisions, and the growing of their minibatches that all three share (inlined into
each, it was compiled three times). And a helper taking a boolean switch is called with
``_common.flag(True)``, not ``True``, and one taking a constant integer with
``_common.integer(0)``: numba compiles a function once more for each literal boolean or
integer it is called with. Together these took ``mh_exact_linear``'s first compilation from
23 s to 15 s, ``mh_subsampled_linear``'s from 25 s to 17 s after it (a first fit of tall
data: 38 s to 30 s) and ``python -m skbayes_mh compile`` from 142 s to 107-116 s (two
cores, ``benchmarks/perf/fit_time.py --cold``).
"""
import functools
import warnings
import weakref

import numba
from numba import types
from numba.core.errors import NumbaExperimentalFeatureWarning

from ._cache import CACHE

#: One decorator for every kernel: on-disk cache (:data:`CACHE`), GIL released (chains run
#: in threads), NumPy's error model (a division by zero gives inf/nan, which the kernels
#: check, instead of raising inside nopython code). No fastmath: acceptance arithmetic must
#: be exact IEEE.
compile_with_signature = functools.partial(numba.njit, cache=CACHE, nogil=True,
                                           error_model="numpy")


def jit(function=None, **options):
    """``@jit`` or ``@jit(**options)``: :func:`numba.njit` with the house options
    (:data:`compile_with_signature` is the same for an explicit signature), for a
    module-level function, which another process then receives by name
    (:func:`known_by_name`)."""
    if function is None:
        return lambda function: jit(function, **options)
    return known_by_name(compile_with_signature(function, **options))


#: The prefix of the names :func:`known_by_name` gives dispatchers.
DISPATCHER_NAMESPACE = "skbayes_mh:"


def known_by_name(dispatcher):
    """``dispatcher`` (a module-level function's), named after its module and qualified
    name instead of a random UUID, and returned.

    Numba pickles a dispatcher as its Python function (by value) and the UUID it draws for
    it, and rebuilds it in another process as a new dispatcher, unless one of that UUID
    exists there, without the on-disk cache: every worker process of loky, Dask or Ray
    compiled each family's links, which a fit's data and model hold, afresh (1 to 3 s a
    family and a process; the Gamma regression's first chain on a loky worker took 3.7 s,
    3.3 s of it compiling). With a name, the dispatcher a worker unpickles is the one its
    import of the module made, cached and perhaps already loaded: a function goes by
    reference, as Python pickles functions. Functions made inside functions are left
    alone (several can share a name)."""
    function = dispatcher.py_func
    if "<locals>" not in function.__qualname__:
        try:
            dispatcher._set_uuid(
                f"{DISPATCHER_NAMESPACE}{function.__module__}.{function.__qualname__}")
        except (AttributeError, AssertionError):  # numba's private API changed: by value
            pass
    return dispatcher


# First-class functions are how user models reach cached kernels; numba marks the feature
# experimental, which is no news to our users.
warnings.filterwarnings("ignore", category=NumbaExperimentalFeatureWarning)

F4 = types.float32
F8 = types.float64
I4 = types.int32
I8 = types.int64
BOOL = types.boolean
VECTOR = types.Array(F8, 1, "C")
MATRIX = types.Array(F8, 2, "C")
INDEX = types.Array(I8, 1, "C")
FLAGS = types.Array(BOOL, 1, "C")
BYTES = types.Array(types.uint8, 1, "C")
RNG = types.NumPyRandomGeneratorType("NumPyRandomGeneratorType")
#: A jitted function as Python passes it to the kernels: the addresses of its compiled code
#: (:func:`function_addresses`; ``_common.function_at`` makes it a function again).
ADDRESS = types.UniTuple(I8, 2)


def readonly(dtype, ndim):
    """A read-only C-contiguous array type (data are always passed read-only)."""
    return types.Array(dtype, ndim, "C", readonly=True)


STATUS_OK = 0
#: The log-likelihood returned NaN or +inf for some row.
STATUS_BAD_LOGLIK = 1
#: The log-prior returned NaN or +inf.
STATUS_BAD_LOG_PRIOR = 2
#: A gradient or Hessian returned NaN or inf.
STATUS_BAD_GRADIENT = 3

def function_addresses(function, kind):
    """``(c_address, jit_address)`` of the jitted ``function`` compiled for the function type
    ``kind`` (compiling it first if need be), as :data:`ADDRESS`: the entries numba
    itself takes from a function passed to a kernel, looked up once instead of per call.
    The caller keeps ``function`` alive while its addresses are in use (its compiled code
    lives as long as it does)."""
    known = _ADDRESSES.setdefault(function, {})
    addresses = known.get(kind)
    if addresses is None:
        from numba.experimental import function_type

        signature = kind.signature
        jit_address = getattr(function_type, "_get_jit_address", lambda *args: 0)
        addresses = (int(function_type._get_wrapper_address(function, signature)),
                     int(jit_address(function, signature)))
        known[kind] = addresses
    return addresses


#: Each function's addresses by function type, for as long as the function lives.
_ADDRESSES = weakref.WeakKeyDictionary()


def with_addresses(kind):
    """The type ``kind`` with every function in it an :data:`ADDRESS`."""
    if isinstance(kind, types.FunctionType):
        return ADDRESS
    if isinstance(kind, types.BaseTuple):
        return types.Tuple(tuple(with_addresses(item) for item in kind.types))
    return kind


def addressed(value, kind):
    """``value`` of numba type ``kind`` with every function in it replaced by its
    :func:`function_addresses` (a value of type :func:`with_addresses` of ``kind``)."""
    if isinstance(kind, types.FunctionType):
        return function_addresses(value, kind)
    if isinstance(kind, types.BaseTuple):
        return tuple(addressed(item, item_kind) for item, item_kind in zip(value, kind.types))
    return value


#: The types entry kernels take as addresses, by their addressed type (for
#: ``views.as_functions``, which makes the functions again).
ADDRESSED_KINDS = {}


def register_addressed(kind):
    """Record ``kind`` as the type that :func:`with_addresses` of it stands for; two types
    with the same addressed type could not be told apart in a kernel."""
    known = ADDRESSED_KINDS.setdefault(with_addresses(kind), kind)
    if known != kind:
        raise TypeError(f"{kind} and {known} are the same type with addresses for functions.")

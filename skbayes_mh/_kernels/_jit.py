"""The house numba decorator, the types entry-kernel signatures are built from, and entry
kernels compiled on first use.

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
import glob
import hashlib
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import weakref

import numba
import numpy as np
from numba import types
from numba.core.errors import NumbaExperimentalFeatureWarning

#: The package's directory, and the parts of it that hold jitted code. A kernel compiles its
#: callees from other files into itself, while numba checks a cached kernel against its own
#: file only: a release that changed ``proposals.py`` alone would load ``mh.py``'s kernels
#: cached with the old proposals (numba's cache beside the package outlives an upgrade).
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL_SOURCES = ("_kernels", "models", "_validation.py")


def kernel_sources_stamp(root=PACKAGE_DIR):
    """A SHA-256 digest of every source file under ``root`` that holds jitted code
    (:data:`KERNEL_SOURCES`): the freshness stamp of every cached kernel of the package."""
    digest = hashlib.sha256()
    for entry in KERNEL_SOURCES:
        path = os.path.join(root, entry)
        files = sorted(glob.glob(os.path.join(path, "*.py"))) if os.path.isdir(path) else [path]
        for name in files:
            digest.update(os.path.relpath(name, root).encode())
            with open(name, "rb") as source:
                digest.update(source.read())
    return digest.hexdigest()


#: The stamp of this installation's kernel sources (:func:`kernel_sources_stamp`).
KERNEL_SOURCES_STAMP = kernel_sources_stamp()


def _stamp_package_caches():
    """Make numba's cache of every function in this package fresh only for the same kernel
    sources (:data:`KERNEL_SOURCES_STAMP`) as well as its own file: a locator class for each
    of numba's file-backed ones, taking this package's functions and adding the stamp.
    Without numba's locator classes (a future numba), its own check stays."""
    try:
        from numba.core.caching import CacheImpl, _SourceFileBackedLocatorMixin
        classes = CacheImpl._locator_classes
    except (ImportError, AttributeError):
        return
    if any(getattr(locator, "package_stamped", False) for locator in classes):
        return

    def stamped(base):
        class Locator(base):
            package_stamped = True

            @classmethod
            def from_function(cls, py_func, py_file):
                if not os.path.abspath(py_file).startswith(PACKAGE_DIR + os.sep):
                    return None
                return super().from_function(py_func, py_file)

            def get_source_stamp(self):
                return super().get_source_stamp(), KERNEL_SOURCES_STAMP

        Locator.__name__ = Locator.__qualname__ = f"PackageStamped{base.__name__}"
        return Locator

    classes[:0] = [stamped(base) for base in classes
                   if issubclass(base, _SourceFileBackedLocatorMixin)]


_stamp_package_caches()


def _cache_probe():
    """A function of this directory's files, for which :func:`_cache_on_disk` asks numba
    where it would cache."""


def _cache_on_disk():
    """Whether the kernels can be cached on disk, arranging a place first. numba caches
    beside the package (``__pycache__``) or in the user's cache directory. Where neither can
    be written (a read-only install run as another user without a writable home), a
    directory among this machine's temporary files takes their place; where that fails
    too, the kernels are compiled in memory, again in each process. Either way one warning
    says so (``NUMBA_CACHE_DIR`` chooses the place)."""
    from numba.core.caching import FunctionCache

    try:
        FunctionCache(_cache_probe)
        return True
    except RuntimeError:  # numba found no writable place
        pass
    where = os.path.dirname(os.path.abspath(__file__))
    owner = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    fallback = os.path.join(tempfile.gettempdir(), f"skbayes_mh-numba-cache-{owner}")
    previous = numba.config.CACHE_DIR
    try:
        os.makedirs(fallback, exist_ok=True)
        numba.config.CACHE_DIR = fallback
        FunctionCache(_cache_probe)
    except (OSError, RuntimeError):
        numba.config.CACHE_DIR = previous
        warnings.warn(
            f"skbayes_mh: numba cannot write its cache beside the package ({where}), in the "
            f"user cache directory or in {fallback}: the kernels are compiled in memory, "
            f"again in each new process (about a minute each time). Set NUMBA_CACHE_DIR to a "
            f"writable directory to keep them.", RuntimeWarning, stacklevel=2)
        return False
    warnings.warn(
        f"skbayes_mh: numba cannot write its cache beside the package ({where}) nor in the "
        f"user cache directory: the compiled kernels are cached in {fallback} instead. Set "
        f"NUMBA_CACHE_DIR to choose another place.", RuntimeWarning, stacklevel=2)
    return True


#: Whether the kernels are cached on disk (:func:`_cache_on_disk`).
CACHE = _cache_on_disk()

#: One decorator for every kernel: on-disk cache (:data:`CACHE`), GIL released (chains run
#: in threads), NumPy's error model (a division by zero gives inf/nan, which the kernels
#: check, instead of raising inside nopython code). No fastmath: acceptance arithmetic must
#: be exact IEEE.
jit = functools.partial(numba.njit, cache=CACHE, nogil=True, error_model="numpy")

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

#: Seconds a first compilation may take before a notice is printed.
NOTICE_AFTER = 0.5
_compile_lock = threading.Lock()


class EntryKernel:
    """A kernel with explicit signatures, each compiled (or loaded from numba's cache) on the
    first call that needs it; afterwards calls go straight to the compiled code.

    With several signatures (float64 and float32 data), ``select(args)`` gives the index of
    the one a call needs, so a float32 kernel is compiled only when float32 data arrive.

    With ``functions_as_addresses``, the arguments whose types hold functions (a model's
    link, a user's log-likelihood, Firefly's bound) reach the kernel with each function as
    its :data:`ADDRESS` (compiled for :func:`with_addresses` of the declared types), and the
    kernel makes them functions again with ``views.as_functions``. numba's dispatcher types
    a tuple of arrays and numbers in microseconds, but one holding jitted functions in
    0.15-0.35 ms a call (a call of ``passes.linear_derivatives`` on no rows took 348 us with
    a link's two functions, 15 us with their addresses): the calls Python makes chunk by
    chunk of rows or theta by theta (the MAP's passes, the log posterior at a chain's
    draws, Firefly's chunks) paid that every time.
    """

    def __init__(self, function, signatures, select=None, functions_as_addresses=False):
        self.function = function
        self.signatures = list(signatures)
        self.select = select
        # For each signature, the positions of the arguments passed as addresses, and the
        # signature the kernel is compiled for.
        self.addressed_args = [
            [k for k, kind in enumerate(signature.args) if with_addresses(kind) != kind]
            if functions_as_addresses else [] for signature in self.signatures]
        self.compiled_signatures = [
            signature.return_type(*map(with_addresses, signature.args))
            if functions_as_addresses else signature for signature in self.signatures]
        for signature, positions in zip(self.signatures, self.addressed_args):
            for k in positions:
                register_addressed(signature.args[k])
        # One dispatcher per signature, each compiled for that signature only and then closed
        # to compilation, so that a call with a user's function converts it to a function
        # pointer instead of compiling a specialisation for it.
        self.dispatchers = [None] * len(self.signatures)
        functools.update_wrapper(self, function)

    def prepare(self, index=0):
        """Compile signature ``index`` now (a no-op once done); returns its dispatcher. When
        :meth:`compile_elsewhere` started compiling it in another process, wait for that
        process and load what it cached."""
        dispatcher = self.dispatchers[index]
        if dispatcher is not None:
            return dispatcher
        with _compile_lock:
            if self.dispatchers[index] is None:
                timer = threading.Timer(NOTICE_AFTER, _compile_notice)
                timer.daemon = True
                timer.start()
                try:
                    _await_process(_compiling_elsewhere.pop((self, index), None))
                    dispatcher = jit(self.compiled_signatures[index])(self.function)
                finally:
                    timer.cancel()
                self.dispatchers[index] = dispatcher
        return self.dispatchers[index]

    def compile_elsewhere(self, index=0):
        """Start compiling signature ``index`` in a process of its own, on another core,
        while this one goes on (a fit's setup compiles and runs its own kernels meanwhile);
        :meth:`prepare` then waits for it and loads the kernel from numba's disk cache.

        Only where it can pay: kernels cached on disk (:data:`CACHE`), at least two cores
        for this process (``_passes.pass_threads``), and the signature neither prepared in
        this process nor in the cache. The chain loops take 15-30 s to compile, most of a
        first fit's compilation (breast cancer's: 25 s, mostly ``mh.mh_exact``'s 15 s).

        Returns
        -------
        bool
            Whether a process was started.
        """
        from .._passes import pass_threads

        if (not CACHE or self.dispatchers[index] is not None or pass_threads() < 2
                or (self, index) in _compiling_elsewhere or getattr(sys, "frozen", False)
                or _cached_on_disk(self.function, self.compiled_signatures[index]) is not False):
            return False
        package = self.__module__.split(".")[0]
        command = _COMPILE_ELSEWHERE.format(
            package=package, init=os.path.join(PACKAGE_DIR, "__init__.py"),
            directory=PACKAGE_DIR, module=self.__module__, name=self.__name__, index=index)
        environment = dict(os.environ)
        if numba.config.CACHE_DIR:  # the same cache as here (maybe the fallback's)
            environment["NUMBA_CACHE_DIR"] = numba.config.CACHE_DIR
        try:
            process = subprocess.Popen([sys.executable, "-c", command], env=environment,
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
        except OSError:  # no interpreter to start: compile here, as usual
            return False
        _compiling_elsewhere[(self, index)] = process
        return True

    def __reduce__(self):
        # By reference: another process (a Dask or Ray worker) gets its own module-level
        # kernel, which loads from numba's on-disk cache instead of recompiling.
        return _entry_kernel_by_name, (self.__module__, self.__name__)

    def __call__(self, *args):
        index = 0 if self.select is None else self.select(args)
        dispatcher = self.dispatchers[index]
        if dispatcher is None:
            dispatcher = self.prepare(index)
        passed = args
        if self.addressed_args[index]:
            passed = list(args)
            kinds = self.signatures[index].args
            try:
                for k in self.addressed_args[index]:
                    passed[k] = addressed(args[k], kinds[k])
            except Exception:  # noqa: BLE001 - named below when an argument is wrong
                problem = self.mismatch(index, args)
                if problem is None:
                    raise
                raise TypeError(problem) from None
        try:
            return dispatcher(*passed)
        except TypeError as error:
            if "No matching definition" not in str(error):
                raise
            # numba's message lists every argument's type; say which one is wrong instead.
            raise TypeError(self.mismatch(index, args)) from None

    def mismatch(self, index, args):
        """A sentence naming the first argument of a call that signature ``index`` does not
        take, with what it got and what it takes (None when every argument fits)."""
        import inspect

        names = list(inspect.signature(self.function).parameters)
        expected = self.signatures[index].args
        if len(args) != len(expected):
            return (f"{self.__name__} takes {len(expected)} arguments ({', '.join(names)}); "
                    f"got {len(args)}.")
        for name, value, kind in zip(names, args, expected):
            problem = _first_mismatch(name, value, kind)
            if problem is not None:
                return f"{self.__name__}: {problem}"
        return None


#: What a process started by :meth:`EntryKernel.compile_elsewhere` runs: this very package
#: (by its directory, whatever that process's ``sys.path``), its ``__init__`` left unrun, so
#: that the kernels come without the estimators and scikit-learn (``_kernels`` imports
#: neither): 0.6 s of imports instead of 2.3 s before the compilation starts.
_COMPILE_ELSEWHERE = (
    "import importlib, importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location({package!r}, {init!r}, "
    "submodule_search_locations=[{directory!r}])\n"
    "sys.modules[{package!r}] = importlib.util.module_from_spec(spec)\n"
    "importlib.import_module({module!r}).{name}.prepare({index})\n")

#: The processes :meth:`EntryKernel.compile_elsewhere` started, by ``(kernel, index)``.
_compiling_elsewhere = {}

#: The longest a kernel waits for another process to compile it before compiling it itself.
AWAIT_ELSEWHERE_SECONDS = 600.0


def _await_process(process):
    """Wait for a process compiling a kernel (None: nothing to wait for), at most
    :data:`AWAIT_ELSEWHERE_SECONDS`; on Ctrl-C, or when it takes longer, it is stopped.
    Whatever its fate, the caller then loads the kernel from the cache or compiles it."""
    if process is None:
        return
    deadline = time.monotonic() + AWAIT_ELSEWHERE_SECONDS
    try:
        while process.poll() is None:
            if time.monotonic() > deadline:
                break
            try:
                process.wait(timeout=0.25)  # short waits: Ctrl-C gets through
            except subprocess.TimeoutExpired:
                pass
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _cached_on_disk(function, signature):
    """Whether numba's disk cache holds ``function`` compiled for ``signature`` (it loads the
    entry to see: about 0.2 s for a chain loop, most of it a first load's set-up that the
    kernel's own load then skips); None when numba's cache cannot say."""
    try:
        from numba.core.caching import FunctionCache
        from numba.core.registry import cpu_target

        return FunctionCache(function).load_overload(signature,
                                                     cpu_target.target_context) is not None
    except Exception:  # noqa: BLE001 - another numba: no guess
        return None


def _fits(value, kind):
    """Whether numba passes ``value`` as an argument of type ``kind``."""
    from numba.core.registry import cpu_target

    try:
        actual = numba.typeof(value)
    except ValueError:
        return False
    return actual == kind or cpu_target.typing_context.can_convert(actual, kind) is not None


def _compiles_for(function, kind):
    """Whether ``function`` is a jitted function numba can pass as the function type
    ``kind`` (:func:`function_addresses` finds its compiled code, compiling it if need
    be)."""
    try:
        function_addresses(function, kind)
    except Exception:  # noqa: BLE001 - numba says no in several ways
        return False
    return True


def describe_type(kind):
    """An argument type in words (``writable C-contiguous 2-D float64 array``); a read-only
    array type takes writable arrays too, so it is not called read-only."""
    if isinstance(kind, types.Array):
        return (f"{'writable ' if kind.mutable else ''}"
                f"{'C-contiguous ' if kind.layout == 'C' else ''}{kind.ndim}-D {kind.dtype} array")
    return str(kind)


def _describe_value(value):
    if isinstance(value, np.ndarray):
        return (f"{'writable' if value.flags.writeable else 'read-only'} "
                f"{'C-contiguous' if value.flags.c_contiguous else 'non-contiguous'} "
                f"{value.ndim}-D {value.dtype} array")
    return f"{type(value).__name__} {value!r}"[:80]


def _first_mismatch(name, value, kind):
    """What is wrong with ``value`` as the argument ``name`` of type ``kind`` (None when it
    fits); a tuple is searched for the element that does not fit, named by its field."""
    if _fits(value, kind):
        return None
    if isinstance(kind, types.BaseTuple) and isinstance(value, tuple):
        fields = getattr(TUPLE_FIELDS.get(kind), "_fields", None)
        if len(value) != len(kind.types):
            return f"{name} should have {len(kind.types)} entries; it has {len(value)}."
        for k, (item, item_kind) in enumerate(zip(value, kind.types)):
            label = f"{name}.{fields[k]}" if fields else f"{name}[{k}]"
            if isinstance(item_kind, types.FunctionType):
                if not _compiles_for(item, item_kind):
                    return (f"{label} must be a function compiled with numba.njit for "
                            f"{item_kind.signature}; got {_describe_value(item)}.")
                continue
            problem = _first_mismatch(label, item, item_kind)
            if problem is not None:
                return problem
        return None
    written = isinstance(kind, types.Array) and kind.mutable
    return (f"{name} must be a {describe_type(kind)}"
            f"{' (the kernel writes into it)' if written else ''}; got a "
            f"{_describe_value(value)}.")


#: The named tuple behind each tuple type of the entry signatures, for naming their fields
#: in errors (filled in by ``specs.py``).
TUPLE_FIELDS = {}

_notice_shown = False


def _compile_notice():
    global _notice_shown
    if not _notice_shown:
        _notice_shown = True
        print("skbayes_mh: compiling numba kernels (first use after install only: "
              "15-30 s for a fit's own sampler on two cores, about a minute for every one; they "
              "are cached on disk afterwards)...", file=sys.stderr, flush=True)


def _entry_kernel_by_name(module, name):
    import importlib

    return getattr(importlib.import_module(module), name)


def entry_kernel(*signatures, select=None, functions_as_addresses=False):
    """Decorate an entry kernel with its explicit signatures (see :class:`EntryKernel`)."""
    return lambda function: EntryKernel(function, signatures, select, functions_as_addresses)


def by_data_layout(args):
    """``select`` for kernels whose first argument is a linear spec: 0 for a float64 array
    ``X``, 1 for any other layout (a ``specs.Matrix`` tuple; the order of
    ``specs.LINEAR_SPECS``)."""
    return 1 if isinstance(args[0][0], tuple) else 0


def by_row_data(args):
    """``select`` for kernels whose first argument is a user model's spec: 0 for dense
    data, 1 for sparse data (a tuple of CSR arrays; the order of ``specs.ROW_SPECS``)."""
    return 1 if isinstance(args[0][0], tuple) else 0


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

"""Entry kernels: kernels with explicit signatures, compiled (or loaded from numba's cache)
on the first call that needs each signature, in this process or in another one beside it,
with arguments that do not fit their types named in a ``TypeError``; a model's functions
reach them as addresses."""
import functools
import os
import subprocess
import sys
import threading
import time

import numba
import numpy as np
from numba import types

from ._cache import CACHE, PACKAGE_DIR
from ._jit import (addressed, compile_with_signature, function_addresses,
                   register_addressed, with_addresses)

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
                    dispatcher = compile_with_signature(self.compiled_signatures[index])(
                        self.function)
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

"""``python -m skbayes_mh compile``: compile every numba kernel now, on every core.

Kernels otherwise compile on their first call, one after another in the process that needs
them (and once per process when several start at once, e.g. test workers). Here each
kernel signature is a task for a pool of processes; each writes numba's on-disk cache, from
which every later process loads the kernels in well under a second.
"""
import importlib
import time
from concurrent.futures import ProcessPoolExecutor

#: Modules holding entry kernels (``_entry.EntryKernel``), and the order of the largest first.
KERNEL_MODULES = ("skbayes_mh._kernels.mh", "skbayes_mh._kernels.firefly",
                  "skbayes_mh._kernels.passes", "skbayes_mh._kernels.layouts",
                  "skbayes_mh._kernels.proposals", "skbayes_mh._kernels.metropolis",
                  "skbayes_mh._kernels.barker", "skbayes_mh._kernels.minibatch",
                  "skbayes_mh._kernels.austerity", "skbayes_mh._kernels.confidence",
                  "skbayes_mh._kernels.ranks")


def _reads_float64_array(kernel, signature):
    """Whether a kernel signature is for a float64 array (its spec's first entry; a layout's
    op says so itself, ``layouts.py``): the other signatures take a linear model's other
    layouts (``specs.Matrix``: float32 or sparse) or a user's model on sparse data."""
    from numba import types

    if hasattr(kernel, "other_layout"):
        return not kernel.other_layout
    spec = signature.args[0]
    data = spec.types[0] if isinstance(spec, types.BaseTuple) else None
    return isinstance(data, types.Array) and data.dtype == types.float64


def kernel_signatures(other_layouts=True):
    """``(module, name, index)`` of every entry kernel signature (with ``other_layouts``
    also those for float32 and sparse data), the main chain loops first (they take
    longest)."""
    from ._kernels._entry import EntryKernel

    tasks = []
    for module_name in KERNEL_MODULES:
        module = importlib.import_module(module_name)
        for name, kernel in sorted(vars(module).items()):
            if isinstance(kernel, EntryKernel) and kernel.__module__ == module_name:
                for index, signature in enumerate(kernel.signatures):
                    if other_layouts or _reads_float64_array(kernel, signature):
                        tasks.append((module_name, name, index))
    loops = ("firefly_linear", "mh_subsampled", "mh_exact", "slice_chain")
    return sorted(tasks, key=lambda task: (task[1] not in loops, task[2], task[1]))


def _prepare(task):
    module_name, name, index = task
    started = time.perf_counter()
    getattr(importlib.import_module(module_name), name).prepare(index)
    return task, time.perf_counter() - started


def compile_kernels(n_jobs=None, other_layouts=True, verbose=False):
    """Compile (or load from the cache) every kernel signature in ``n_jobs`` processes
    (None: one per core; those for float32 and sparse data with ``other_layouts``).

    Returns
    -------
    seconds : float
        Wall time.
    """
    from ._passes import pass_threads

    started = time.perf_counter()
    tasks = kernel_signatures(other_layouts)
    workers = max(1, min(n_jobs or pass_threads(), len(tasks)))
    if workers == 1:
        results = map(_prepare, tasks)
    else:
        pool = ProcessPoolExecutor(max_workers=workers)
        results = pool.map(_prepare, tasks)
    for (module_name, name, index), seconds in results:
        if verbose:
            print(f"{module_name.rsplit('.', 1)[-1]}.{name}[{index}]: {seconds:.1f} s",
                  flush=True)
    if workers > 1:
        pool.shutdown()
    return time.perf_counter() - started

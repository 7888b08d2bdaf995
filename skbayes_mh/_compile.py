"""``python -m skbayes_mh compile``: compile every numba kernel now, on every core.

Kernels otherwise compile on their first call, one after another in the process that needs
them (and once per process when several start at once, e.g. test workers). Here each
kernel signature is a task for a pool of processes; each writes numba's on-disk cache, from
which every later process loads the kernels in well under a second. Then a tiny fit of
every estimator compiles the jitted functions a fit's setup calls from Python (the
families' links in the MAP's and the control variates' passes, the prior's density):
without it, a sparse fit's first setup after ``compile`` compiled them for 3.7 s more.
They take float64 arrays whatever ``X``'s layout, so float64 rows compile them for float32
and sparse ``X`` too (a fit of each estimator on each layout after it compiles nothing).
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


def _fit_tiny(name):
    """A fit of the estimator ``name`` on 60 rows, two iterations of the minibatch test (its
    setup calls what every test's does, and the control variates' passes besides) and a
    prediction: what its setup and prediction call from Python compiles and is cached."""
    import warnings

    import numpy as np
    from sklearn.base import is_classifier
    from sklearn.utils import get_tags

    from .linear_model import ESTIMATORS

    started = time.perf_counter()
    estimator = ESTIMATORS[name](acceptance="minibatch", n_draws=2, n_warmup=2, n_chains=1,
                                 random_state=0)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    eta = X @ np.array([0.5, -0.3, 0.2])
    outcome = "classes" if is_classifier(estimator) else estimator._family().outcome
    if outcome == "classes":
        classes = 3 if get_tags(estimator).classifier_tags.multi_class else 2
        y = np.digitize(eta + rng.logistic(size=60), [-0.5, 0.5][:classes - 1])
    elif outcome == "counts":
        y = rng.poisson(np.exp(0.5 + eta))
    elif outcome == "positive":
        y = rng.gamma(4.0, np.exp(0.5 + eta) / 4.0)
    elif outcome == "proportions":
        y = rng.binomial(5, 1.0 / (1.0 + np.exp(-eta))) / 5.0
    else:
        y = eta + rng.standard_t(4, 60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # two draws: not converged, and known
        estimator.fit(X, y).predict(X[:5])
    return name, time.perf_counter() - started


def compile_kernels(n_jobs=None, other_layouts=True, verbose=False):
    """Compile (or load from the cache) every kernel signature in ``n_jobs`` processes
    (None: one per core; those for float32 and sparse data with ``other_layouts``), then
    what a fit's setup compiles, through a tiny fit of every estimator.

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
    # After the kernels (a tiny fit loads them from the cache, never compiles them again).
    from .linear_model import ESTIMATORS

    for name, seconds in (pool.map if workers > 1 else map)(_fit_tiny, sorted(ESTIMATORS)):
        if verbose:
            print(f"{name}, a tiny fit: {seconds:.1f} s", flush=True)
    if workers > 1:
        pool.shutdown()
    return time.perf_counter() - started

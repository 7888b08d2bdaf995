"""Seconds a default fit of each estimator takes with its chains on worker processes (loky,
and Dask's ``LocalCluster`` or a local Ray when installed), the first time the workers meet
its family and again, beside the same fit with its chains in threads, in one run.

The workers are started (and ``skbayes_mh`` imported in them) before the first fit, so the
first fit's extra seconds are what a worker spends on a family it has not met: loading its
kernels from numba's disk cache, and anything it compiles. Every fit on a backend must take
the threaded fit's draws (checked). Run it with ``PYTHONPATH`` at another checkout's tree to
compare two commits (that tree compiles its kernels first: run it twice).

    python benchmarks/perf/worker_start.py [--rows 20000] [--backends loky dask ray]
"""
import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import joblib
import numpy as np
from sklearn.base import is_classifier
from sklearn.utils import get_tags

import skbayes_mh
from skbayes_mh.linear_model import ESTIMATORS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table

N_FEATURES = 8


def make_data(estimator, n_rows, rng):
    """``X, y`` for ``estimator`` (its family's kind of outcome), ``n_rows`` x 8."""
    X = rng.standard_normal((n_rows, N_FEATURES))
    eta = X @ rng.normal(0.0, 0.3, N_FEATURES)
    if is_classifier(estimator):
        classes = [-0.5, 0.5] if get_tags(estimator).classifier_tags.multi_class else [0.0]
        return X, np.digitize(eta + rng.logistic(size=n_rows), classes)
    outcome = estimator._family().outcome
    if outcome == "counts":
        return X, rng.poisson(np.exp(0.5 + 0.5 * eta))
    if outcome == "positive":
        return X, rng.gamma(4.0, np.exp(0.5 + 0.5 * eta) / 4.0)
    if outcome == "proportions":
        return X, rng.binomial(5, 1.0 / (1.0 + np.exp(-eta))) / 5.0
    return X, eta + 0.5 * rng.standard_t(4, n_rows)


def backend_context(name):
    """A joblib backend context factory, and what to stop at the end (or None, with why)."""
    if name == "loky":
        return (lambda: joblib.parallel_config(backend="loky", n_jobs=2)), []
    try:
        if name == "dask":
            import distributed

            cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                               processes=True, dashboard_address=None)
            client = distributed.Client(cluster)
            return (lambda: joblib.parallel_config(backend="dask", n_jobs=2)), [
                client.close, cluster.close]
        import ray
        from ray.util.joblib import register_ray

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        register_ray()
        return (lambda: joblib.parallel_config(backend="ray", n_jobs=2)), [ray.shutdown]
    except ImportError as error:
        print(f"[{name} skipped: {error}]")
        return None, []


def _import_package():
    import skbayes_mh  # noqa: F401 - what a worker imports before its first chain

    return os.getpid()


def timed_fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        fit = estimator.fit(X, y)
    return time.perf_counter() - started, fit


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--backends", nargs="+", default=["loky"],
                        choices=["loky", "dask", "ray"])
    args = parser.parse_args()
    print(f"skbayes_mh from {Path(skbayes_mh.__file__).parent}; default fits of "
          f"{args.rows:,} x {N_FEATURES} rows, n_jobs=2")
    rng = np.random.default_rng(0)
    problems = {name: (cls, *make_data(cls(), args.rows, rng))
                for name, cls in sorted(ESTIMATORS.items())}
    threaded = {}
    for name, (cls, X, y) in problems.items():
        timed_fit(cls(n_jobs=2, random_state=0), X, y)  # its kernels loaded here
        threaded[name] = timed_fit(cls(n_jobs=2, random_state=0), X, y)
    for backend in args.backends:
        context, stops = backend_context(backend)
        if context is None:
            continue
        with context():  # the workers started and skbayes_mh imported in them
            joblib.Parallel(n_jobs=2)(joblib.delayed(_import_package)() for _ in range(4))
            rows, totals = [], [0.0, 0.0, 0.0]
            for name, (cls, X, y) in problems.items():
                first, fit = timed_fit(cls(n_jobs=2, random_state=0), X, y)
                again, _ = timed_fit(cls(n_jobs=2, random_state=0), X, y)
                seconds, reference = threaded[name]
                same = all(np.array_equal(fit.posterior_[key], reference.posterior_[key])
                           for key in reference.posterior_.draws)
                rows.append([name, f"{seconds:.2f}", f"{first:.2f}", f"{again:.2f}",
                             "yes" if same else "NO"])
                for k, value in enumerate((seconds, first, again)):
                    totals[k] += value
            rows.append(["all", *(f"{value:.2f}" for value in totals), ""])
        for stop in stops:
            stop()
        print(f"\n{backend}:")
        table(rows, ["estimator", "threads, s", f"{backend}, first fit, s",
                     f"{backend}, again, s", "the threaded draws"])


if __name__ == "__main__":
    main()

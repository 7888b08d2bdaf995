"""Where reading a dense ``X`` as a CSR matrix pays: seconds per full-data pass of the exact
test's chain (the log-likelihood and its gradient, MALA proposals) with ``X`` read dense (by
BLAS) and as CSR (by its stored values), for shares of non-zero values from 2% to 50%, for
a logistic regression (one output) and softmaxes of five and ten classes. ``fit`` reads a
dense float64 ``X`` as CSR at or below ``AUTO_SPARSE_DENSITY`` of non-zero values.

Synthetic rows like pixels: each value non-zero with the given probability, then uniform in
[0, 1]. One chain of 100 warm-up + 400 iterations, ``thin=1``, one core; the setup (MAP and
Laplace) is left out of the figure, and the kernels are compiled before.

    python benchmarks/perf/sparse_layout.py [--rows 20000] [--features 400]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from skbayes_mh import FireflySoftmaxClassifier, MinibatchMHLogisticRegression
from skbayes_mh.linear_model import _inputs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table

DENSITIES = (0.02, 0.05, 0.1, 0.15, 0.25, 0.35, 0.5)


def synthetic(n_rows, n_features, density, n_classes, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n_rows, n_features)) * (rng.random((n_rows, n_features)) < density)
    weights = rng.normal(0, 3 / np.sqrt(density * n_features), (n_features, n_classes))
    scores = X @ weights + rng.gumbel(size=(n_rows, n_classes))
    y = scores.argmax(axis=1) if n_classes > 2 else (scores[:, 0] > np.median(scores[:, 0]))
    return X, y.astype(int)


def seconds_per_pass(estimator, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X, y)
    sampling = time.perf_counter() - start - estimator.setup_time_
    return sampling / np.sum(estimator.n_iter_)  # warm-up included in both


def dense_and_csr(cls, settings, X, y):
    """Seconds per pass with the dense ``X`` read dense, then passed as CSR."""
    default = _inputs.AUTO_SPARSE_DENSITY
    try:
        _inputs.AUTO_SPARSE_DENSITY = 0.0  # read dense
        dense = seconds_per_pass(cls(**settings), X, y)
    finally:
        _inputs.AUTO_SPARSE_DENSITY = default
    return dense, seconds_per_pass(cls(**settings), sp.csr_array(X), y)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--features", type=int, default=400)
    args = parser.parse_args()
    settings = dict(acceptance="metropolis", proposal="mala", n_chains=1, n_jobs=1,
                    n_warmup=100, n_draws=400, thin=1, random_state=0)
    models = (("logistic", 2, MinibatchMHLogisticRegression),
              ("softmax, 5 classes", 5, FireflySoftmaxClassifier),
              ("softmax, 10 classes", 10, FireflySoftmaxClassifier))
    print(f"{args.rows:,} rows x {args.features} features; ms per iteration (one full-data "
          f"pass with its gradient); AUTO_SPARSE_DENSITY = {_inputs.AUTO_SPARSE_DENSITY}\n")
    rows = []
    threshold = _inputs.AUTO_SPARSE_DENSITY
    for name, n_classes, cls in models:
        dense_and_csr(cls, settings, *synthetic(500, 20, 0.2, n_classes))  # compiles both
        for density in DENSITIES:
            dense, sparse = dense_and_csr(cls, settings, *synthetic(
                args.rows, args.features, density, n_classes))
            rows.append([name, f"{density:.2f}", f"{1e3 * dense:.2f}", f"{1e3 * sparse:.2f}",
                         f"{dense / sparse:.2f}",
                         "CSR" if density <= threshold else "dense"])
            print(f"[{name} {density}: dense {1e3 * dense:.2f} ms, CSR {1e3 * sparse:.2f} ms]",
                  flush=True)
    table(rows, ["model", "non-zero", "dense ms", "CSR ms", "dense / CSR", "fit reads"])


if __name__ == "__main__":
    main()

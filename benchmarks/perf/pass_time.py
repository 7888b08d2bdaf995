"""Microseconds of one full-data pass (the log-likelihood, and with its gradient) of the
exact tests' chain loop on float64 rows, on one thread: what a Hamiltonian step pays for
the data, beside the BLAS products alone (``X W'`` and ``D' X`` through NumPy's ``dot``
in numba, the pass's own calls).

Each case's target (the rows a default fit samples: its rows' span where it has more
features than rows) comes from a two-iteration fit; its pass then runs 2,000 times at the
MAP. Cases: MNIST's 300 training rows of ten classes in their span (300 x 299, nine
outputs; needs ``../shared/data/mnist``, else skipped), scikit-learn's digits (1,347 x 64,
nine outputs), breast cancer (569 x 30, one output) and synthetic 5,000 x 100 rows (one
output). Run it with ``PYTHONPATH`` at another checkout's tree to compare two commits.

    python benchmarks/perf/pass_time.py [--repeats 2000]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numba
import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, make_classification
from threadpoolctl import threadpool_limits

from skbayes_mh import FireflySoftmaxClassifier, MinibatchMHLogisticRegression
from skbayes_mh._kernels.layouts import packed_layout, read_layout_0
from skbayes_mh._kernels.rows import data_pass
from skbayes_mh._kernels.views import linear_view
from skbayes_mh.sampling import _target

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import shared_data, table


@numba.njit
def _passes(address, theta, want_grad, gradient, work, repeats):
    total = 0.0
    for _ in range(repeats):
        value, _ = data_pass(linear_view(read_layout_0(address)), theta, want_grad, gradient,
                             work)
        total += value
    return total


@numba.njit
def _products(X, weights_t, slopes_t, repeats):
    predictors = np.empty((X.shape[0], weights_t.shape[1]))
    product = np.empty((slopes_t.shape[0], X.shape[1]))
    for _ in range(repeats):
        np.dot(X, weights_t, predictors)
        np.dot(slopes_t, X, product)
    return predictors[0, 0] + product[0, 0]


def fitted_target(estimator, X, y):
    """The target a two-iteration fit of ``estimator`` on ``(X, y)`` samples."""
    kept = []
    linear = _target.Target.linear.__func__

    def capture(cls, *args, **kwargs):
        kept.append(linear(cls, *args, **kwargs))
        return kept[-1]

    _target.Target.linear = classmethod(capture)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # two iterations: not converged, and known
            estimator.set_params(n_draws=2, n_warmup=2, n_chains=1, random_state=0).fit(X, y)
    finally:
        _target.Target.linear = classmethod(linear)
    return kept[-1]


def microseconds(function, repeats):
    function(2)  # compiled or loaded
    started = time.perf_counter()
    function(repeats)
    return (time.perf_counter() - started) / repeats * 1e6


def row(title, estimator, X, y, repeats):
    target = fitted_target(estimator, X, y)
    spec = target.spec
    buffer = packed_layout(spec, 0)
    theta = np.ascontiguousarray(target.mean, dtype=np.float64)
    gradient = np.zeros_like(theta)
    work = (*(np.zeros(theta.size) for _ in range(4)), np.zeros((4, theta.size)))
    rows, features = spec[0].shape
    outputs = int(spec[6])
    rng = np.random.default_rng(0)
    weights_t, slopes_t = rng.normal(size=(features, outputs)), rng.normal(size=(outputs, rows))
    with threadpool_limits(1):
        value = microseconds(lambda r: _passes(buffer.ctypes.data, theta, False, gradient,
                                               work, r), repeats)
        both = microseconds(lambda r: _passes(buffer.ctypes.data, theta, True, gradient,
                                              work, r), repeats)
        blas = microseconds(lambda r: _products(spec[0], weights_t, slopes_t, r), repeats)
    return [title, f"{rows:,} x {features:,}", outputs, f"{value:.1f}", f"{both:.1f}",
            f"{blas:.1f}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=2000)
    args = parser.parse_args()
    rows = []
    directory = shared_data("mnist")
    if directory is None:
        print("[MNIST not found beside the checkout (../shared/data): its case skipped]",
              file=sys.stderr)
    else:
        from skbayes_mh.datasets import load_mnist

        X, y = load_mnist(directory, "train")
        X = X.reshape(len(X), -1) / 255.0
        chosen = np.random.default_rng(0).choice(len(X), 300, replace=False)
        rows.append(row("MNIST, 300 rows (span)", FireflySoftmaxClassifier(), X[chosen],
                        y[chosen], args.repeats))
    digits = load_digits()
    rows.append(row("digits", FireflySoftmaxClassifier(), digits.data, digits.target,
                    args.repeats))
    cancer = load_breast_cancer()
    rows.append(row("breast cancer", MinibatchMHLogisticRegression(), cancer.data,
                    cancer.target, args.repeats))
    X, y = make_classification(5000, 100, n_informative=20, random_state=0)
    rows.append(row("synthetic", MinibatchMHLogisticRegression(), X, y, args.repeats))
    table(rows, ["data", "rows x columns sampled", "outputs", "value us", "value + gradient us",
                 "X W' + D' X alone us"])


if __name__ == "__main__":
    main()

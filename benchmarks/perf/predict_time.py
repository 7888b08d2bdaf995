"""Wall time of prediction on tall test sets: the posterior-predictive mean as the estimators
give it (within ``predict_tol``, default 1e-4: a second-order expansion with a proven error
bound where the posterior is narrow, every stored draw elsewhere), against the
straightforward NumPy evaluation over every stored draw of
the same formula in the same run (the linear predictors of a block of 1,024 rows under
every draw with the outputs innermost, scipy's ``softmax``, or ``expit`` with both classes'
probabilities stacked last, then the mean over the draws: how ``predict_proba`` and
``predict`` evaluated it before they read the draws contiguously, in blocks on every core).

Each row gives the estimator and its posterior's size, the test rows, our method's wall
time, the straightforward evaluation's, their ratio and the largest absolute difference
(the expansion's error against the mean over every draw).
A fitted estimator (defaults, ``random_state=0``) on synthetic data: 3-class softmax and
binary logistic regressions on 10 standard-normal features, and a Poisson regression.

    python benchmarks/perf/predict_time.py [--rows 20000,200000] [--train 50000]
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import expit, softmax

from skbayes_mh import (FireflySoftmaxClassifier, MinibatchMHLogisticRegression,
                        MinibatchMHPoissonRegression)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table

#: Rows per block of the straightforward evaluation (what ``predict_proba`` used before).
STRAIGHTFORWARD_BLOCK = 1024


def straightforward(X, coef, intercept, transform):
    """The mean over draws of ``transform(eta)``, ``eta`` (n_draws, rows, n_outputs) with the
    outputs innermost, 1,024 rows at a time on one core's worth of NumPy."""
    n_draws, n_outputs, n_features = coef.shape
    means = []
    for start in range(0, X.shape[0], STRAIGHTFORWARD_BLOCK):
        block = X[start:start + STRAIGHTFORWARD_BLOCK]
        eta = (block @ coef.reshape(n_draws * n_outputs, n_features).T).reshape(
            block.shape[0], n_draws, n_outputs).transpose(1, 0, 2) + intercept[:, None, :]
        means.append(transform(eta).mean(axis=0))
    return np.concatenate(means)


def binary_probabilities(eta):
    """Both classes' probabilities, stacked last (as the binary families gave them)."""
    p = expit(eta[..., 0])
    return np.stack([1.0 - p, p], axis=-1)


def draws_of(estimator):
    coef = estimator.posterior_.get("coef", flat=True)
    intercept = estimator.posterior_.get("intercept", flat=True)
    if coef.ndim == 2:
        coef, intercept = coef[:, None, :], intercept[:, None]
    return coef, intercept


def timed(function):
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="20000,200000",
                        help="comma-separated test-set sizes")
    parser.add_argument("--train", type=int, default=50_000, help="training rows")
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.rows.split(",")]
    rng = np.random.default_rng(0)
    n_features = 10
    X = rng.standard_normal((args.train + max(sizes), n_features))
    signal = X @ rng.normal(0.0, 0.5, n_features)
    X_train, X_test = X[:args.train], X[args.train:]
    cases = [
        ("FireflySoftmaxClassifier, 3 classes", FireflySoftmaxClassifier(random_state=0),
         np.digitize(signal + rng.logistic(size=signal.size), [-1.0, 1.0]),
         lambda e: e.predict_proba, lambda eta: softmax(eta, axis=2)),
        ("MinibatchMHLogisticRegression", MinibatchMHLogisticRegression(random_state=0),
         (signal + rng.logistic(size=signal.size) > 0).astype(int),
         lambda e: e.predict_proba, binary_probabilities),
        ("MinibatchMHPoissonRegression", MinibatchMHPoissonRegression(random_state=0),
         rng.poisson(np.exp(0.5 + 0.3 * signal)),
         lambda e: e.predict, lambda eta: np.exp(eta[..., 0])),
    ]
    rows = []
    for name, estimator, y, method, transform in cases:
        estimator.fit(X_train, y[:args.train])
        coef, intercept = draws_of(estimator)
        for size in sizes:
            test = X_test[:size]
            ours, ours_s = timed(lambda: method(estimator)(test))
            reference, reference_s = timed(
                lambda: straightforward(test, coef, intercept, transform))
            rows.append([f"{name} ({coef.shape[0]:,} draws x {coef.shape[1] * coef.shape[2]}"
                         " weights)", f"{size:,}", f"{ours_s:.2f}", f"{reference_s:.2f}",
                         f"{reference_s / ours_s:.1f}",
                         f"{np.max(np.abs(ours - np.squeeze(reference))):.1e}"])
            print(f"[{name}, {size:,} rows done]", flush=True)
    print()
    table(rows, ["estimator", "test rows", "ours s", "straightforward s", "ratio",
                 "max |difference|"])


if __name__ == "__main__":
    main()

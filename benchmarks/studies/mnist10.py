"""MNIST, all 10 classes, 784 raw pixels in [0, 1] (7,850 parameters over-parameterised), the
wide-posterior target: ``FireflySoftmaxClassifier()`` defaults (and with ``n_jobs=2``) at
temperature 1, against scikit-learn's ``LogisticRegression`` accuracy.

Each row gives wall time (setup and compilation included) and setup alone, the proposal
and its shape (the Laplace covariance: full, low-rank-plus-diagonal with ``k`` directions,
or variances), the largest R-hat and smallest bulk ESS over the coefficients and intercepts
centred over the classes (what the likelihood identifies), min-ESS per second, data rows
read per iteration, test accuracy of the posterior-predictive mean, and scikit-learn's.

    python benchmarks/studies/mnist10.py [--rows 60000] [--n-jobs 1,2] [--n-draws 1000]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from skbayes_mh import FireflySoftmaxClassifier
from skbayes_mh.datasets import load_mnist
from skbayes_mh.diagnostics import ess_bulk, rhat
from skbayes_mh.models._optimize import (full_covariance_affordable, low_rank_directions)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import shared_data, table


def centred(coef, intercept):
    """(chains, draws, K * (D + 1)) draws centred over the classes."""
    both = np.concatenate([coef, intercept[..., None]], axis=-1)
    both = both - both.mean(axis=2, keepdims=True)
    return both.reshape(both.shape[0], both.shape[1], -1)


def shape_name(n_rows, n_params, n_features, n_outputs):
    if full_covariance_affordable(n_rows, n_params):
        return "full"
    rank = low_rank_directions(n_rows, n_params, n_outputs * n_features)
    return f"low-rank k={rank}" if rank else "variances"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=60_000)
    parser.add_argument("--n-jobs", default="1,2")
    parser.add_argument("--n-draws", type=int, default=1000)
    args = parser.parse_args()
    directory = shared_data("mnist")
    if directory is None:
        return
    X, y = load_mnist(directory, "train")
    X_test, y_test = load_mnist(directory, "test")
    X, y = X[:args.rows] / 255.0, y[:args.rows]
    X_test = X_test / 255.0
    start = time.perf_counter()
    reference = LogisticRegression(max_iter=1000).fit(X, y)
    sklearn_seconds = time.perf_counter() - start
    sklearn_accuracy = reference.score(X_test, y_test)
    n_params = 9 * (X.shape[1] + 1)  # the centred softmax samples K - 1 blocks
    print(f"MNIST 10 classes: {X.shape[0]:,} rows x {X.shape[1]} pixels, "
          f"{10 * (X.shape[1] + 1):,} parameters ({n_params:,} sampled); scikit-learn "
          f"LogisticRegression: accuracy {sklearn_accuracy:.4f} in {sklearn_seconds:.1f} s\n",
          flush=True)
    rows = []
    for n_jobs in (int(n) for n in args.n_jobs.split(",")):
        clf = FireflySoftmaxClassifier(n_jobs=n_jobs, n_draws=args.n_draws, random_state=0)
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf.fit(X, y)
        wall = time.perf_counter() - start
        draws = centred(clf.posterior_["coef"], clf.posterior_["intercept"])
        worst_rhat = float(np.nanmax(rhat(draws)))
        worst_ess = float(np.nanmin(ess_bulk(draws)))
        warned = any("converged" in str(w.message) for w in caught)
        per_iteration = float(clf.posterior_["rows_per_iteration"].mean())
        rows.append([f"ours n_jobs={n_jobs}" + (" [warned]" if warned else ""),
                     f"{wall:.0f}", f"{clf.setup_time_:.0f}",
                     f"{clf.proposal_.name}, {shape_name(X.shape[0], n_params, X.shape[1], 9)}",
                     f"{worst_rhat:.3f}", f"{worst_ess:.0f}", f"{worst_ess / wall:.2f}",
                     f"{per_iteration:,.0f}", f"{clf.score(X_test, y_test):.4f}"])
        print(rows[-1], flush=True)
    table(rows, ["sampler", "wall s", "setup s", "proposal, shape", "max R-hat", "min ESS",
                 "min-ESS/s", "rows/iteration", "test acc."])
    print(f"\nscikit-learn LogisticRegression test accuracy: {sklearn_accuracy:.4f}")


if __name__ == "__main__":
    main()

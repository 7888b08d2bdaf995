"""Nanoseconds a row of each family's link over a block of rows (its ``link_rows``, what
every pass and minibatch calls), without and with its gradient, on one thread, beside the
fit that the link's cost shows in: a default fit of each family in the same run.

The blocks hold 2,000 rows whose linear predictors are those of a typical posterior draw
(``eta ~ N(0, 0.3^2)`` around the outcome's level), sharing their extra parameters as a
chain's rows do (the negative binomial's and Gamma's dispersion, the Student-t scale, the
ordinal cut-points). Run it with ``PYTHONPATH`` at another checkout's tree to compare two
commits: the links give the same values, bit for bit, so the fits take the same draws.

    python benchmarks/perf/link_cost.py [--rows 2000] [--repeats 2000] [--no-fits]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from skbayes_mh import (GammaRegression, MinibatchMHLogisticRegression,
                        MinibatchMHPoissonRegression, NegativeBinomialRegression,
                        OrdinalRegression, RobustTRegression)
from skbayes_mh.models import gamma, logistic, negative_binomial, ordinal, poisson, student_t

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table


def blocks(n_rows, rng):
    """``(name, link_rows, U, y, params, estimator, X, y_fit)`` of each family."""
    eta = rng.normal(0.0, 0.3, n_rows)
    shared = np.ones(n_rows)
    X = rng.normal(size=(5_000, 10))
    level = X[:, :3] @ np.array([0.3, -0.2, 0.1])
    p = 1.0 / (1.0 + np.exp(-level))
    return [
        ("logistic", logistic.logistic_link_rows, eta[:, None], (rng.random(n_rows) < 0.5) * 1.0,
         np.zeros(0), MinibatchMHLogisticRegression, X, (rng.random(5_000) < p).astype(int)),
        ("Poisson", poisson.poisson_link_rows, (eta + 0.5)[:, None],
         rng.poisson(np.exp(eta + 0.5)) * 1.0, np.zeros(0), MinibatchMHPoissonRegression, X,
         rng.poisson(np.exp(level + 0.5))),
        ("negative binomial (alpha 0.5)", negative_binomial.negative_binomial_link_rows,
         np.column_stack([eta + 0.5, np.log(0.5) * shared]),
         rng.negative_binomial(2, 2 / (2 + np.exp(eta + 0.5))) * 1.0, np.zeros(0),
         NegativeBinomialRegression, X,
         rng.negative_binomial(2, 2 / (2 + np.exp(level + 0.5)))),
        ("Gamma (dispersion 0.3)", gamma.gamma_link_rows,
         np.column_stack([eta, np.log(0.3) * shared]), rng.gamma(1 / 0.3, 0.3 * np.exp(eta)),
         np.zeros(0), GammaRegression, X, rng.gamma(1 / 0.3, 0.3 * np.exp(level))),
        ("Student-t (nu 4, scale sampled)", student_t.student_t_link_rows,
         np.column_stack([eta, np.log(0.5) * shared]), eta + 0.5 * rng.standard_t(4, n_rows),
         np.array([4.0, 0.0]), RobustTRegression, X, level + 0.5 * rng.standard_t(4, 5_000)),
        ("ordinal logit, 4 classes", ordinal.cumulative_link_rows,
         np.column_stack([eta, np.log(0.8) * shared, np.log(1.2) * shared]),
         rng.integers(0, 4, n_rows) * 1.0, np.array([ordinal.LOGIT]), OrdinalRegression, X,
         np.digitize(level + rng.logistic(size=5_000), [-1.0, 0.0, 1.0])),
    ]


def nanoseconds_a_row(link_rows, U, y, params, order, repeats):
    n_rows, width = U.shape
    U = np.ascontiguousarray(U)
    values, slopes = np.empty(n_rows), np.empty((n_rows, width))
    curvatures = np.empty((1, width, width))
    link_rows(U, y, 0, n_rows, params, order, values, slopes, curvatures)  # compiled or loaded
    started = time.perf_counter()
    for _ in range(repeats):
        link_rows(U, y, 0, n_rows, params, order, values, slopes, curvatures)
    return (time.perf_counter() - started) / repeats / n_rows * 1e9


def default_fit(estimator, X, y):
    """Seconds of the faster of two default fits (``random_state=0``), and the fit."""
    seconds = []
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            started = time.perf_counter()
            fit = estimator(random_state=0).fit(X, y)
        seconds.append(time.perf_counter() - started)
    return min(seconds), fit


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=2_000)
    parser.add_argument("--no-fits", action="store_true")
    args = parser.parse_args()
    import skbayes_mh

    print(f"skbayes_mh from {Path(skbayes_mh.__file__).parent}")
    rows = []
    for name, link_rows, U, y, params, estimator, X, y_fit in blocks(
            args.rows, np.random.default_rng(0)):
        costs = [nanoseconds_a_row(link_rows, U, y, params, order, args.repeats)
                 for order in (0, 1)]
        row = [name, f"{costs[0]:.1f}", f"{costs[1]:.1f}"]
        if not args.no_fits:
            seconds, fit = default_fit(estimator, X, y_fit)
            r_hat = np.concatenate([np.ravel(v) for v in fit.diagnostics_.r_hat.values()])
            row += [f"{seconds:.2f}", str(fit.acceptance_), f"{np.nanmax(r_hat):.4f}"]
        rows.append(row)
    header = ["family", "ns a row", "ns a row, with gradient"]
    if not args.no_fits:
        header += ["default fit of 5,000 x 10, s", "test", "max R-hat"]
    table(rows, header)


if __name__ == "__main__":
    main()

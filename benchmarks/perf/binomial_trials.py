"""Binomial regression on tall data: ``BinomialRegression``'s default fit, one row per
``(x, trials)``, against statsmodels' maximum-likelihood ``GLM`` (Binomial family) and
against the fit a user without a binomial estimator would run, one Bernoulli row per trial
(``MinibatchMHLogisticRegression``, defaults) up to ``--expanded-max-trials`` trials in
all.

Prints each fit's wall time (setup included), iterations and rows read a chain iteration,
the largest R-hat, the smallest bulk and tail ESS, the smallest tail ESS a second, and the
largest distance of the posterior means from the GLM's estimates in posterior sds; then
the ratio of the posterior sds to the GLM's standard errors, and ``score`` (D^2) beside the
GLM's deviance explained.

Data: 10 standard-normal features, weights evenly from -0.4 to 0.4, intercept -0.5;
trials uniform in 1 .. 2 * ``--mean-trials`` - 1. Two cores, ``random_state`` 0.

    python benchmarks/perf/binomial_trials.py [--rows 100000,1000000] [--mean-trials 10]
        [--expanded-max-trials 2000000]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.special import expit

from skbayes_mh import BinomialRegression, MinibatchMHLogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table


def successes_of_trials(n_rows, mean_trials, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 10))
    trials = rng.integers(1, 2 * mean_trials, size=n_rows)
    successes = rng.binomial(trials, expit(X @ np.linspace(-0.4, 0.4, 10) - 0.5))
    return X, np.column_stack([successes, trials])


def one_row_per_trial(X, counts):
    """Each row repeated once per trial, labelled 1 for its successes and 0 for the rest."""
    successes, trials = counts[:, 0], counts[:, 1]
    X_trials = np.repeat(X, trials, axis=0)
    y = np.concatenate([np.r_[np.ones(s), np.zeros(n - s)] for s, n in zip(successes, trials)])
    return X_trials, y.astype(int)


def timed_fit(estimator, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, y)
    return estimator, time.perf_counter() - start, any("converge" in str(w.message)
                                                         for w in caught)


def fit_row(label, model, seconds, warned, n_rows, glm):
    diagnostics = model.diagnostics_
    bulk = min(float(np.min(v)) for v in diagnostics["ess_bulk"].values())
    tail = min(float(np.min(v)) for v in diagnostics["ess_tail"].values())
    r_hat = max(float(np.max(v)) for v in diagnostics["r_hat"].values())
    coef = model.posterior_.get("coef", flat=True).reshape(-1, 10)
    distance = np.max(np.abs(coef.mean(axis=0) - glm.params[1:]) / coef.std(axis=0))
    read = float(np.mean(model.posterior_.sample_stats["rows_per_iteration"]))
    return [f"{n_rows:,}", label, model.acceptance_.__class__.__name__, f"{seconds:.2f}",
            f"{float(np.mean(model.n_iter_)):.0f}", f"{read:,.0f}", f"{r_hat:.3f}",
            f"{bulk:.0f}", f"{tail:.0f}", f"{tail / seconds:.0f}", f"{distance:.3f}",
            "yes" if warned else "no"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="100000,1000000")
    parser.add_argument("--mean-trials", type=int, default=10)
    parser.add_argument("--expanded-max-trials", type=int, default=2_000_000)
    args = parser.parse_args()
    import statsmodels.api as sm

    rows, checks = [], []
    for n_rows in [int(value) for value in args.rows.split(",")]:
        X, counts = successes_of_trials(n_rows, args.mean_trials)
        start = time.perf_counter()
        endog = np.column_stack([counts[:, 0], counts[:, 1] - counts[:, 0]])
        glm = sm.GLM(endog, sm.add_constant(X), family=sm.families.Binomial()).fit()
        glm_seconds = time.perf_counter() - start
        model, seconds, warned = timed_fit(BinomialRegression(random_state=0), X, counts)
        rows.append(fit_row("binomial rows", model, seconds, warned, n_rows, glm))
        ratio = model.posterior_.get("coef", flat=True).std(axis=0) / glm.bse[1:]
        checks.append([f"{n_rows:,}", f"{glm_seconds:.2f}", f"{ratio.min():.3f}",
                       f"{ratio.max():.3f}", f"{model.score(X, counts):.5f}",
                       f"{1 - glm.deviance / glm.null_deviance:.5f}"])
        if counts[:, 1].sum() <= args.expanded_max_trials:
            X_trials, y = one_row_per_trial(X, counts)
            model, seconds, warned = timed_fit(MinibatchMHLogisticRegression(random_state=0),
                                               X_trials, y)
            rows.append(fit_row(f"one row per trial ({len(y):,})", model, seconds, warned,
                                n_rows, glm))
    table(rows, ["rows", "fit", "test", "seconds", "iterations", "rows read/iter",
                 "max R-hat", "min bulk ESS", "min tail ESS", "tail ESS/s",
                 "max |mean - GLM| / sd", "warned"])
    print()
    table(checks, ["rows", "GLM seconds", "min sd / GLM se", "max sd / GLM se",
                   "score (D^2)", "GLM D^2"])


if __name__ == "__main__":
    main()

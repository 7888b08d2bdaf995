"""Ordinal regression on tall data: ``OrdinalRegression``'s default fit (cumulative logit,
five classes) against statsmodels' maximum-likelihood ``OrderedModel``.

Prints each fit's wall time (setup included), iterations and rows read a chain iteration,
the largest R-hat, the smallest bulk and tail ESS and the smallest tail ESS a second; then
the largest distance of the posterior means of the weights and cut-points from
statsmodels' estimates, in Monte Carlo standard errors (posterior sd over the square root
of the smallest bulk ESS) and in posterior sds, and the ratio of the weights' posterior
sds to its standard errors. At N rows the posterior mean and the maximum-likelihood
estimate differ by O(1/N): the distances in Monte Carlo errors should look like draws of
a standard normal.

Data: 10 standard-normal features, weights evenly from -0.4 to 0.4, a latent logistic
noise cut at (-2, -0.5, 0.5, 2). Two cores, ``random_state`` 0.

    python benchmarks/perf/ordinal_tall.py [--rows 100000,1000000]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from skbayes_mh import OrdinalRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table

CUTS = (-2.0, -0.5, 0.5, 2.0)


def ordered_classes(n_rows, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 10))
    return X, np.digitize(X @ np.linspace(-0.4, 0.4, 10) + rng.logistic(size=n_rows), CUTS)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="100000,1000000")
    args = parser.parse_args()
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    fits, checks = [], []
    for n_rows in [int(value) for value in args.rows.split(",")]:
        X, y = ordered_classes(n_rows)
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = OrdinalRegression(random_state=0).fit(X, y)
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        reference = OrderedModel(y, X, distr="logit").fit(method="bfgs", disp=False,
                                                            maxiter=5000)
        reference_seconds = time.perf_counter() - start
        diagnostics = model.diagnostics_
        bulk = min(float(np.min(v)) for v in diagnostics["ess_bulk"].values())
        tail = min(float(np.min(v)) for v in diagnostics["ess_tail"].values())
        r_hat = max(float(np.max(v)) for v in diagnostics["r_hat"].values())
        read = float(np.mean(model.posterior_.sample_stats["rows_per_iteration"]))
        warned = any("converge" in str(w.message) for w in caught)
        fits.append([f"{n_rows:,}", model.acceptance_.__class__.__name__, f"{seconds:.2f}",
                     f"{float(np.mean(model.n_iter_)):.0f}", f"{read:,.0f}", f"{r_hat:.3f}",
                     f"{bulk:.0f}", f"{tail:.0f}", f"{tail / seconds:.0f}",
                     "yes" if warned else "no"])
        draws = np.column_stack([model.posterior_.get("coef", flat=True),
                                 model.posterior_.get("cutpoints", flat=True)])
        estimate = np.append(reference.params[:10],
                             reference.model.transform_threshold_params(reference.params)[1:-1])
        sd = draws.std(axis=0)
        distance = np.abs(draws.mean(axis=0) - estimate)
        ratio = sd[:10] / reference.bse[:10]
        checks.append([f"{n_rows:,}", f"{reference_seconds:.2f}",
                       f"{np.max(distance / (sd / np.sqrt(bulk))):.2f}",
                       f"{np.max(distance / sd):.3f}", f"{ratio.min():.3f}",
                       f"{ratio.max():.3f}"])
    table(fits, ["rows", "test", "seconds", "iterations", "rows read/iter", "max R-hat",
                 "min bulk ESS", "min tail ESS", "tail ESS/s", "warned"])
    print()
    table(checks, ["rows", "OrderedModel seconds", "max |mean - MLE| / MCSE",
                   "max |mean - MLE| / sd", "min sd / se", "max sd / se"])


if __name__ == "__main__":
    main()

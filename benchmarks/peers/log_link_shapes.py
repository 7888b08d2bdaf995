"""The log-link regressions (Poisson, negative binomial, Gamma) on short-wide, wide and tall
synthetic data: the default fit (the weights' prior scale learned, ``prior_scale="auto"``),
the fixed scale of 1 and scikit-learn's ``PoissonRegressor`` / ``GammaRegressor``, in one
run, each in a ``Pipeline`` with ``StandardScaler``.

The data: standard normal features, 10 of them with weight 0.2 (wide, tall) or 0.3
(short-wide), intercept 0.5; Poisson counts, negative-binomial counts of dispersion 1/2 and
Gamma amounts of shape 2 with that mean; three quarters of the rows for training.

Printed for each fit: wall seconds, the largest R-hat and smallest bulk ESS over what the
convergence check judges (the sampled coordinates where the chains sampled the rows' span),
whether it warned, the test deviance explained (D^2, as the estimators' ``score``), the
largest predicted mean of a test row, and the scale the data chose. Fixed-scale fits get
``max_time`` seconds (default 120) and warn when they stop there.

    python benchmarks/peers/log_link_shapes.py [--shapes 100x2000,3750x200,100000x10]
        [--max-time SECONDS]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import GammaRegressor, PoissonRegressor
from sklearn.metrics import d2_tweedie_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skbayes_mh import GammaRegression, MinibatchMHPoissonRegression, NegativeBinomialRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table

HEADERS = ["family", "fit", "wall s", "max R-hat", "min bulk ESS", "warned", "test D^2",
           "largest mean", "scale"]
#: (name, our estimator, scikit-learn's, Tweedie power of the deviance)
FAMILIES = [("Poisson", MinibatchMHPoissonRegression, PoissonRegressor, 1),
            ("negative binomial", NegativeBinomialRegression, PoissonRegressor, 1),
            ("Gamma", GammaRegression, GammaRegressor, 2)]


def outcomes(n_rows, n_features, seed=0):
    """``X`` and each family's outcome."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    weight = 0.3 if n_features > n_rows else 0.2
    mu = np.exp(X[:, :10] @ np.full(10, weight) + 0.5)
    return X, {"Poisson": rng.poisson(mu),
               "negative binomial": rng.negative_binomial(2.0, 2.0 / (2.0 + mu)),
               "Gamma": rng.gamma(2.0, mu / 2.0)}


def judged(model):
    """The largest R-hat and smallest bulk ESS the convergence check read."""
    diagnostics = model.diagnostics_
    if model.span_rank_ is not None:
        return (float(np.max(diagnostics.sampled.r_hat)),
                float(np.min(diagnostics.sampled.ess_bulk)))
    return (max(float(np.max(v)) for v in diagnostics.r_hat.values()),
            min(float(np.min(v)) for v in diagnostics.ess_bulk.values()))


def ours(name, make, power, scale, X, y, X_test, y_test, max_time):
    settings = dict(random_state=0)
    if scale != "auto":
        settings.update(prior_scale=scale, max_time=max_time)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fitted = make_pipeline(StandardScaler(), make(**settings)).fit(X, y)
        except ValueError as error:  # GammaRegression on no more rows than coefficients
            if "more samples than coefficients" not in str(error):
                raise
            return [name, f"ours, prior_scale={scale!r}", "refused"] + ["-"] * 6
    wall = time.perf_counter() - start
    model = fitted[-1]
    predicted = fitted.predict(X_test)
    max_rhat, min_ess = judged(model)
    warned = any("converged" in str(w.message) for w in caught)
    return [name, f"ours, prior_scale={scale!r}", f"{wall:.1f}", f"{max_rhat:.3f}",
            f"{min_ess:.0f}", "yes" if warned else "no",
            f"{d2_tweedie_score(y_test, predicted, power=power):.4g}",
            f"{predicted.max():.3g}",
            f"{getattr(model, 'prior_scale_', 1.0):.3g}"]


def theirs(name, make, power, X, y, X_test, y_test):
    start = time.perf_counter()
    fitted = make_pipeline(StandardScaler(), make()).fit(X, y)
    wall = time.perf_counter() - start
    predicted = fitted.predict(X_test)
    return [name, f"{make.__name__}()", f"{wall:.2f}", "-", "-", "-",
            f"{d2_tweedie_score(y_test, predicted, power=power):.4g}",
            f"{predicted.max():.3g}", "-"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default="100x2000,3750x200,100000x10")
    parser.add_argument("--max-time", type=float, default=120.0)
    args = parser.parse_args()
    for shape in args.shapes.split(","):
        n_rows, n_features = (int(v) for v in shape.split("x"))
        X, ys = outcomes(n_rows, n_features)
        print(f"\n## {n_rows:,} rows x {n_features:,} features "
              f"({3 * n_rows // 4:,} for training)\n")
        rows = []
        for name, make, make_theirs, power in FAMILIES:
            X_train, X_test, y, y_test = train_test_split(X, ys[name], test_size=0.25,
                                                          random_state=0)
            for scale in ("auto", 1.0):
                rows.append(ours(name, make, power, scale, X_train, y, X_test, y_test,
                                 args.max_time))
            rows.append(theirs(name, make_theirs, power, X_train, y, X_test, y_test))
        table(rows, HEADERS)


if __name__ == "__main__":
    main()

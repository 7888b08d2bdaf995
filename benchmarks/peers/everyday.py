"""Everyday use, ours against scikit-learn in one run: a default fit, a 5-fold
``cross_val_score``, a 3 x 3 ``GridSearchCV`` (three prior scales, or three ``C``, by three
folds) and ``predict_proba`` (``predict`` for the regressors) on 10^5 rows, each in a
``Pipeline`` with ``StandardScaler`` as a new user would write it.

Data sets (``--cases``): scikit-learn's breast cancer and digits, California housing
(``RobustTRegression`` against ``HuberRegressor``; read from ``../shared/data``), synthetic
5,000 x 100 (``make_classification``, 20 informative) and 10^6 x 10 logistic data.

Printed per case and tool: the time of each task, the default fit's largest R-hat and
smallest bulk ESS (ours), and the held-out score (accuracy, or R^2); for ours, also the
prediction over every stored draw (``predict_tol=None``): its time and the largest
difference of the default prediction from it (relative above 1 for a regressor's means).

    python benchmarks/peers/everyday.py [--cases breast_cancer,digits,california,synthetic,tall]
        [--n-draws auto] [--predict-rows 100000]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, make_classification
from sklearn.linear_model import HuberRegressor, LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skbayes_mh import (FireflySoftmaxClassifier, MinibatchMHLogisticRegression,
                        RobustTRegression)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import cases_option, shared_data, table


def timed(function):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = function()
    return value, time.perf_counter() - start


def diagnostics(pipeline):
    estimator = pipeline[-1]
    found = getattr(estimator, "diagnostics_", None)
    if found is None:
        return "-", "-"
    rhat = max(float(np.nanmax(v)) for v in found["r_hat"].values())
    ess = min(float(np.nanmin(v)) for v in found["ess_bulk"].values())
    return f"{rhat:.3f}", f"{ess:.0f}"


def run(name, ours, theirs, grid_ours, grid_theirs, X, y, X_test, y_test, predict_rows):
    """One case's rows: each tool's default fit, cross-validation, grid search and
    prediction times, its diagnostics and held-out score."""
    rows, times = [], []
    repeats = -(-predict_rows // X_test.shape[0])
    X_predict = np.tile(X_test, (repeats, 1))[:predict_rows]
    for tool, make, grid in (("ours", ours, grid_ours), ("scikit-learn", theirs, grid_theirs)):
        fitted, fit_time = timed(lambda: make().fit(X, y))
        _, cv_time = timed(lambda: cross_val_score(make(), X, y, cv=5))
        _, grid_time = timed(lambda: GridSearchCV(make(), grid, cv=3).fit(X, y))
        method = fitted.predict_proba if hasattr(fitted, "predict_proba") else fitted.predict
        predicted, predict_time = timed(lambda: method(X_predict))
        every_draw = ["-", "-"]
        if hasattr(fitted[-1], "predict_tol"):
            tol = fitted[-1].predict_tol
            fitted[-1].set_params(predict_tol=None)
            exact, exact_time = timed(lambda: method(X_predict))
            fitted[-1].set_params(predict_tol=tol)
            scale = np.maximum(1.0, np.abs(exact)) if predicted.ndim == 1 else 1.0
            every_draw = [f"{exact_time:.3f}",
                          f"{np.max(np.abs(predicted - exact) / scale):.1e}"]
        rhat, ess = diagnostics(fitted)
        times.append((fit_time, cv_time, grid_time, predict_time))
        rows.append([name, tool, f"{fit_time:.3f}", f"{cv_time:.2f}", f"{grid_time:.2f}",
                     f"{predict_time:.3f}", *every_draw, rhat, ess,
                     f"{fitted.score(X_test, y_test):.4f}"])
    ratios = [ours / theirs for ours, theirs in zip(*times)]
    rows.append([name, "ours / scikit-learn"] + [f"{r:.1f}x" for r in ratios]
                + ["", "", "", "", ""])
    return rows


def classifier_case(name, X, y, make, n_draws, predict_rows, test_size=0.25):
    X, X_test, y, y_test = train_test_split(X, y, test_size=test_size, random_state=0,
                                            stratify=y)
    return run(name,
               lambda: make_pipeline(StandardScaler(), make(n_draws=n_draws, random_state=0)),
               lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)),
               {f"{make.__name__.lower()}__prior_scale": [0.3, 1.0, 3.0]},
               {"logisticregression__C": [0.3, 1.0, 3.0]},
               X, y, X_test, y_test, predict_rows)


def breast_cancer(args):
    X, y = load_breast_cancer(return_X_y=True)
    return classifier_case("breast cancer", X, y, MinibatchMHLogisticRegression, args.n_draws,
                           args.predict_rows)


def digits(args):
    X, y = load_digits(return_X_y=True)
    return classifier_case("digits", X, y, FireflySoftmaxClassifier, args.n_draws,
                           args.predict_rows)


def synthetic(args):
    X, y = make_classification(n_samples=10_000, n_features=100, n_informative=20,
                               random_state=0)
    return classifier_case("synthetic 5,000 x 100", X, y, MinibatchMHLogisticRegression,
                           args.n_draws, args.predict_rows, test_size=0.5)


def tall(args):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1_100_000, 10))
    y = (rng.random(X.shape[0]) < 1 / (1 + np.exp(-(X @ np.linspace(-1, 1, 10) + 0.3))))
    return classifier_case("synthetic 10^6 x 10", X, y.astype(int),
                           MinibatchMHLogisticRegression, args.n_draws, args.predict_rows,
                           test_size=100_000)


def california(args):
    from skbayes_mh.datasets import load_california_housing

    directory = shared_data("california_housing")
    if directory is None:
        return []
    X, y = load_california_housing(directory)
    X, X_test, y, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    return run("California housing",
               lambda: make_pipeline(StandardScaler(),
                                     RobustTRegression(n_draws=args.n_draws, random_state=0)),
               lambda: make_pipeline(StandardScaler(), HuberRegressor(max_iter=1000)),
               {"robusttregression__prior_scale": [0.3, 1.0, 3.0]},
               {"huberregressor__alpha": [1e-4, 1e-3, 1e-2]},
               X, y, X_test, y_test, args.predict_rows)


CASES = {"breast_cancer": breast_cancer, "digits": digits, "california": california,
         "synthetic": synthetic, "tall": tall}


def main():
    parser = argparse.ArgumentParser()
    cases_option(parser, CASES)
    parser.add_argument("--n-draws", default="auto",
                        type=lambda v: v if v == "auto" else int(v))
    parser.add_argument("--predict-rows", type=int, default=100_000)
    args = parser.parse_args()
    rows = []
    for name in args.cases:
        rows += CASES[name](args)
    print(f"\nours: n_draws={args.n_draws!r}, otherwise defaults; 2 cores\n")
    table(rows, ["data", "tool", "fit s", "5-fold CV s", "3x3 grid s", "predict 10^5 s",
                 "every draw s", "max |difference|", "max R-hat", "min bulk ESS",
                 "test score"])


if __name__ == "__main__":
    main()

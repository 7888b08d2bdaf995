"""What ``thin="auto"``'s rule for the full-data tests under ``n_draws="auto"`` costs: default
fits thinned to the median parameter's independence (the rule) against the same fits thinned
by the slowest parameter's autocorrelation time (capped at three medians, as a fixed
``n_draws`` still does), in one process, over several seeds.

The rule is switched by giving ``choose_thin`` no ESS goal (the fixed-``n_draws`` branch),
with the goal the rounds' first round aims at; everything else is the default fit. Printed
per data set and rule: the mean over the seeds of the iterations of all chains (warm-up
included), wall seconds, stored draws and smallest bulk ESS, and the largest R-hat over the
seeds, of what the convergence check judged (table in ``docs/choosing.md``).

    python benchmarks/studies/thinning_rule.py [--seeds 4] [--cases breast_cancer,synthetic]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, make_classification
from sklearn.preprocessing import StandardScaler

from skbayes_mh import FireflySoftmaxClassifier, MinibatchMHLogisticRegression
from skbayes_mh._core import auto, fit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import cases_option, table


def breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return "breast cancer, 569 x 30", MinibatchMHLogisticRegression, \
        StandardScaler().fit_transform(X), y


def synthetic():
    X, y = make_classification(5000, 100, n_informative=20, random_state=0)
    return "synthetic, 4,000 x 100", MinibatchMHLogisticRegression, X[:4000], y[:4000]


def digits():
    X, y = load_digits(return_X_y=True)
    return "digits, 1,347 x 64, ten classes", FireflySoftmaxClassifier, \
        StandardScaler().fit_transform(X[:1347]), y[:1347]


CASES = {"breast_cancer": breast_cancer, "synthetic": synthetic, "digits": digits}


def slowest_rule(setting, acceptance, n_rows, n_params, n_draws, ess_goal=None):
    """``choose_thin`` as it was: the slowest parameter's time toward the first round's
    goal (the fixed-``n_draws`` branch, given that goal)."""
    if ess_goal is None or not acceptance.reads_all_rows:
        return auto.choose_thin(setting, acceptance, n_rows, n_params, n_draws, ess_goal)
    rule = auto.choose_thin(setting, acceptance, n_rows, n_params, n_draws)
    if hasattr(rule, "ess_goal"):  # not 1 (no rule where a draw's work allows none)
        rule.ess_goal = ess_goal
    return rule


def judged_statistics(fitted):
    """The smallest bulk ESS and largest R-hat of what the fit's convergence check judged:
    a fit that sampled the rows' span (the synthetic data's 100 features have rank 98) is
    judged on the span's coordinates; the others' draws are exact prior draws."""
    judged = fitted.diagnostics_.get("sampled")
    if judged is None:
        judged = fitted.diagnostics_
        return (min(float(np.nanmin(v)) for v in judged.ess_bulk.values()),
                max(float(np.nanmax(v)) for v in judged.r_hat.values()))
    return float(np.nanmin(judged.ess_bulk)), float(np.nanmax(judged.r_hat))


def run(make, X, y, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        fitted = make(random_state=seed).fit(X, y)
        wall = time.perf_counter() - start
    ess, r_hat = judged_statistics(fitted)
    return (float(np.sum(fitted.n_iter_)), wall,
            float(fitted.posterior_.n_chains * fitted.posterior_.n_draws), ess, r_hat)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=4)
    cases_option(parser, CASES)
    args = parser.parse_args()
    rows = []
    for name in args.cases:
        label, make, X, y = CASES[name]()
        for rule, patch in (("slowest parameter's", slowest_rule), ("median's (the rule)", None)):
            if patch is None:
                results = [run(make, X, y, seed) for seed in range(args.seeds)]
            else:
                with mock.patch.object(fit, "choose_thin", patch):
                    results = [run(make, X, y, seed) for seed in range(args.seeds)]
            values = np.array(results)
            rows.append([label, rule, f"{values[:, 0].mean():,.0f}", f"{values[:, 1].mean():.2f}",
                         f"{values[:, 2].mean():,.0f}", f"{values[:, 3].mean():,.0f}",
                         f"{values[:, 4].max():.4f}"])
    print(f"\ndefault fits, means over {args.seeds} seeds (largest R-hat: the largest)\n")
    table(rows, ["data", "thinned by", "iterations (all chains)", "wall s", "stored draws",
                 "min bulk ESS", "max R-hat"])


if __name__ == "__main__":
    main()

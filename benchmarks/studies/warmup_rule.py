"""What ``n_warmup="auto"``'s end of each chain's warm-up once it has settled saves: default
fits (``n_draws="auto"``) against the same fits with the whole warm-up (its cap given as
``n_warmup``, which runs to its end: the warm-up before the rule), in one process, over
several seeds. The subsampling tests (the tall and California cases) run the whole
warm-up either way: their rows show the rule leaves them alone.

Printed per data set and warm-up: the means over the seeds of each chain's warm-up
iterations, of the iterations of all chains (warm-up included) and of the wall seconds
(setup included), the smallest bulk ESS and the largest R-hat over the seeds of what the
convergence check judged, and the fits that warned (table in ``docs/choosing.md``).

    python benchmarks/studies/warmup_rule.py [--seeds 4]
        [--cases breast_cancer,synthetic,digits,tall,california]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from skbayes_mh import MinibatchMHLogisticRegression, RobustTRegression
from skbayes_mh._core.auto import AUTO_SHORT_WARMUP
from skbayes_mh.datasets import load_california_housing

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import cases_option, shared_data, table
from studies.thinning_rule import CASES as FULL_DATA_CASES, judged_statistics


def tall():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100_000, 10))
    y = (rng.random(100_000) < 1 / (1 + np.exp(-X @ rng.normal(0, 0.5, 10)))).astype(int)
    return "synthetic 10^5 x 10 (minibatch test)", MinibatchMHLogisticRegression, X, y


def california():
    folder = shared_data("california_housing")
    if folder is None:
        return None
    X, y = load_california_housing(folder)
    return "California housing, raw rows (RobustTRegression)", RobustTRegression, X, y


CASES = {**FULL_DATA_CASES, "tall": tall, "california": california}


def run(make, X, y, seed, n_warmup):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        fitted = make(n_warmup=n_warmup, random_state=seed).fit(X, y)
        wall = time.perf_counter() - start
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    ess, r_hat = judged_statistics(fitted)
    return (float(np.mean(fitted.n_warmup_)), float(np.sum(fitted.n_iter_)), wall, ess, r_hat,
            warned, int(np.max(fitted.n_warmup_)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=4)
    cases_option(parser, CASES)
    args = parser.parse_args()
    rows = []
    for name in args.cases:
        case = CASES[name]()
        if case is None:  # shared_data said why
            continue
        label, make, X, y = case
        with warnings.catch_warnings():  # what a process's first fit loads, untimed
            warnings.simplefilter("ignore")
            make(n_draws=20, n_warmup=20, random_state=0).fit(X, y)
        settled = [run(make, X, y, seed, "auto") for seed in range(args.seeds)]
        # Every fit here takes the short cap (n_draws="auto", no Firefly test).
        assert max(result[6] for result in settled) <= AUTO_SHORT_WARMUP
        whole = [run(make, X, y, seed, AUTO_SHORT_WARMUP) for seed in range(args.seeds)]
        for warmup, results in (("until settled (the rule)", settled),
                                (f"whole ({AUTO_SHORT_WARMUP})", whole)):
            values = np.array([result[:5] for result in results])
            rows.append([label, warmup, f"{values[:, 0].mean():,.0f}",
                         f"{values[:, 1].mean():,.0f}", f"{values[:, 2].mean():.2f}",
                         f"{values[:, 3].min():,.0f}", f"{values[:, 4].max():.4f}",
                         sum(result[5] for result in results)])
    print(f"\ndefault fits, means over {args.seeds} seeds (smallest ESS and largest R-hat over "
          f"them)\n")
    table(rows, ["data", "warm-up", "warm-up a chain", "iterations (all chains)", "wall s",
                 "min bulk ESS", "max R-hat", "warned"])


if __name__ == "__main__":
    main()

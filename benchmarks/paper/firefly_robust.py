"""Firefly Monte Carlo for robust Student-t regression (nu = 4, Laplace prior, slice
sampling), the Table 1 columns of Maclaurin and Adams (2014):

1. California housing (real, 20,640 rows): log median house value on the 8 standardised
   features + intercept, the noise scale sampled (10 parameters).
2. A synthetic set, N = 1,000,000, 10 features + intercept, 5% gross outliers.
3. The per-iteration cost of MAP-tuned Firefly at N = 10^4, 10^5, 10^6 (synthetic).

Rows: regular MCMC (the ordinary sampler with the same slice update, preconditioner and
tuning, every point queried), untuned Firefly (bounds tight where the residual is one scale), MAP-tuned
Firefly. On the synthetic set the regular and untuned rows, which query most of the
million points per evaluation, run ``--costly-iterations`` iterations. Effective sample
size: ArviZ bulk ESS, mean over the parameters.

    python benchmarks/paper/firefly_robust.py [--iterations 4000] [--burnin 500] [--chains 2]
        [--costly-iterations 150] [--parts california synthetic scaling]
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

from skbayes_mh.datasets import california_log_value
from skbayes_mh.models import StudentTModel
from skbayes_mh.models._prior import LAPLACE, LOG_SCALE
from skbayes_mh.sampling import run_chain

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import (chain_row, firefly_report, firefly_sampler, json_option, linear_target,
                     print_agreement, regular_sampler, save_figures, shared_data, table)

NU = 4.0
PRIOR_SCALE = 1.0
PAPER = {"regular MCMC": ("18,182,764", "-", "1"), "untuned Firefly": ("2,753,428", "-", "-"),
         "MAP-tuned Firefly": ("575,528", "-", "29")}


def robust_target(X, y):
    """The estimator's model (RobustTRegression defaults: Laplace prior on the weights,
    intercept around mean(y), exponential prior of mean std(y) on the scale)."""
    centred = y - y.mean()
    spread = float(np.std(y))
    scales = np.append(np.full(X.shape[1], PRIOR_SCALE), [10 * spread, spread])
    return linear_target(StudentTModel(NU), X, centred, scales, kind=LAPLACE | LOG_SCALE)


def synthetic(n, seed=0, n_features=10, outliers=0.05):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    w = rng.normal(size=n_features)
    y = X @ w + 1.0 + 0.5 * rng.standard_t(NU, size=n)
    bad = rng.random(n) < outliers
    y[bad] += rng.choice([-1.0, 1.0], size=bad.sum()) * rng.uniform(10, 20, size=bad.sum())
    return X, y


def three_rows(target, args, costly_iterations=None):
    rows = {}
    for name, make in (("regular MCMC", regular_sampler(target, "slice")),
                       ("untuned Firefly", firefly_sampler(target, "slice", "untuned")),
                       ("MAP-tuned Firefly", firefly_sampler(target, "slice", "map"))):
        iterations = costly_iterations if name != "MAP-tuned Firefly" else None
        rows[name] = chain_row(target, make, args, iterations)
        print(f"  [{name}: {rows[name]['wall']:.0f} s]", flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=4000)
    parser.add_argument("--burnin", type=int, default=500)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--costly-iterations", type=int, default=150)
    parser.add_argument("--parts", nargs="+", default=["california", "synthetic", "scaling"],
                        choices=["california", "synthetic", "scaling"])
    json_option(parser)
    args = parser.parse_args()

    if "california" in args.parts:
        folder = shared_data("california_housing")
        if folder is not None:
            X, y = california_log_value(folder)
            rows = three_rows(robust_target(X, y), args)
            firefly_report(f"California housing, {len(y):,} rows, Student-t nu = 4, slice "
                           f"sampling ({args.chains} chains x {args.iterations:,} iterations; "
                           f"paper: 1.8M molecules)", rows, PAPER, key="california")
            print_agreement(rows)

    if "synthetic" in args.parts:
        X, y = synthetic(1_000_000)
        burnin = args.burnin
        args.burnin = min(burnin, args.costly_iterations)
        costly = args.costly_iterations
        rows = {}
        target = robust_target(X, y)
        for name, make in (("regular MCMC", regular_sampler(target, "slice")),
                           ("untuned Firefly", firefly_sampler(target, "slice", "untuned"))):
            rows[name] = chain_row(target, make, args, costly)
            print(f"  [{name}: {rows[name]['wall']:.0f} s]", flush=True)
        args.burnin = burnin
        rows["MAP-tuned Firefly"] = chain_row(target, firefly_sampler(target, "slice", "map"),
                                              args)
        firefly_report(f"Synthetic, N = 1,000,000, 5% outliers, Student-t nu = 4, slice "
                       f"sampling (regular and untuned: {args.chains} x {costly:,} "
                       f"iterations; MAP-tuned: {args.chains} x {args.iterations:,})", rows,
                       PAPER, key="synthetic")
        print_agreement(rows)

    if "scaling" in args.parts:
        print(f"\nMAP-tuned Firefly per-iteration cost against N (synthetic, slice, 1 chain x "
              f"{args.iterations:,} iterations)")
        lines = []
        for n in (10_000, 100_000, 1_000_000):
            X, y = synthetic(n)
            target = robust_target(X, y)
            sampler, tuners = firefly_sampler(target, "slice", "map")()
            start = time.perf_counter()
            out = run_chain(sampler, target.mean, 7, args.burnin, args.iterations, tuners=tuners)
            wall = time.perf_counter() - start
            seconds = out.stats["seconds"][-1]
            lines.append([f"{n:,}", f"{out.stats['n_data_read'].mean():,.1f}",
                          f"{out.stats['n_bright'].mean():,.1f}",
                          f"{1e6 * seconds / args.iterations:,.1f}", f"{wall:.1f}"])
        table(lines, ["N", "queries/iter", "bright", "us/iter", "chain wall s"])
    save_figures(args.json)


if __name__ == "__main__":
    main()

"""Firefly Monte Carlo, the paper's Table 1 (Maclaurin and Adams 2014) on real MNIST:

1. Logistic regression, MNIST 7 vs 9, 50 principal components + bias (12,214 rows),
   random-walk Metropolis-Hastings: regular MCMC, untuned Firefly (xi = 1.5), MAP-tuned
   Firefly.
2. Softmax regression with MALA on three MNIST digits (0, 1, 2; 50 components + bias per
   class), in place of the paper's 3-class CIFAR-10 features. MAP-tuned Firefly runs with
   both softmax bounds: Bohning's (the paper's) and Jebara-Choromanska's (the default).

Columns: likelihood queries per iteration, effective samples per 1,000 iterations (ArviZ
bulk ESS, mean over the parameters), and the speed-up in effective samples per query and
per second of wall time, relative to regular MCMC. Regular MCMC is the ordinary
Metropolis-Hastings sampler with the exact test and the same proposal, the same
preconditioner (the Laplace covariance at the MAP) and the same warm-up tuning.

    python benchmarks/paper/firefly_table1.py [--iterations 20000] [--burnin 3000] [--chains 2]
                                        [--models logistic softmax]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

from skbayes_mh.datasets import mnist_pca_digits, mnist_pca_pair
from skbayes_mh.models import LogisticModel, SoftmaxModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import chain_row as run
from _common import firefly_report as report
from _common import (firefly_sampler, json_option, linear_target, regular_sampler, save_figures,
                     shared_data)

PRIOR_SCALE = 1 / np.sqrt(10)  # precision 10 on every weight, as in the reference run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=20_000)
    parser.add_argument("--burnin", type=int, default=3_000)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--models", nargs="+", default=["logistic", "softmax"],
                        choices=["logistic", "softmax"])
    json_option(parser)
    args = parser.parse_args()
    mnist = shared_data("mnist")
    if mnist is None:
        return

    if "logistic" in args.models:
        logistic_table(mnist, args)
    if "softmax" in args.models:
        softmax_table(mnist, args)
    save_figures(args.json)


def logistic_table(mnist, args):
    X, y = mnist_pca_pair(mnist, (7, 9), 50)
    target = linear_target(LogisticModel(), X, y, PRIOR_SCALE)
    rows = {"regular MCMC": run(target, regular_sampler(target, "random_walk"), args),
            "untuned Firefly": run(target, firefly_sampler(target, "random_walk", "untuned"), args),
            "MAP-tuned Firefly": run(target, firefly_sampler(target, "random_walk", "map"), args)}
    report(f"Logistic regression, MNIST 7 vs 9, {X.shape[0]:,} rows x {X.shape[1] + 1} "
           f"(random-walk MH, {args.chains} chains x {args.iterations:,} iterations)", rows,
           {"regular MCMC": ("12,214", "3.7", "1"), "untuned Firefly": ("6,252", "1.3", "0.7"),
            "MAP-tuned Firefly": ("207", "1.4", "22")}, key="logistic")


def softmax_table(mnist, args):
    X, y = mnist_pca_digits(mnist, (0, 1, 2), 50)
    rows = {}
    for name, bound, curvature in (("regular MCMC", None, "jebara"),
                                   ("untuned Firefly", "untuned", "jebara"),
                                   ("MAP-tuned Firefly, Bohning", "map", "bohning"),
                                   ("MAP-tuned Firefly, Jebara", "map", "jebara")):
        target = linear_target(SoftmaxModel(3, curvature), X, y, PRIOR_SCALE)
        make = (regular_sampler(target, "mala") if bound is None
                else firefly_sampler(target, "mala", bound, softmax_bound=curvature))
        rows[name] = run(target, make, args)
    report(f"Softmax regression, MNIST digits 0/1/2, {X.shape[0]:,} rows x "
           f"{3 * (X.shape[1] + 1)} weights (MALA, {args.chains} chains x {args.iterations:,} "
           f"iterations; paper: 3-class CIFAR-10)", rows,
           {"regular MCMC": ("18,000", "8.0", "1"), "untuned Firefly": ("8,058", "4.2", "1.1"),
            "MAP-tuned Firefly, Bohning": ("654", "1.9", "11"),
            "MAP-tuned Firefly, Jebara": ("-", "-", "-")}, key="softmax")


if __name__ == "__main__":
    main()

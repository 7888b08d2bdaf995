"""Firefly Monte Carlo, the paper's Table 1 (Maclaurin and Adams 2014) on real MNIST:

1. Logistic regression, MNIST 7 vs 9, 50 principal components + bias (12,214 rows),
   random-walk Metropolis-Hastings: regular MCMC, untuned Firefly (xi = 1.5), MAP-tuned
   Firefly.
2. Softmax regression with MALA on three MNIST digits (0, 1, 2; 50 components + bias per
   class), in place of the paper's 3-class CIFAR-10 features. MAP-tuned Firefly runs with
   both softmax bounds: Bohning's (the paper's) and Jebara-Choromanska's (the default).
   Twice (``--softmax-shapes``): with ours, MALA preconditioned by the Laplace covariance,
   and with the paper's plain MALA (one step size for every weight) for every row. The
   preconditioned baseline mixes about ten times better per iteration than the paper's,
   so only the plain rows compare like with like with the paper's speed-ups.

Columns: likelihood queries per iteration, effective samples per 1,000 iterations (ArviZ
bulk ESS, mean over the parameters), and the speed-up in effective samples per query and
per second of wall time, relative to regular MCMC. Regular MCMC is the ordinary
Metropolis-Hastings sampler with the exact test and the same proposal, the same
preconditioner (the Laplace covariance at the MAP) and the same warm-up tuning.

    python benchmarks/paper/firefly_table1.py [--iterations 20000] [--burnin 3000] [--chains 2]
        [--models logistic softmax] [--softmax-shapes laplace plain]
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
    parser.add_argument("--softmax-shapes", nargs="+", default=["laplace", "plain"],
                        choices=["laplace", "plain"],
                        help="the softmax rows' MALA: preconditioned by the Laplace "
                             "covariance (ours), plain (the paper's), or both")
    json_option(parser)
    args = parser.parse_args()
    mnist = shared_data("mnist")
    if mnist is None:
        return

    if "logistic" in args.models:
        logistic_table(mnist, args)
    if "softmax" in args.models:
        for shape in args.softmax_shapes:
            softmax_table(mnist, args, shape)
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


def softmax_table(mnist, args, shape):
    X, y = mnist_pca_digits(mnist, (0, 1, 2), 50)
    rows = {}
    for name, bound, curvature in (("regular MCMC", None, "jebara"),
                                   ("untuned Firefly", "untuned", "jebara"),
                                   ("MAP-tuned Firefly, Bohning", "map", "bohning"),
                                   ("MAP-tuned Firefly, Jebara", "map", "jebara")):
        target = linear_target(SoftmaxModel(3, curvature), X, y, PRIOR_SCALE)
        make = (regular_sampler(target, "mala", shape) if bound is None
                else firefly_sampler(target, "mala", bound, shape, softmax_bound=curvature))
        rows[name] = run(target, make, args)
    mala = ("MALA preconditioned by the Laplace covariance" if shape == "laplace"
            else "plain MALA, as the paper")
    report(f"Softmax regression, MNIST digits 0/1/2, {X.shape[0]:,} rows x "
           f"{3 * (X.shape[1] + 1)} weights ({mala}, {args.chains} chains x "
           f"{args.iterations:,} iterations; paper: 3-class CIFAR-10)", rows,
           {"regular MCMC": ("18,000", "8.0", "1"), "untuned Firefly": ("8,058", "4.2", "1.1"),
            "MAP-tuned Firefly, Bohning": ("654", "1.9", "11"),
            "MAP-tuned Firefly, Jebara": ("-", "-", "-")},
           key="softmax" if shape == "laplace" else "softmax, plain MALA")


if __name__ == "__main__":
    main()

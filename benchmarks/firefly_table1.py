"""Firefly Monte Carlo, the paper's Table 1 (Maclaurin and Adams 2014) on real MNIST:

1. Logistic regression, MNIST 7 vs 9, 50 principal components + bias (12,214 rows),
   random-walk Metropolis-Hastings: regular MCMC, untuned Firefly (xi = 1.5), MAP-tuned
   Firefly.
2. Softmax regression with MALA on three MNIST digits (0, 1, 2; 50 components + bias per
   class), in place of the paper's 3-class CIFAR-10 features. MAP-tuned Firefly runs with
   both softmax bounds: Bohning's (the paper's) and Jebara-Choromanska's (the default).

Columns: likelihood queries per iteration, effective samples per 1,000 iterations (ArviZ
bulk ESS, mean over the parameters), and the speed-up in effective samples per query and
per second of wall time, relative to regular MCMC. Regular MCMC runs the same update, the
same preconditioner (the Laplace covariance at the MAP) and the same burn-in tuning,
through the same kernel with every point queried.

    python benchmarks/firefly_table1.py [--iterations 20000] [--burnin 3000] [--chains 2]
                                        [--models logistic softmax]
"""
import argparse
import numpy as np

from skbayes_mh._firefly import logistic_problem, softmax_problem
from skbayes_mh._kernels.priors import GAUSSIAN
from skbayes_mh.acceptance import Firefly
from skbayes_mh.datasets import mnist_pca_digits, mnist_pca_pair
from skbayes_mh.models.logistic import logistic_map
from skbayes_mh.models.softmax import softmax_map

from _common import firefly_report as report
from _common import firefly_row as run
from _common import shared_data

PRIOR_SCALE = 1 / np.sqrt(10)  # precision 10 on every weight, as in the reference run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=20_000)
    parser.add_argument("--burnin", type=int, default=3_000)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--models", nargs="+", default=["logistic", "softmax"],
                        choices=["logistic", "softmax"])
    args = parser.parse_args()
    mnist = shared_data("mnist")
    if mnist is None:
        return

    if "logistic" in args.models:
        logistic_table(mnist, args)
    if "softmax" in args.models:
        softmax_table(mnist, args)


def logistic_table(mnist, args):
    X, y = mnist_pca_pair(mnist, (7, 9), 50)
    design = np.ascontiguousarray(np.column_stack([X, np.ones(len(X))]))
    y = y.astype(np.float64)
    scales = np.full(design.shape[1], PRIOR_SCALE)
    theta_map, covariance = logistic_map(design, y, scales)
    rows = {}
    for name, bound, regular in (("regular MCMC", "map", True), ("untuned Firefly", "untuned", False),
                                 ("MAP-tuned Firefly", "map", False)):
        problem = logistic_problem(design, y, GAUSSIAN, scales, 1.0, theta_map, covariance, bound)
        rows[name] = run(problem, Firefly(bound=bound, update="mh"), args, regular)
    report(f"Logistic regression, MNIST 7 vs 9, {design.shape[0]:,} rows x {design.shape[1]} "
           f"(random-walk MH, {args.chains} chains x {args.iterations:,} iterations)", rows,
           {"regular MCMC": ("12,214", "3.7", "1"), "untuned Firefly": ("6,252", "1.3", "0.7"),
            "MAP-tuned Firefly": ("207", "1.4", "22")})


def softmax_table(mnist, args):
    X, y = mnist_pca_digits(mnist, (0, 1, 2), 50)
    design = np.ascontiguousarray(np.column_stack([X, np.ones(len(X))]))
    y = y.astype(np.float64)
    scales = np.full(3 * design.shape[1], PRIOR_SCALE)
    theta_map, covariance = softmax_map(design, y, 3, scales)
    rows = {}
    for name, bound, curvature, regular in (
            ("regular MCMC", "map", "jebara", True),
            ("untuned Firefly", "untuned", "jebara", False),
            ("MAP-tuned Firefly, Bohning", "map", "bohning", False),
            ("MAP-tuned Firefly, Jebara", "map", "jebara", False)):
        problem = softmax_problem(design, y, 3, GAUSSIAN, scales, 1.0, theta_map, covariance,
                                  bound, curvature)
        firefly = Firefly(bound=bound, update="mala", softmax_bound=curvature)
        rows[name] = run(problem, firefly, args, regular)
    report(f"Softmax regression, MNIST digits 0/1/2, {design.shape[0]:,} rows x "
           f"{3 * design.shape[1]} weights (MALA, {args.chains} chains x {args.iterations:,} "
           f"iterations; paper: 3-class CIFAR-10)", rows,
           {"regular MCMC": ("18,000", "8.0", "1"), "untuned Firefly": ("8,058", "4.2", "1.1"),
            "MAP-tuned Firefly, Bohning": ("654", "1.9", "11"),
            "MAP-tuned Firefly, Jebara": ("-", "-", "-")})


if __name__ == "__main__":
    main()

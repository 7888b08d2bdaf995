"""Nanoseconds a row read by each acceptance test on a built-in linear model: the exact
test's full-data pass against the subsampling tests' minibatch rows (without and with
control variates), on a logistic regression of ``--rows`` x ``--features`` standard-normal
rows, random-walk chains started at the MAP, minibatches of ``--batch`` rows.

What it measures is the kernels' work per row (the linear predictors, the link, the proxy),
not the tests' statistics: the minibatch rows are read in random order, the full pass in
order with BLAS.

    python benchmarks/perf/row_cost.py [--rows 100000] [--features 10] [--batch 1000]
        [--iterations 3000]
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

from skbayes_mh.acceptance import ConfidenceSampler, Metropolis, MinibatchBarker
from skbayes_mh.models import LinearData, LogisticModel
from skbayes_mh.models._prior import GAUSSIAN, BuiltinPrior
from skbayes_mh.proposals import resolve_proposal
from skbayes_mh.sampling import MetropolisHastings, Shape, Target, control_variates, run_chain

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table


def logistic_target(n_rows, n_features, seed=0):
    """The full-data target (with its Laplace approximation) of a logistic regression."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, n_features))
    y = (rng.random(n_rows) < 1.0 / (1.0 + np.exp(-X @ rng.normal(0.0, 0.5, n_features))))
    data = LinearData(X, y.astype(np.float64), np.zeros(0), True)
    prior = BuiltinPrior(GAUSSIAN, np.ones(n_features + 1), None, n_outputs=1,
                         block=data.block, intercept=True)
    return Target.linear(LogisticModel(), data, prior, 1.0, True, lipschitz=True)


def ns_per_row(target, test, cv, iterations):
    """Wall nanoseconds a row read, and the rows read an iteration (the second of two runs:
    the first compiles)."""
    sd = np.sqrt(np.diag(target.covariance))
    for _ in range(2):
        sampler = MetropolisHastings(target, test, resolve_proposal("random_walk"),
                                     Shape(np.zeros((0, 0)), 0.3 * sd), 1.0, cv)
        start = time.perf_counter()
        chain = run_chain(sampler, target.mean.copy(), 5, 0, iterations)
        elapsed = time.perf_counter() - start
    rows = float(np.mean(chain.stats["n_data_read"]))
    return elapsed / iterations / rows * 1e9, rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--iterations", type=int, default=3000)
    args = parser.parse_args(argv)
    target = logistic_target(args.rows, args.features)
    cv, _ = control_variates(target)
    cases = [("metropolis (full pass)", Metropolis(), None, max(args.iterations // 10, 50)),
             ("minibatch Barker", MinibatchBarker(batch_size=args.batch), None,
              args.iterations),
             ("minibatch Barker + control variates", MinibatchBarker(batch_size=args.batch),
              cv, args.iterations),
             ("confidence", ConfidenceSampler(batch_size=args.batch), None,
              max(args.iterations // 10, 50))]
    rows = []
    for name, test, variates, iterations in cases:
        cost, read = ns_per_row(target, test, variates, iterations)
        rows.append([name, f"{read:,.0f}", f"{cost:.1f}"])
    print(f"logistic regression, {args.rows:,} rows x {args.features} features, random walk "
          f"at the MAP, minibatches of {args.batch:,}")
    table(rows, ["test", "rows read an iteration", "ns a row read"])


if __name__ == "__main__":
    main()

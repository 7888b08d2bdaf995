"""Nanoseconds a row read by each acceptance test on a built-in linear model: the exact
test's full-data pass against the subsampling tests' minibatch rows (without and with
control variates), on a logistic regression of ``--rows`` x ``--features`` standard-normal
rows, random-walk chains started at the MAP, minibatches of ``--batch`` rows.

What it measures is the kernels' work per row (the linear predictors, the link, the proxy),
not the tests' statistics: the minibatch rows are read in random order, the full pass in
order with BLAS.

With ``--dims``, a second table: the exact test's gradient passes on dense data by number of
features, against the logistic gradient through NumPy on one thread (two matrix-vector
products and a vectorised ``expit``). For each ``d``, one chain of
``MinibatchMHLogisticRegression`` with the Metropolis test and Hamiltonian paths runs 200 +
1,000 iterations on ``--dims-rows`` standard normal rows; its sampling time (the fit's less
its setup) over the rows it read gives nanoseconds a row, and a least-squares line over
``d`` splits them into a part per row (the link's ``exp`` and ``log1p``, its call, the row's
bookkeeping) and a part per row and feature (the two dot products).

    python benchmarks/perf/row_cost.py [--rows 100000] [--features 10] [--batch 1000]
        [--iterations 3000] [--dims 5,25,100,300] [--dims-rows 5000]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.special import expit
from threadpoolctl import threadpool_limits

from skbayes_mh import MinibatchMHLogisticRegression
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


#: Warm-up and kept iterations of the ``--dims`` chains.
DIMS_WARMUP, DIMS_DRAWS = 200, 1000


def gradient_pass_ns_per_row(X, y):
    """Nanoseconds of sampling a row read by one chain of the Metropolis test with
    Hamiltonian paths (the second fit: the first loads the kernels), and its full-data
    passes an iteration."""
    settings = dict(acceptance="metropolis", proposal="hmc", n_chains=1, n_jobs=1,
                    n_warmup=DIMS_WARMUP, n_draws=DIMS_DRAWS, thin=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one chain: no R-hat, and known
        MinibatchMHLogisticRegression(**settings).fit(X, y)
        started = time.perf_counter()
        fit = MinibatchMHLogisticRegression(**settings).fit(X, y)
        seconds = time.perf_counter() - started - fit.setup_time_
    iterations = DIMS_WARMUP + DIMS_DRAWS
    rows_read = np.asarray(fit.posterior_.sample_stats["rows_per_iteration"]).mean()
    return 1e9 * seconds / (rows_read * iterations), rows_read / X.shape[0]


def numpy_gradient_ns_per_row(X, y, repeats=300):
    """Nanoseconds a row of NumPy's logistic gradient on one thread (best of three)."""
    w = np.full(X.shape[1], 0.01)
    best = np.inf
    with threadpool_limits(1):
        for _ in range(3):
            started = time.perf_counter()
            for _ in range(repeats):
                X.T @ (y - expit(X @ w))
            best = min(best, time.perf_counter() - started)
    return 1e9 * best / (repeats * X.shape[0])


def gradient_pass_table(n_rows, dims):
    """Print the ``--dims`` table and the per-row and per-feature parts of a pass's cost."""
    rng = np.random.default_rng(0)
    rows, costs = [], []
    for d in dims:
        X = rng.standard_normal((n_rows, d))
        y = (rng.random(n_rows) < expit(X @ rng.normal(0.0, 1.0 / np.sqrt(d), d))) * 1.0
        ours, passes = gradient_pass_ns_per_row(X, y)
        reference = numpy_gradient_ns_per_row(X, y)
        costs.append(ours)
        rows.append([f"{n_rows:,} x {d}", f"{passes:.2f}", f"{ours:.1f}", f"{reference:.1f}",
                     f"{ours / reference:.2f}x"])
    print(f"\nthe exact test's gradient passes (Hamiltonian paths, one chain of "
          f"{DIMS_WARMUP} + {DIMS_DRAWS} iterations) against NumPy's logistic gradient")
    table(rows, ["rows x features", "passes/iter", "chain ns/row", "NumPy gradient ns/row",
                 "chain / NumPy"])
    if len(dims) > 1:
        per_feature, per_row = np.polyfit(dims, costs, 1)
        print(f"chain: {per_row:.1f} ns a row + {per_feature:.2f} ns a row and feature")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--iterations", type=int, default=3000)
    parser.add_argument("--dims", default=None,
                        help="comma-separated feature counts for the gradient-pass table")
    parser.add_argument("--dims-rows", type=int, default=5000)
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
    if args.dims:
        gradient_pass_table(args.dims_rows, [int(d) for d in args.dims.split(",")])


if __name__ == "__main__":
    main()

"""Negative-binomial regression near the Poisson limit: default fits on tall count data
whose dispersion ``alpha`` is 0 (Poisson counts), small or large.

Near the limit the posterior of ``log alpha`` has a long left tail (the prior's: each row's
likelihood hardly changes as ``alpha`` goes to 0). The subsampling tests' control variates
read the dispersion through quadratic proxies; this prints what a default fit costs there:
its wall time (setup included), iterations and rows read a chain iteration, the largest
R-hat, the smallest bulk and tail ESS (every parameter; the dispersion's apart) and the
smallest tail ESS a second, with the exact test's fit (``acceptance="metropolis"``) beside
it up to ``--exact-max-rows``.

Data: 10 standard-normal features, weights evenly from -0.3 to 0.3, intercept 0.5 (mean
count about 1.8); counts Poisson, or negative binomial with dispersion ``alpha`` (a Gamma
mixture of Poissons). Two cores, ``random_state`` 0 to ``--seeds`` - 1.

    python benchmarks/perf/dispersion_tail.py [--rows 10000,100000,1000000]
        [--alphas 0,0.02,0.5] [--seeds 2] [--exact-max-rows 100000] [--max-time 300]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from skbayes_mh import NegativeBinomialRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table


def counts(n_rows, alpha, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 10))
    mean = np.exp(X @ np.linspace(-0.3, 0.3, 10) + 0.5)
    if alpha > 0:
        mean = mean * rng.gamma(1.0 / alpha, alpha, size=n_rows)
    return X, rng.poisson(mean)


def fit_row(X, y, alpha, seed, acceptance, max_time):
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = NegativeBinomialRegression(acceptance=acceptance, max_time=max_time,
                                           random_state=seed).fit(X, y)
    seconds = time.perf_counter() - start
    diagnostics = model.diagnostics_
    bulk = min(float(np.min(v)) for v in diagnostics["ess_bulk"].values())
    tail = min(float(np.min(v)) for v in diagnostics["ess_tail"].values())
    r_hat = max(float(np.max(v)) for v in diagnostics["r_hat"].values())
    iterations = float(np.mean(model.n_iter_))
    read = float(np.mean(model.posterior_.sample_stats["rows_per_iteration"]))
    warned = any("converge" in str(w.message) for w in caught)
    return [f"{X.shape[0]:,}", f"{alpha:g}", str(seed), model.acceptance_.__class__.__name__,
            f"{seconds:.2f}", f"{iterations:.0f}", f"{read:,.0f}", f"{r_hat:.3f}",
            f"{bulk:.0f}", f"{tail:.0f}",
            f"{float(np.min(diagnostics['ess_tail']['dispersion'])):.0f}",
            f"{tail / seconds:.0f}", f"{model.dispersion_:.4f}", "yes" if warned else "no"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="10000,100000,1000000")
    parser.add_argument("--alphas", default="0,0.02,0.5")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--exact-max-rows", type=int, default=100_000)
    parser.add_argument("--max-time", type=float, default=300.0,
                        help="each fit's max_time (seconds): a fit stopped there warns")
    args = parser.parse_args()
    rows = []
    for n_rows in (int(float(n)) for n in args.rows.split(",")):
        for alpha in (float(a) for a in args.alphas.split(",")):
            X, y = counts(n_rows, alpha)
            for seed in range(args.seeds):
                rows.append(fit_row(X, y, alpha, seed, "auto", args.max_time))
                print("  ".join(rows[-1]), file=sys.stderr, flush=True)
            if n_rows <= args.exact_max_rows:
                rows.append(fit_row(X, y, alpha, 0, "metropolis", args.max_time))
                print("  ".join(rows[-1]), file=sys.stderr, flush=True)
    table(rows, ["rows", "alpha", "seed", "test", "wall s", "iterations", "rows read/it",
                 "max R-hat", "min bulk", "min tail", "tail alpha", "tail ESS/s",
                 "mean alpha", "warned"])


if __name__ == "__main__":
    main()

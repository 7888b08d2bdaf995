"""Build the long reference posterior of correlated group intercepts and slopes for
``tests/estimators/test_group_effects.py``: the logistic model of ``grouped_slopes()`` (360
rows, 6 groups, one feature, no intercept; ``theta = [w, a_1..a_6, b_1..b_6, log sd_a, log
sd_b, atanh(rho)]``, the estimator's layout) written here apart from the library, with the
bivariate normal's formula, sampled by a random-walk Metropolis chain written here too
(steps shaped by a short fit's covariance at ``2.38 / sqrt(d)``), and summarised per
coordinate (mean, sd, Monte Carlo standard error, bulk ESS) into
``tests/estimators/data/grouped_slopes_reference.npz``.

    python benchmarks/paper/grouped_slopes_reference.py [--steps 5000000]

5,000,000 steps: about 40 s on one core, a bulk ESS of 60,000 or more on every coordinate.
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "estimators"), str(ROOT / "benchmarks")]
from test_group_effects import N_GROUPS, grouped_slopes  # noqa: E402  (the test's data)

from skbayes_mh import MinibatchMHLogisticRegression  # noqa: E402
from skbayes_mh.diagnostics import ess_bulk  # noqa: E402

OUTPUT = ROOT / "tests" / "estimators" / "data" / "grouped_slopes_reference.npz"


@numba.njit
def loglik(theta, rows):
    total = 0.0
    for i in range(rows.shape[0]):
        g = int(rows[i, 1])
        eta = (theta[0] + theta[1 + N_GROUPS + g]) * rows[i, 0] + theta[1 + g]
        total += rows[i, 2] * eta - max(eta, 0.0) - np.log1p(np.exp(-abs(eta)))
    return total


@numba.njit
def log_prior(theta):
    """``w ~ N(0, 1)``; ``(a_g, b_g)`` bivariate normal of sds ``sd_a``, ``sd_b`` and
    correlation ``rho``; each sd ``HalfNormal(1)`` sampled as its log; ``rho`` under
    LKJ(2), ``p(rho) ~ 1 - rho^2``, sampled as ``atanh(rho)`` (Jacobian ``1 - rho^2``)."""
    log_sd_a, log_sd_b = theta[-3], theta[-2]
    sd_a, sd_b, rho = np.exp(log_sd_a), np.exp(log_sd_b), np.tanh(theta[-1])
    one_minus = 1.0 - rho * rho
    total = (-0.5 * theta[0] ** 2 + log_sd_a - 0.5 * sd_a**2 + log_sd_b - 0.5 * sd_b**2
             + 2.0 * np.log(one_minus))
    for g in range(N_GROUPS):
        a, b = theta[1 + g] / sd_a, theta[1 + N_GROUPS + g] / sd_b
        total += (-0.5 * (a * a - 2.0 * rho * a * b + b * b) / one_minus
                  - 0.5 * np.log(one_minus) - log_sd_a - log_sd_b)
    return total


@numba.njit
def random_walk(rows, start, factor, n_steps, thin, seed):
    """Every ``thin``-th draw of a random-walk Metropolis chain, steps ``factor @ N(0, I)``."""
    np.random.seed(seed)
    theta = start.copy()
    current = log_prior(theta) + loglik(theta, rows)
    out = np.empty((n_steps // thin, start.size))
    for step in range(n_steps):
        proposal = theta + factor @ np.random.standard_normal(start.size)
        value = log_prior(proposal) + loglik(proposal, rows)
        if np.log(np.random.random()) < value - current:
            theta, current = proposal, value
        if step % thin == thin - 1:
            out[step // thin] = theta
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5_000_000)
    args = parser.parse_args()
    X, y, rows = grouped_slopes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pilot = MinibatchMHLogisticRegression(
            group_effects={1: [0]}, autoscale=False, fit_intercept=False, n_draws=1000,
            n_chains=4, random_state=2).fit(X, y)
    draws = pilot._theta_draws().reshape(-1, 2 * N_GROUPS + 4)
    factor = np.linalg.cholesky(np.cov(draws.T)) * 2.38 / np.sqrt(draws.shape[1])
    start = time.perf_counter()
    chain = random_walk(rows, draws.mean(axis=0), factor, args.steps, 10, 1)
    seconds = time.perf_counter() - start
    ess = ess_bulk(chain[None])
    sd = chain.std(axis=0)
    OUTPUT.parent.mkdir(exist_ok=True)
    np.savez(OUTPUT, mean=chain.mean(axis=0), sd=sd, mcse=sd / np.sqrt(ess), ess=ess,
             steps=args.steps)
    print(f"{args.steps:,} steps in {seconds:.1f} s; bulk ESS {ess.min():,.0f} to "
          f"{ess.max():,.0f}; written to {OUTPUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

"""Build the long exact reference posterior for MNIST 7 vs 9 (50 principal components plus
a bias, 12,214 rows, Gaussian prior with precision 10 on every weight): exact Metropolis
chains with the random walk in the Laplace shape (a proposal none of the checked runs
uses), summarised per weight (mean, sd and the Monte Carlo standard errors of both, bulk
ESS) and saved to ``tests/integration/data/mnist79_pca50_reference.npz`` for
``tests/integration/test_mnist_exactness.py`` and ``benchmarks/paper/mnist79_exactness.py``.

The default, 4 chains of 2,500,000 iterations (about 25 minutes on two cores), gives every
weight a bulk ESS of tens of thousands: small enough an error that runs of a few thousand
effective draws can see a 0.1 sd shift of a mean and a 10% error of an sd
(``tests/_stats.py``).

    python benchmarks/paper/mnist79_reference.py [--iterations 2500000] [--chains 4]
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh.datasets import mnist_pca_pair
from skbayes_mh.diagnostics import mcse_mean, mcse_sd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import shared_data

OUTPUT = (Path(__file__).resolve().parents[2] / "tests" / "integration" / "data"
          / "mnist79_pca50_reference.npz")
PRIOR_SCALE = 1 / np.sqrt(10)  # precision 10


def weights(clf):
    """(n_chains, n_draws, 51): the 50 weights and the bias."""
    return np.concatenate([clf.posterior_["coef"], clf.posterior_["intercept"][..., None]], axis=-1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=2_500_000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--thin", type=int, default=50)
    args = parser.parse_args()
    mnist = shared_data("mnist")
    if mnist is None:
        return
    import arviz

    X, y = mnist_pca_pair(mnist, (7, 9), 50)
    start = time.perf_counter()
    clf = MinibatchMHLogisticRegression(
        acceptance="metropolis", proposal="random_walk", prior_scale=PRIOR_SCALE, autoscale=False,
        intercept_prior_scale=PRIOR_SCALE,
        n_draws=args.iterations // args.thin, thin=args.thin, n_warmup=20_000,
        n_chains=args.chains, n_jobs=-1, random_state=2024).fit(X, y)
    seconds = time.perf_counter() - start
    draws = weights(clf)
    summary = arviz.summary(arviz.from_dict(posterior={"w": draws}), kind="all")
    mean = draws.mean(axis=(0, 1))
    sd = draws.std(axis=(0, 1))
    # The sd's error as tests/_stats.py charges a run's: the larger of mcse_sd and the
    # delta method on the squared deviations' own autocorrelation.
    sd_error = np.maximum(mcse_sd(draws), mcse_mean((draws - mean) ** 2) / (2 * sd))
    np.savez(OUTPUT, mean=mean, sd=sd, mcse=mcse_mean(draws), mcse_sd=sd_error,
             ess=summary["ess_bulk"].to_numpy(), iterations=args.iterations * args.chains)
    print(f"{args.chains} chains x {args.iterations:,} exact Metropolis iterations in "
          f"{seconds:.0f} s; acceptance {clf.acceptance_rate_:.3f}")
    print(f"bulk ESS min/median {summary['ess_bulk'].min():.0f}/{summary['ess_bulk'].median():.0f}, "
          f"R-hat max {summary['r_hat'].max():.3f}, "
          f"MCSE/sd max {np.max(mcse_mean(draws) / sd):.4f}, sd error/sd max "
          f"{np.max(sd_error / sd):.4f}")
    print(f"saved {OUTPUT}")


if __name__ == "__main__":
    main()

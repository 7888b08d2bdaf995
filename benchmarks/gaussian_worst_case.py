"""The worst-case Gaussian example of Seita et al. (Section 2.2): x_i ~ N(0.5, 1), a flat
prior and the random-walk proposal N(theta, 1/N). The posterior is N(mean(x), 1/N), and
every test must recover it; the table prints the average minibatch size.

    python benchmarks/gaussian_worst_case.py [--n-data 10000] [--samples 50000]
"""
import argparse

import numpy as np
import numba

from skbayes_mh import sample
from skbayes_mh.acceptance import ACCEPTANCE_TESTS

from _common import table


@numba.njit(cache=True)
def gaussian_mean_loglik(theta, data, i):
    return -0.5 * (data[i, 0] - theta[0]) ** 2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n-data", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=50_000)
    args = parser.parse_args()
    x = np.random.default_rng(0).normal(0.5, 1.0, size=(args.n_data, 1))
    exact_mean, exact_sd = x.mean(), 1 / np.sqrt(args.n_data)
    rows = []
    for name in ACCEPTANCE_TESTS:
        result = sample(gaussian_mean_loglik, x, [exact_mean], step_size=exact_sd,
                        acceptance=name, n_samples=args.samples, n_burnin=1000, random_state=1)
        draws = result.draws[:, 0]
        rows.append([name, f"{result.acceptance_rate:.3f}", f"{result.mean_data_read:,.1f}",
                     f"{(draws.mean() - exact_mean) / exact_sd:+.3f}",
                     f"{draws.std() / exact_sd:.3f}", f"{result.seconds:.2f}"])
    print(f"N = {args.n_data:,}, proposal sd 1/sqrt(N), {args.samples:,} samples\n")
    table(rows, ["test", "accept", "rows/test", "(mean - exact)/sd", "sd/exact sd", "seconds"])


if __name__ == "__main__":
    main()

"""The worst-case Gaussian example of Seita et al. (Section 2.2): x_i ~ N(0.5, 1), a flat
prior and the random-walk proposal N(theta, 1/N). The posterior is N(mean(x), 1/N), and
every test must recover it; the table prints the average minibatch size.

The confidence sampler needs a per-datum Lipschitz constant of the log-likelihood in
theta. ``-(x_i - theta)^2 / 2`` has none globally, but ``|x_i - theta| <= max|x| + B`` while
``|theta| <= B``; with ``B = |mean(x)| + 1`` (100 posterior sds at N = 10^4) the box holds
every draw, which the script checks. Firefly needs a collapsible bound that a user
log-likelihood does not provide, so its row says so. A test that fails prints its error in
its row; the other rows are kept.

    python benchmarks/paper/gaussian_worst_case.py [--n-data 10000] [--samples 50000]
"""
import argparse
import sys
from pathlib import Path

import numba
import numpy as np

from skbayes_mh import sample
from skbayes_mh.acceptance import ACCEPTANCE_TESTS, ConfidenceSampler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
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
    box = abs(exact_mean) + 1.0
    tests = dict(ACCEPTANCE_TESTS)
    tests["confidence"] = lambda: ConfidenceSampler(lipschitz=float(np.abs(x).max() + box))
    rows = []
    for name, make in tests.items():
        if name == "firefly":
            rows.append([name, "-", "-", "-", "-", "-", "needs a model with a collapsible bound"])
            continue
        try:
            result = sample(gaussian_mean_loglik, x, [exact_mean], step_size=exact_sd,
                            acceptance=make(), n_draws=args.samples, n_warmup=1000,
                            random_state=1)
        except (ValueError, TypeError) as error:
            rows.append([name, "-", "-", "-", "-", "-", f"error: {error}"])
            continue
        draws = result.draws[:, 0]
        note = ""
        if name == "confidence" and np.abs(draws).max() > box:
            note = "a draw left the Lipschitz box: the bound did not hold"
        rows.append([name, f"{result.acceptance_rate:.3f}", f"{result.mean_data_read:,.1f}",
                     f"{(draws.mean() - exact_mean) / exact_sd:+.3f}",
                     f"{draws.std() / exact_sd:.3f}", f"{result.seconds:.2f}", note])
    print(f"N = {args.n_data:,}, proposal sd 1/sqrt(N), {args.samples:,} samples\n")
    table(rows, ["test", "accept", "rows/test", "(mean - exact)/sd", "sd/exact sd", "seconds",
                 "note"])


if __name__ == "__main__":
    main()

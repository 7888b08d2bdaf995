"""Why the confidence sampler reads more rows than Seita et al.'s Table 2: the range bound.

Bardenet, Doucet and Holmes' test needs the range ``C`` of the rows' log-likelihood ratios
``lambda_i``. skbayes_mh's ``ConfidenceSampler`` takes it from the model's per-datum
Lipschitz constant, ``C = 2 L |theta' - theta| / K``, without reading the data. Seita et
al.'s code computes every row's ratio at every iteration, for the exact range and the
full-data sd, and does not count those rows in its figures.

This script compares the rows per test of four variants on the *same* tests: one exact
Metropolis-Hastings chain (random walk, the Table 2 settings) supplies each iteration's
``(theta, theta', u)`` and one random row order, and every variant decides that test:

- ``ours``: the Bernstein-Serfling bound of skbayes_mh with the Lipschitz range;
- ``ours, exact range``: the same bound with ``max_i lambda_i - min_i lambda_i`` over all
  N rows (a scan not counted, as in the paper);
- ``BDH 2014, exact range``: the bound of Bardenet et al. (2014),
  ``sd sqrt(2 log(3/delta_t) / t) + 6 C log(3/delta_t) / t`` with ``C = max_i |lambda_i|``;
- ``paper's code``: as the previous, with the sd of all N rows, a first round at
  ``delta / 8``, and a stop (deciding without the guarantee) one batch before N.

Each line also counts the decisions that differ from the exact test's. In NumPy (every
row's ratio is computed each iteration, as the paper's code does), on the mixture of
Gaussians (always) and MNIST-13k (when ``../shared/data/mnist`` is beside the checkout).

    python benchmarks/paper/confidence_range.py [--iterations 1000] [--json PATH]
"""
import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import log_expit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import FIGURES, json_option, mnist13k, save_figures, table
from _mixture import COMPONENT_VARIANCE, PRIOR_VARIANCES, make_mixture_data, mixture_lipschitz

#: The Bernstein-Serfling bound's constant (Bardenet and Maillard 2015), as in the library.
KAPPA = 7.0 / 3.0 + 3.0 / math.sqrt(2.0)
DELTA, P = 0.01, 2.0
PAPER = {"mixture": 67_508, "MNIST-13k": 10_783.4}


def batch_schedule(first, gamma, n_rows):
    sizes = [min(first, n_rows)]
    while sizes[-1] < n_rows:
        sizes.append(min(n_rows, max(sizes[-1] + 1, math.ceil(gamma * sizes[-1]))))
    return sizes


def bernstein_serfling(n, n_rows, sd, value_range, delta):
    """Our half-width: sd sqrt(2 rho log(10/delta) / n) + kappa C log(10/delta) / n."""
    rho = 1 - (n - 1) / n_rows if n <= n_rows / 2 else (1 - n / n_rows) * (1 + 1 / n)
    log_term = math.log(10 / delta)
    return sd * math.sqrt(2 * rho * log_term / n) + KAPPA * value_range * log_term / n


def bdh2014(n, n_rows, sd, value_range, delta):
    """Bardenet, Doucet and Holmes (2014): sd sqrt(2 log(3/delta) / n) + 6 C log(3/delta) / n."""
    log_term = math.log(3 / delta)
    return sd * math.sqrt(2 * log_term / n) + 6 * value_range * log_term / n


VARIANTS = {
    "ours (Lipschitz range)": dict(bound=bernstein_serfling, range="lipschitz"),
    "ours, exact range": dict(bound=bernstein_serfling, range="exact"),
    "BDH 2014, exact range": dict(bound=bdh2014, range="largest"),
    "paper's code": dict(bound=bdh2014, range="largest", full_sd=True, first_round=2,
                         stop_before_all=True),
}


def decide(variant, sizes, sums, squares, psi, ranges, full_sd):
    """(rows read, accepted) of one variant on one test."""
    n_rows = sizes[-1]
    for k, n in enumerate(sizes, start=variant.get("first_round", 1)):
        mean = sums[n - 1] / n
        if n == n_rows:
            return n, mean > psi
        sd = full_sd if variant.get("full_sd") else math.sqrt(
            max(squares[n - 1] / n - mean * mean, 0.0))
        delta_k = DELTA * (P - 1) / (P * k**P)
        if abs(mean - psi) >= variant["bound"](n, n_rows, sd, ranges[variant["range"]],
                                               delta_k):
            return n, mean > psi
        following = k - variant.get("first_round", 1) + 1
        if variant.get("stop_before_all") and sizes[following] >= n_rows:
            return n, mean > psi
    raise AssertionError("the last batch holds every row")


def compare(loglik, log_prior, theta, step, temperature, lipschitz, sizes, n_iterations,
            seed=0):
    """Run the exact chain and every variant on its tests: per variant, the rows per test,
    the share of tests that read all rows, and the decisions unlike the exact test's; and
    the median of the Lipschitz range over the exact one."""
    rng = np.random.default_rng(seed)
    n_rows = sizes[-1]
    current = loglik(theta)
    rows = {name: [] for name in VARIANTS}
    wrong = dict.fromkeys(VARIANTS, 0)
    looseness = []
    for _ in range(n_iterations):
        proposal = theta + step * rng.standard_normal(theta.size)
        proposed = loglik(proposal)
        ratios = (proposed - current) / temperature
        psi = (math.log(rng.random()) - (log_prior(proposal) - log_prior(theta))) / n_rows
        exact = ratios.mean() > psi
        shuffled = ratios[rng.permutation(n_rows)]
        sums, squares = np.cumsum(shuffled), np.cumsum(shuffled * shuffled)
        ranges = {"lipschitz": 2 * lipschitz * np.linalg.norm(proposal - theta) / temperature,
                  "exact": ratios.max() - ratios.min(), "largest": np.abs(ratios).max()}
        looseness.append(ranges["lipschitz"] / ranges["exact"])
        full_sd = ratios.std()
        for name, variant in VARIANTS.items():
            n, accepted = decide(variant, sizes, sums, squares, psi, ranges, full_sd)
            rows[name].append(n)
            wrong[name] += accepted != exact
        if exact:
            theta, current = proposal, proposed
    return ({name: (float(np.mean(r)), float(np.mean(np.array(r) == n_rows)), wrong[name])
             for name, r in rows.items()}, float(np.median(looseness)))


def mixture(n_iterations):
    """Table 2's mixture: 10^6 rows, temperature 10,000, sd 0.15, batch 50, gamma 1.5."""
    x = make_mixture_data(1_000_000, random_state=0)[:, 0]
    scale = 0.5 / COMPONENT_VARIANCE

    def loglik(theta):
        return np.logaddexp(-scale * (x - theta[0]) ** 2,
                            -scale * (x - theta[0] - theta[1]) ** 2)

    def log_prior(theta):
        return -0.5 * (theta[0] ** 2 / PRIOR_VARIANCES[0] + theta[1] ** 2 / PRIOR_VARIANCES[1])

    lipschitz = mixture_lipschitz(x[:, None], box=4.0)
    return compare(loglik, log_prior, np.array([0.0, 1.0]), 0.15, 10_000.0, lipschitz,
                   batch_schedule(50, 1.5, x.size), n_iterations)


def mnist(n_iterations):
    """Table 2's MNIST-13k: 1 vs 7, temperature 100, sd 0.05, flat prior, batch 100, gamma 2."""
    loaded = mnist13k()
    if loaded is None:
        return None
    data = loaded[0]
    X, positive = data[:, :-1], data[:, -1] == 1

    def loglik(theta):
        margin = X @ theta
        return np.where(positive, log_expit(margin), log_expit(-margin))

    lipschitz = float(np.sqrt((X * X).sum(axis=1).max()))
    return compare(loglik, lambda theta: 0.0, np.zeros(X.shape[1]), 0.05, 100.0, lipschitz,
                   batch_schedule(100, 2.0, X.shape[0]), n_iterations)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=1000)
    json_option(parser)
    args = parser.parse_args()
    for name, run in (("mixture", mixture), ("MNIST-13k", mnist)):
        start = time.perf_counter()
        result = run(args.iterations)
        if result is None:
            print(f"\n{name}: skipped (no MNIST in ../shared/data/mnist beside the checkout)")
            continue
        rows, looseness = result
        print(f"\n{name}: {args.iterations:,} tests along one exact chain "
              f"({time.perf_counter() - start:.0f} s); the Lipschitz range is {looseness:.1f} "
              f"times the exact one (median)")
        table([[variant, f"{mean:,.1f}", f"{mean / PAPER[name]:.2f}", f"{full:.3f}", wrong]
               for variant, (mean, full, wrong) in rows.items()],
              ["variant", "rows/test", f"/ paper's {PAPER[name]:,}", "read all", "wrong"])
        FIGURES[name] = {"rows_per_test": {v: mean for v, (mean, _, _) in rows.items()},
                         "lipschitz_over_exact_range": looseness}
    save_figures(args.json)


if __name__ == "__main__":
    main()

"""The mixture-of-Gaussians experiment of Seita et al. (Section 6.1, Table 1) with the
minibatch test: N = 1,000,000, temperature 10,000, random-walk sd 0.15 per coordinate,
3,000 samples, initial batch 50.

Prints the average minibatch size (paper: 172) over several chains, and the distance of
the sample histogram from the numerically integrated true posterior on a grid. The paper
writes the proposal as "covariance diag(0.15, 0.15)"; its batch sizes correspond to a
standard deviation of 0.15, which the second row (variance 0.15) makes visible.

    python benchmarks/paper/mixture_minibatch.py [--n-data 1000000] [--chains 5]
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

from skbayes_mh import sample
from skbayes_mh.acceptance import MinibatchBarker
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _mixture import (histogram_distances, make_mixture_data,
                                       mixture_log_prior, mixture_loglik, posterior_on_grid)

from _common import table

EDGES_1 = np.linspace(-1.5, 2.5, 41)
EDGES_2 = np.linspace(-3.0, 3.0, 61)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n-data", type=int, default=1_000_000)
    parser.add_argument("--temperature", type=float, default=10_000.0)
    parser.add_argument("--samples", type=int, default=3000)
    parser.add_argument("--chains", type=int, default=5)
    parser.add_argument("--exact", action="store_true",
                        help="also run one exact Metropolis chain (slow: every test reads all N rows)")
    args = parser.parse_args()
    data = make_mixture_data(args.n_data, random_state=0)
    start = time.perf_counter()
    truth = posterior_on_grid(data, EDGES_1, EDGES_2, args.temperature)
    print(f"N = {args.n_data:,}, temperature {args.temperature:,.0f}, {args.samples:,} samples "
          f"per chain, {args.chains} chains, batch 50; true posterior integrated on a "
          f"40 x 60 grid in {time.perf_counter() - start:.1f} s\n")
    rows = []
    for label, step in (("sd 0.15 (paper's setting)", 0.15),
                        ("variance 0.15 (sd 0.387)", np.sqrt(0.15))):
        sizes, distances, seconds, rates = [], [], [], []
        for chain in range(args.chains):
            result = sample(mixture_loglik, data, [0.0, 1.0], step_size=step,
                            log_prior=mixture_log_prior, acceptance=MinibatchBarker(batch_size=50),
                            n_draws=args.samples, n_warmup=500,
                            temperature=args.temperature, random_state=chain)
            sizes.append(result.mean_data_read)
            distances.append(histogram_distances(result.draws, EDGES_1, EDGES_2, truth))
            seconds.append(result.seconds)
            rates.append(result.acceptance_rate)
        rows.append([label, f"{np.mean(sizes):.1f} +/- {np.std(sizes):.1f}",
                     f"{np.mean(rates):.3f}",
                     f"{np.mean([d['total_variation'] for d in distances]):.3f}",
                     f"{np.mean([d['chi_squared'] for d in distances]):.0f}",
                     f"{np.mean([d['poisson_loglik'] for d in distances]):.0f}",
                     f"{np.mean(seconds):.2f}"])
    if args.exact:
        result = sample(mixture_loglik, data, [0.0, 1.0], step_size=0.15,
                        log_prior=mixture_log_prior, acceptance="metropolis",
                        n_draws=args.samples, n_warmup=500, temperature=args.temperature,
                        random_state=0)
        distance = histogram_distances(result.draws, EDGES_1, EDGES_2, truth)
        rows.append(["exact metropolis, sd 0.15", f"{result.mean_data_read:,.0f}",
                     f"{result.acceptance_rate:.3f}", f"{distance['total_variation']:.3f}",
                     f"{distance['chi_squared']:.0f}", f"{distance['poisson_loglik']:.0f}",
                     f"{result.seconds:.2f}"])
    table(rows, ["proposal", "rows/test", "accept", "TV to truth", "chi^2", "Poisson loglik",
                 "s/chain"])
    rng = np.random.default_rng(0)
    flat = truth.ravel()
    iid_tv = np.mean([0.5 * np.abs(rng.multinomial(args.samples, flat) / args.samples - flat).sum()
                      for _ in range(200)])
    print("\npaper: 172 rows per test (minibatch), 12,562 (austerity), 67,508 (confidence).")
    print(f"TV of {args.samples:,} i.i.d. draws from the true posterior on the same grid: "
          f"{iid_tv:.3f} (a chain's draws are correlated, so somewhat more is expected).")


if __name__ == "__main__":
    main()

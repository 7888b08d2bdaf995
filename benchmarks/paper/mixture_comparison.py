"""Table 1 and Table 4 of Seita et al. (Section 6.1): the mixture of Gaussians with the
three subsampling tests in the same engine. N = 1,000,000, temperature 10,000, random-walk
sd 0.15 per coordinate, 3,000 samples, initial batch 50; austerity epsilon 0.005, confidence
gamma 1.5, p 2, delta 0.01.

Prints the average minibatch size per test (paper: 172 / 12,562 / 67,508) and the Poisson
log-likelihood and chi-squared statistic of the sample histogram against the numerically
integrated true posterior (their Equation 39). The confidence sampler's range bound is the
mixture's Lipschitz constant on the box |theta_k| <= 4 (``_mixture.mixture_lipschitz``).
With matplotlib installed, the histograms of minibatch sizes are saved on log-log axes
(their Figure 2) to benchmarks/output/.

    python benchmarks/paper/mixture_comparison.py [--n-data 1000000] [--samples 3000]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

from skbayes_mh import sample
from skbayes_mh.acceptance import Austerity, ConfidenceSampler, MinibatchBarker
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _mixture import (histogram_distances, make_mixture_data, mixture_lipschitz,
                                       mixture_log_prior, mixture_loglik, posterior_on_grid)

from _common import FIGURES, json_option, pyplot, save_figures, table

EDGES_1 = np.linspace(-1.5, 2.5, 41)
EDGES_2 = np.linspace(-3.0, 3.0, 61)
OUTPUT = Path(__file__).resolve().parents[1] / "output"


def save_histograms(reads, path):
    plt = pyplot()
    if plt is None:
        return
    figure, axes = plt.subplots(1, len(reads), figsize=(4 * len(reads), 3.2))
    for ax, (name, n_read) in zip(axes, reads.items()):
        bins = np.logspace(np.log10(max(1, n_read.min())), np.log10(n_read.max() + 1), 30)
        ax.hist(n_read, bins=bins)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name)
        ax.set_xlabel("rows read per test")
    figure.tight_layout()
    path.parent.mkdir(exist_ok=True)
    figure.savefig(path, dpi=100)
    print(f"saved {path}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n-data", type=int, default=1_000_000)
    parser.add_argument("--temperature", type=float, default=10_000.0)
    parser.add_argument("--samples", type=int, default=3000)
    json_option(parser)
    args = parser.parse_args()
    data = make_mixture_data(args.n_data, random_state=0)
    truth = posterior_on_grid(data, EDGES_1, EDGES_2, args.temperature)
    tests = {
        "minibatch": MinibatchBarker(batch_size=50),
        "austerity": Austerity(epsilon=0.005, batch_size=50),
        "confidence": ConfidenceSampler(delta=0.01, gamma=1.5, p=2, batch_size=50,
                                        lipschitz=mixture_lipschitz(data, box=4.0)),
    }
    paper = {"minibatch": "172", "austerity": "12,562", "confidence": "67,508"}
    rows, reads = [], {}
    for name, test in tests.items():
        result = sample(mixture_loglik, data, [0.0, 1.0], step_size=0.15,
                        log_prior=mixture_log_prior, acceptance=test, n_draws=args.samples,
                        n_warmup=500, temperature=args.temperature, random_state=0)
        distance = histogram_distances(result.draws, EDGES_1, EDGES_2, truth)
        reads[name] = result.n_data_read
        FIGURES.setdefault("rows_per_test", {})[name] = result.mean_data_read
        rows.append([name, f"{result.mean_data_read:,.1f}", paper[name],
                     f"{result.acceptance_rate:.3f}", f"{distance['poisson_loglik']:.0f}",
                     f"{distance['chi_squared']:.0f}", f"{distance['total_variation']:.3f}",
                     f"{result.seconds:.1f}"])
    print(f"N = {args.n_data:,}, temperature {args.temperature:,.0f}, sd 0.15, "
          f"{args.samples:,} samples, first batch 50; grid 40 x 60\n")
    table(rows, ["test", "rows/test", "paper", "accept", "Poisson loglik", "chi^2", "TV", "seconds"])
    save_histograms(reads, OUTPUT / "mixture_minibatch_sizes.png")
    save_figures(args.json)


if __name__ == "__main__":
    main()

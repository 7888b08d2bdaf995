"""Wall time of the convergence diagnostics every fit computes (rank-normalised split R-hat,
bulk and tail ESS of every parameter: ``skbayes_mh.diagnostics.convergence_statistics``)
against arviz-stats' array functions (``rhat``, ``ess`` bulk and tail) in the same run, on
draws shaped as a wide fit's: four chains, a third of the draws repeating the one before
(rejected moves), independent otherwise.

Each row gives the shape (chains, draws, parameters), our time for every parameter, and
arviz-stats' per parameter (timed on ``--reference-params`` of them) scaled to all; their
ratio; and the largest relative difference of the three statistics on those parameters.

    python benchmarks/perf/diagnostics_time.py [--shapes 4:1000:7850,4:2000:20001]
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

from skbayes_mh.diagnostics import convergence_statistics

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table


def wide_fit_like(n_chains, n_draws, n_params, seed=0):
    """Independent normal draws, every third repeating the one before it."""
    draws = np.random.default_rng(seed).standard_normal((n_chains, n_draws, n_params))
    draws[:, 1::3] = draws[:, 0:n_draws - 1:3]
    return draws


def arviz_statistics(draws):
    """arviz-stats' R-hat, bulk ESS and tail ESS, parameter by parameter."""
    from arviz_stats.base import array_stats

    moved = np.moveaxis(draws, 2, 0)
    return (array_stats.rhat(moved, chain_axis=1, draw_axis=2),
            array_stats.ess(moved, chain_axis=1, draw_axis=2, method="bulk"),
            array_stats.ess(moved, chain_axis=1, draw_axis=2, method="tail",
                            prob=(0.05, 0.95)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="4:400:2000,4:1000:7850,4:2000:20001",
                        help="chains:draws:parameters, comma-separated")
    parser.add_argument("--reference-params", type=int, default=200)
    args = parser.parse_args()
    convergence_statistics(wide_fit_like(4, 40, 40))  # loads the rank kernel
    rows = []
    for shape in args.shapes.split(","):
        n_chains, n_draws, n_params = (int(v) for v in shape.split(":"))
        draws = wide_fit_like(n_chains, n_draws, n_params)
        start = time.perf_counter()
        ours = convergence_statistics(draws)
        seconds = time.perf_counter() - start
        k = min(n_params, args.reference_params)
        start = time.perf_counter()
        reference = arviz_statistics(draws[:, :, :k])
        reference_seconds = (time.perf_counter() - start) * n_params / k
        difference = max(float(np.max(np.abs(a[:k] / b - 1.0))) for a, b in zip(ours, reference))
        rows.append([f"{n_chains} x {n_draws:,} x {n_params:,}", f"{seconds:.2f}",
                     f"{reference_seconds:.1f}", f"{reference_seconds / seconds:.1f}",
                     f"{difference:.1e}"])
    table(rows, ["chains x draws x parameters", "ours s", "arviz-stats s (scaled)",
                 "ratio", "max relative difference"])


if __name__ == "__main__":
    main()

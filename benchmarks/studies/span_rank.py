"""What a better proposal shape buys a wide posterior sampled in the rows' span: MNIST's 300
training rows of ``benchmarks/peers/short_wide.py`` (784 raw pixels, ten classes: 2,700
sampled coordinates), fitted with the low-rank-plus-diagonal Laplace shape of the rank the
cost rule chooses (``_core.auto.choose_laplace``) and of larger ranks forced, at equal
iterations (two chains of ``--n-draws`` kept draws on one core each, ``n_jobs=1``).

A larger rank leaves the whitened posterior better conditioned, so the tuned leapfrog step
grows and a path takes fewer steps (fewer full-data passes an iteration); each step then
multiplies by more directions. Printed for each rank: wall seconds (setup included), setup
seconds, iterations a chain, full-data passes an iteration (the path's gradients and the
test's pass), the largest R-hat and the smallest bulk and tail ESS over the sampled
coordinates (``diagnostics_.sampled``), and the smallest bulk ESS a second.

    python benchmarks/studies/span_rank.py [--ranks 0,150,250] [--n-draws 300]

(rank 0: the cost rule's own.) Needs ``../shared/data/mnist``.
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from skbayes_mh import FireflySoftmaxClassifier
from skbayes_mh._core import auto
from skbayes_mh.datasets import load_mnist

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import shared_data, table


def mnist300():
    """The 300 training rows of ``short_wide.py``'s ``mnist300`` case, or None."""
    directory = shared_data("mnist")
    if directory is None:
        return None
    X, y = load_mnist(directory, "train")
    X = X.reshape(len(X), -1) / 255.0
    rows = np.random.default_rng(0).choice(len(X), 300, replace=False)
    return X[rows], y[rows]


def fit_with_rank(X, y, rank, n_draws):
    """A default fit (but two chains of ``n_draws`` on one core each) whose Laplace shape has
    ``rank`` directions (0: the cost rule's); the fit and the rank used."""
    rule = auto.low_rank_directions
    used = []

    def directions(*args):
        used.append(rank or rule(*args))
        return used[-1]

    auto.low_rank_directions = directions
    try:
        with warnings.catch_warnings():  # fixed draws: the ESS a fit wants is not the point
            warnings.simplefilter("ignore", ConvergenceWarning)
            started = time.perf_counter()
            fit = FireflySoftmaxClassifier(random_state=0, n_draws=n_draws, n_chains=2,
                                           n_jobs=1).fit(X, y)
            seconds = time.perf_counter() - started
    finally:
        auto.low_rank_directions = rule
    return fit, seconds, used[-1] if used else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", default="0,150,250")
    parser.add_argument("--n-draws", type=int, default=300)
    args = parser.parse_args()
    data = mnist300()
    if data is None:
        return
    X, y = data
    rows = []
    for rank in map(int, args.ranks.split(",")):
        fit, seconds, used = fit_with_rank(X, y, rank, args.n_draws)
        sampled = fit.diagnostics_["sampled"]
        passes = np.mean(fit.posterior_["rows_per_iteration"]) / len(X)
        bulk = float(np.min(sampled["ess_bulk"]))
        rows.append([f"{used}{'' if rank else ' (the rule)'}", f"{seconds:.2f}",
                     f"{fit.setup_time_:.2f}", int(fit.n_iter_[0]), f"{passes:.1f}",
                     f"{np.max(sampled['r_hat']):.4f}", f"{bulk:.0f}",
                     f"{np.min(sampled['ess_tail']):.0f}", f"{bulk / seconds:.1f}"])
        print(f"rank {used}: {seconds:.1f} s", file=sys.stderr, flush=True)
    table(rows, ["rank", "wall s", "setup s", "iterations a chain", "passes an iteration",
                 "max R-hat", "min bulk ESS", "min tail ESS", "min bulk ESS/s"])


if __name__ == "__main__":
    main()

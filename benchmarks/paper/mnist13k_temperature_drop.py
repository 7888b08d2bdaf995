"""Figure 3 (right) of Seita et al.: MNIST-13k (1s vs 7s, 784 raw pixels in [0, 1], no
intercept, flat prior) with the minibatch test, the temperature 100 during a burn-in of 400
draws, then 1 (``sample(temperature=[(0, 100.0), (400, 1.0)])``); random-walk standard
deviation 0.05 per coordinate, initial batch 100, as in Table 2's row.

Prints, per block of iterations and averaged over the trials, the rows each test read, the
acceptance rate and the training log-likelihood: at temperature 100 the tests decide on
about 125 rows (Table 2); at 1 every log-likelihood difference is 100 times larger, so the
tests read far more rows per decision and accept less.

    python benchmarks/paper/mnist13k_temperature_drop.py [--trials 5] [--after 1600] [--block 100]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

from skbayes_mh import sample
from skbayes_mh.acceptance import MinibatchBarker
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _user_models import logistic_loglik

from _common import FIGURES, json_option, mnist13k, save_figures, table

HOT, BURN_IN, STEP = 100.0, 400, 0.05


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--after", type=int, default=1600,
                        help="iterations at temperature 1 after the burn-in")
    parser.add_argument("--block", type=int, default=100)
    json_option(parser)
    args = parser.parse_args()
    loaded = mnist13k()
    if loaded is None:
        return
    data, _, _ = loaded
    X, y = data[:, :-1], data[:, -1]
    n_iter = BURN_IN + args.after
    print(f"MNIST 1 vs 7: {X.shape[0]:,} rows x {X.shape[1]} pixels; temperature {HOT:.0f} "
          f"for {BURN_IN} iterations, then 1 for {args.after:,}; step {STEP}, "
          f"{args.trials} trials\n")
    rows_read, accepted, loglik = [], [], []
    for trial in range(args.trials):
        result = sample(logistic_loglik, data, np.zeros(X.shape[1]), step_size=STEP,
                        acceptance=MinibatchBarker(), n_draws=n_iter,
                        temperature=[(0, HOT), (BURN_IN, 1.0)], random_state=trial)
        rows_read.append(result.n_data_read)
        accepted.append(result.accepted)
        eta = result.draws[::args.block] @ X.T
        loglik.append(np.sum(y * eta - np.logaddexp(0.0, eta), axis=1))
    rows_read, accepted = np.array(rows_read, float), np.array(accepted, float)
    loglik = np.array(loglik)
    lines = []
    for k, start in enumerate(range(0, n_iter, args.block)):
        block = slice(start, start + args.block)
        temperature = HOT if start < BURN_IN else 1.0
        lines.append([f"{start}-{min(start + args.block, n_iter) - 1}", f"{temperature:.0f}",
                      f"{rows_read[:, block].mean():,.1f}",
                      f"{rows_read[:, block].mean(axis=1).std():,.1f}",
                      f"{accepted[:, block].mean():.3f}", f"{loglik[:, k].mean():,.1f}"])
    table(lines, ["iterations", "temperature", "rows/test", "sd over trials", "accept",
                  "loglik at block start"])
    hot = rows_read[:, :BURN_IN].mean()
    cold = rows_read[:, BURN_IN + args.block:].mean()
    print(f"\nrows per test: {hot:,.1f} at temperature {HOT:.0f}, {cold:,.1f} at 1 after the "
          f"first block ({cold / hot:.1f}x), of {X.shape[0]:,}")
    FIGURES.update(rows_hot=float(hot), rows_cold=float(cold), cold_over_hot=float(cold / hot))
    save_figures(args.json)


if __name__ == "__main__":
    main()

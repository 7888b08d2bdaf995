"""What ``n_draws="auto"``'s targets cost on wide models, even for chains that mix
perfectly: the largest R-hat and the smallest ESS over ``d`` coordinates of independent
standard normal draws (4 chains), against the targets every coordinate must meet (R-hat at
most 1.01, bulk and tail ESS at least 100 a chain).

R-hat and the ESS are estimates: over many coordinates their extremes stray by chance, and
the rule stops only when the worst coordinate meets the targets. The table says how many
independent draws a chain needs for that at each ``d``; a sampler whose draws are less than
independent needs that many effective draws.

    python benchmarks/studies/rhat_multiplicity.py [--dims 1,10,100,1000,3000] [--repeats 5]
"""
import argparse
import sys
from pathlib import Path

import numpy as np

from skbayes_mh._core.convergence import MAX_RHAT, MIN_ESS_PER_CHAIN
from skbayes_mh.diagnostics import convergence_statistics

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table

N_CHAINS = 4
DRAWS_PER_CHAIN = (100, 150, 250, 400, 800)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dims", default="1,10,100,1000,3000")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    for d in map(int, args.dims.split(",")):
        for n in DRAWS_PER_CHAIN:
            worst_rhat, worst_ess, met = [], [], 0
            for _ in range(args.repeats):
                r_hat, bulk, tail = convergence_statistics(rng.standard_normal((N_CHAINS, n, d)))
                ess = float(np.minimum(bulk, tail).min()) / N_CHAINS
                worst_rhat.append(float(r_hat.max()))
                worst_ess.append(ess)
                met += r_hat.max() <= MAX_RHAT and ess >= MIN_ESS_PER_CHAIN
            rows.append([f"{d:,}", n, f"{np.mean(worst_rhat):.4f}", f"{np.mean(worst_ess):.0f}",
                         f"{met}/{args.repeats}"])
    print(f"{N_CHAINS} chains of independent N(0, 1) draws; means over {args.repeats} repeats")
    table(rows, ["coordinates", "draws a chain", "largest R-hat", "smallest ESS a chain",
                 f"targets met (R-hat <= {MAX_RHAT}, ESS >= {MIN_ESS_PER_CHAIN} a chain)"])


if __name__ == "__main__":
    main()

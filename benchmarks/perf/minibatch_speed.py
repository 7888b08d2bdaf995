"""Chain iterations per second of the minibatch test on logistic regression with MNIST
1-vs-7 shapes (13,007 x 784 pixels + label, temperature 100, random-walk sd 0.05, batch
100), next to the memory-bandwidth bound measured in the same run: the time to stream,
from memory, the same number of randomly chosen rows the tests read.

    python benchmarks/perf/minibatch_speed.py [--iterations 5000]
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

from skbayes_mh import sample
from skbayes_mh._kernels._jit import jit
from skbayes_mh.acceptance import MinibatchBarker
from skbayes_mh.datasets import mnist_pair
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _user_models import logistic_loglik

from _common import shared_data, table


@jit(fastmath=True)
def stream_random_rows(data, rows_per_iteration, seed):
    """Read ``rows_per_iteration[t]`` random whole rows for each t: the bandwidth bound.

    fastmath lets the row sums vectorise, so that memory, not the adder, limits the speed."""
    np.random.seed(seed)  # numba's own generator, used only by this measurement
    n, p = data.shape
    total = 0.0
    for t in range(rows_per_iteration.shape[0]):
        for _ in range(rows_per_iteration[t]):
            i = np.random.randint(0, n)
            for k in range(p):
                total += data[i, k]
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    mnist = shared_data("mnist")
    if mnist is not None:
        X, y = mnist_pair(mnist, (1, 7))
        source = "MNIST 1 vs 7"
    else:
        rng = np.random.default_rng(0)
        X = (rng.random((13_007, 784)) < 0.2) * rng.random((13_007, 784))
        y = rng.integers(0, 2, 13_007)
        source = "synthetic data of MNIST 1-vs-7 shape"
    data = np.ascontiguousarray(np.column_stack([X, y]), dtype=np.float64)
    theta0 = np.zeros(X.shape[1])
    test = MinibatchBarker(batch_size=100)
    settings = dict(step_size=0.05, acceptance=test, temperature=100.0)
    # Warm-up: compile (or load from cache) and move away from the start.
    warm = sample(logistic_loglik, data, theta0, n_draws=2000, random_state=0, **settings)
    stream_random_rows(data, warm.n_data_read[:10], 0)  # compile
    # Chain and bound are timed alternately, best of --repeats each, so that both see the
    # same machine state; each chain run starts from the same warmed-up state.
    chain_seconds, stream_seconds = np.inf, np.inf
    for repeat in range(args.repeats):
        result = sample(logistic_loglik, data, warm.draws[-1], n_draws=args.iterations,
                        random_state=1, **settings)
        chain_seconds = min(chain_seconds, result.seconds)
        start = time.perf_counter()
        stream_random_rows(data, result.n_data_read, repeat)
        stream_seconds = min(stream_seconds, time.perf_counter() - start)
    best = stream_seconds

    rows_read = int(result.n_data_read.sum())
    print(f"{source}: {data.shape[0]:,} rows x {data.shape[1]} columns, "
          f"{args.iterations:,} iterations, minibatch test (batch 100, sigma 1), "
          f"temperature 100, step 0.05\n")
    table([["minibatch chain", f"{args.iterations / chain_seconds:,.0f}",
            f"{result.mean_data_read:.1f}", f"{rows_read / chain_seconds / 1e6:.2f}",
            f"{chain_seconds:.3f}"],
           ["stream the same rows", f"{args.iterations / best:,.0f}", f"{result.mean_data_read:.1f}",
            f"{rows_read / best / 1e6:.2f}", f"{best:.3f}"]],
          ["", "iterations/s", "rows/test", "M rows/s", "seconds"])
    print(f"\nacceptance rate {result.acceptance_rate:.3f}; "
          f"chain speed = {best / chain_seconds:.0%} of the memory-bandwidth bound (goal >= 65%)")


if __name__ == "__main__":
    main()

"""The MNIST-13k and MNIST-100k rows of Table 2 of Seita et al.: logistic regression on
MNIST 1s vs 7s (784 raw pixels in [0, 1], no intercept, flat prior), temperature 100,
random-walk standard deviation 0.05 per coordinate, initial batch 100, 5,000 samples, 10
trials. ``--rows 100000`` adds deformed copies of the 13,007 training digits up to 100,000
rows (:func:`skbayes_mh.datasets.mnist_pair_augmented`: elastic distortions and shifts, a
stand-in for the paper's infinite-MNIST augmentation), and ``--steps 0.005,0.01,0.05``
runs the steps of the paper's Figure 6 on that set. The paper's MNIST-100k figures: 216.5
rows per test in Table 2 (proposal covariance 0.01 I, compared with our step 0.01), 2,215.6
at step 0.05 (appendix C.3) and 116.1 at 0.005 (Figure 6). With the step fixed, a test's rows grow as ``N^2``: the variance of the
minibatch estimate of a log-likelihood difference is ``N^2 s^2 / (b K^2)`` for rows whose
differences have variance ``s^2``, and the test needs it below ``sigma^2``.

Prints the average minibatch size per test (paper: 125.4 +/- 9.2) and the test accuracy
of the final draws, for the paper's test (batch 100, sigma = 1) and for sigma = 1.2, where
the correction distribution is still accurate to 2e-5 and the variance condition
s^2 < sigma^2 is met by batches about 1.44 times smaller; since no test reads fewer rows
than its first batch, the first batch is made smaller too. Then draws/s and rows read/s
against exact Metropolis in the same run. With matplotlib, it saves the histograms of the
rows each test read (the paper's Figure 4; first trial of each setting) to
``benchmarks/output/mnist_<rows>_minibatch_sizes.png``.

    python benchmarks/paper/mnist13k_table2.py [--trials 10] [--samples 5000] [--rows 100000]
        [--steps 0.005,0.01,0.05] [--tests paper]
"""
import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.special import expit

from skbayes_mh import sample
from skbayes_mh.acceptance import CorrectionDistribution, MinibatchBarker
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _user_models import logistic_loglik

from _common import FIGURES, json_option, mnist13k, mnist_augmented, pyplot, save_figures, table

TEMPERATURE = 100.0
STEP = 0.05
#: The paper's figures, as printed under the table.
PAPER_13K = "Table 2, MNIST-13k (step 0.05): 125.4 +/- 9.2 rows per test"
PAPER_100K = ("MNIST-100k: 216.5 rows per test at step 0.01 (Table 2, proposal covariance "
              "0.01 I), 2,215.6 at 0.05 (appendix C.3), 116.1 at 0.005 (Figure 6)")


def accuracy(draws, X, y):
    """Test accuracy of the predictive mean over ``draws`` (n, 784)."""
    return float(np.mean((expit(X @ draws.T).mean(axis=1) > 0.5) == y))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--rows", type=int, default=13_007,
                        help="training rows: above 13,007 (MNIST-13k), deformed copies fill up")
    parser.add_argument("--steps", default=str(STEP),
                        help="random-walk standard deviations, comma-separated")
    parser.add_argument("--tests", choices=("all", "paper"), default="all",
                        help="'paper': only the paper's test (batch 100, sigma 1)")
    json_option(parser)
    args = parser.parse_args()
    steps = [float(step) for step in args.steps.split(",")]
    loaded = mnist13k() if args.rows <= 13_007 else mnist_augmented(args.rows)
    if loaded is None:
        return
    data, X_test, y_test = loaded
    X = data[:, :-1]
    theta0 = np.zeros(X.shape[1])
    print(f"MNIST 1 vs 7: {X.shape[0]:,} training rows ({X.shape[0] - 13_007:,} deformed), "
          f"{X_test.shape[0]:,} test rows, {X.shape[1]} pixels; temperature "
          f"{TEMPERATURE:.0f}, steps {args.steps}, {args.samples:,} samples x {args.trials} "
          f"trials\n")
    tests = ((100, 1.0),) if args.tests == "paper" else ((100, 1.0), (100, 1.2), (75, 1.2),
                                                          (50, 1.2))
    rows, speed, first_trials = [], {}, {}
    for step in steps:
        for batch_size, sigma in tests:
            test = MinibatchBarker(batch_size=batch_size, sigma=sigma)
            name = f"batch {batch_size}, sigma {sigma:.2f}, step {step}"
            sizes, final_accuracy, last_accuracy, rates, per_second, rows_per_second = (
                [] for _ in range(6))
            for trial in range(args.trials):
                result = sample(logistic_loglik, data, theta0, step_size=step,
                                acceptance=test, temperature=TEMPERATURE,
                                n_draws=args.samples, random_state=trial)
                first_trials.setdefault(name, result)
                sizes.append(result.mean_data_read)
                final_accuracy.append(accuracy(result.draws[-1:], X_test, y_test))
                last_accuracy.append(accuracy(result.draws[-1000:], X_test, y_test))
                rates.append(result.acceptance_rate)
                per_second.append(args.samples / result.seconds)
                rows_per_second.append(result.n_data_read.sum() / result.seconds)
            rows.append([name, f"{CorrectionDistribution(sigma).sup_error:.1e}",
                         f"{np.mean(sizes):.1f} +/- {np.std(sizes):.1f}",
                         f"{np.mean(rates):.3f}",
                         f"{np.mean(final_accuracy):.4f} +/- {np.std(final_accuracy):.4f}",
                         f"{np.mean(last_accuracy):.4f} +/- {np.std(last_accuracy):.4f}"])
            speed[name] = (np.median(per_second), np.median(rows_per_second))
            FIGURES.setdefault("rows_per_test", {})[name] = float(np.mean(sizes))
            print(f"[{name}: done]", flush=True)
    table(rows, ["minibatch test", "correction error", "rows/test", "accept", "acc. final draw",
                 "acc. last 1000"])
    print(f"\npaper (batch 100, sigma = 1): {PAPER_13K if X.shape[0] <= 13_007 else PAPER_100K}")

    exact = sample(logistic_loglik, data, theta0, step_size=steps[0], acceptance="metropolis",
                   temperature=TEMPERATURE, n_draws=min(args.samples, 2000), random_state=0)
    speed[f"metropolis, step {steps[0]}"] = (exact.draws.shape[0] / exact.seconds,
                                             exact.n_data_read.sum() / exact.seconds)
    print()
    base = speed[f"metropolis, step {steps[0]}"][0]
    table([[name, f"{d:,.0f}", f"{r / 1e6:.2f}", f"{d / base:.1f}x"]
           for name, (d, r) in speed.items()],
          ["test", "draws/s", "M rows read/s", "draws/s vs metropolis"])
    save_histograms(first_trials, X.shape[0])
    save_figures(args.json)


def save_histograms(results, n_rows):
    """The rows each test read, one histogram per setting (the paper's Figure 4)."""
    plt = pyplot()
    if plt is None:
        return
    from matplotlib.ticker import NullFormatter
    from skbayes_mh.plotting import plot_minibatch_sizes

    figure, axes = plt.subplots(1, len(results), figsize=(4.5 * len(results), 3.4),
                                squeeze=False)
    for ax, (name, result) in zip(axes[0], results.items()):
        plot_minibatch_sizes(result, ax=ax)
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(name, fontsize=9)
    figure.suptitle(f"MNIST 1 vs 7, {n_rows:,} rows: rows read per test", fontsize=10)
    figure.tight_layout()
    path = Path(__file__).resolve().parents[1] / "output" / f"mnist_{n_rows}_minibatch_sizes.png"
    path.parent.mkdir(exist_ok=True)
    figure.savefig(path, dpi=100)
    print(f"saved {path}")


if __name__ == "__main__":
    main()

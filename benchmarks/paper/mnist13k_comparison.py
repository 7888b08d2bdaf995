"""Tables 2 and 5 of Seita et al. on MNIST-13k (1s vs 7s, 784 pixels in [0, 1], no intercept,
flat prior), with the three subsampling tests: random-walk sd 0.05 per coordinate,
temperature 100, 5,000 samples, first batch 100; austerity m = 450, epsilon = 0.01;
confidence gamma 2, p 2, delta 0.01, range bound from ``max_i ||x_i||`` (logistic
regression's Lipschitz constant).

Prints mean +/- sd over trials of the average minibatch size (paper: 125.4, 1924.3 for
conservative austerity, 10783.4 for the confidence sampler) and the test accuracy of the
running predictive mean against the cumulative data read. With matplotlib, saves the
minibatch-size histograms (their Figure 4) and accuracy against data read to
benchmarks/output/.

    python benchmarks/paper/mnist13k_comparison.py [--trials 5] [--samples 5000]
"""
import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.special import expit

from skbayes_mh import sample
from skbayes_mh.acceptance import Austerity, ConfidenceSampler, MinibatchBarker
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _user_models import logistic_lipschitz, logistic_loglik

from _common import FIGURES, json_option, mnist13k, pyplot, save_figures, table

OUTPUT = Path(__file__).resolve().parents[1] / "output"
CHECKPOINTS = (0.02, 0.1, 0.25, 0.5, 1.0)


def accuracy_curve(draws, n_read, X_test, y_test):
    """(cumulative rows read, accuracy of the running predictive mean) at CHECKPOINTS."""
    probabilities = expit(X_test @ draws.T)
    running = np.cumsum(probabilities, axis=1) / np.arange(1, draws.shape[0] + 1)
    cumulative = np.cumsum(n_read)
    ends = [max(1, int(f * draws.shape[0])) - 1 for f in CHECKPOINTS]
    return ([cumulative[e] for e in ends],
            [float(np.mean((running[:, e] > 0.5) == y_test)) for e in ends])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--samples", type=int, default=5000)
    json_option(parser)
    args = parser.parse_args()
    loaded = mnist13k()
    if loaded is None:
        return
    data, X_test, y_test = loaded
    X = data[:, :-1]
    tests = {
        "minibatch": MinibatchBarker(batch_size=100),
        "austerity": Austerity(epsilon=0.01, batch_size=450),
        "confidence": ConfidenceSampler(delta=0.01, gamma=2.0, p=2, batch_size=100,
                                        lipschitz=logistic_lipschitz(X)),
    }
    paper = {"minibatch": "125.4", "austerity": "1924.3 (conservative)", "confidence": "10783.4"}
    rows, curves, reads = [], {}, {}
    for name, test in tests.items():
        sizes, rates, finals = [], [], []
        for trial in range(args.trials):
            result = sample(logistic_loglik, data, np.zeros(X.shape[1]), step_size=0.05,
                            acceptance=test, temperature=100.0, n_draws=args.samples,
                            random_state=trial)
            sizes.append(result.mean_data_read)
            rates.append(result.acceptance_rate)
            cumulative, accuracy = accuracy_curve(result.draws, result.n_data_read, X_test, y_test)
            finals.append(accuracy[-1])
            if trial == 0:
                curves[name] = (cumulative, accuracy)
                reads[name] = result.n_data_read
        FIGURES.setdefault("rows_per_test", {})[name] = float(np.mean(sizes))
        rows.append([name, f"{np.mean(sizes):,.1f} +/- {np.std(sizes):,.1f}", paper[name],
                     f"{np.mean(rates):.3f}", f"{np.mean(finals):.4f} +/- {np.std(finals):.4f}"])
    print(f"MNIST 1 vs 7: {X.shape[0]:,} rows x {X.shape[1]} pixels, temperature 100, sd 0.05, "
          f"{args.samples:,} samples x {args.trials} trials\n")
    table(rows, ["test", "rows/test", "paper", "accept", "test accuracy (running mean)"])
    n_data = X.shape[0]
    conservative = Austerity.conservative(n_data, max_error=0.01)
    print(f"\nausterity worst-case decision error (random-walk model, N = {n_data:,}): "
          f"{tests['austerity'].worst_case_error(n_data):.3f} for m = 450, epsilon = 0.01; "
          f"the conservative design for 0.01 is m = {conservative.batch_size}, "
          f"epsilon = {conservative.epsilon:.2g}")
    print("\ntest accuracy of the running predictive mean against cumulative rows read (trial 0):")
    table([[name, *(f"{a:.4f} @ {c / 1e6:.2f}M" for c, a in zip(*curves[name]))] for name in tests],
          ["test", *(f"{int(f * 100)}% of draws" for f in CHECKPOINTS)])
    save_figures(args.json)
    plt = pyplot()
    if plt is None:
        return
    OUTPUT.mkdir(exist_ok=True)
    figure, axes = plt.subplots(1, 3, figsize=(12, 3.2))
    for ax, (name, n_read) in zip(axes, reads.items()):
        ax.hist(n_read, bins=np.logspace(np.log10(n_read.min()), np.log10(n_read.max() + 1), 30))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name)
        ax.set_xlabel("rows read per test")
    figure.tight_layout()
    figure.savefig(OUTPUT / "mnist13k_minibatch_sizes.png", dpi=100)
    figure, ax = plt.subplots(figsize=(5, 3.5))
    for name, (cumulative, accuracy) in curves.items():
        ax.plot(cumulative, accuracy, marker="o", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("cumulative rows read")
    ax.set_ylabel("test accuracy")
    ax.legend()
    figure.tight_layout()
    figure.savefig(OUTPUT / "mnist13k_accuracy_vs_data.png", dpi=100)
    print(f"saved figures to {OUTPUT}")


if __name__ == "__main__":
    main()

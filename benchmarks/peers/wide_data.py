"""Wide posteriors: scikit-learn's digits (10 classes, 1,347 training rows, the 61 pixels that
vary, standardised as autoscaling does: 585 parameters in the centred softmax, 620
over-parameterised) with ``FireflySoftmaxClassifier()`` defaults (and with ``n_jobs=1``),
against NumPyro NUTS in one run.

Both sample the same model: weights N(0, 1) on the standardised pixels, intercepts N(0, 10)
(our default ``autoscale=True`` prior on data that are standardised already: each pixel is
centred and divided by its autoscaling spread, its sd or, for the rare pixels, its largest
distance from the mean over ``AUTOSCALE_REACH``). Each row gives
wall time (setup and compilation included), the largest R-hat and the smallest bulk ESS over
the coefficients and intercepts centred over the classes (the quantities the likelihood
identifies; the peer's draws are centred the same way), min-ESS per second, data rows read
per iteration, test accuracy, and the mean squared difference of the test predictive
probabilities from the first NumPyro row's.

    python benchmarks/peers/wide_data.py [--peer-python PATH] [--peers nuts-diag,nuts-dense]
        [--peer-chains 2] [--mnist13k]

With ``--mnist13k`` (and MNIST beside the checkout, ``../shared/data``), a second table:
MNIST 1 vs 7 on its 784 raw pixels (13,007 training rows, 785 parameters) at temperature 1
with ``MinibatchMHLogisticRegression()`` defaults, ours only (the issue's target: R-hat at
most 1.01 and min bulk ESS at least 400 within two minutes).

The peers run in their own environment, never this project's: ``--peer-python`` (or
``SKBAYES_MH_PEER_PYTHON``) is a Python with NumPyro and ArviZ (see
``benchmarks/peers/peer_comparison.py``); without it only our row is printed. NUTS with a dense
mass matrix took 952 s and did not converge here (R-hat 2.42), so it runs only when named in
``--peers``.
"""
import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.special import softmax
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from skbayes_mh import FireflySoftmaxClassifier, MinibatchMHLogisticRegression
from skbayes_mh._passes import scan_data
from skbayes_mh.diagnostics import ess_bulk, rhat
from skbayes_mh.linear_model._priors import autoscale_spread

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import mnist13k, run_numpyro_peer, table



def digits():
    """Digits standardised as autoscaling does, the constant pixels dropped: train and test
    splits."""
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0, stratify=y)
    varying = X_train.std(axis=0) > 0
    X_train, X_test = X_train[:, varying], X_test[:, varying]
    summary = scan_data(X_train, y_train.astype(np.float64))
    mean, spread = summary["x_mean"], autoscale_spread(summary)
    return (X_train - mean) / spread, (X_test - mean) / spread, y_train, y_test


def summary(coef, intercept):
    """Largest R-hat and smallest bulk ESS over centred ``coef`` (chains, draws, K, D) and
    ``intercept`` (chains, draws, K)."""
    values = np.concatenate([coef.reshape(*coef.shape[:2], -1), intercept], axis=2)
    return float(np.max(rhat(values))), float(np.min(ess_bulk(values)))


def probabilities(coef, intercept, X):
    """Posterior-predictive class probabilities: the mean over draws of each draw's."""
    coef = coef.reshape(-1, *coef.shape[2:])
    intercept = intercept.reshape(-1, intercept.shape[-1])
    total = np.zeros((X.shape[0], coef.shape[1]))
    for w, b in zip(coef, intercept):
        total += softmax(X @ w.T + b, axis=1)
    return total / coef.shape[0]


def ours(X, X_test, y, y_test, **settings):
    clf = FireflySoftmaxClassifier(random_state=0, **settings)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X, y)
    wall = time.perf_counter() - start
    coef, intercept = clf.posterior_["coef"], clf.posterior_["intercept"]
    warned = any("converged" in str(w.message) for w in caught)
    name = (f"ours ({clf.acceptance_.name}, {clf.proposal_.name}, warm-up {int(clf.n_warmup_.min())}-{int(clf.n_warmup_.max())}, "
            f"thin {int(clf.thin_.max())}"
            + "".join(f", {k}={v}" for k, v in settings.items()) + ")"
            + (" [warned]" if warned else ""))
    rows = float(clf.posterior_["rows_per_iteration"].mean())
    return name, wall, coef, intercept, rows, clf.predict_proba(X_test)


def peer(python, X, y, dense, chains, workdir):
    data = Path(workdir) / "digits.npz"
    np.savez(data, X=X, y=y.astype(np.float64), prior_scale=1.0, intercept=1,
             intercept_prior_scale=10.0, n_classes=int(y.max()) + 1)
    found = run_numpyro_peer(python, data, "nuts", dense,
                             ["--chains", str(chains), "--warmup", "1000", "--samples", "1000"])
    if found is None:
        return None
    result, draws = found  # centred (chains, draws, K, D + 1), the intercept last
    return (f"NumPyro NUTS {'dense' if dense else 'diag'}, {chains} chains",
            result["wall_seconds"], draws[..., :-1], draws[..., -1],
            result.get("rows_per_iteration"))


def mnist_one_vs_seven():
    """A row for MNIST 1 vs 7 with the logistic regression's defaults (None without the
    data)."""
    loaded = mnist13k()
    if loaded is None:
        print("[MNIST not found beside the checkout (../shared/data): --mnist13k skipped]",
              file=sys.stderr)
        return None
    data, X_test, y_test = loaded
    print(f"\nMNIST 1 vs 7: {data.shape[0]:,} training rows x {data.shape[1] - 1} raw "
          f"pixels, temperature 1, MinibatchMHLogisticRegression() defaults; "
          f"{X_test.shape[0]:,} test rows\n")
    clf = MinibatchMHLogisticRegression(random_state=0)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(data[:, :-1], data[:, -1].astype(int))
    wall = time.perf_counter() - start
    warned = any("converged" in str(w.message) for w in caught)
    worst_rhat = max(float(np.max(v)) for v in clf.diagnostics_["r_hat"].values())
    min_ess = min(float(np.min(v)) for v in clf.diagnostics_["ess_bulk"].values())
    rows = float(clf.posterior_["rows_per_iteration"].mean())
    name = (f"ours ({clf.acceptance_.name}, {clf.proposal_.name}, warm-up {int(clf.n_warmup_.min())}-{int(clf.n_warmup_.max())}, "
            f"thin {int(clf.thin_.max())})" + (" [warned]" if warned else ""))
    return [name, f"{wall:.1f}", f"{worst_rhat:.4f}", f"{min_ess:.0f}",
            f"{min_ess / wall:.2f}", f"{rows:,.0f}", f"{clf.score(X_test, y_test):.4f}"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--peer-python", default=os.environ.get("SKBAYES_MH_PEER_PYTHON"))
    parser.add_argument("--peers", default="nuts-diag")
    parser.add_argument("--peer-chains", type=int, default=2)
    parser.add_argument("--mnist13k", action="store_true")
    args = parser.parse_args()
    X, X_test, y, y_test = digits()
    print(f"digits: {X.shape[0]:,} training rows x {X.shape[1]} standardised pixels, "
          f"{y.max() + 1} classes; {X_test.shape[0]} test rows\n")
    # Defaults (the chains on every core; NumPyro's XLA uses both cores for one chain's
    # products), and the chains one after another.
    results = [ours(X, X_test, y, y_test), ours(X, X_test, y, y_test, n_jobs=1)]
    if args.peer_python:
        with tempfile.TemporaryDirectory() as workdir:
            for name in args.peers.split(","):
                found = peer(args.peer_python, X, y, name == "nuts-dense", args.peer_chains,
                             workdir)
                if found is not None:
                    name, wall, coef, intercept, rows = found
                    probs = probabilities(coef, intercept, X_test)
                    results.append((name, wall, coef, intercept, rows, probs))
    else:
        print("[no --peer-python: NumPyro rows skipped]", file=sys.stderr)
    reference = results[2][5] if len(results) > 2 else None
    rows = []
    for name, wall, coef, intercept, read, probs in results:
        worst_rhat, min_ess = summary(coef, intercept)
        accuracy = float(np.mean(probs.argmax(axis=1) == y_test))
        gap = (f"{np.mean((probs - reference) ** 2):.1e}" if reference is not None else "-")
        rows.append([name, f"{wall:.1f}", f"{worst_rhat:.3f}", f"{min_ess:.0f}",
                     f"{min_ess / wall:.2f}", f"{read:,.0f}" if read else "-",
                     f"{accuracy:.3f}", gap])
    table(rows, ["sampler", "wall s", "max R-hat", "min bulk ESS", "min-ESS/s",
                 "rows/iter", "test accuracy", "MSE vs NUTS"])
    if args.mnist13k:
        row = mnist_one_vs_seven()
        if row is not None:
            table([row], ["sampler", "wall s", "max R-hat", "min bulk ESS", "min-ESS/s",
                          "rows/iter", "test accuracy"])


if __name__ == "__main__":
    main()

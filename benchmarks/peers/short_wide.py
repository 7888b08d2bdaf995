"""More features than rows: default fits against scikit-learn's ``LogisticRegressionCV`` (and,
on MNIST, NumPyro NUTS with a diagonal mass matrix) in one run.

Cases (each: our defaults, our ``prior_scale="auto"``, ``LogisticRegressionCV()``):

- ``mnist300``: MNIST, 300 training rows drawn at random, 784 raw pixels in [0, 1], ten
  classes (7,850 coefficients), tested on 10,000 test rows. Needs ``../shared/data/mnist``.
- ``classification``: ``make_classification(n_samples=200 + 2,000 test, n_features=5,000,
  n_informative=20)``.
- ``text``: a sparse bag of words (2,000 training documents, a 20,000-word vocabulary,
  about 50 distinct words a document, ``benchmarks/studies/sparse_text.py``'s generator; 2,000
  test documents), with the memory the fit added beyond its draws against the CSR bytes.
- ``digits``: scikit-learn's digits, 100 training rows, the rest for testing (64 pixels, ten
  classes).
- ``narrow``: synthetic 5,000 x 100 rows (``make_classification``, 20 informative), 5,000
  test rows: whether one default fit (the learned scale) does without a grid search.

Printed for each fit: wall seconds (setup included), the largest R-hat and smallest bulk
ESS (over every coefficient and intercept; where ours sampled the rows' span, over the
coordinates it sampled, ``diagnostics_.sampled``, as its convergence check: the other
weights are exact independent draws, whose ESS would hide a slowly mixing direction),
min-ESS per second, the test log loss and
accuracy, and for ours the scale the data chose (``prior_scale_``) and the rows' span
(``r``, the reduced weights per output) where the fit sampled it.

The NumPyro peer (``--peer-python``, a Python with NumPyro: ``benchmarks/
peer_comparison.py``) samples MNIST's model as our default fit does: the pixels
standardised as autoscaling does (each centred and divided by its spread), N(0, 1) on each
weight and N(0, 10^2) on each intercept, all ten classes' blocks (its diagnostics over the
blocks centred over the classes, the quantities the likelihood identifies; ours the same),
two chains of 1,000 warm-up and 1,000 draws.

    python benchmarks/peers/short_wide.py [--cases mnist300,classification,text,digits,narrow]
        [--peer-python PATH]
"""
import argparse
import os
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from scipy.special import softmax
from sklearn.datasets import load_digits, make_classification
from sklearn.linear_model import LogisticRegressionCV
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split

from skbayes_mh import FireflySoftmaxClassifier, MinibatchMHLogisticRegression
from skbayes_mh._passes import scan_data
from skbayes_mh.diagnostics import ess_bulk, rhat
from skbayes_mh.linear_model._priors import autoscale_spread

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import cases_option, run_numpyro_peer, shared_data, table
from studies.sparse_text import bag_of_words

HEADERS = ["fit", "wall s", "max R-hat", "min bulk ESS", "min-ESS/s", "test log loss",
           "test accuracy", "scale", "span r"]


def centred(draws, classes):
    """Coefficients and intercepts ``(chains, draws, ...)`` as one ``(chains, draws, k)``
    array, a softmax's blocks centred over the classes."""
    coef, intercept = draws
    if coef.ndim == 4:
        coef = coef - coef.mean(axis=2, keepdims=True)
        intercept = intercept - intercept.mean(axis=2, keepdims=True)
    return np.concatenate([coef.reshape(*coef.shape[:2], -1),
                           intercept.reshape(*intercept.shape[:2], -1)], axis=2)


def ours(estimator, X, y, X_test, y_test, memory=False):
    """One default fit's row (and, with ``memory``, the bytes the fit allocated beyond its
    draws at its peak, traced)."""
    if memory:
        tracemalloc.start()
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, y)
    wall = time.perf_counter() - start
    peak = None
    if memory:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    values = centred((estimator.posterior_["coef"], estimator.posterior_["intercept"]),
                     len(estimator.classes_))
    warned = any("converged" in str(w.message) for w in caught)
    proba = estimator.predict_proba(X_test)
    span = estimator.span_rank_
    if span:  # what the check judges: the sampled coordinates (the rest are exact draws)
        max_rhat = float(np.max(estimator.diagnostics_.sampled.r_hat))
        min_ess = float(np.min(estimator.diagnostics_.sampled.ess_bulk))
    else:
        max_rhat, min_ess = float(np.max(rhat(values))), float(np.min(ess_bulk(values)))
    row = [type(estimator).__name__ + (f"(prior_scale={estimator.prior_scale!r})"
                                        if estimator.prior_scale == "auto" else "()")
           + (" [warned]" if warned else ""),
           f"{wall:.1f}", f"{max_rhat:.3f}", f"{min_ess:.0f}",
           f"{min_ess / wall:.1f}", f"{log_loss(y_test, proba):.4f}",
           f"{np.mean(estimator.classes_[proba.argmax(axis=1)] == y_test):.4f}",
           f"{getattr(estimator, 'prior_scale_', estimator.prior_scale):.3g}"
           if estimator.prior_scale == "auto" else "1", str(span) if span else "-"]
    return row, peak, values.nbytes


def scikit_learn(X, y, X_test, y_test):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LogisticRegressionCV(max_iter=5000).fit(X, y)
    wall = time.perf_counter() - start
    proba = model.predict_proba(X_test)
    return ["LogisticRegressionCV()", f"{wall:.2f}", "-", "-", "-",
            f"{log_loss(y_test, proba):.4f}", f"{model.score(X_test, y_test):.4f}", "-", "-"]


def estimators(n_classes):
    make = FireflySoftmaxClassifier if n_classes > 2 else MinibatchMHLogisticRegression
    return [make(random_state=0), make(prior_scale="auto", random_state=0)]


def report(title, X, y, X_test, y_test, memory=False, peer=None):
    print(f"\n## {title}\n")
    rows = []
    for estimator in estimators(len(np.unique(y))):
        row, peak, draws_bytes = ours(estimator, X, y, X_test, y_test, memory)
        rows.append(row)
        if peak is not None:
            csr = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
            print(f"{row[0]}: traced peak {peak / 2**20:.1f} MiB, draws {draws_bytes / 2**20:.1f}"
                  f" MiB, beyond the draws {(peak - draws_bytes) / csr:.2f} times the CSR "
                  f"bytes ({csr / 2**20:.2f} MiB)")
    rows.append(scikit_learn(X, y, X_test, y_test))
    if peer is not None:
        rows.append(peer)
    table(rows, HEADERS)
    return rows


def mnist300(args):
    from skbayes_mh.datasets import load_mnist

    directory = shared_data("mnist")
    if directory is None:
        print("[MNIST not found beside the checkout (../shared/data): mnist300 skipped]",
              file=sys.stderr)
        return
    X, y = load_mnist(directory, "train")
    X_test, y_test = load_mnist(directory, "test")
    X = X.reshape(len(X), -1) / 255.0
    X_test = X_test.reshape(len(X_test), -1) / 255.0
    rows = np.random.default_rng(0).choice(len(X), 300, replace=False)
    X, y = X[rows], y[rows]
    peer = None
    if args.peer_python:
        peer = mnist_peer(args.peer_python, X, y, X_test, y_test)
    report("MNIST, 300 training rows x 784 raw pixels, 10 classes (7,850 coefficients)",
           X, y, X_test, y_test, peer=peer)


def mnist_peer(python, X, y, X_test, y_test):
    """NumPyro NUTS (diagonal) on our default's model: the row of its fit."""
    summary = scan_data(X, y.astype(np.float64))
    mean, spread = summary["x_mean"], autoscale_spread(summary)
    Z, Z_test = (X - mean) / spread, (X_test - mean) / spread
    with tempfile.TemporaryDirectory() as workdir:
        data = Path(workdir) / "mnist300.npz"
        np.savez(data, X=Z, y=y.astype(np.float64), prior_scale=1.0, intercept=1,
                 intercept_prior_scale=10.0, n_classes=10)
        found = run_numpyro_peer(python, data, "nuts", False,
                                 ["--chains", "2", "--warmup", "1000", "--samples", "1000"])
    if found is None:
        return None
    result, draws = found  # centred (chains, draws, K, D + 1), the intercept last
    values = draws.reshape(*draws.shape[:2], -1)
    wall = result["wall_seconds"]
    coef = draws[..., :-1].reshape(-1, *draws.shape[2:3], draws.shape[3] - 1)
    intercept = draws[..., -1].reshape(-1, draws.shape[2])
    proba = np.zeros((Z_test.shape[0], coef.shape[1]))
    for w, b in zip(coef, intercept):
        proba += softmax(Z_test @ w.T + b, axis=1)
    proba /= coef.shape[0]
    return ["NumPyro NUTS diag, 2 chains", f"{wall:.1f}", f"{np.max(rhat(values)):.3f}",
            f"{np.min(ess_bulk(values)):.0f}", f"{np.min(ess_bulk(values)) / wall:.2f}",
            f"{log_loss(y_test, proba):.4f}", f"{np.mean(proba.argmax(axis=1) == y_test):.4f}",
            "1", "-"]


def classification(args):
    X, y = make_classification(n_samples=2200, n_features=5000, n_informative=20,
                               random_state=0)
    X, X_test, y, y_test = train_test_split(X, y, train_size=200, random_state=0, stratify=y)
    report("make_classification: 200 training rows x 5,000 features (20 informative)",
           X, y, X_test, y_test)


def text(args):
    X, y = bag_of_words(4000, 20000, 50, seed=0)
    X, X_test, y, y_test = X[:2000], X[2000:], y[:2000], y[2000:]
    report("bag of words: 2,000 documents x 20,000 words, about 50 a document (CSR)",
           X, y, X_test, y_test, memory=True)


def digits(args):
    X, y = load_digits(return_X_y=True)
    X, X_test, y, y_test = train_test_split(X, y, train_size=100, random_state=0, stratify=y)
    report("digits: 100 training rows x 64 pixels, 10 classes (650 coefficients)",
           X, y, X_test, y_test)


def narrow(args):
    X, y = make_classification(n_samples=10000, n_features=100, n_informative=20,
                               random_state=0)
    X, X_test, y, y_test = train_test_split(X, y, train_size=5000, random_state=0, stratify=y)
    report("synthetic 5,000 x 100 (20 informative): one default fit against "
           "LogisticRegressionCV", X, y, X_test, y_test)


CASES = {"mnist300": mnist300, "classification": classification, "text": text,
         "digits": digits, "narrow": narrow}


def main():
    parser = argparse.ArgumentParser()
    cases_option(parser, CASES)
    parser.add_argument("--peer-python", default=os.environ.get("SKBAYES_MH_PEER_PYTHON"))
    args = parser.parse_args()
    for name in args.cases:
        CASES[name](args)


if __name__ == "__main__":
    main()

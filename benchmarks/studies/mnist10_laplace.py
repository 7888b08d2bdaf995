"""How far all ten MNIST digits' posterior is from its Laplace approximation: the reason a
full-data fit there cannot move in large steps.

Softmax regression on the 784 raw pixels in [0, 1] of the 60,000 training rows, over-
parameterised (10 x 785 = 7,850 parameters), weights N(0, 1) and intercepts N(0, 10^2)
(the prior of ``FireflySoftmaxClassifier(autoscale=False)``). The MAP comes from
scikit-learn's ``LogisticRegression(C=1)`` polished by Newton steps on the exact dense
Hessian (55 blocks of 785 x 785 Gram matrices, BLAS); then, for draws ``z`` of the
standard normal at several scales ``s`` and ``theta = theta_map + L^-T z`` (``H = L L'``),
the residual ``log p(theta | data) - log p(theta_map | data) + |z|^2 / 2``: zero for a
Gaussian posterior. Its mean and sd over the draws say which moves a Metropolis-Hastings
test would accept: an independence proposal from the Laplace approximation (``s`` 1), or
a preconditioned Crank-Nicolson or Hamiltonian move of a given size in its whitened
coordinates (a residual change of a few nats is rejected nearly always).

    python benchmarks/studies/mnist10_laplace.py [--draws 40] [--rows 60000]
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.linalg
from scipy.special import logsumexp, softmax
from sklearn.linear_model import LogisticRegression

from skbayes_mh.datasets import load_mnist

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import shared_data, table


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=40)
    parser.add_argument("--rows", type=int, default=60_000)
    args = parser.parse_args()
    directory = shared_data("mnist")
    if directory is None:
        return
    X, y = load_mnist(directory, "train")
    X = np.asarray(X[:args.rows], dtype=np.float64) / 255.0
    y = np.asarray(y[:args.rows])
    n_rows, n_features = X.shape
    K, block = 10, n_features + 1
    design = np.hstack([X, np.ones((n_rows, 1))])
    onehot = np.eye(K)[y]
    precision = np.ones(block)
    precision[-1] = 1e-2

    def log_posterior(W):
        eta = design @ W.T
        return (np.sum(eta * onehot) - logsumexp(eta, axis=1).sum()
                - 0.5 * np.sum(W * W * precision))

    def gradient(W):
        return (onehot - softmax(design @ W.T, axis=1)).T @ design - W * precision

    def negative_hessian(W):
        probabilities = softmax(design @ W.T, axis=1)
        H = np.zeros((K * block, K * block))
        for a in range(K):
            for b in range(a, K):
                weights = -probabilities[:, a] * probabilities[:, b]
                if a == b:
                    weights += probabilities[:, a]
                gram = design.T @ (weights[:, None] * design)
                H[a * block:(a + 1) * block, b * block:(b + 1) * block] = gram
                H[b * block:(b + 1) * block, a * block:(a + 1) * block] = gram.T
        H[np.diag_indices_from(H)] += np.tile(precision, K)
        return H

    started = time.perf_counter()
    start = LogisticRegression(C=1.0, max_iter=1000).fit(X, y)
    W = np.hstack([start.coef_, start.intercept_[:, None]])
    decrement = np.inf
    while decrement > 1e-8:
        factor = np.linalg.cholesky(negative_hessian(W))
        g = gradient(W).ravel()
        step = scipy.linalg.cho_solve((factor, True), g)
        decrement = float(g @ step)
        W = W + step.reshape(K, block)
    factor = np.linalg.cholesky(negative_hessian(W))
    print(f"MNIST 10 classes, {n_rows:,} rows x {n_features} raw pixels, {K * block:,} "
          f"parameters: MAP and dense Hessian in {time.perf_counter() - started:.0f} s\n")
    at_map = log_posterior(W)
    rng = np.random.default_rng(0)
    rows = []
    for scale in (1.0, 0.5, 0.25, 0.1):
        residuals = []
        for _ in range(args.draws):
            z = rng.standard_normal(K * block) * scale
            moved = scipy.linalg.solve_triangular(factor.T, z, lower=False)
            residuals.append(log_posterior(W + moved.reshape(K, block)) - at_map + 0.5 * z @ z)
        rows.append([f"{scale:g}", f"{np.mean(residuals):.3f}", f"{np.std(residuals):.3f}"])
    table(rows, ["scale of the Laplace draw", "residual mean (nats)", "residual sd (nats)"])


if __name__ == "__main__":
    main()

"""
A temperature drop: rows read per test before and after
=======================================================

Seita, Pan, Chen and Canny's Figure 3 (right): logistic regression on MNIST's 1s and 7s
(784 pixels, no intercept, flat prior, random-walk proposals of sd 0.05 per pixel) with the
minibatch test, at temperature 100 for a burn-in of 400 iterations, then at 1. A schedule
of ``(iteration, temperature)`` pairs gives it to :func:`~skbayes_mh.sample`:
``temperature=[(0, 100.0), (400, 1.0)]``.

At temperature 100 every log-likelihood difference is divided by 100, and about 125 rows
decide a step. At 1 the same proposals change the log-likelihood 100 times more: the test
needs most of the 13,007 rows, and accepts fewer moves, while the chain climbs to the far
more concentrated posterior at temperature 1.

On the MNIST files when they sit in ``../shared/data/mnist`` beside the checkout (or in
``$SKBAYES_MH_DATA/mnist``), otherwise on synthetic data of the same shape. With
``SKBAYES_MH_DOCS_SMALL=1`` it runs fewer iterations after the drop.
"""

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numba
import numpy as np

from skbayes_mh import sample
from skbayes_mh.acceptance import MinibatchBarker
from skbayes_mh.datasets import mnist_pair_or_synthetic

BURN_IN = 400
AFTER = 100 if os.environ.get("SKBAYES_MH_DOCS_SMALL") else 1600

HERE = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
MNIST = Path(os.environ.get("SKBAYES_MH_DATA", HERE.parents[1] / "shared" / "data")) / "mnist"
X, y, source = mnist_pair_or_synthetic(MNIST, (1, 7), "train")
print(f"{source}: {X.shape[0]:,} rows x {X.shape[1]} pixels")

# %%
# The chain
# ---------
# The log-likelihood of one row, compiled with numba; each row of ``data`` is the pixels
# followed by the label.


@numba.njit(cache=True)
def logistic_loglik(theta, data, i):
    """log p(y_i | x_i, theta): the log-sigmoid of the signed margin."""
    margin = 0.0
    for k in range(theta.shape[0]):
        margin += data[i, k] * theta[k]
    if data[i, data.shape[1] - 1] < 0.5:
        margin = -margin
    return -np.log1p(np.exp(-margin)) if margin > 0 else margin - np.log1p(np.exp(margin))


data = np.column_stack([X, y]).astype(np.float64)
result = sample(logistic_loglik, data, np.zeros(X.shape[1]), step_size=0.05,
                acceptance=MinibatchBarker(), n_draws=BURN_IN + AFTER,
                temperature=[(0, 100.0), (BURN_IN, 1.0)], random_state=0)
hot, cold = result.n_data_read[100:BURN_IN], result.n_data_read[BURN_IN:]
print(f"rows per test: {hot.mean():,.0f} at temperature 100 (after 100 iterations), "
      f"{cold.mean():,.0f} at 1, of {X.shape[0]:,}; acceptance "
      f"{result.accepted[:BURN_IN].mean():.2f} then {result.accepted[BURN_IN:].mean():.2f}")

# %%
# Rows read per test
# ------------------
# Each iteration's rows (dots) and their running mean over 50 iterations (line); the
# dashed line is the drop.

iterations = np.arange(result.n_data_read.size)
running = np.convolve(result.n_data_read, np.ones(50) / 50, mode="valid")
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(iterations, result.n_data_read, ".", markersize=2, alpha=0.4, color="tab:blue")
ax.plot(iterations[49:], running, color="tab:blue", label="running mean (50 iterations)")
ax.axvline(BURN_IN, color="black", linestyle="--", linewidth=1,
           label="temperature 100 -> 1")
ax.set_yscale("log")
ax.set_xlabel("iteration")
ax.set_ylabel("rows read by the test")
ax.legend(loc="center right")
fig.tight_layout()
plt.show()

"""
Rows read per test: the three subsampling tests on MNIST 1 vs 7
===============================================================

Seita, Pan, Chen and Canny's Figure 4 and Table 2 (MNIST-13k): logistic regression on the
784 pixels of the digits 1 and 7, no intercept, a flat prior, random-walk proposals of sd
0.05 per pixel, at temperature 100 (the likelihood divided by 100, as the paper ran it).
Every chain starts at zero and runs 1,000 iterations (the paper ran 5,000). Three
acceptance tests decide each step on random minibatches:

- the minibatch Barker test with a correction variable (Seita et al.), first batch 100;
- Austerity's sequential t-test (Korattikara et al.), batch 450, epsilon 0.01;
- the confidence sampler (Bardenet et al.), gamma 2, p 2, delta 0.01, whose range bound
  is logistic regression's Lipschitz constant ``max_i ||x_i||``.

The figure on the left is the paper's: a histogram of the rows each test read, on log-log
axes. The one on the right is the test accuracy of each chain's running posterior mean
against the rows read to get there.

On the MNIST files when they sit in ``../shared/data/mnist`` beside the checkout (or in
``$SKBAYES_MH_DATA/mnist``), otherwise on synthetic data of the same shape. With
``SKBAYES_MH_DOCS_SMALL=1`` it runs fewer draws.
"""

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numba
import numpy as np
from scipy.special import expit

from skbayes_mh import sample
from skbayes_mh.acceptance import Austerity, ConfidenceSampler, MinibatchBarker
from skbayes_mh.datasets import mnist_pair_or_synthetic
from skbayes_mh.plotting import plot_data_read, plot_minibatch_sizes

N_DRAWS = 100 if os.environ.get("SKBAYES_MH_DOCS_SMALL") else 1000

HERE = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
MNIST = Path(os.environ.get("SKBAYES_MH_DATA", HERE.parents[1] / "shared" / "data")) / "mnist"
X, y, source = mnist_pair_or_synthetic(MNIST, (1, 7), "train")
X_test, y_test, _ = mnist_pair_or_synthetic(MNIST, (1, 7), "test")
print(f"{source}: {X.shape[0]:,} training rows x {X.shape[1]} pixels, "
      f"{X_test.shape[0]:,} test rows")

# %%
# The model
# ---------
# :func:`~skbayes_mh.sample` takes a log-likelihood of one row, compiled with numba. Each
# row of ``data`` is the pixels followed by the label.


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
lipschitz = float(np.sqrt(np.max(np.einsum("ij,ij->i", X, X))))
tests = {
    "minibatch": MinibatchBarker(batch_size=100),
    "austerity": Austerity(epsilon=0.01, batch_size=450),
    "confidence": ConfidenceSampler(delta=0.01, gamma=2.0, p=2, batch_size=100,
                                    lipschitz=lipschitz),
}
results = {}
for name, test in tests.items():
    results[name] = sample(logistic_loglik, data, np.zeros(X.shape[1]), step_size=0.05,
                           acceptance=test, temperature=100.0, n_draws=N_DRAWS,
                           random_state=0)
    print(f"{name:>10}: {results[name].mean_data_read:8,.1f} rows per test "
          f"(acceptance rate {results[name].acceptance_rate:.2f}, "
          f"{results[name].seconds:.1f} s)")

# %%
# The figures
# -----------
# The minibatch test decides most steps on its first 100 rows; Austerity needs several
# batches of 450; the confidence sampler, whose bound holds for any data, reads nearly
# every row. All three reach the same accuracy, at very different costs.


def draw_proba(draws, rows):
    """Probability of the digit 7 under every draw, (n_draws, n_rows)."""
    return expit(draws @ rows.T)


figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
plot_minibatch_sizes(results, ax=left)
left.set_title("rows read per test")
plot_data_read(results, X_test, y_test, draw_proba=draw_proba, ax=right)
right.set_title("test accuracy against data read")
figure.tight_layout()
plt.show()

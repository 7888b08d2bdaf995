"""
Risk against data read: exact and subsampling tests at temperature 1
====================================================================

Korattikara, Chen and Welling's cost figure: the risk of the running posterior-predictive
mean (its mean squared distance to a reference predictive probability, over held-out
rows) against the data rows the acceptance tests read to get there. A test that reads
fewer rows per step reaches a given risk sooner, as long as its own error (Austerity's
and the minibatch test's are bounded, not zero) stays below the Monte Carlo error.

Logistic regression on MNIST 7 vs 9 projected on its first 50 principal components (their
experiment's data), at temperature 1 (the real posterior), with
:class:`~skbayes_mh.MinibatchMHLogisticRegression` and its default prior. The reference
is a longer exact fit (Metropolis test, Hamiltonian paths). The curves compare random-walk
chains under three tests (exact Metropolis, Austerity with epsilon 0.05, the minibatch
test) with the estimator's default (``acceptance="auto"``: above 5,000 rows, the minibatch
test with control variates and Hamiltonian paths on the proxies).

On the MNIST files when they sit in ``../shared/data/mnist`` beside the checkout (or in
``$SKBAYES_MH_DATA/mnist``), otherwise on synthetic data of the same shape. With
``SKBAYES_MH_DOCS_SMALL=1`` it runs fewer draws after a shorter warm-up.
"""

import os
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning

from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh.acceptance import Austerity
from skbayes_mh.datasets import mnist_pair_or_synthetic
from skbayes_mh.plotting import plot_data_read

SMALL = bool(os.environ.get("SKBAYES_MH_DOCS_SMALL"))
N_DRAWS = 150 if SMALL else 1000
N_WARMUP = 150 if SMALL else "auto"

HERE = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
MNIST = Path(os.environ.get("SKBAYES_MH_DATA", HERE.parents[1] / "shared" / "data")) / "mnist"
X, y, source = mnist_pair_or_synthetic(MNIST, (7, 9), "train")
X_test, y_test, _ = mnist_pair_or_synthetic(MNIST, (7, 9), "test")
pca = PCA(n_components=50, random_state=0).fit(X)
X, X_test = pca.transform(X), pca.transform(X_test)
print(f"{source}: {X.shape[0]:,} rows x {X.shape[1]} principal components")

# %%
# The reference and the chains
# ----------------------------

reference = MinibatchMHLogisticRegression(acceptance="metropolis", n_draws=2 * N_DRAWS,
                                          n_warmup=N_WARMUP, n_chains=2,
                                          random_state=1).fit(X, y)
reference_proba = reference.predict_proba(X_test)[:, 1]
print(f"reference: accuracy {np.mean(reference.predict(X_test) == y_test):.4f}")

settings = {
    "exact (random walk)": dict(acceptance="metropolis", proposal="random_walk"),
    "austerity, eps 0.05": dict(acceptance=Austerity(epsilon=0.05, batch_size=500),
                                proposal="random_walk"),
    "minibatch (random walk)": dict(acceptance="minibatch", proposal="random_walk"),
    "default (auto)": dict(),
}
fits = {}
for name, setting in settings.items():
    with warnings.catch_warnings():  # the random-walk chains are short on purpose
        warnings.simplefilter("ignore", ConvergenceWarning)
        fits[name] = MinibatchMHLogisticRegression(n_draws=N_DRAWS, n_warmup=N_WARMUP,
                                                   n_chains=2, thin=1, random_state=0,
                                                   **setting).fit(X, y)
    risk = fits[name].predictive_mean_risk(X_test, reference_proba).risk.mean(axis=0)
    print(f"{name:>24}: {fits[name].posterior_['n_data_read'].mean():8,.1f} rows per draw, "
          f"final risk {risk[-1]:.2e}")

# %%
# The figure
# ----------
# Every subsampling test's curve lies left of the exact test's: the same risk for a
# fraction of the rows read. The default sampler, whose control variates make each row's
# contribution small, is far ahead at temperature 1.

ax = plot_data_read(fits, X_test, reference_proba=reference_proba)
ax.set_title("risk of the predictive mean against data read")
ax.figure.set_size_inches(7, 4.2)
ax.figure.tight_layout()
plt.show()

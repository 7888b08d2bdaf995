"""
Firefly Monte Carlo: bright points on MNIST 7 vs 9
==================================================

Maclaurin and Adams' logistic-regression experiment: the digits 7 and 9 on their first 50
principal components. Firefly Monte Carlo samples the exact posterior while it evaluates
the likelihood of only the "bright" rows; each dark row contributes a cheap lower bound,
collapsed into sufficient statistics once. With the bounds tight at the MAP (the
estimator's default), a few percent of the rows are bright at any time.

The left figure is the paper's: the number of bright rows over the chain. The right one
is ArviZ's rank plot of the intercept (through :func:`skbayes_mh.plotting.plot_rank`):
when the chains mix, each chain's ranks are uniform.

On the MNIST files when they sit in ``../shared/data/mnist`` beside the checkout (or in
``$SKBAYES_MH_DATA/mnist``), otherwise on synthetic data of the same shape. With
``SKBAYES_MH_DOCS_SMALL=1`` it runs fewer draws.
"""

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import PCA

from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh.datasets import mnist_pair_or_synthetic
from skbayes_mh.plotting import plot_bright_counts, plot_rank

N_DRAWS = 500 if os.environ.get("SKBAYES_MH_DOCS_SMALL") else 6000

HERE = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
MNIST = Path(os.environ.get("SKBAYES_MH_DATA", HERE.parents[1] / "shared" / "data")) / "mnist"
X, y, source = mnist_pair_or_synthetic(MNIST, (7, 9), "train")
X = PCA(n_components=50, random_state=0).fit_transform(X)

clf = MinibatchMHLogisticRegression(acceptance="firefly", n_draws=N_DRAWS, n_chains=4,
                                    random_state=0).fit(X, y)
largest_rhat = max(float(np.max(value)) for value in clf.diagnostics_.r_hat.values())
print(f"{source}: {X.shape[0]:,} rows x {X.shape[1]} components")
print(f"bright rows: {clf.bright_fraction_:.2%} on average; "
      f"rows read per draw: {clf.posterior_['n_data_read'].mean():,.0f} "
      f"(thin {clf.thin_[0]}); largest R-hat {largest_rhat:.3f}")

# %%
# The figures
# -----------

figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6),
                                     gridspec_kw={"width_ratios": [3, 2]})
plot_bright_counts(clf, ax=left)
left.set_title("bright rows per draw")
plot_rank(clf, var_names=["intercept"], ax=right)
figure.tight_layout()
plt.show()

"""
Diagnosing and fixing a ConvergenceWarning
==========================================

Every fit checks its chains: when a parameter's R-hat exceeds 1.01 or its bulk effective
sample size is below 100 per chain, ``fit`` warns with a ``ConvergenceWarning`` that names
the worst parameter. This example provokes one on purpose, looks at the chains with trace
and rank plots (ArviZ's, through :mod:`skbayes_mh.plotting`), and fixes it.

The data are scikit-learn's breast cancer set, unscaled: its features span five orders of
magnitude, which is what a random walk with an isotropic step cannot cross in a few
hundred iterations.
"""

import warnings

import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning

from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh.plotting import plot_rank, plot_trace

X, y = load_breast_cancer(return_X_y=True, as_frame=True)

# %%
# A fit that warns
# ----------------
# A random walk with a fixed isotropic step (``step_size=0.001``, so no shaping by the
# Laplace approximation) and short chains.

hasty = MinibatchMHLogisticRegression(proposal="random_walk", step_size=0.001, n_warmup=200,
                                      n_draws=300, random_state=0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", ConvergenceWarning)
    hasty.fit(X, y)
for warning in caught:
    if issubclass(warning.category, ConvergenceWarning):
        print(warning.message)

# %%
# The worst parameters' R-hat and bulk ESS are in ``diagnostics_``, one value per
# parameter; ``summary()`` lists them all. The trace plot shows why: the four chains (one
# colour each) wander apart and barely move.

table = hasty.summary(as_frame=False)
worst = table.index[int(table["r_hat"].argmax())]
print(f"largest R-hat: {table['r_hat'].max():.2f} ({worst}); "
      f"smallest bulk ESS: {table['ess_bulk'].min():.0f} of {4 * 300} draws")
plot_trace(hasty, var_names=["intercept"])
plt.gcf().tight_layout()
plt.show()

# %%
# The rank plot: the ranks of each chain's draws among all chains' should be uniform (flat
# bars) when the chains sample the same distribution. Here they are far from it.

plot_rank(hasty, var_names=["intercept"])
plt.show()

# %%
# The fix
# -------
# The defaults shape the proposal by the Laplace covariance, refined during warm-up, and
# use Hamiltonian paths: the warning goes away. Scaling the features (a
# ``StandardScaler`` in a pipeline) would help the random walk too; longer chains
# (``n_draws``, ``thin``) are the fix when the chains are right but short.

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", ConvergenceWarning)
    fixed = MinibatchMHLogisticRegression(random_state=0).fit(X, y)
table = fixed.summary(as_frame=False)
print(f"warnings: {sum(issubclass(w.category, ConvergenceWarning) for w in caught)}; "
      f"largest R-hat {table['r_hat'].max():.3f}, smallest bulk ESS "
      f"{table['ess_bulk'].min():.0f}")
plot_rank(fixed, var_names=["intercept"])
plt.show()

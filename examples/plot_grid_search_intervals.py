"""
Choosing the prior by cross-validation, then credible intervals
===============================================================

A Bayesian logistic regression in a scikit-learn pipeline: ``GridSearchCV`` picks the
prior scale by cross-validated log-loss, and the chosen fit's :meth:`summary` gives each
weight's posterior mean, 90% credible interval and convergence figures, by feature name.

On scikit-learn's breast cancer data (569 rows, 30 features), with the estimator's
defaults otherwise. ``set_output(transform="pandas")`` keeps the feature names through
the scaler, so that the summary names its rows. With ``SKBAYES_MH_DOCS_SMALL=1`` the grid
is shorter.
"""

import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skbayes_mh import MinibatchMHLogisticRegression

SMALL = bool(os.environ.get("SKBAYES_MH_DOCS_SMALL"))
X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)

# %%
# The search
# ----------
# Each candidate is fitted once per fold: four chains, converged, in about half a second.

pipeline = make_pipeline(StandardScaler(), MinibatchMHLogisticRegression(random_state=0))
pipeline.set_output(transform="pandas")
scales = [0.1, 1.0, 10.0] if SMALL else [0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
search = GridSearchCV(pipeline, {"minibatchmhlogisticregression__prior_scale": scales},
                      scoring="neg_log_loss", cv=3 if SMALL else 5)
search.fit(X_train, y_train)
best = search.best_estimator_[-1]
print(f"chosen prior scale: {best.prior_scale}; held-out log-loss "
      f"{-search.score(X_test, y_test):.3f}, accuracy "
      f"{search.best_estimator_.score(X_test, y_test):.3f}")

# %%
# The chosen posterior
# --------------------
# One row per parameter, named by the feature: mean, sd, the 5%, 50% and 95% quantiles,
# Monte Carlo standard errors, bulk and tail effective sample sizes and R-hat.

table = best.summary(as_frame=False)
print(table)

# %%
# Cross-validated log-loss against the prior scale (left), and the 90% credible intervals
# of the ten weights with the largest posterior means in absolute value (right).

loss = -search.cv_results_["mean_test_score"]
spread = search.cv_results_["std_test_score"]
weights = np.array([label.startswith("coef[") for label in table.index])
order = np.argsort(np.abs(table["mean"][weights]))[-10:]
names = np.array(table.index)[weights][order]
mean = table["mean"][weights][order]
low, high = table["5%"][weights][order], table["95%"][weights][order]

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), width_ratios=[1, 1.4])
left.errorbar(scales, loss, yerr=spread, marker="o", capsize=3)
left.set_xscale("log")
left.set_xlabel("prior_scale (per feature sd)")
left.set_ylabel("cross-validated log-loss")
right.errorbar(mean, np.arange(len(order)), xerr=[mean - low, high - mean], fmt="o",
               capsize=3)
right.axvline(0.0, color="grey", linewidth=1)
right.set_yticks(np.arange(len(order)), [name[5:-1] for name in names])
right.set_xlabel("weight on the standardised feature (90% credible interval)")
fig.tight_layout()
plt.show()

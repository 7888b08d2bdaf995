"""
Counts: Poisson regression with predictive intervals
====================================================

:class:`~skbayes_mh.MinibatchMHPoissonRegression` models counts with a log link,
``y ~ Poisson(exp(x . w + b))``. Its ``predict`` is the posterior-predictive mean rate;
``predict_quantiles`` gives predictive intervals that include the Poisson noise, and the
draws of ``w`` and ``b`` give credible intervals of the rate itself.

Synthetic data: 400 counts whose log-rate rises with one feature.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import PoissonRegressor

from skbayes_mh import MinibatchMHPoissonRegression

rng = np.random.default_rng(0)
x = rng.uniform(0.0, 3.0, size=400)
y = rng.poisson(np.exp(0.3 + 0.8 * x))
X = x[:, None]

model = MinibatchMHPoissonRegression(random_state=0).fit(X, y)
print(model.summary(as_frame=False))
glm = PoissonRegressor(alpha=0.0).fit(X, y)
print(f"scikit-learn's maximum likelihood: w = {glm.coef_[0]:.3f}, b = {glm.intercept_:.3f} "
      f"(truth: 0.8, 0.3)")

# %%
# The rate's 90% credible band (from the draws of ``w`` and ``b``) and the 90% predictive
# interval of a new count (noise included).

grid = np.linspace(0.0, 3.0, 100)[:, None]
coef = model.posterior_.get("coef", flat=True)
intercept = model.posterior_.get("intercept", flat=True)
rates = np.exp(grid @ coef.T + intercept)  # (point, draw)
rate_low, rate_high = np.percentile(rates, [5, 95], axis=1)
counts = model.predict_quantiles(grid, (0.05, 0.95))

fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(x, y, ".", color="grey", alpha=0.5, label="observed counts")
ax.fill_between(grid[:, 0], counts[:, 0], counts[:, 1], alpha=0.2,
                label="90% predictive interval of a count")
ax.fill_between(grid[:, 0], rate_low, rate_high, alpha=0.5, label="90% credible band of the rate")
ax.plot(grid[:, 0], model.predict(grid), label="posterior-predictive mean rate")
ax.set_xlabel("x")
ax.set_ylabel("count")
ax.legend(loc="upper left")
fig.tight_layout()
plt.show()

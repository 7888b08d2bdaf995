"""
Robust regression with outliers
===============================

Robust Bayesian regression with outliers: RobustTRegression against least squares.

On California housing (log median house value on the standardised features) when the
data folder is given, otherwise on synthetic data with 5% gross outliers::

    python examples/robust_regression.py [path/to/california_housing]
"""
import sys

import numpy as np
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split

from skbayes_mh import RobustTRegression
from skbayes_mh.datasets import CALIFORNIA_COLUMNS, california_log_value


def synthetic(n=20_000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X @ np.array([1.0, -0.5, 0.0, 2.0]) + 1.0 + 0.5 * rng.standard_t(4, size=n)
    bad = rng.random(n) < 0.05
    y[bad] += 20.0  # gross outliers, all on one side
    return X, y, [f"x{k}" for k in range(4)]


def main():
    if len(sys.argv) > 1:
        X, y = california_log_value(sys.argv[1])
        names = list(CALIFORNIA_COLUMNS[:-1])
    else:
        X, y, names = synthetic()
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    robust = RobustTRegression(n_draws=1000, n_warmup=500, n_chains=2, random_state=0)
    robust.fit(X_train, y_train)
    ols = LinearRegression().fit(X_train, y_train)

    coef = robust.posterior_.get("coef", flat=True)
    low, high = np.percentile(coef, [5, 95], axis=0)
    print(f"{'feature':>20}  {'OLS':>8}  {'Student-t mean':>14}  {'90% interval':>20}")
    for k, name in enumerate(names):
        print(f"{name:>20}  {ols.coef_[k]:8.3f}  {robust.coef_[k]:14.3f}  "
              f"[{low[k]:8.3f}, {high[k]:8.3f}]")
    print(f"\nnoise scale (posterior mean): {robust.scale_:.3f}, nu = {robust.nu}")
    print(f"likelihood queries per iteration: {robust.posterior_['n_data_read'].mean():.1f} "
          f"of {len(y_train):,} rows")
    mean, std = robust.predict(X_test[:3], return_std=True)
    for m, s, truth in zip(mean, std, y_test[:3]):
        print(f"prediction {m:7.3f} +- {s:.3f}   (observed {truth:.3f})")
    error = np.median(np.abs(robust.predict(X_test) - y_test))
    print(f"median absolute test error: Student-t {error:.3f}, "
          f"OLS {np.median(np.abs(ols.predict(X_test) - y_test)):.3f}")


if __name__ == "__main__":
    main()

"""Wall time of ``fit``, with an empty and with a warm numba cache.

0. With ``--cold``: an empty numba cache (a fresh install's), in fresh processes: the first
   default ``fit`` of breast cancer, compilation included (goal: at most 20 s), that of a
   tall data set (20,000 x 10, the minibatch test), and
   ``python -m skbayes_mh compile`` (goal: at most 60 s on two cores).
1. A fresh process: import, then a default ``fit`` on 1,000 x 10 data (goal: under 2 s).
2. scikit-learn's breast cancer data (569 x 30) in one warm process: the default ``fit``
   over five seeds with its largest R-hat, smallest bulk ESS and ``thin_`` (goal: converged,
   R-hat <= 1.01 and ESS >= 400, in at most 0.5 s), and a 5-fold ``cross_val_score``
   (goal: at most 3 s), beside scikit-learn's ``LogisticRegression``.

    python benchmarks/perf/fit_time.py [--cold]
"""
import os
import subprocess
import sys
import tempfile
import time
import warnings

CHILD = r"""
import time
start = time.perf_counter()
import numpy as np
from skbayes_mh import MinibatchMHLogisticRegression
imported = time.perf_counter()
rng = np.random.default_rng(0)
X = rng.normal(size=(1000, 10))
y = (X @ rng.normal(size=10) + rng.logistic(size=1000) > 0).astype(int)
fit_start = time.perf_counter()
MinibatchMHLogisticRegression(random_state=0).fit(X, y)
end = time.perf_counter()
print(f"{imported - start:.2f} {end - fit_start:.2f} {end - start:.2f}")
"""


COLD_CHILD = r"""
import time
start = time.perf_counter()
from sklearn.datasets import load_breast_cancer
from skbayes_mh import MinibatchMHLogisticRegression
X, y = load_breast_cancer(return_X_y=True)
imported = time.perf_counter()
MinibatchMHLogisticRegression(random_state=0).fit(X, y)
end = time.perf_counter()
print(f"{imported - start:.2f} {end - imported:.2f}")
"""

#: The first fit of tall data (20,000 x 10: the minibatch test with control variates).
COLD_TALL_CHILD = r"""
import time
import numpy as np
from skbayes_mh import MinibatchMHLogisticRegression
rng = np.random.default_rng(0)
X = rng.normal(size=(20_000, 10))
y = (X @ rng.normal(size=10) + rng.logistic(size=20_000) > 0).astype(int)
start = time.perf_counter()
fit = MinibatchMHLogisticRegression(random_state=0).fit(X, y)
print(f"{time.perf_counter() - start:.2f} {fit.acceptance_.name}")
"""


def cold_cache():
    """The first fit and the compile command, each in a fresh process on an empty numba cache
    (``NUMBA_CACHE_DIR`` pointed at a new directory: what a fresh install finds)."""
    print("empty numba cache (a fresh install), fresh processes\n")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        out = subprocess.run([sys.executable, "-c", COLD_CHILD], check=True, env=env,
                             capture_output=True, text=True).stdout.split()
        print(f"  first default fit of breast cancer: {out[1]} s (import {out[0]} s)")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        out = subprocess.run([sys.executable, "-c", COLD_TALL_CHILD], check=True, env=env,
                             capture_output=True, text=True).stdout.split()
        print(f"  first default fit of 20,000 x 10 ({out[1]} test): {out[0]} s")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "skbayes_mh", "compile"], check=True, env=env,
                       capture_output=True)
        print(f"  python -m skbayes_mh compile: {time.perf_counter() - start:.1f} s\n")


def fresh_process():
    subprocess.run([sys.executable, "-c", CHILD], check=True, capture_output=True)  # warm the cache
    print("fresh process, warm numba cache, 1,000 x 10, defaults "
          "(4 chains x (1,000 warm-up + 1,000 draws), the exact test)\n")
    print("  run  import (s)  fit (s)  total (s)")
    for run in range(3):
        out = subprocess.run([sys.executable, "-c", CHILD], check=True, capture_output=True,
                             text=True).stdout.split()
        print(f"  {run + 1:>3}  {out[0]:>10}  {out[1]:>7}  {out[2]:>9}")


def breast_cancer():
    import numpy as np
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    from skbayes_mh import MinibatchMHLogisticRegression

    X, y = load_breast_cancer(return_X_y=True)
    warnings.simplefilter("ignore")  # LogisticRegression's iteration limit on raw features
    MinibatchMHLogisticRegression(random_state=0).fit(X, y)  # load the kernels
    print("\nbreast cancer, 569 x 30, MinibatchMHLogisticRegression() defaults, warm process\n")
    print("  seed  fit (s)  max R-hat  min bulk ESS  thin_")
    for seed in range(5):
        start = time.perf_counter()
        clf = MinibatchMHLogisticRegression(random_state=seed).fit(X, y)
        wall = time.perf_counter() - start
        worst = max(float(np.max(v)) for v in clf.diagnostics_["r_hat"].values())
        ess = min(float(np.min(v)) for v in clf.diagnostics_["ess_bulk"].values())
        print(f"  {seed:>4}  {wall:>7.2f}  {worst:>9.4f}  {ess:>12,.0f}  {clf.thin_.tolist()}")
    for name, estimator in (("ours", MinibatchMHLogisticRegression(random_state=0)),
                            ("LogisticRegression", LogisticRegression(max_iter=10_000))):
        start = time.perf_counter()
        scores = cross_val_score(estimator, X, y, cv=5)
        print(f"  5-fold cross_val_score, {name}: {time.perf_counter() - start:.2f} s, "
              f"accuracy {scores.mean():.3f}")


if __name__ == "__main__":
    if "--cold" in sys.argv[1:]:
        cold_cache()
    fresh_process()
    breast_cancer()

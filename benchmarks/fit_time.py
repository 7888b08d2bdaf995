"""Wall time of ``fit`` on 1,000 x 10 data in a fresh process with a warm numba cache
(goal: under 2 s), split into import and fit.

    python benchmarks/fit_time.py
"""
import subprocess
import sys

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


def main():
    subprocess.run([sys.executable, "-c", CHILD], check=True, capture_output=True)  # warm the cache
    print("fresh process, warm numba cache, 1,000 x 10, defaults "
          "(4 chains x (1,000 warm-up + 1,000 draws), minibatch test)\n")
    print("  run  import (s)  fit (s)  total (s)")
    for run in range(3):
        out = subprocess.run([sys.executable, "-c", CHILD], check=True, capture_output=True,
                             text=True).stdout.split()
        print(f"  {run + 1:>3}  {out[0]:>10}  {out[1]:>7}  {out[2]:>9}")


if __name__ == "__main__":
    main()

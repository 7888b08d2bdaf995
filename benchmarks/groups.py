"""Group-level effects on tall data: a random-intercept-and-slope logistic regression
(``MinibatchMHLogisticRegression(group_effects={"group": ["x0"]})``), default settings.

Prints, per size: the fit's wall time (setup included), the test and proposal chosen,
iterations and rows read a chain iteration, the largest R-hat and smallest bulk ESS over
every parameter (the group sds included), the smallest bulk ESS a second, and each group
sd's posterior mean and 90% interval beside the sd the effects were drawn with; then how
far the posterior means of the effects are from the effects drawn (their correlation, and
the root mean square of the difference over the posterior sds).

Data: two standard-normal features with weights 0.5 and -0.3, intercept -0.5, groups of
equal expected size (labels ``g00017``), intercepts of sd 0.8 and slopes of ``x0`` of sd
0.4. Two cores, ``random_state`` 0.

    python benchmarks/groups.py [--sizes 100000:200,1000000:1000]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from skbayes_mh import MinibatchMHLogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/: the shared helpers
from _common import table

SD_INTERCEPT, SD_SLOPE = 0.8, 0.4


def grouped_rows(n_rows, n_groups, seed=0):
    """``(X, y, intercepts, slopes)``: ``X`` a DataFrame with ``x0``, ``x1`` and ``group``."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    group = rng.integers(0, n_groups, n_rows)
    x = rng.normal(size=(n_rows, 2))
    intercepts = rng.normal(0.0, SD_INTERCEPT, n_groups)
    slopes = rng.normal(0.0, SD_SLOPE, n_groups)
    eta = x @ [0.5, -0.3] - 0.5 + intercepts[group] + slopes[group] * x[:, 0]
    y = (rng.random(n_rows) < 1.0 / (1.0 + np.exp(-eta))).astype(np.int8)
    labels = np.array([f"g{k:05d}" for k in range(n_groups)])
    X = pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "group": labels[group]})
    return X, y, intercepts, slopes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000:200,1000000:1000",
                        help="rows:groups, comma-separated")
    args = parser.parse_args()
    fits, sds, effects = [], [], []
    for size in args.sizes.split(","):
        n_rows, n_groups = (int(float(v)) for v in size.split(":"))
        X, y, intercepts, slopes = grouped_rows(n_rows, n_groups)
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = MinibatchMHLogisticRegression(group_effects={"group": ["x0"]},
                                                  random_state=0).fit(X, y)
        seconds = time.perf_counter() - start
        diagnostics = model.diagnostics_
        bulk = min(float(np.min(v)) for v in diagnostics["ess_bulk"].values())
        r_hat = max(float(np.max(v)) for v in diagnostics["r_hat"].values())
        read = float(np.mean(model.posterior_.sample_stats["rows_per_iteration"]))
        warned = any("converge" in str(w.message) for w in caught)
        name = f"{n_rows:,} x {n_groups:,}"
        fits.append([name, f"{model.acceptance_}", f"{model.proposal_}", f"{seconds:.1f}",
                     f"{model.setup_time_:.1f}", f"{float(np.mean(model.n_iter_)):.0f}",
                     f"{read:,.0f}", f"{r_hat:.3f}", f"{bulk:.0f}", f"{bulk / seconds:.0f}",
                     "yes" if warned else "no"])
        sd_draws = model.posterior_.get("group_sd", flat=True)
        for t, truth in enumerate((SD_INTERCEPT, SD_SLOPE)):
            low, high = np.quantile(sd_draws[:, t], [0.05, 0.95])
            sds.append([name, ("intercept", "slope of x0")[t], f"{truth}",
                        f"{sd_draws[:, t].mean():.3f}", f"[{low:.3f}, {high:.3f}]"])
        draws = model.posterior_.get("group_effects", flat=True)
        mean, sd = draws.mean(axis=0), draws.std(axis=0)
        # The levels sort as their zero-padded labels: in the order the effects were drawn,
        # and a level no row drew has no effect.
        seen = np.isin(np.arange(n_groups), [int(g[1:]) for g in model.group_levels_["group"]])
        for t, truth in enumerate((intercepts[seen], slopes[seen])):
            part = slice(t * truth.size, (t + 1) * truth.size)
            effects.append([name, ("intercepts", "slopes of x0")[t],
                            f"{np.corrcoef(mean[part], truth)[0, 1]:.3f}",
                            f"{np.sqrt(np.mean(((mean[part] - truth) / sd[part]) ** 2)):.2f}"])
    table(fits, ["rows x groups", "test", "proposal", "seconds", "setup s", "iterations",
                 "rows read/iter", "max R-hat", "min bulk ESS", "min ESS/s", "warned"])
    print()
    table(sds, ["rows x groups", "group sd", "drawn with", "posterior mean", "90% interval"])
    print()
    table(effects, ["rows x groups", "effects", "corr(mean, drawn)",
                    "rms (mean - drawn) / sd"])


if __name__ == "__main__":
    main()

"""The size-dependent paths at their real sizes, where the test suite forces their thresholds
to 0 on small data (``tests/integration/test_tall_data.py``) or runs the demo smaller
(``tests/integration/test_demo.py``), for CI's time.

1. A float32 ``np.memmap`` of ``2**20 + 1`` rows x 16 features (64 MiB and one row): at
   ``FLOAT32_IN_PLACE_MIN_BYTES`` it is read in place as float32; above
   ``DENSE_POOL_MAX_ROWS`` rows each chain draws its minibatches from the sparse row pool;
   above ``TANGENT_CACHE_MAX_ROWS`` Firefly computes each query's tangent predictor again
   instead of caching it. The default fit (the control-variate minibatch test) and a Firefly
   fit (exact) of the same memmap must agree: for every weight, the means' difference and
   the sds' ratio within four Monte Carlo standard errors (from both fits' draws). Printed:
   which path each threshold chose, seconds, rows read per iteration, R-hat, ESS, the
   largest ``|z|`` of means and of sds, and the smallest shift and sd error the pair could
   see at that power.
2. The README's demo at its own size (20,000 rows, 4 chains x 1,000 draws): each test's
   largest mean shift and sd ratio against the exact test's, as multiples of their Monte
   Carlo standard errors.

Run: ``python benchmarks/studies/real_sizes.py [--dir DIR]`` (about 3 minutes on two cores; the
memmap's 64 MiB are written to ``DIR``, a temporary directory by default).
"""
import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from skbayes_mh import MinibatchMHLogisticRegression, diagnostics
from skbayes_mh.demo import compare
from skbayes_mh.linear_model import _base, _inputs
from skbayes_mh.models import _base as models_base
from skbayes_mh.sampling import _samplers

N_ROWS = (1 << 20) + 1
N_FEATURES = 16
Z_LIMIT = 4.0


def write_memmap(folder, seed=0):
    """Logistic data (float32 X, 0/1 y) as ``.npy`` files, opened read-only as memmaps."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N_ROWS, N_FEATURES), dtype=np.float32)
    weights = rng.normal(0.0, 0.5, N_FEATURES)
    y = (rng.random(N_ROWS) < 1.0 / (1.0 + np.exp(-(X @ weights + 0.2)))).astype(np.float32)
    np.save(folder / "X.npy", X)
    np.save(folder / "y.npy", y)
    return np.load(folder / "X.npy", mmap_mode="r"), np.load(folder / "y.npy", mmap_mode="r")


def fit_recording_layout(X, y, **settings):
    """A fit, and whether the sampler read ``X`` in place (its float32 memory itself)."""
    seen = []
    original = _base.LinearMHEstimator._linear_data

    def recording(self, X_, y_model, weights):
        data = original(self, X_, y_model, weights)
        seen.append(data)
        return data

    _base.LinearMHEstimator._linear_data = recording
    try:
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # R-hat and ESS are printed
            clf = MinibatchMHLogisticRegression(random_state=0, **settings).fit(X, y)
        seconds = time.perf_counter() - started
    finally:
        _base.LinearMHEstimator._linear_data = original
    in_place = bool(seen) and seen[0].X.dtype == np.float32 and np.shares_memory(seen[0].X, X)
    return clf, seconds, in_place


def weights_of(clf):
    """The (chains, draws, features + 1) draws of the weights and the intercept."""
    return np.concatenate([clf.posterior_["coef"], clf.posterior_["intercept"][..., None]],
                          axis=-1)


def agreement(draws, reference):
    """The largest |z| of the means' difference and of the sds' difference, each over both
    sides' Monte Carlo standard errors, and the smallest shift (in sds) and relative sd
    error that a test at |z| <= 4 would see with 90% power."""
    mean_a, mean_b = draws.mean(axis=(0, 1)), reference.mean(axis=(0, 1))
    sd_a, sd_b = draws.std(axis=(0, 1)), reference.std(axis=(0, 1))
    mean_error = np.hypot(diagnostics.mcse_mean(draws), diagnostics.mcse_mean(reference))
    sd_error = np.hypot(diagnostics.mcse_sd(draws), diagnostics.mcse_sd(reference))
    z_mean = np.abs(mean_a - mean_b) / mean_error
    z_sd = np.abs(sd_a - sd_b) / sd_error
    power = Z_LIMIT + 1.2816  # z of 90% power beyond the limit
    return dict(z_mean=float(z_mean.max()), z_sd=float(z_sd.max()),
                detectable_shift=float(np.max(power * mean_error / sd_b)),
                detectable_sd=float(np.max(power * sd_error / sd_b)))


def real_size_memmap(folder):
    X, y = write_memmap(folder)
    print(f"1. float32 memmap: {N_ROWS:,} rows x {N_FEATURES} features, X {X.nbytes / 2**20:.1f} "
          f"MiB on disk")
    print(f"   thresholds: FLOAT32_IN_PLACE_MIN_BYTES {_inputs.FLOAT32_IN_PLACE_MIN_BYTES:,} "
          f"(X has {X.nbytes:,}); DENSE_POOL_MAX_ROWS {_samplers.DENSE_POOL_MAX_ROWS:,} and "
          f"TANGENT_CACHE_MAX_ROWS {models_base.TANGENT_CACHE_MAX_ROWS:,} (X has {N_ROWS:,} "
          f"rows)")
    fits = {}
    for name, settings in (("default (minibatch)", {}), ("firefly", dict(acceptance="firefly"))):
        clf, seconds, in_place = fit_recording_layout(X, y, **settings)
        fits[name] = clf
        summary = diagnostics.summarize(weights_of(clf))
        pool = ("sparse row pool" if N_ROWS > _samplers.DENSE_POOL_MAX_ROWS and
                clf.acceptance_.name != "firefly" else
                "tangents recomputed" if clf.acceptance_.name == "firefly" else "dense pool")
        print(f"   {name:<20} {clf.acceptance_.name}/{clf.proposal_.name}"
              f"{'+CV' if clf.control_variates_ else ''}: {seconds:6.1f} s, X read in place "
              f"as float32: {'yes' if in_place else 'NO'}, {pool}, rows read per iteration "
              f"{clf.posterior_['rows_per_iteration'].mean():,.1f}, max R-hat "
              f"{summary['r_hat'].max():.3f}, min bulk ESS {summary['ess_bulk'].min():,.0f}")
    found = agreement(weights_of(fits["default (minibatch)"]), weights_of(fits["firefly"]))
    verdict = "agree" if max(found["z_mean"], found["z_sd"]) <= Z_LIMIT else "DISAGREE"
    print(f"   minibatch against Firefly: max |z| of means {found['z_mean']:.2f}, of sds "
          f"{found['z_sd']:.2f} (limit {Z_LIMIT:g}): {verdict}; at 90% power the pair sees a "
          f"shift of {found['detectable_shift']:.3f} sd and an sd error of "
          f"{100 * found['detectable_sd']:.1f}%")


def demo_at_its_size():
    print("\n2. the README's demo at its own size (20,000 rows, 4 chains x 1,000 draws)")
    print(f"   {'test':<11} {'|shift| / error':>16} {'|sd ratio - 1| / error':>23} "
          f"{'seconds':>8}")
    for row in compare(n_data=20_000, n_draws=1000, seed=0):
        if row["name"] == "metropolis":
            print(f"   {'metropolis':<11} {'(reference)':>16} {'(reference)':>23} "
                  f"{row['seconds']:8.1f}")
            continue
        z_shift = row["shift"] / row["shift_error"]
        z_sd = abs(row["sd_ratio_worst"] - 1.0) / row["sd_ratio_error"]
        flag = "" if max(z_shift, z_sd) <= Z_LIMIT else "  beyond 4"
        print(f"   {row['name']:<11} {z_shift:16.2f} {z_sd:23.2f} {row['seconds']:8.1f}{flag}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None,
                        help="where the 64 MiB memmap is written (default: a temporary "
                             "directory, removed afterwards)")
    args = parser.parse_args()
    if args.dir is None:
        with tempfile.TemporaryDirectory() as folder:
            real_size_memmap(Path(folder))
    else:
        args.dir.mkdir(parents=True, exist_ok=True)
        real_size_memmap(args.dir)
    demo_at_its_size()


if __name__ == "__main__":
    main()

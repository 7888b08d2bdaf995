"""Tall data on disk: fits on an ``np.memmap`` too large to copy, and what they cost.

Generates (once, chunk by chunk) ``--rows`` x ``--features`` logistic-regression data in
``--dtype`` as two ``.npy`` files in ``--dir`` (10^8 x 10 float32: 4.0 GB for X), then fits
``MinibatchMHLogisticRegression`` with the control-variate minibatch test and with Firefly,
on all rows and on the first ``--small-rows`` rows (a view of the same file), with default
settings otherwise. For each fit it prints:

- peak anonymous memory during the fit (resident memory that is not the file's pages,
  sampled every 20 ms from ``/proc/self/status``; Linux only), also as a percentage of the
  file;
- the setup (validation, MAP and Laplace, control variates or Firefly's bounds): seconds,
  full-data passes (``data_passes_``) and the read rate they reached, next to the anchor:
  NumPy summing the same memmap on one thread, and on every core;
- the sampling time per iteration (kept iterations, per chain) and its ratio against the
  ``--small-rows`` fit, the rows read per iteration, and the convergence figures.

The file is read through the page cache: with enough memory it is cached after the first
pass, and the anchor then measures the same cached reads the fits make.

Run: ``python benchmarks/studies/tall_data.py --dir /path/with/5GB/free`` (about 10 minutes at the
defaults on two cores after the file exists; generating it takes a few minutes).
"""
import argparse
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table


class AnonymousPeak:
    """The peak of this process's anonymous resident memory (``RssAnon``: not a memory
    map's file pages) while the block runs, above its level at the start (``bytes``),
    sampled every ``interval`` seconds."""

    def __init__(self, interval=0.02):
        self.interval = interval

    def __enter__(self):
        self.start = self.peak = _anonymous()
        self.done = False
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()
        return self

    def _watch(self):
        while not self.done:
            self.peak = max(self.peak, _anonymous())
            time.sleep(self.interval)

    def __exit__(self, *exc):
        self.done = True
        self.thread.join()
        self.peak = max(self.peak, _anonymous())
        self.bytes = self.peak - self.start


def _anonymous():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return 0


def generate(directory, n_rows, n_features, dtype, seed=0):
    """``X.npy`` and ``y.npy`` in ``directory`` (kept if they exist with this shape)."""
    directory.mkdir(parents=True, exist_ok=True)
    x_path, y_path = directory / "X.npy", directory / "y.npy"
    if x_path.exists() and y_path.exists():
        X = np.load(x_path, mmap_mode="r")
        if X.shape == (n_rows, n_features) and X.dtype == dtype:
            return x_path, y_path
    started = time.perf_counter()
    X = np.lib.format.open_memmap(x_path, mode="w+", dtype=dtype, shape=(n_rows, n_features))
    y = np.lib.format.open_memmap(y_path, mode="w+", dtype=dtype, shape=(n_rows,))
    rng = np.random.default_rng(seed)
    weights = rng.normal(scale=0.5, size=n_features)
    for start in range(0, n_rows, 1_000_000):
        stop = min(start + 1_000_000, n_rows)
        block = rng.standard_normal((stop - start, n_features)).astype(dtype)
        X[start:stop] = block
        y[start:stop] = rng.random(stop - start) < 1.0 / (1.0 + np.exp(-(block @ weights)))
    X.flush()
    y.flush()
    del X, y
    print(f"generated {n_rows:,} x {n_features} {np.dtype(dtype).name} in "
          f"{time.perf_counter() - started:.0f} s")
    return x_path, y_path


def bandwidth_anchor(X):
    """GB/s of NumPy summing ``X`` chunk by chunk, on one thread and on every core."""
    from skbayes_mh._passes import chunks, map_stripes

    def stripe(begin, end):
        return sum(float(np.asarray(X[a:b]).sum()) for a, b in chunks(begin, end))

    stripe(0, X.shape[0])  # warm the page cache
    started = time.perf_counter()
    stripe(0, X.shape[0])
    one = X.nbytes / (time.perf_counter() - started) / 1e9
    started = time.perf_counter()
    map_stripes(stripe, X.shape[0])
    every = X.nbytes / (time.perf_counter() - started) / 1e9
    return one, every


def fit(X, y, acceptance, seed):
    from skbayes_mh import MinibatchMHLogisticRegression

    model = MinibatchMHLogisticRegression(acceptance=acceptance, n_jobs=-1, random_state=seed)
    with warnings.catch_warnings(record=True) as caught, AnonymousPeak() as memory:
        warnings.simplefilter("always")
        started = time.perf_counter()
        model.fit(X, y)
        wall = time.perf_counter() - started
    seconds = model.posterior_["seconds"][:, -1]
    kept_iterations = model.posterior_.n_draws * model.thin_  # n_draws may be "auto"
    rhat = max(float(np.nanmax(v)) for v in model.diagnostics_.r_hat.values())
    ess = min(float(np.nanmin(v)) for v in model.diagnostics_.ess_bulk.values())
    return {"wall": wall, "memory": memory.bytes, "setup": model.setup_time_,
            "passes": model.data_passes_,
            "per_iteration": float(np.mean(seconds / kept_iterations)),
            "rows": float(model.posterior_["rows_per_iteration"].mean()), "rhat": rhat, "ess": ess,
            "thin": int(model.thin_.max()),
            "warned": any("converged" in str(w.message) for w in caught)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, required=True, help="where the data files go")
    parser.add_argument("--rows", type=float, default=1e8)
    parser.add_argument("--small-rows", type=float, default=1e6)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--tests", default="minibatch,firefly")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    n_rows, n_small = int(args.rows), int(args.small_rows)
    x_path, y_path = generate(args.dir, n_rows, args.features, np.dtype(args.dtype))
    X = np.load(x_path, mmap_mode="r")
    y = np.load(y_path, mmap_mode="r")
    file_bytes = X.nbytes + y.nbytes
    one, every = bandwidth_anchor(X)
    print(f"data: {n_rows:,} x {args.features} {args.dtype}, {file_bytes / 1e9:.2f} GB on disk "
          f"(X and y)")
    print(f"anchor: NumPy sum over the memmap X {one:.2f} GB/s on one thread, {every:.2f} GB/s "
          f"on every core")
    rows = []
    for acceptance in args.tests.split(","):
        results = {}
        for label, count in (("small", n_small), ("all", n_rows)):
            results[label] = fit(X[:count], y[:count], acceptance, args.seed)
        small = results["small"]
        for label, count in (("small", n_small), ("all", n_rows)):
            r = results[label]
            passes = r["passes"]
            setup_passes = passes.total - passes.get("firefly_start", 0.0)
            data_bytes = count * (X.itemsize * args.features + y.itemsize)
            rows.append([
                acceptance, f"{count:,}", f"{r['wall']:.1f}",
                f"{r['memory'] / 2**20:.0f} MiB ({100 * r['memory'] / data_bytes:.1f}%)",
                f"{r['setup']:.1f}", f"{setup_passes:.2f}",
                f"{setup_passes * data_bytes / r['setup'] / 1e9:.2f}",
                f"{1e6 * r['per_iteration']:.1f}",
                f"{r['per_iteration'] / small['per_iteration']:.2f}",
                f"{r['rows']:.1f}", r["thin"], f"{r['rhat']:.3f}", f"{r['ess']:.0f}",
                "yes" if r["warned"] else "no"])
    table(rows, ["test", "rows", "wall s", "peak anon (% of data)", "setup s", "setup passes",
                 "setup GB/s", "us/iter", "vs small", "rows/iter", "thin", "R-hat", "min ESS",
                 "warned"])
    print("setup passes: validation, MAP and Laplace (the subsample's as a fraction), control "
          "variates or Firefly's bounds; Firefly's start draws every brightness once per chain "
          "(one more pass each, in the chains' time).")


if __name__ == "__main__":
    main()

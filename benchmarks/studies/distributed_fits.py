"""Distributed fits at a real size: a Dask ``LocalCluster`` of worker processes fitting a
chunked array read from ``.npy`` chunks on disk, and chains on Ray, each against the same
fit in memory.

Generates (once, chunk by chunk) ``--rows`` x ``--features`` logistic-regression data as a
Dask ``.npy`` stack in ``--dir`` (one file per ``--chunk`` rows; 10^7 x 10 float64: 800 MB),
then fits ``MinibatchMHLogisticRegression`` with default settings and ``random_state=0``:

1. from ``dask.array.from_npy_stack`` on a ``LocalCluster`` of ``--workers`` single-threaded
   worker processes (started before this process holds any data): the full-data passes run
   on the workers holding the blocks, then the rows are gathered for the chains;
2. in memory (the stack loaded into one array), chains in threads: the reference;
3. in memory, chains on a local Ray instance through its joblib backend (the data reach the
   workers as read-only zero-copy views).

For each it prints the wall time of ``fit`` (setup included), the peak resident memory of
each worker process (Dask: the workers' own ``ru_maxrss``; Ray: the largest resident size
seen, sampled every 50 ms, which counts the pages of the shared object store a worker
touched; in parentheses, the same worker's peak in a fit of 10^4 rows just before: its own
size) and of this process (its peak so far, and for the fits in this process the
largest growth during the fit, sampled alike: under Ray it counts the data's one copy in the
object store), and the posterior's agreement with the in-memory fit: whether the draws are
identical, and the largest difference of a posterior mean in Monte Carlo errors.

Run: ``python benchmarks/studies/distributed_fits.py`` (10^7 rows; a few minutes on two cores after the
stack exists, which takes about a minute to write); ``--rows 1000000`` for a quick look.
Needs the ``dask`` and ``ray`` extras.
"""
import argparse
import resource
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table

#: True coefficients of the generated data (and an intercept of 0.3).
TRUE_SCALE = 0.5


def write_stack(directory, n_rows, n_features, chunk, seed=0):
    """A Dask ``.npy`` stack of logistic-regression rows in ``directory/X`` and
    ``directory/y`` (kept for later runs with the same sizes)."""
    import dask.array as da

    directory = Path(directory) / f"logistic_{n_rows}x{n_features}_{chunk}"
    if (directory / "y" / "info").exists():
        return directory
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    coef = rng.normal(0.0, TRUE_SCALE, n_features)
    blocks_X, blocks_y = [], []
    for start in range(0, n_rows, chunk):
        rows = min(chunk, n_rows - start)
        X = rng.standard_normal((rows, n_features))
        y = (X @ coef + 0.3 + rng.logistic(size=rows) > 0).astype(np.float64)
        blocks_X.append(da.from_array(X, chunks=(rows, n_features)))
        blocks_y.append(da.from_array(y, chunks=rows))
    da.to_npy_stack(directory / "X", da.concatenate(blocks_X))
    da.to_npy_stack(directory / "y", da.concatenate(blocks_y))
    return directory


def peak_rss_bytes():
    """This process's peak resident memory (``ru_maxrss`` is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class ProcessPeaks:
    """The largest resident size of every process whose name starts with ``prefix`` (None: none),
    sampled every 50 ms while the block runs (for Ray's workers, which a Parallel call
    starts and stops), and this process's largest resident size above its size when the
    block began (``own_growth``)."""

    def __init__(self, prefix):
        self.prefix, self.peaks, self.done = prefix, {}, False

    def __enter__(self):
        import psutil

        self.own = psutil.Process()
        self.own_start = self.own_peak = self.own.memory_info().rss
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()
        return self

    @property
    def own_growth(self):
        return self.own_peak - self.own_start

    def _watch(self):
        import psutil

        while not self.done:
            self.own_peak = max(self.own_peak, self.own.memory_info().rss)
            for process in psutil.process_iter(["pid", "name", "memory_info"]) \
                    if self.prefix is not None else ():
                info = process.info
                if (info["name"] or "").startswith(self.prefix) and info["memory_info"]:
                    self.peaks[info["pid"]] = max(self.peaks.get(info["pid"], 0),
                                                  info["memory_info"].rss)
            time.sleep(0.05)

    def __exit__(self, *exc):
        self.done = True
        self.thread.join()


def mb(n_bytes):
    return f"{n_bytes / 1e6:,.0f}"


def agreement(fit, reference):
    """Whether the draws are identical, and the largest |difference of posterior means| in
    Monte Carlo errors (each mean's error sd / sqrt(ESS), the two fits' errors combined)."""
    identical = all(np.array_equal(fit.posterior_[name], reference.posterior_[name])
                    for name in reference.posterior_.draws)
    worst = 0.0
    for name in reference.posterior_.draws:
        a = fit.posterior_.get(name, flat=True)
        b = reference.posterior_.get(name, flat=True)
        ess = np.minimum(fit.diagnostics_["ess_bulk"][name], reference.diagnostics_["ess_bulk"][name])
        error = np.sqrt(2.0) * b.std(axis=0) / np.sqrt(ess)
        worst = max(worst, float(np.max(np.abs(a.mean(axis=0) - b.mean(axis=0)) / error)))
    return identical, worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--chunk", type=int, default=1_000_000, help="rows per .npy chunk")
    parser.add_argument("--workers", type=int, default=4, help="Dask worker processes")
    parser.add_argument("--dir", default=tempfile.gettempdir(),
                        help="where the .npy stack is written (kept for later runs)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    import dask.array as da
    import distributed
    import joblib
    import ray
    from ray.util.joblib import register_ray

    from skbayes_mh import MinibatchMHLogisticRegression

    # The cluster starts first, so that its worker processes do not inherit this process's
    # memory (their ru_maxrss would count it).
    cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                       processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    started = time.perf_counter()
    stack = write_stack(args.dir, args.rows, args.features, args.chunk)
    X_dask, y_dask = da.from_npy_stack(stack / "X"), da.from_npy_stack(stack / "y")
    print(f"data: {args.rows:,} x {args.features} float64 ({mb(X_dask.nbytes)} MB for X) in "
          f"{X_dask.numblocks[0]} .npy chunks at {stack} ({time.perf_counter() - started:.1f} s)")

    def estimator():
        return MinibatchMHLogisticRegression(random_state=0)

    rows = []
    try:
        started = time.perf_counter()
        remote = estimator().fit(X_dask, y_dask)
        dask_seconds = time.perf_counter() - started
        peaks = client.run(peak_rss_bytes)
        gathered_peak = peak_rss_bytes()  # the rows gathered here for the chains
    finally:
        client.close()
        cluster.close()
    X, y = X_dask.compute(scheduler="threads"), y_dask.compute(scheduler="threads")
    with ProcessPeaks(None) as watch:
        started = time.perf_counter()
        reference = estimator().fit(X, y)
        seconds = time.perf_counter() - started
    rows.append(["in memory, threads", f"{seconds:.1f}", "-", mb(peak_rss_bytes()),
                 mb(watch.own_growth), "reference", "-"])
    identical, worst = agreement(remote, reference)
    rows.append([f"Dask, {args.workers} worker processes", f"{dask_seconds:.1f}",
                 " / ".join(mb(p) for p in peaks.values()), mb(gathered_peak), "-",
                 "yes" if identical else "no", f"{worst:.2g}"])

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        register_ray()
        with joblib.parallel_config(backend="ray", n_jobs=2):
            # The workers' own size first (Python, the libraries, the kernels): a fit of
            # 10^4 of the rows, in the worker processes the big fit then reuses.
            with ProcessPeaks("ray::") as small:
                estimator().fit(X[:10_000], y[:10_000])
            with ProcessPeaks("ray::") as watch:
                started = time.perf_counter()
                remote = estimator().fit(X, y)
                seconds = time.perf_counter() - started
    finally:
        ray.shutdown()
    identical, worst = agreement(remote, reference)
    workers = sorted(watch.peaks.items(), key=lambda item: -item[1])[:4]
    rows.append(["Ray, chains on 2 workers", f"{seconds:.1f}",
                 " / ".join(f"{mb(peak)} ({mb(small.peaks.get(pid, 0))})"
                            for pid, peak in workers) or "-",
                 mb(peak_rss_bytes()), mb(watch.own_growth),
                 "yes" if identical else "no", f"{worst:.2g}"])

    print(f"\nMinibatchMHLogisticRegression defaults ({reference.n_chains} chains x "
          f"{reference.n_draws} draws; acceptance {reference.acceptance_.name!r}), "
          f"reference R-hat {max(float(np.max(v)) for v in reference.diagnostics_['r_hat'].values()):.3f}:")
    table(rows, ["fit", "wall s", "worker peak MB", "this process peak MB",
                 "this process: fit's peak above its start MB", "draws identical",
                 "max |mean diff| / MC error"])


if __name__ == "__main__":
    main()

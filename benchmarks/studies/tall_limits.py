"""Tall data at its limits: a default ``MinibatchMHLogisticRegression`` fit of N x 10 float32
rows at N = 10^6, 10^7 and 10^8 (4 GB), from a memmap and from a ``dask.array`` on a
``LocalCluster``, each fit in a fresh process.

For each size and path it prints the wall time of ``fit`` (setup included), the setup's
time and full-data passes, the rows read per iteration (the minibatch test's promise: about
independent of N), the peak resident and anonymous memory of the fitting process (sampled
every 50 ms; anonymous memory excludes the file's pages in the page cache) and, for Dask,
each worker's peak, and the posterior's agreement with the exact test's on the first 10^6
rows, tempered to N rows (``temperature = 10^6 / N``: the same weight of data, so the same
spread): the ratio of the sds, and each mean's distance from the reference's in units of
the subset's own posterior sd (the reference sd times ``sqrt(N / 10^6)``), the scale of
the subset's sampling noise, so about 1 and rarely above 3 whatever N.

The Dask path reads the rows from a zarr store (``dask.array.from_zarr``; a ``.npy`` stack,
``from_npy_stack``, when zarr is not installed), runs the full-data passes on two
single-threaded worker processes and gathers the rows for the chains: into memory, or with
``--gather-on-disk`` (``skbayes_mh._dask.GATHER_IN_MEMORY_MAX_SHARE = 0``, what rows
above half the available memory get) into memmaps in ``--dir``.

Run: ``python benchmarks/studies/tall_limits.py`` (writes 4.4 GB to ``--dir`` once, then about ten
minutes on two cores); ``--sizes 1000000,10000000`` for a quicker look.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table

N_FEATURES = 10
#: Rows of the exact reference fit (the first rows of every data set).
REFERENCE_ROWS = 1_000_000
#: Rows per block when writing (and per Dask block when reading).
BLOCK_ROWS = 1_000_000


def write_data(directory, n_rows, seed=0):
    """``X.npy`` (float32) and ``y.npy`` (float32 labels) of logistic rows in
    ``directory/tall_<n_rows>``, and the same rows in a zarr store (or a Dask ``.npy`` stack
    without zarr) beside them; written block by block, once (kept for later runs)."""
    folder = Path(directory) / f"tall_{n_rows}"
    if (folder / "done").exists():
        return _with_blocks(folder, X_npy=folder / "X.npy", y_npy=folder / "y.npy")
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    coef = np.linspace(-1.0, 1.0, N_FEATURES) * 0.5
    X = np.lib.format.open_memmap(folder / "X.npy", "w+", np.float32, (n_rows, N_FEATURES))
    y = np.lib.format.open_memmap(folder / "y.npy", "w+", np.float32, (n_rows,))
    for start in range(0, n_rows, BLOCK_ROWS):
        rows = min(BLOCK_ROWS, n_rows - start)
        block = rng.standard_normal((rows, N_FEATURES), dtype=np.float32)
        X[start:start + rows] = block
        y[start:start + rows] = block @ coef + 0.3 + rng.logistic(size=rows) > 0
    X.flush()
    y.flush()
    del X, y

    (folder / "done").touch()
    return _with_blocks(folder, X_npy=folder / "X.npy", y_npy=folder / "y.npy")


def _with_blocks(folder, X_npy, y_npy):
    """``folder``, after writing the rows as Dask blocks there if not yet done: a zarr
    store when zarr is installed, else a ``.npy`` stack."""
    import dask.array as da

    store = "zarr" if zarr_installed() else "stack"
    if not (folder / f"{store}_done").exists():
        X = da.from_array(np.load(X_npy, mmap_mode="r"), chunks=(BLOCK_ROWS, N_FEATURES))
        y = da.from_array(np.load(y_npy, mmap_mode="r"), chunks=BLOCK_ROWS)
        if store == "zarr":
            da.to_zarr(X, str(folder / "X.zarr"), overwrite=True)
            da.to_zarr(y, str(folder / "y.zarr"), overwrite=True)
        else:
            da.to_npy_stack(folder / "X_stack", X)
            da.to_npy_stack(folder / "y_stack", y)
        (folder / f"{store}_done").touch()
    return folder


def zarr_installed():
    try:
        import zarr  # noqa: F401
    except ImportError:
        return False
    return True


def dask_blocks(folder):
    """The rows of ``folder`` as Dask arrays read from its zarr store or ``.npy`` stack."""
    import dask.array as da

    if zarr_installed():
        return da.from_zarr(str(folder / "X.zarr")), da.from_zarr(str(folder / "y.zarr"))
    return da.from_npy_stack(folder / "X_stack"), da.from_npy_stack(folder / "y_stack")


class MemoryWatch:
    """Peak resident and anonymous memory of this process (``/proc/self/status``), sampled
    every 50 ms."""

    def __init__(self):
        self.peaks = {"VmRSS": 0, "RssAnon": 0}
        self.done = False

    def sample(self):
        with open("/proc/self/status") as status:
            for line in status:
                key = line.split(":")[0]
                if key in self.peaks:
                    self.peaks[key] = max(self.peaks[key], int(line.split()[1]) * 1024)

    def __enter__(self):
        self.sample()
        self.start = dict(self.peaks)

        def watch():
            while not self.done:
                self.sample()
                time.sleep(0.05)

        self.thread = threading.Thread(target=watch, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done = True
        self.thread.join()


def one_fit(path, folder, n_rows, on_disk, temp_folder):
    """The fit of one path in this process: its figures as a dict."""
    from skbayes_mh import MinibatchMHLogisticRegression

    warnings.simplefilter("ignore")
    estimator = MinibatchMHLogisticRegression(random_state=0)
    workers = []
    if path == "memmap":
        X = np.load(folder / "X.npy", mmap_mode="r")
        y = np.load(folder / "y.npy", mmap_mode="r")
        with MemoryWatch() as watch:
            started = time.perf_counter()
            fit = estimator.fit(X, y)
            seconds = time.perf_counter() - started
    elif path == "reference":
        X = np.load(folder / "X.npy", mmap_mode="r")[:REFERENCE_ROWS]
        y = np.load(folder / "y.npy", mmap_mode="r")[:REFERENCE_ROWS]
        estimator.set_params(acceptance="metropolis",
                             temperature=REFERENCE_ROWS / n_rows)
        with MemoryWatch() as watch:
            started = time.perf_counter()
            fit = estimator.fit(np.asarray(X, dtype=np.float64), np.asarray(y))
            seconds = time.perf_counter() - started
    else:
        import distributed

        from skbayes_mh import _dask

        if on_disk:
            _dask.GATHER_IN_MEMORY_MAX_SHARE = 0.0
            os.environ[_dask.TEMP_FOLDER_VARIABLE] = temp_folder
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            X, y = dask_blocks(folder)
            with MemoryWatch() as watch:
                started = time.perf_counter()
                fit = estimator.fit(X, y)
                seconds = time.perf_counter() - started
            workers = sorted(client.run(_peak_rss).values(), reverse=True)
    draws = fit._theta_draws().reshape(-1, N_FEATURES + 1)
    return {"seconds": seconds, "setup": float(fit.setup_time_),
            "passes": float(fit.data_passes_["total"]),
            "rows_per_iteration": float(np.mean(fit.posterior_["rows_per_iteration"])),
            "acceptance": fit.acceptance_.name,
            "rss": watch.peaks["VmRSS"] - watch.start["VmRSS"],
            "anon": watch.peaks["RssAnon"] - watch.start["RssAnon"],
            "workers": workers, "mean": draws.mean(axis=0).tolist(),
            "sd": draws.std(axis=0).tolist(),
            "rhat": max(float(np.max(v)) for v in fit.diagnostics_["r_hat"].values())}


def _peak_rss():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def in_fresh_process(*arguments):
    """:func:`one_fit` in a child process (each fit's memory measured from a clean start)."""
    output = subprocess.run([sys.executable, __file__, "--one", *map(str, arguments)],
                            capture_output=True, text=True, check=False)
    if output.returncode != 0:
        raise RuntimeError(f"the fit {arguments} failed:\n{output.stderr[-3000:]}")
    return json.loads(output.stdout.strip().splitlines()[-1])


def mb(n_bytes):
    return f"{n_bytes / 1e6:,.0f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000000,10000000,100000000")
    parser.add_argument("--dir", default=tempfile.gettempdir(),
                        help="where the data (and --gather-on-disk's files) are written")
    parser.add_argument("--gather-on-disk", action="store_true",
                        help="the Dask path gathers the rows into memmaps in --dir")
    parser.add_argument("--one", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        path, folder, n_rows, on_disk, temp_folder = args.one
        print(json.dumps(one_fit(path, Path(folder), int(n_rows), on_disk == "True",
                                 temp_folder)))
        return
    rows = []
    for n_rows in map(int, args.sizes.split(",")):
        started = time.perf_counter()
        folder = write_data(args.dir, n_rows)
        print(f"{n_rows:,} x {N_FEATURES} float32 ({mb(n_rows * N_FEATURES * 4)} MB of X) "
              f"at {folder} ({time.perf_counter() - started:.0f} s)", flush=True)
        reference = in_fresh_process("reference", folder, n_rows, False, args.dir)
        ref_mean, ref_sd = np.array(reference["mean"]), np.array(reference["sd"])
        for path in ("memmap", "dask"):
            result = in_fresh_process(path, folder, n_rows, args.gather_on_disk, args.dir)
            subset_sd = ref_sd * np.sqrt(n_rows / REFERENCE_ROWS)
            shift = np.max(np.abs(np.array(result["mean"]) - ref_mean) / subset_sd)
            ratio = np.array(result["sd"]) / ref_sd
            label = path if path == "memmap" else (
                f"dask ({'zarr' if zarr_installed() else '.npy stack'}), gathered"
                + (" to disk" if args.gather_on_disk else ""))
            rows.append([f"{n_rows:,}", label, f"{result['seconds']:.1f}",
                         f"{result['setup']:.1f}", f"{result['passes']:.0f}",
                         f"{result['rows_per_iteration']:,.0f}", mb(result["rss"]),
                         mb(result["anon"]),
                         " / ".join(mb(p) for p in result["workers"]) or "-",
                         f"{result['rhat']:.3f}", f"{shift:.2f}",
                         f"{ratio.min():.2f}-{ratio.max():.2f}"])
            print(rows[-1], flush=True)
    print(f"\nDefault MinibatchMHLogisticRegression fits (each in a fresh process); the "
          f"reference: the exact test on the first {REFERENCE_ROWS:,} rows at temperature "
          f"{REFERENCE_ROWS:,} / N")
    table(rows, ["N", "path", "wall s", "setup s", "passes", "rows read / iteration",
                 "peak RSS growth MB", "peak anonymous growth MB", "Dask worker peaks MB",
                 "max R-hat", "max |mean - reference| / subset sd",
                 "sd / reference sd"])


if __name__ == "__main__":
    main()

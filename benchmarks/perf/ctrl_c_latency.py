"""How soon ``fit`` returns after Ctrl-C when its chains run on worker processes: on a Dask
``LocalCluster`` (two single-threaded worker processes) and on a local Ray (two CPUs), with
the flag file the stop signal writes for workers on this machine, and without it (the file
withheld, as for workers on another machine, which cannot see it: the chains ask the
cluster instead, a Dask ``Event`` or a Ray actor by name, at most every half second).

Each fit asks for 10^6 draws of two chains on 20,000 rows x 8 features and is sent SIGINT
after ``--after`` seconds; printed: the seconds from the signal to ``fit`` returning, and
the draws each chain kept.

    python benchmarks/perf/ctrl_c_latency.py [--backends dask ray] [--repeats 3] [--after 3]
"""
import argparse
import os
import signal
import threading
import time
import warnings

import joblib
import numpy as np

from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh.sampling import _parallel

SETTINGS = dict(acceptance="metropolis", n_warmup=100, n_chains=2, n_jobs=2, random_state=3)


def data():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20_000, 8))
    eta = X @ rng.normal(0.0, 0.3, 8)
    return X, (eta + rng.logistic(size=len(eta)) > 0).astype(int)


def interrupted(X, y, after):
    """Seconds from SIGINT to ``fit`` returning, and the draws a chain kept."""
    sent = {}

    def fire():
        time.sleep(after)
        sent["at"] = time.perf_counter()
        os.kill(os.getpid(), signal.SIGINT)

    clf = MinibatchMHLogisticRegression(**SETTINGS, n_draws=10**6)
    timer = threading.Thread(target=fire, daemon=True)
    timer.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    timer.join()
    return time.perf_counter() - sent["at"], clf.posterior_["coef"].shape[1]


def start(backend):
    if backend == "dask":
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        return Client(cluster), lambda client: (client.close(), cluster.close())
    import ray
    from ray.util.joblib import register_ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    register_ray()
    return None, lambda _: ray.shutdown()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backends", nargs="+", default=["dask", "ray"],
                        choices=["dask", "ray"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--after", type=float, default=3.0)
    args = parser.parse_args()
    X, y = data()
    touch = _parallel._touch
    for backend in args.backends:
        handle, stop = start(backend)
        try:
            with joblib.parallel_config(backend=backend, n_jobs=2):
                with warnings.catch_warnings():  # the workers start, their kernels load
                    warnings.simplefilter("ignore")
                    MinibatchMHLogisticRegression(**SETTINGS, n_draws=5).fit(X, y)
                for shared_disk in (True, False):
                    _parallel._touch = touch if shared_disk else (lambda path: None)
                    runs = [interrupted(X, y, args.after) for _ in range(args.repeats)]
                    print(f"{backend:>5}, {'flag file   ' if shared_disk else 'cluster only'}:"
                          f" returned {', '.join(f'{s:.2f}' for s, _ in runs)} s after Ctrl-C;"
                          f" draws a chain {', '.join(str(n) for _, n in runs)}", flush=True)
        finally:
            _parallel._touch = touch
            stop(handle)


if __name__ == "__main__":
    main()

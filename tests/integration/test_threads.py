"""Fits side by side in one process, and fits inside joblib's process workers: the same
draws as one fit at a time, and no more busy threads than cores.

A fit runs its full-data passes on ``pass_threads()`` threads (every core this process may
use, at most ``NUMBA_NUM_THREADS``, which joblib's process workers set to their share of
the cores) and its chains on ``n_jobs`` threads ("all cores", a negative ``n_jobs``,
counting that share only). Pieces of parallel work running at once in one process (two
fits in threads) divide the share between them (``_passes.share_of_cores``), and passes run
one at a time."""
import threading

import joblib
import numpy as np
import pytest
import threadpoolctl
from sklearn.model_selection import GridSearchCV

from skbayes_mh import MinibatchMHLogisticRegression, RobustTRegression
from skbayes_mh._passes import PASS_CHUNK, in_threads, pass_threads, share_of_cores
from skbayes_mh.sampling._parallel import chain_jobs


def _blas_threads():
    return [(info["internal_api"], info["num_threads"])
            for info in threadpoolctl.threadpool_info() if info["user_api"] == "blas"]


def test_pieces_running_at_once_share_the_cores():
    cores = pass_threads()
    with share_of_cores() as alone:
        assert alone == cores
        assert chain_jobs(-1, alone) == cores and chain_jobs(None, alone) == alone
        with share_of_cores() as second:
            assert second == max(1, cores // 2)
    with share_of_cores() as again:
        assert again == cores  # released


def test_calls_in_the_shared_threads_keep_their_order_and_their_threads():
    # Results in the calls' order, at most the threads asked for at once, and the same
    # threads for the next calls (none started anew).
    running, most, lock = [0], [0], threading.Lock()

    def call(k):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        threading.Event().wait(0.01)
        with lock:
            running[0] -= 1
        return k * k, threading.current_thread().name

    first = in_threads(call, [(k,) for k in range(6)], 2)
    assert [value for value, _ in first] == [k * k for k in range(6)] and most[0] == 2
    again = in_threads(call, [(k,) for k in range(6)], 2)
    assert all(name.startswith("skbayes_mh") for _, name in first + again)
    before = threading.active_count()
    in_threads(call, [(k,) for k in range(4)], 2)
    assert threading.active_count() == before


def test_a_failed_call_is_raised_and_the_calls_not_started_are_dropped():
    started = []

    def call(k):
        started.append(k)
        if k == 1:
            raise ValueError("call 1")
        threading.Event().wait(0.05)
        return k

    with pytest.raises(ValueError, match="call 1"):
        in_threads(call, [(k,) for k in range(40)], 2)
    threading.Event().wait(0.2)  # what was running has ended
    assert len(started) < 10  # the rest never ran


def test_calls_from_a_shared_thread_run_in_that_thread():
    # A call that maps again (a chain's own parallel work) runs its calls itself: waiting
    # for threads its callers hold could never end.
    def inner(k):
        return threading.current_thread().name

    def outer(k):
        here = threading.current_thread().name
        return all(name == here for name in in_threads(inner, [(j,) for j in range(4)], 2))

    assert all(in_threads(outer, [(k,) for k in range(2)], 2))


def test_two_passes_at_once_never_run_more_stripes_than_cores():
    # Two passes in two threads run one at a time (each holds BLAS to one thread and gives it
    # back itself), and BLAS gets its thread count back.
    import time

    from skbayes_mh._passes import sum_stripes

    before = _blas_threads()
    spans = []
    start = threading.Barrier(2)

    def one_pass():
        def stripe(begin_row, end_row):
            begin = time.perf_counter()
            time.sleep(0.02)
            spans.append((begin, time.perf_counter()))
            return (end_row - begin_row,)

        start.wait()
        assert sum_stripes(stripe, 4 * PASS_CHUNK)[0] == 4 * PASS_CHUNK

    threads = [threading.Thread(target=one_pass) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(spans) == 8
    running = max(sum(begin <= moment < end for begin, end in spans)
                  for moment, _ in spans)
    assert running <= pass_threads()
    assert _blas_threads() == before


def _tall(seed, n_rows=3 * PASS_CHUNK):
    """Data of several stripes, so that the passes run in threads."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 4))
    return X, rng.normal(size=4), rng


FIT = dict(n_draws=100, n_warmup=100, n_chains=2, n_jobs=-1, random_state=0)


def _logistic_fit():
    X, w, rng = _tall(0)
    y = (rng.random(X.shape[0]) < 1.0 / (1.0 + np.exp(-X @ w))).astype(int)
    return MinibatchMHLogisticRegression(**FIT).fit(X, y).posterior_["coef"]


def _robust_fit():
    X, w, rng = _tall(1)
    return RobustTRegression(**FIT).fit(X, X @ w + rng.standard_t(4, X.shape[0]))\
        .posterior_["coef"]


def test_two_fits_at_once_in_threads_give_the_draws_of_one_at_a_time():
    before = _blas_threads()
    alone = [_logistic_fit(), _robust_fit()]
    results = [None, None]

    def run(k, fit):
        results[k] = fit()

    threads = [threading.Thread(target=run, args=(k, fit))
               for k, fit in enumerate([_logistic_fit, _robust_fit])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    for together, one in zip(results, alone):
        np.testing.assert_array_equal(together, one)
    assert _blas_threads() == before


def _threads_in_worker():
    from skbayes_mh._passes import pass_threads, share_of_cores
    from skbayes_mh.sampling._parallel import chain_jobs

    with share_of_cores() as share:
        return pass_threads(), chain_jobs(-1, share)


def test_a_process_worker_uses_its_share_of_the_cores():
    share = max(1, joblib.cpu_count() // 2)
    found = joblib.Parallel(n_jobs=2, backend="loky")(
        joblib.delayed(_threads_in_worker)() for _ in range(2))
    assert found == [(share, share)] * 2


@pytest.mark.slow
def test_grid_search_in_process_workers_gives_the_sequential_scores():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    y = (rng.random(300) < 1.0 / (1.0 + np.exp(-X @ [1.0, -1.0, 0.5]))).astype(int)
    estimator = MinibatchMHLogisticRegression(n_draws=100, n_warmup=100, n_chains=2,
                                              n_jobs=-1, random_state=0)
    grid = {"prior_scale": [0.5, 2.0]}
    scores = [GridSearchCV(estimator, grid, cv=3, n_jobs=n_jobs).fit(X, y)
              .cv_results_["mean_test_score"] for n_jobs in (1, 2)]
    np.testing.assert_array_equal(scores[0], scores[1])

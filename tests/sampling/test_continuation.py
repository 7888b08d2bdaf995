"""Continuing a fit (``warm_start``), interrupting one (Ctrl-C), and progress reports.

A continued fit must equal one longer fit draw for draw: the chains resume from their
state, generator and frozen proposal (and Firefly's bright set). Ctrl-C must stop every
chain, worker threads included, within about a second and keep the draws so far.
"""
import contextlib
import pickle
import sys
import threading
import time
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.utils import get_tags

from skbayes_mh import (FireflySoftmaxClassifier, MinibatchMHLogisticRegression,
                        MinibatchMHPoissonRegression, RobustTRegression, sample)
from skbayes_mh.linear_model import ESTIMATORS
from skbayes_mh.sampling import _driver

from _models import (gaussian_mean_loglik, interrupt_after, interrupted_fit, needs_main_thread,
                     target_kind, timed)

SHORT = dict(n_warmup=100, n_chains=2, random_state=0)


def quiet(estimator, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: convergence warnings
        return estimator.fit(*args, **kwargs)


def cases():
    """A continued fit per sampler (the minibatch, Firefly, exact and Austerity tests), and
    every other registered estimator (``skbayes_mh.linear_model.ESTIMATORS``) at its
    defaults, on data of its kind: ``(name, estimator, X, y)``."""
    X, y = load_iris(return_X_y=True)
    X_reg, y_reg = load_diabetes(return_X_y=True)
    samplers = [
        ("logistic-minibatch", MinibatchMHLogisticRegression(acceptance="minibatch", **SHORT),
         X, y > 0),
        ("softmax-firefly", FireflySoftmaxClassifier(acceptance="firefly", **SHORT), X, y),
        ("robust-metropolis-hmc", RobustTRegression(acceptance="metropolis", **SHORT), X_reg,
         y_reg),
        ("poisson-austerity", MinibatchMHPoissonRegression(acceptance="austerity", **SHORT),
         X_reg, np.round(np.abs(y_reg) / 50)),
    ]
    yield from samplers
    covered = {type(estimator) for _, estimator, _, _ in samplers}
    targets = {"regression": (X_reg, y_reg), "counts": (X_reg, np.round(np.abs(y_reg) / 50)),
               "positive": (X_reg, np.exp(y_reg / np.abs(y_reg).max())),
               "proportions": (X, np.column_stack([2 * (y > 0), np.full(len(y), 3)]))}
    for name, cls in sorted(ESTIMATORS.items()):
        if cls in covered:
            continue
        kind = target_kind(cls)
        if kind == "classification":
            multi_class = get_tags(cls()).classifier_tags.multi_class
            yield name, cls(**SHORT), X, y if multi_class else y > 0
        else:
            yield (name, cls(**SHORT), *targets[kind])


@pytest.mark.parametrize("name, estimator, X, y", list(cases()), ids=[c[0] for c in cases()])
def test_continued_fit_equals_one_longer_fit_draw_for_draw(name, estimator, X, y):
    continued = quiet(estimator.set_params(n_draws=60, warm_start=True), X, y)
    first = {key: value.copy() for key, value in continued.posterior_.draws.items()}
    quiet(continued.set_params(n_draws=150, n_jobs=2), X, y)
    longer = quiet(estimator.__class__(**{**estimator.get_params(), "warm_start": False,
                                          "n_draws": 150}), X, y)
    for key, values in longer.posterior_.draws.items():
        assert continued.posterior_[key].shape == values.shape
        np.testing.assert_array_equal(continued.posterior_[key], values, err_msg=key)
        np.testing.assert_array_equal(continued.posterior_[key][:, :60], first[key])
    for key in ("acceptance_rate", "n_data_read", "rows_per_iteration"):
        np.testing.assert_array_equal(continued.posterior_.sample_stats[key],
                                      longer.posterior_.sample_stats[key])
    # Firefly's log pseudo-posterior is updated incrementally: equal up to rounding.
    np.testing.assert_allclose(continued.posterior_.sample_stats["lp"],
                               longer.posterior_.sample_stats["lp"], rtol=1e-12)
    # The seconds keep counting from where the first fit stopped.
    assert np.all(np.diff(continued.posterior_.sample_stats["seconds"], axis=1) >= 0)
    np.testing.assert_array_equal(continued.n_iter_, longer.n_iter_)


def test_warm_start_refuses_changes_and_explains():
    X, y = load_breast_cancer(return_X_y=True)
    clf = quiet(MinibatchMHLogisticRegression(n_draws=40, warm_start=True, **SHORT), X, y)
    with pytest.raises(ValueError, match="prior_scale changed"):
        clf.set_params(prior_scale=2.0, n_draws=80).fit(X, y)
    clf.set_params(prior_scale=1.0)
    with pytest.raises(ValueError, match="data differ"):
        clf.fit(X[:-1], y[:-1])
    with pytest.raises(ValueError, match="data differ"):
        clf.fit(X * 1.001, y)
    with pytest.raises(ValueError, match="fewer than the 40 draws"):
        clf.set_params(n_draws=20).fit(X, y)
    before = clf.posterior_["coef"].copy()
    with pytest.warns(UserWarning, match="nothing new is drawn"):
        clf.set_params(n_draws=40).fit(X, y)
    np.testing.assert_array_equal(clf.posterior_["coef"], before)
    # warm_start=False starts afresh (and forgets the chains).
    quiet(clf.set_params(warm_start=False, n_draws=30), X, y)
    assert clf.posterior_["coef"].shape == (2, 30, X.shape[1]) and not hasattr(clf, "_chains")


def test_chains_are_not_pickled_and_a_reloaded_warm_start_starts_afresh():
    X, y = load_breast_cancer(return_X_y=True)
    clf = quiet(MinibatchMHLogisticRegression(n_draws=30, warm_start=True, **SHORT), X, y)
    reloaded = pickle.loads(pickle.dumps(clf))
    assert not hasattr(reloaded, "_chains")
    np.testing.assert_array_equal(reloaded.predict_proba(X), clf.predict_proba(X))
    quiet(reloaded.set_params(n_draws=50), X, y)
    fresh = quiet(MinibatchMHLogisticRegression(n_draws=50, **SHORT), X, y)
    np.testing.assert_array_equal(reloaded.posterior_["coef"], fresh.posterior_["coef"])


def tall_breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return np.tile(X, (20, 1)), np.tile(y, 20)


@pytest.mark.slow
@needs_main_thread
def test_ctrl_c_stops_every_chain_within_a_second_keeps_draws_and_continues():
    X, y = tall_breast_cancer()
    settings = dict(acceptance="metropolis", n_warmup=100, n_chains=2, n_jobs=2,
                    random_state=3, warm_start=True)
    clf = interrupted_fit(settings, X, y, within=1.5)
    # Both worker threads stopped: no kernel is still running once fit returned.
    counts = [c.n_draws for c in clf._chains]
    time.sleep(0.3)
    assert [c.n_draws for c in clf._chains] == counts
    n_kept = clf.posterior_["coef"].shape[1]
    assert n_kept == min(counts) > 0 and np.all(np.isfinite(clf.posterior_["coef"]))
    # The interrupted chains continue exactly: as if never interrupted.
    target = max(counts) + 20
    quiet(clf.set_params(n_draws=target), X, y)
    assert not clf.interrupted_
    straight = quiet(MinibatchMHLogisticRegression(**{**settings, "n_draws": target,
                                                      "warm_start": False}), X, y)
    np.testing.assert_array_equal(clf.posterior_["coef"], straight.posterior_["coef"])


@needs_main_thread
def test_ctrl_c_in_sample_returns_the_draws_so_far():
    x = np.random.default_rng(0).normal(size=(200_000, 1))
    warmup = timed(lambda: sample(gaussian_mean_loglik, x, [0.0], step_size=0.01,
                                  acceptance="metropolis", n_draws=5, random_state=0))
    with interrupt_after(max(1.0, 3 * warmup)) as sent, \
            pytest.warns(UserWarning, match="sample was interrupted: it returns the first"):
        result = sample(gaussian_mean_loglik, x, [0.0], step_size=0.01,
                        acceptance="metropolis", n_draws=10**7, random_state=0)
    assert "at" in sent, "sample returned before Ctrl-C was sent"
    assert time.perf_counter() - sent["at"] < 1.5
    assert 0 < result.draws.shape[0] < 10**7 and np.all(np.isfinite(result.draws))


def test_a_set_stop_event_stops_worker_threads_between_chunks(monkeypatch):
    """The mechanism without a signal: chains in worker threads check the event between
    chunks of at most about MAX_CHUNK_SECONDS."""

    from skbayes_mh._core import fit as core

    event = threading.Event()

    @contextlib.contextmanager
    def fake_interruptible(description):
        yield event

    monkeypatch.setattr(core, "interruptible", fake_interruptible)
    X, y = tall_breast_cancer()
    clf = MinibatchMHLogisticRegression(acceptance="metropolis", n_draws=10**6, n_warmup=50,
                                        n_chains=2, n_jobs=2, random_state=0)
    # Kernels loaded. The event comes well after the setup and warm-up, however loaded the
    # machine: set during the warm-up, it would leave nothing to keep (KeyboardInterrupt).
    warmup = timed(lambda: quiet(clf.set_params(n_draws=5), X, y))
    delay = max(1.5, 3 * warmup)
    timer = threading.Timer(delay, event.set)
    timer.start()
    started = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf.set_params(n_draws=10**6).fit(X, y)
    finally:
        timer.cancel()
    assert any("was interrupted" in str(w.message) for w in caught)
    assert time.perf_counter() - started < delay + 1.0
    assert clf.interrupted_ and clf.posterior_["coef"].shape[0] == 2


def test_chunks_are_short_and_in_whole_draws(monkeypatch):
    """Every sampler call runs a whole number of thinned draws and about
    MAX_CHUNK_SECONDS at most; the chunking does not change the draws."""
    X, y = load_breast_cancer(return_X_y=True)
    calls = []
    original = _driver._run_in_chunks

    def spy(sampler, state, rng, total, step, largest_chunk, *rest):
        class Recorder:
            def __getattr__(self, name):
                return getattr(sampler, name)

            def run(self, state, n_iter, rng, where="sampling"):
                calls.append((where, n_iter, step))
                return sampler.run(state, n_iter, rng, where=where)

        return original(Recorder(), state, rng, total, step, largest_chunk, *rest)

    monkeypatch.setattr(_driver, "_run_in_chunks", spy)
    clf = quiet(MinibatchMHLogisticRegression(acceptance="minibatch", n_draws=200, thin=3,
                                              **SHORT), X, y)
    kept = [(n, step) for where, n, step in calls if where == "sampling"]
    assert kept and all(n % step == 0 and step == 3 for n, step in kept)
    assert sum(n for n, _ in kept) == 2 * 200 * 3
    # At least MIN_CHUNKS chunks a chain, where chunks that short take MIN_CHUNK_SECONDS
    # (none here: with it 0) ...
    calls.clear()
    monkeypatch.setattr(_driver, "MIN_CHUNK_SECONDS", 0.0)
    quiet(MinibatchMHLogisticRegression(acceptance="minibatch", n_draws=200, thin=3,
                                        **SHORT), X, y)
    assert len([n for where, n, _ in calls if where == "sampling"]) >= 2 * _driver.MIN_CHUNKS
    # ... and fewer where they would be shorter (here: all of them, with it 10 s).
    calls.clear()
    monkeypatch.setattr(_driver, "MIN_CHUNK_SECONDS", 10.0)
    quiet(MinibatchMHLogisticRegression(acceptance="minibatch", n_draws=200, thin=3,
                                        **SHORT), X, y)
    assert len([n for where, n, _ in calls if where == "sampling"]) < 2 * _driver.MIN_CHUNKS
    monkeypatch.setattr(_driver, "MAX_CHUNK_SECONDS", 1e-6)  # one draw per call
    tiny = quiet(MinibatchMHLogisticRegression(acceptance="minibatch", n_draws=200, thin=3,
                                               **SHORT), X, y)
    np.testing.assert_array_equal(tiny.posterior_["coef"], clf.posterior_["coef"])


def test_plain_progress_prints_a_few_lines(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    X, y = load_breast_cancer(return_X_y=True)
    clf = quiet(MinibatchMHLogisticRegression(n_draws=300, n_chains=4, verbose=1,
                                              n_warmup=300, random_state=0), X, y)
    # thin="auto" thins after the warm-up: each chain's total grows then, and the lines
    # count against it (not past 100%).
    assert clf.thin_.max() > 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert 3 <= len(lines) <= 12, lines
    assert "100% done" in lines[-1] and "chains: 100%, 100%, 100%, 100%" in lines[-1]
    assert all("100% done" not in line for line in lines[:-1]), lines


def test_one_progress_bar_per_chain(capsys):
    pytest.importorskip("tqdm")
    X, y = load_breast_cancer(return_X_y=True)
    clf = quiet(MinibatchMHLogisticRegression(n_draws=50, n_chains=3, verbose=1,
                                              n_warmup=300, random_state=0), X, y)
    err = capsys.readouterr().err
    for c in range(3):
        assert f"MinibatchMHLogisticRegression chain {c}" in err
        total = 300 + 50 * clf.thin_[c]  # the bar's total once thin is known
        assert f"{total}/{total}" in err
    assert "chain 3" not in err
    assert clf.thin_.max() > 1


class CountingSampler:
    """A stand-in sampler whose draws count its iterations (row ``i`` holds ``i``), so that
    the kept rows say which iterations were kept."""

    target_acceptance_rate = np.nan
    max_scale = np.inf

    def init(self, theta0, rng):
        return {"done": 0, "d": np.asarray(theta0).size}

    def run(self, state, n_iter, rng, where):
        rows = np.arange(state["done"], state["done"] + n_iter, dtype=float)
        state["done"] += n_iter
        return {"draws": np.repeat(rows[:, None], state["d"], axis=1),
                "accepted": np.ones(n_iter, dtype=bool),
                "n_data_read": np.ones(n_iter, dtype=np.int64), "lp": rows.copy()}


@pytest.mark.parametrize("thin", [1, 3])
def test_kept_draws_written_in_place_are_those_kept_otherwise(thin):
    """``run_chain(out=...)`` writes the kept draws chunk by chunk into ``out`` (every
    ``thin``-th iteration after warm-up, as without it) and the result views it."""
    n_warmup, n_draws = 20, 97
    copied = _driver.run_chain(CountingSampler(), np.zeros(2), 0, n_warmup, n_draws, thin)
    out = np.full((n_draws, 2), np.nan)
    written = _driver.run_chain(CountingSampler(), np.zeros(2), 0, n_warmup, n_draws, thin,
                                out=out)
    expected = n_warmup + thin - 1 + thin * np.arange(n_draws)
    np.testing.assert_array_equal(copied.draws[:, 0], expected)
    np.testing.assert_array_equal(written.draws, copied.draws)
    assert np.shares_memory(written.draws, out) and not np.isnan(out).any()
    for name in set(copied.stats) - {"seconds"}:  # wall time differs
        np.testing.assert_array_equal(written.stats[name], copied.stats[name])


def test_a_fit_draws_the_same_whether_its_chains_write_in_place(monkeypatch):
    """Chains in threads write into one array for all; under a backend that copies their
    arguments (processes, Dask, Ray) their draws are gathered instead: the same draws."""
    from skbayes_mh._core import fit as fit_module

    X, y = load_breast_cancer(return_X_y=True)
    settings = dict(n_draws=60, n_warmup=60, n_chains=3, n_jobs=2, random_state=1)
    in_place = quiet(MinibatchMHLogisticRegression(**settings), X, y)
    monkeypatch.setattr(fit_module, "runs_in_this_process", lambda: False)
    gathered = quiet(MinibatchMHLogisticRegression(**settings), X, y)
    for name in ("coef", "intercept"):
        np.testing.assert_array_equal(in_place.posterior_[name], gathered.posterior_[name])


def test_a_sparse_row_pool_travels_as_its_size_and_the_chain_continues_the_same(monkeypatch):
    """A chain sent to a process worker and back (pickled) carries a sparse row pool (the
    default above about 10^6 rows, forced here) as its size: its arrays, reserved at 7 N
    entries, hold nothing a later test reads. The chain continues draw for draw as the one
    that never travelled."""
    from skbayes_mh.sampling import _samplers, continue_chain

    monkeypatch.setattr(_samplers, "DENSE_POOL_MAX_ROWS", 0)
    rng = np.random.default_rng(4)
    n_rows = 20_000
    X = rng.normal(size=(n_rows, 3))
    y = (rng.random(n_rows) < 1.0 / (1.0 + np.exp(-X @ [0.5, -0.3, 0.2]))).astype(int)
    fit = quiet(MinibatchMHLogisticRegression(acceptance="minibatch", n_draws=50,
                                              warm_start=True, n_jobs=1, **SHORT), X, y)
    chain = fit._chains[0]
    assert chain.state.pool[2].shape == (n_rows, 3)  # sparse: reserved at N entries
    assert len(pickle.dumps(chain.state)) < 2_000 < 7 * 8 * n_rows
    travelled = pickle.loads(pickle.dumps(chain))
    assert travelled.state.pool[2].shape == (n_rows, 3)
    here, there = continue_chain(chain, 150), continue_chain(travelled, 150)
    np.testing.assert_array_equal(there.draws, here.draws)
    np.testing.assert_array_equal(there.stats["n_data_read"], here.stats["n_data_read"])
    assert here.stats["n_data_read"].mean() < 0.5 * n_rows  # the minibatches drew rows

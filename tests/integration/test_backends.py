"""Chains on every joblib backend, at data sizes above each backend's inline or scatter
threshold: the draws must be identical to the threaded fit's, for every estimator (on the
cluster backends, those of ``CLUSTER_ESTIMATORS``) and for ``sample()``.

The sizes matter. Ray hands a task's arrays to its workers as read-only zero-copy views once
the task's arguments pass its inline limit (100 KiB), and loky memory-maps arrays above 1 MB
read-only; below those sizes both copy, which hid the read-only defect that this module
pins. ``DATA_BYTES`` is above every threshold.
"""
import importlib
import os

import joblib
import numba
import numpy as np
import pytest
from sklearn.utils import get_tags
from sklearn.utils.parallel import Parallel, delayed

import skbayes_mh
from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh.linear_model import ESTIMATORS as REGISTERED

from _models import interrupted_fit, needs_main_thread, quiet_fit, target_kind

#: Every estimator on loky, three on each cluster backend (optional extras), about a minute
#: and a half of one test worker.
pytestmark = pytest.mark.slow

#: Rows x features of the estimators' data: 1.3 MB of float64 (the size at which Ray failed),
#: above Ray's 100 KiB inline limit and loky's 1 MiB memory-mapping threshold.
N_ROWS, N_FEATURES = 20_000, 8
DATA_BYTES = N_ROWS * N_FEATURES * 8
#: Rows of the one-column data given to ``sample()`` (1.2 MB).
N_SAMPLE_ROWS = 150_000
FIT = dict(n_draws=150, n_warmup=150, n_chains=2, n_jobs=2, random_state=0)


def make_data(kind, binary=False):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((N_ROWS, N_FEATURES))
    eta = X @ rng.normal(0.0, 0.3, N_FEATURES)
    if kind == "classification":  # three classes (two for a binary classifier)
        y = np.digitize(eta + rng.logistic(size=N_ROWS), [-0.5, 0.5])
        if binary:
            y = np.minimum(y, 1)
    elif kind == "counts":
        y = rng.poisson(np.exp(0.5 + 0.5 * eta))
    elif kind == "positive":
        y = rng.gamma(4.0, np.exp(0.5 + 0.5 * eta) / 4.0)
    elif kind == "proportions":
        y = rng.binomial(5, 1.0 / (1.0 + np.exp(-eta))) / 5.0
    else:
        y = eta + 0.5 * rng.standard_t(4, N_ROWS)
    return X, y


#: Every registered estimator with its defaults, and Firefly (a sampler of its own).
ESTIMATORS = {
    **{cls.__name__: (lambda cls=cls: cls(**FIT), target_kind(cls))
       for cls in REGISTERED.values()},
    "logistic-firefly": (lambda: MinibatchMHLogisticRegression(acceptance="firefly", **FIT),
                         "classification"),
}


#: The estimators fitted on the cluster backends (Dask, Ray) besides loky, which fits them
#: all: what a backend can get wrong is how it ships a fit's data and state (read-only
#: views of the arrays above its inline limit, the object store), the same for every
#: family, and these carry every kind of state a family adds (several outputs, a
#: dispersion parameter, Firefly's bright set), with the default estimator's minibatch
#: test. Every estimator on Ray took 36 s of the suite, most of it its workers loading
#: each family's kernels.
CLUSTER_ESTIMATORS = ("MinibatchMHLogisticRegression", "FireflySoftmaxClassifier",
                      "RobustTRegression", "logistic-firefly")


def estimator_data(make, kind):
    """The data for an estimator: a binary classifier gets two of the three classes."""
    binary = kind == "classification" and not get_tags(make()).classifier_tags.multi_class
    return make_data(kind, binary=binary)


def make_loglik():
    """A Gaussian location log-likelihood, defined in a function so that every backend's
    pickler sends it by value (this test module is not importable in a worker)."""
    @numba.njit
    def loglik(theta, data, i):
        return -0.5 * (data[i, 0] - theta[0]) ** 2

    return loglik


def sample_twice(loglik, data):
    """Two ``sample()`` chains (seeds 0 and 1), as ``delayed`` calls through joblib."""
    return Parallel(n_jobs=2)(
        delayed(skbayes_mh.sample)(loglik, data, [0.0], step_size=0.002, acceptance="minibatch",
                                   n_draws=300, n_warmup=100, random_state=seed)
        for seed in (0, 1))


class NotInstalled(Exception):
    """A backend's package cannot be imported."""


def installed(module):
    """``import module``, a :class:`NotInstalled` naming the import error if it fails."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise NotInstalled(f"{type(error).__name__}: {error}") from error


class Backends:
    """The joblib backends as context factories, each started the first time a test asks
    for it and stopped with :meth:`close`: loky (joblib's own), a two-process Dask cluster
    and a local Ray instance (optional extras). A backend that cannot be had skips the
    tests that ask for it, saying why: its package is not installed, or it failed to start
    (with the error). Neither affects another backend."""

    def __init__(self):
        self.contexts = {"loky": lambda: joblib.parallel_config(backend="loky", n_jobs=2)}
        self.unavailable = {}
        self._running = []  # what close() stops

    def __getitem__(self, name):
        """The context factory of backend ``name``, or a skip naming why it is unavailable."""
        if name not in self.contexts and name not in self.unavailable:
            try:
                self.contexts[name] = getattr(self, f"_start_{name}")()
            except NotInstalled as error:
                self.unavailable[name] = f"{name} is not installed ({error})"
            except Exception as error:  # noqa: BLE001 - reported in the skip, with its text
                self.unavailable[name] = (f"{name} is installed but failed to start: "
                                          f"{type(error).__name__}: {error}")
        if name in self.unavailable:
            pytest.skip(self.unavailable[name])
        return self.contexts[name]

    def _start_dask(self):
        distributed = installed("distributed")
        import dask

        # A task is given up after one retry (Dask's default: three): each death restarts a
        # worker (seconds of imports), and one retry takes the path that three take.
        with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
            cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                               processes=True, dashboard_address=None)
        self._running.append(cluster.close)
        client = distributed.Client(cluster)
        self._running.append(client.close)
        self.dask_client = client
        return lambda: joblib.parallel_config(backend="dask", n_jobs=2)

    def every_worker_ready(self, name):
        """Wait until each of the cluster's two worker processes runs and has the package
        and its kernels loaded (Dask): a worker that a test ended is started again by its
        nanny, and under load it may still be starting, or cold, when the next fit's chains
        are sent (one would spend its first seconds importing). Loky's and Ray's workers
        start with the pool, for every fit."""
        if name != "dask":
            return
        self.dask_client.wait_for_workers(2, timeout=120)
        self.dask_client.run(loaded_kernels())

    def _start_ray(self):
        ray = installed("ray")
        register_ray = installed("ray.util.joblib").register_ray
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        self._running.append(ray.shutdown)
        register_ray()
        return lambda: joblib.parallel_config(backend="ray", n_jobs=2)

    def close(self):
        """Stop every backend started, the last started first."""
        while self._running:
            self._running.pop()()


def loaded_kernels():
    """A function that loads the package and a metropolis fit's kernels in the process
    that calls it (made in a function, so that Dask sends it by value)."""
    def load():
        import warnings

        import numpy as np

        from skbayes_mh import MinibatchMHLogisticRegression

        X = np.random.default_rng(0).standard_normal((500, N_FEATURES))
        y = (X[:, 0] > 0).astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            MinibatchMHLogisticRegression(acceptance="metropolis", n_draws=5, n_warmup=5,
                                          n_chains=1, random_state=0).fit(X, y)

    return load


@pytest.fixture(scope="module")
def backends():
    """:class:`Backends`, shared by this module's tests."""
    started = Backends()
    yield started
    started.close()


BACKENDS = ("loky", "dask", "ray")


def remote_processes(backends, backend):
    with backends[backend]():
        return set(Parallel(n_jobs=2)(delayed(os.getpid)() for _ in range(4)))


@pytest.fixture(scope="module")
def threaded_fits():
    """Every estimator fitted with its chains in threads (the reference)."""
    fits = {}
    for name, (make, kind) in ESTIMATORS.items():
        fits[name] = make().fit(*estimator_data(make, kind))
    return fits


def test_the_data_are_above_every_backends_inline_threshold():
    loky_threshold = 1 << 20  # joblib's max_nbytes="1M"
    assert DATA_BYTES > loky_threshold and N_SAMPLE_ROWS * 8 > loky_threshold


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_estimator_gives_the_threaded_draws_on_each_backend(backends, threaded_fits,
                                                                  backend):
    assert os.getpid() not in remote_processes(backends, backend)
    names = list(ESTIMATORS) if backend == "loky" else CLUSTER_ESTIMATORS
    for name in names:
        make, kind = ESTIMATORS[name]
        X, y = estimator_data(make, kind)
        with backends[backend]():
            remote = make().fit(X, y)
        reference = threaded_fits[name]
        for key in [*reference.posterior_.draws, "n_data_read", "acceptance_rate"]:
            np.testing.assert_array_equal(remote.posterior_[key], reference.posterior_[key],
                                          err_msg=f"{name} on {backend}: {key}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_sample_gives_the_same_draws_on_each_backend(backends, backend):
    context = backends[backend]
    loglik = make_loglik()
    data = np.random.default_rng(2).normal(0.5, 1.0, size=(N_SAMPLE_ROWS, 1))
    reference = sample_twice(loglik, data)
    with context():
        remote = sample_twice(loglik, data)
    for local, far in zip(reference, remote):
        np.testing.assert_array_equal(far.draws, local.draws)
        np.testing.assert_array_equal(far.n_data_read, local.n_data_read)


def test_ray_receives_a_fits_data_once(backends, monkeypatch):
    """Under Ray a fit's target (its data) is put in the object store once, however many
    rounds of chains the fit runs (``n_draws="auto"`` continues them in rounds), and every
    chain comes back holding this process's target, not a copy of it."""
    from skbayes_mh.sampling import _parallel, _shared

    context = backends["ray"]
    puts, rounds = [], []
    put, ray_tasks = _shared._put, _parallel._ray_tasks
    monkeypatch.setattr(_shared, "_put", lambda target: puts.append(target) or put(target))
    monkeypatch.setattr(_parallel, "_ray_tasks",
                        lambda *a: rounds.append(a) or ray_tasks(*a))
    X, y = make_data("classification", binary=True)
    settings = dict(n_draws="auto", n_warmup=40, n_chains=2, n_jobs=2, random_state=0,
                    warm_start=True)  # keeps the chains (and their targets) in _chains
    with context():
        fit = MinibatchMHLogisticRegression(**settings).fit(X, y)
    assert len(rounds) >= 2
    assert len(puts) == 1
    assert all(chain.sampler.target is puts[0] for chain in fit._chains)
    assert "_put" not in puts[0].__dict__  # released when the fit ended
    threaded = MinibatchMHLogisticRegression(**settings).fit(X, y)
    np.testing.assert_array_equal(fit.posterior_["coef"], threaded.posterior_["coef"])


def test_a_chain_from_ray_continues_in_threads(backends):
    """A warm-start fit continues chains that came back from Ray workers, whose state
    arrives as read-only views, and equals one fit asked for every draw at once."""
    ray_context = backends["ray"]
    X, y = make_data("classification", binary=True)
    with ray_context():
        fit = MinibatchMHLogisticRegression(warm_start=True, **FIT).fit(X, y)
    fit.set_params(n_draws=2 * FIT["n_draws"]).fit(X, y)
    whole = MinibatchMHLogisticRegression(**{**FIT, "n_draws": 2 * FIT["n_draws"]}).fit(X, y)
    np.testing.assert_array_equal(fit.posterior_["coef"], whole.posterior_["coef"])


def dying_chain(victim_seed, marker=None):
    """``run_chain``, except that the chain seeded ``victim_seed`` ends its worker's process
    half a second after it starts: every time, or with ``marker`` (a file path) only the
    first time (that attempt creates the file). Made in a function, so that the backends'
    picklers send it by value."""
    def run(sampler, start, seed, *rest):
        import os
        import time

        from skbayes_mh.sampling import run_chain

        if seed == victim_seed and (marker is None or not os.path.exists(marker)):
            if marker is not None:
                open(marker, "w").close()
            time.sleep(0.5)
            os._exit(1)
        return run_chain(sampler, start, seed, *rest)

    return run


def fit_within(seconds, context, estimator, X, y):
    """``estimator.fit(X, y)`` under the joblib backend ``context()`` (a backend is set per
    thread) in a thread: the fitted estimator, or a failure when it has not returned within
    ``seconds`` (a hang); warnings are re-issued here."""
    import threading
    import warnings

    outcome = {}

    def run():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with context():
                    outcome["fit"] = estimator.fit(X, y)
            except Exception as error:  # noqa: BLE001 - re-raised below
                outcome["error"] = error
        outcome["warnings"] = caught

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the fit did not return within {seconds} s"
    for caught in outcome["warnings"]:
        warnings.warn_explicit(caught.message, caught.category, caught.filename,
                               caught.lineno)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["fit"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_worker_that_dies_mid_fit_loses_nothing_else(backends, threaded_fits, backend,
                                                       monkeypatch, tmp_path):
    """A worker process that dies under a chain: once, the chain runs again and the fit
    equals the threaded one; every time (the retries spent), the fit keeps the other
    chain, warns naming the lost one, and returns (no hang). Loky ends its whole pool when
    a worker dies, so there the other chain ran again too (in a new pool)."""
    import skbayes_mh._core.fit as fit_module
    from skbayes_mh.sampling import _parallel, chain_seeds

    context = backends[backend]
    X, y = make_data("classification", binary=True)
    reference = threaded_fits["MinibatchMHLogisticRegression"].posterior_["coef"]
    victim = chain_seeds(FIT["random_state"], FIT["n_chains"])[1]
    monkeypatch.setattr(fit_module, "run_chain", dying_chain(victim, tmp_path / "died"))
    fit = fit_within(120, context, MinibatchMHLogisticRegression(**FIT), X, y)
    assert (tmp_path / "died").exists()
    np.testing.assert_array_equal(fit.posterior_["coef"], reference)
    monkeypatch.setattr(fit_module, "run_chain", dying_chain(victim))
    # One attempt alone on loky (after the two together): every attempt starts a new pool
    # (about 3 s of its workers' imports); the count is tested without processes below.
    monkeypatch.setattr(_parallel, "LOKY_ATTEMPTS", 1)
    with pytest.warns(UserWarning, match=r"the worker of chain 1 died under it .* keeps the "
                                         r"other 1 "):
        fit = fit_within(180, context, MinibatchMHLogisticRegression(**FIT), X, y)
    np.testing.assert_array_equal(fit.posterior_["coef"], reference[:1])


@pytest.mark.parametrize("attempts", [1, 3])
def test_loky_gives_a_call_up_after_its_attempts_alone(monkeypatch, attempts):
    """The rounds of ``_loky_tasks`` without processes: a stand-in for joblib's ``Parallel``
    whose pool "dies" (``TerminatedWorkerError``) under call 1, after the other calls
    returned. They are kept and not run again; call 1 runs again alone until it has died
    ``LOKY_ATTEMPTS`` times alone, and its place holds a ``WorkerLost``."""
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    from skbayes_mh.sampling import _parallel

    runs = []

    class DyingPool:
        def __init__(self, **_):
            pass

        def __call__(self, calls):
            calls = list(calls)
            runs.append(sorted(call[1][2] for call in calls))
            for function, args, kwargs in calls:  # the others return before the death
                if args[2] != 1:
                    yield function(*args, **kwargs)
            if 1 in runs[-1]:
                raise TerminatedWorkerError("a worker died")

    monkeypatch.setattr(_parallel, "Parallel", DyingPool)
    monkeypatch.setattr(_parallel, "LOKY_ATTEMPTS", attempts)
    results = _parallel._loky_tasks(lambda value: 10 * value, [(0,), (1,), (2,)], 2)
    assert results[0] == 0 and results[2] == 20
    assert isinstance(results[1], _parallel.WorkerLost)
    assert runs == [[0, 1, 2]] + [[1]] * attempts


@needs_main_thread
@pytest.mark.parametrize("backend, shared_disk", [("loky", True), ("dask", True),
                                                  ("dask", False), ("ray", True),
                                                  ("ray", False)])
def test_ctrl_c_stops_the_chains_on_worker_processes_and_keeps_their_draws(
        backends, backend, shared_disk, monkeypatch):
    """Ctrl-C in this process reaches chains running on worker processes: on this
    machine's through a flag file their stop signal watches between chunks; without it
    (``shared_disk=False``: the file is never written, as for workers on another machine,
    which cannot see it) through the cluster, a Dask event or a Ray actor by name. The fit
    returns within seconds with the draws every chain reached."""
    from skbayes_mh.sampling import _parallel

    if not shared_disk:
        monkeypatch.setattr(_parallel, "_touch", lambda path: None)
    context = backends[backend]
    backends.every_worker_ready(backend)
    X, y = make_data("classification", binary=True)
    settings = dict(acceptance="metropolis", n_warmup=100, n_chains=2, n_jobs=2,
                    random_state=3)
    with context():
        # The workers started and their kernels loaded before the timed short fit.
        quiet_fit(MinibatchMHLogisticRegression(**{**settings, "n_draws": 5}), X, y)
        clf = interrupted_fit(settings, X, y, within=5.0)
    coef = clf.posterior_["coef"]
    assert coef.shape[0] == 2 and 0 < coef.shape[1] < 10**6 and np.all(np.isfinite(coef))
    if not shared_disk:  # what the fit made on the cluster is gone
        assert wait_for(lambda: not cluster_stop_marks(backend), seconds=10)


def cluster_stop_marks(backend):
    """The names of the stop marks the cluster holds (Dask events, Ray named actors)."""
    if backend == "dask":
        from distributed import get_client

        names = get_client().run_on_scheduler(
            lambda dask_scheduler: list(dask_scheduler.extensions["events"]._events))
    else:
        import ray

        names = ray.util.list_named_actors()
    return [name for name in names if name.startswith("skbayes_mh-stop-")]


def wait_for(condition, seconds):
    """Whether ``condition()`` holds within ``seconds``."""
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_read_only_inputs_everywhere_give_the_same_draws():
    """Read-only X, y and weights in this process (as a read-only memmap would be)."""
    X, y = make_data("classification", binary=True)
    weights = np.ones(N_ROWS)
    reference = MinibatchMHLogisticRegression(**FIT).fit(X, y, sample_weight=weights)
    for array in (X, y, weights):
        array.setflags(write=False)
    frozen = MinibatchMHLogisticRegression(**FIT).fit(X, y, sample_weight=weights)
    np.testing.assert_array_equal(frozen.posterior_["coef"], reference.posterior_["coef"])

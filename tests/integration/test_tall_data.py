"""Tall data: fits read an ``np.memmap`` where it is (float32 kept), full-data passes run on
every core with a result that does not depend on their number, a NaN or infinity is named
by its row, and the memory-bounded structures (the sparse row pool, Firefly without the
per-row tangent cache) sample the same posterior."""
import warnings
from pathlib import Path

import numpy as np
import pytest

from skbayes_mh import MinibatchMHLogisticRegression, RobustTRegression
from skbayes_mh import _passes
from skbayes_mh.linear_model import _base, _inputs
from skbayes_mh.models import LogisticModel
from skbayes_mh.models import _firefly as models_firefly
from skbayes_mh.sampling import _samplers

from _stats import assert_same_posterior
from studies.tall_data import AnonymousPeak

N_ROWS = 20_000
#: The thresholds as the package sets them (the fixture below sets one to 0 for each test).
REAL_FLOAT32_IN_PLACE_MIN_BYTES = _inputs.FLOAT32_IN_PLACE_MIN_BYTES
#: Rows and float32 features at which no threshold needs forcing: one row above
#: ``DENSE_POOL_MAX_ROWS`` and ``TANGENT_CACHE_MAX_ROWS``, and X of 64 MiB and a row.
REAL_ROWS, REAL_FEATURES = (1 << 20) + 1, 16


@pytest.fixture(scope="module")
def on_disk(tmp_path_factory):
    """Logistic data as float32 ``.npy`` files opened as read-only memmaps."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N_ROWS, 3)).astype(np.float32)
    y = (rng.random(N_ROWS) < 1 / (1 + np.exp(-(X @ np.array([1.0, -0.5, 0.25]) + 0.3))))
    folder = tmp_path_factory.mktemp("tall")
    np.save(folder / "X.npy", X)
    np.save(folder / "y.npy", y.astype(np.float32))
    return (np.load(folder / "X.npy", mmap_mode="r"), np.load(folder / "y.npy", mmap_mode="r"),
            folder)


@pytest.fixture(autouse=True)
def float32_in_place(monkeypatch):
    """Treat the test's small float32 data as tall: read in place by float32 kernels."""
    monkeypatch.setattr(_inputs, "FLOAT32_IN_PLACE_MIN_BYTES", 0)


def spy_on_data(monkeypatch):
    """Record the data the estimator hands to the sampler."""
    seen = []
    original = _base.LinearMHEstimator._linear_data

    def recording(self, X, y_model, weights):
        data = original(self, X, y_model, weights)
        seen.append(data)
        return data

    monkeypatch.setattr(_base.LinearMHEstimator, "_linear_data", recording)
    return seen


def test_a_memmap_is_read_in_place_in_its_own_dtype(on_disk, monkeypatch):
    X, y, _ = on_disk
    seen = spy_on_data(monkeypatch)
    model = MinibatchMHLogisticRegression(n_draws=50, n_warmup=50, n_chains=1,
                                          random_state=0).fit(X, y)
    data = seen[0]
    assert data.X.dtype == np.float32 and np.shares_memory(data.X, X)
    # So are float32 labels 0 and 1 (the class indices themselves): nothing is copied.
    assert data.y.dtype == np.float32 and np.shares_memory(data.y, y)
    assert model.coef_.dtype == np.float64  # results stay float64
    # Validation, MAP (from a subsample) and the control variates' sums: about three passes.
    passes = model.data_passes_
    assert passes.validation == 1 and passes.control_variates == 0  # the MAP's last pass
    assert 1 <= passes.map_laplace <= 6 and passes.total == pytest.approx(
        passes.validation + passes.map_laplace + passes.control_variates)
    assert 0 < model.setup_time_ < 60
    # Below FLOAT32_IN_PLACE_MIN_BYTES float32 data are converted (a small copy).
    monkeypatch.setattr(_inputs, "FLOAT32_IN_PLACE_MIN_BYTES", X.nbytes + 1)
    MinibatchMHLogisticRegression(n_draws=20, n_warmup=20, n_chains=1).fit(X, y)
    assert seen[1].X.dtype == np.float64 and not np.shares_memory(seen[1].X, X)
    assert seen[1].y.dtype == np.float64


@pytest.mark.parametrize("labels", ["int8", "bool", "strings"])
def test_labels_beside_a_float32_memmap_are_encoded_in_float32(on_disk, monkeypatch, labels):
    """Labels of another dtype are encoded as class indices in float32 (4 bytes a row,
    exact), and the sampler's draws are those of the same labels in float64 beside a
    float64 X."""
    X, y, _ = on_disk
    given = {"int8": np.asarray(y, dtype=np.int8), "bool": np.asarray(y) > 0.5,
             "strings": np.where(np.asarray(y) > 0.5, "yes", "no")}[labels]
    seen = spy_on_data(monkeypatch)
    settings = dict(n_draws=40, n_warmup=40, n_chains=1, random_state=0)
    model = MinibatchMHLogisticRegression(**settings).fit(X, given)
    assert seen[0].y.dtype == np.float32
    np.testing.assert_array_equal(seen[0].y, np.asarray(y))
    monkeypatch.setattr(_inputs, "FLOAT32_IN_PLACE_MIN_BYTES", X.nbytes + 1)
    float64 = MinibatchMHLogisticRegression(**settings).fit(X, given)
    assert seen[1].y.dtype == np.float64
    np.testing.assert_allclose(model.posterior_["coef"], float64.posterior_["coef"],
                               rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("target", ["X", "y"])
def test_a_nan_or_inf_is_named_by_its_row(on_disk, target, tmp_path):
    X, y, _ = on_disk
    bad_row = 12_345
    values = np.array(X if target == "X" else y)
    values[bad_row] = np.inf if target == "X" else np.nan
    np.save(tmp_path / "bad.npy", values)
    bad = np.load(tmp_path / "bad.npy", mmap_mode="r")
    arguments = (bad, y) if target == "X" else (X, bad)
    with pytest.raises(ValueError, match=f"{target} contains .*row {bad_row}"):
        RobustTRegression(n_draws=10, n_warmup=10, n_chains=1).fit(*arguments)


def test_passes_do_not_depend_on_the_number_of_threads(on_disk, monkeypatch):
    X, y, _ = on_disk
    from _models import linear_target

    target = linear_target(LogisticModel(), X, y, np.ones(4))
    theta = target.mean + 0.1
    results = {}
    for threads in (1, 2, 3):
        monkeypatch.setattr(_passes, "pass_threads", lambda threads=threads: threads)
        results[threads] = (target.loglik_derivatives(theta), _passes.scan_data(X, y))
    for threads in (2, 3):
        for a, b in zip(results[1][0], results[threads][0]):
            np.testing.assert_array_equal(a, b)  # the same sums in the same order
        for key, value in results[1][1].items():
            np.testing.assert_array_equal(value, results[threads][1][key])
    assert _passes.scan_data(X, y)["mean"] == pytest.approx(float(np.mean(y, dtype=float)))
    assert _passes.scan_data(X, y)["std"] == pytest.approx(float(np.std(y, dtype=float)))
    summary = _passes.scan_data(X, y)
    np.testing.assert_array_equal(summary["x_min"], np.min(X, axis=0))
    np.testing.assert_array_equal(summary["x_max"], np.max(X, axis=0))


@pytest.mark.parametrize("shape", [(1, 3), (7, 1), (1000, 3), (1001, 20), (300, 700)])
def test_column_extremes_are_numpys(shape):
    """Folded rows (any number of rows and columns, a remainder of rows included) give
    NumPy's column minima and maxima exactly."""
    block = np.random.default_rng(0).standard_normal(shape)
    low, high = _passes.column_extremes(block)
    np.testing.assert_array_equal(low, block.min(axis=0))
    np.testing.assert_array_equal(high, block.max(axis=0))


def test_stripes_cover_the_rows_in_whole_chunks():
    for n in (1, 5, 65_536, 65_537, 10**7 + 3):
        ranges = _passes.stripes(n)
        assert ranges[0][0] == 0 and ranges[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
        assert all(start % _passes.PASS_CHUNK == 0 for start, _ in ranges)
        assert len(ranges) <= _passes.PASS_STRIPES


@pytest.mark.slow
def test_sparse_row_pool_and_float32_memmap_sample_the_posterior(on_disk, monkeypatch):
    """The control-variate minibatch test drawing from the sparse pool (forced here; it is
    the default above ~10^6 rows) on the float32 memmap agrees with the exact test on the
    same data in memory as float64, within Monte Carlo error (enough draws to see a 0.1 sd
    shift or a 10% sd error)."""
    X, y, _ = on_disk
    settings = dict(n_draws=4000, n_warmup=500, n_chains=2, random_state=1)
    exact = MinibatchMHLogisticRegression(acceptance="metropolis", **settings).fit(
        np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64))
    monkeypatch.setattr(_samplers, "DENSE_POOL_MAX_ROWS", 0)
    sparse = MinibatchMHLogisticRegression(acceptance="minibatch", **settings).fit(X, y)
    assert sparse.control_variates_ and sparse.posterior_["n_data_read"].mean() < 0.05 * N_ROWS
    assert_same_posterior(exact, sparse)


def test_firefly_without_the_tangent_cache_is_the_same_chain(on_disk, monkeypatch):
    """Above TANGENT_CACHE_MAX_ROWS a query recomputes each row's linear predictor at the
    bounds' tangent instead of reading it: the same numbers, so the same draws."""
    X, y, _ = on_disk
    settings = dict(acceptance="firefly", n_draws=100, n_warmup=100, n_chains=1,
                    random_state=2)
    cached = MinibatchMHLogisticRegression(**settings).fit(X, y)
    monkeypatch.setattr(models_firefly, "TANGENT_CACHE_MAX_ROWS", 0)
    recomputed = MinibatchMHLogisticRegression(**settings).fit(X, y)
    np.testing.assert_array_equal(cached.posterior_["coef"], recomputed.posterior_["coef"])
    assert cached.data_passes_.firefly_bounds == 1 and cached.data_passes_.firefly_start == 1


@pytest.fixture(scope="module")
def real_size(tmp_path_factory):
    """Logistic data of :data:`REAL_ROWS` x :data:`REAL_FEATURES` float32 as read-only
    memmaps (64 MiB for X)."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((REAL_ROWS, REAL_FEATURES), dtype=np.float32)
    eta = X @ rng.normal(0.0, 0.5, REAL_FEATURES) + 0.2
    y = (rng.random(REAL_ROWS) < 1.0 / (1.0 + np.exp(-eta))).astype(np.float32)
    folder = tmp_path_factory.mktemp("real_size")
    np.save(folder / "X.npy", X)
    np.save(folder / "y.npy", y)
    return np.load(folder / "X.npy", mmap_mode="r"), np.load(folder / "y.npy", mmap_mode="r")


@pytest.mark.slow
def test_the_thresholds_paths_at_their_real_size(real_size, monkeypatch):
    """Nothing forced: at 2**20 + 1 rows x 16 float32 features the fit reads X in place as
    float32, each chain draws its minibatches from the sparse row pool, and Firefly computes
    each query's tangent predictor again. The pool and the tangents give the same draws as
    the dense pool and the cache at this size (the posteriors of the paths are checked at
    20,000 rows above, and ``benchmarks/studies/real_sizes.py`` compares the two fits' posteriors
    at this size)."""
    X, y = real_size
    monkeypatch.setattr(_inputs, "FLOAT32_IN_PLACE_MIN_BYTES", REAL_FLOAT32_IN_PLACE_MIN_BYTES)
    assert X.nbytes >= REAL_FLOAT32_IN_PLACE_MIN_BYTES
    assert REAL_ROWS > _samplers.DENSE_POOL_MAX_ROWS
    assert REAL_ROWS > models_firefly.TANGENT_CACHE_MAX_ROWS
    seen = spy_on_data(monkeypatch)
    pools = []
    new_pool = _samplers.new_pool
    monkeypatch.setattr(_samplers, "new_pool",
                        lambda n, dense: pools.append((n, dense)) or new_pool(n, dense))
    settings = dict(n_draws=100, n_warmup=100, n_chains=1, random_state=3)

    sparse = MinibatchMHLogisticRegression(**settings).fit(X, y)
    assert sparse.control_variates_ and sparse.acceptance_.name == "minibatch"
    assert seen[0].X.dtype == np.float32 and np.shares_memory(seen[0].X, X)
    assert pools and all(n == REAL_ROWS and not dense for n, dense in pools)
    monkeypatch.setattr(_samplers, "DENSE_POOL_MAX_ROWS", REAL_ROWS)
    dense = MinibatchMHLogisticRegression(**settings).fit(X, y)
    assert pools[-1] == (REAL_ROWS, True)
    np.testing.assert_array_equal(sparse.posterior_["coef"], dense.posterior_["coef"])

    recomputed = MinibatchMHLogisticRegression(acceptance="firefly", **settings).fit(X, y)
    monkeypatch.setattr(models_firefly, "TANGENT_CACHE_MAX_ROWS", REAL_ROWS)
    cached = MinibatchMHLogisticRegression(acceptance="firefly", **settings).fit(X, y)
    np.testing.assert_array_equal(recomputed.posterior_["coef"], cached.posterior_["coef"])
    assert recomputed.posterior_["rows_per_iteration"].mean() < 0.01 * REAL_ROWS


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(),
                    reason="anonymous memory is read from /proc/self/status (Linux only)")
@pytest.mark.parametrize("acceptance", ["minibatch", "firefly"])
def test_a_memmap_fit_adds_at_most_a_tenth_of_the_file_and_100_mb(real_size, monkeypatch,
                                                                  acceptance):
    """A fit of the 68 MiB read-only memmap (X in float32 and its float32 labels, read in
    place) grows the process's anonymous memory by at most 10% of the file + 100 MiB,
    after a fit of the same kinds (its kernels compiled). The span check of tall rows once
    made a float64 copy of X here (+300 MiB; +1.6 GB on a 420 MiB file), and the labels
    a float64 one; ``benchmarks/studies/tall_data.py`` measures the same at 10^7 rows and more."""
    X, y = real_size
    monkeypatch.setattr(_inputs, "FLOAT32_IN_PLACE_MIN_BYTES", REAL_FLOAT32_IN_PLACE_MIN_BYTES)
    settings = dict(acceptance=acceptance, n_draws=100, n_warmup=100)
    file_bytes = X.nbytes + y.nbytes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 100 draws: convergence is not the question here
        MinibatchMHLogisticRegression(random_state=1, **settings).fit(X, y)
        with AnonymousPeak(interval=0.005) as memory:
            MinibatchMHLogisticRegression(random_state=0, **settings).fit(X, y)
    assert memory.bytes <= 0.1 * file_bytes + 100 * 2**20, (
        f"+{memory.bytes / 2**20:.0f} MiB for a {file_bytes / 2**20:.0f} MiB file")

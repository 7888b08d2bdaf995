"""Sparse ``X`` (``scipy.sparse``: CSR and CSC as they are, other formats converted to CSR)
for every estimator and acceptance test, and sparse ``data`` for ``sample()`` (the user's
functions read the CSR arrays).

The kernels read a sparse row's stored values only, so a sparse fit does the dense fit's
arithmetic on the same numbers, summed in another order: with the same seed it takes the
same decisions and its draws equal the dense fit's up to rounding (a decision could only
differ where a uniform falls within about 1e-12 of its acceptance probability). With
another seed its posterior agrees with the dense fit's within Monte Carlo error.
Predictions take sparse ``X``; nothing is densified (a fit whose dense ``X`` would take
16 GB runs in a few MB); bad sparse input gets an error that names the problem.
"""
import tracemalloc

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from skbayes_mh import (FireflySoftmaxClassifier, GammaRegression,
                        MinibatchMHLogisticRegression, MinibatchMHPoissonRegression,
                        NegativeBinomialRegression, RobustTRegression, acceptance_probability,
                        sample)
from skbayes_mh import _passes, _validation
from skbayes_mh.acceptance import ConfidenceSampler
from skbayes_mh.sampling import _target
from skbayes_mh.linear_model import _base as estimators_base
from skbayes_mh.linear_model import _inputs

from _models import FAST
from _stats import assert_same_posterior

#: Short chains are compared with each other, not checked for convergence.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(autouse=True)
def dense_x_read_dense(monkeypatch):
    """A dense ``X`` is read dense in this file's comparisons (``fit`` would read one that
    is mostly zeros as CSR, ``AUTO_SPARSE_DENSITY``), so that they compare the layouts."""
    monkeypatch.setattr(_inputs, "AUTO_SPARSE_DENSITY", 0.0)


@pytest.mark.parametrize("estimator, kind, density, expected", [
    (MinibatchMHLogisticRegression, "binary", 0.15, True),
    (MinibatchMHLogisticRegression, "binary", 0.25, False),
    # The same share whatever the outputs (the centred softmax of 3 classes has 2).
    (FireflySoftmaxClassifier, "classes", 0.15, True),
    (FireflySoftmaxClassifier, "classes", 0.25, False)])
def test_a_dense_x_of_mostly_zeros_is_read_as_csr(monkeypatch, tmp_path, estimator, kind,
                                                   density, expected):
    """Read as CSR, a dense ``X`` gives the draws of the same matrix passed sparse; a
    memory map stays where it is."""
    monkeypatch.setattr(_inputs, "AUTO_SPARSE_DENSITY", 0.2)
    layouts = []
    choose = estimators_base.sparse_layout

    def recorded(data):
        data = choose(data)
        layouts.append(sp.issparse(data.X))
        return data

    monkeypatch.setattr(estimators_base, "sparse_layout", recorded)
    X = sparse_features(400, 6, density=density, seed=1)
    y = outcomes(kind, X, seed=2)
    auto = estimator(random_state=3, **FAST).fit(X.toarray(), y)
    assert layouts == [expected]
    sparse = estimator(random_state=3, **FAST).fit(X, y)
    for name in auto.posterior_.draws:
        np.testing.assert_allclose(auto.posterior_[name], sparse.posterior_[name],
                                   rtol=1e-6, atol=1e-9, err_msg=name)
    mapped = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=np.float64,
                                       shape=X.shape)
    mapped[:] = X.toarray()
    mapped.flush()
    layouts.clear()
    estimator(random_state=3, **FAST).fit(np.load(tmp_path / "X.npy", mmap_mode="r"), y)
    assert layouts == []


def sparse_features(n, d, density=0.3, seed=0):
    """A CSR matrix of ``n`` rows whose stored values are standard normal, ``density`` of
    the entries stored (about ``(1 - density)`` of each column zero)."""
    rng = np.random.default_rng(seed)
    return sp.random_array((n, d), density=density, format="csr", rng=rng,
                           data_sampler=rng.standard_normal)


def outcomes(kind, X, seed=0):
    """``y`` of ``kind`` for the sparse ``X``: binary, three classes, counts or real."""
    rng = np.random.default_rng(seed)
    eta = X @ np.linspace(-1.0, 1.0, X.shape[1]) + 0.3
    if kind == "binary":
        return (rng.random(X.shape[0]) < 1 / (1 + np.exp(-eta))).astype(int)
    if kind == "classes":
        return np.digitize(eta + rng.logistic(size=X.shape[0]), [-0.5, 0.9])
    if kind == "counts":
        return rng.poisson(np.exp(0.5 * eta)).astype(float)
    if kind == "positive":
        return rng.gamma(4.0, np.exp(0.5 * eta) / 4.0)
    return eta + rng.standard_t(4, size=X.shape[0])


CASES = [
    *[pytest.param(MinibatchMHLogisticRegression, dict(acceptance=name), "binary",
                   id=f"logistic-{name}")
      for name in ("auto", "metropolis", "barker", "minibatch", "austerity", "confidence",
                   "firefly")],
    pytest.param(MinibatchMHLogisticRegression, dict(acceptance="metropolis", proposal="mala"),
                 "binary", id="logistic-mala"),
    pytest.param(FireflySoftmaxClassifier, {}, "classes", id="softmax-auto"),
    pytest.param(FireflySoftmaxClassifier, dict(acceptance="firefly"), "classes",
                 id="softmax-firefly"),
    pytest.param(RobustTRegression, {}, "real", id="student-t-auto"),
    pytest.param(RobustTRegression, dict(acceptance="firefly"), "real", id="student-t-firefly"),
    pytest.param(MinibatchMHPoissonRegression, {}, "counts", id="poisson-auto"),
    pytest.param(NegativeBinomialRegression, {}, "counts", id="negative-binomial-auto"),
    pytest.param(GammaRegression, {}, "positive", id="gamma-auto"),
]


@pytest.mark.parametrize("estimator, settings, kind", CASES)
def test_a_sparse_fit_takes_the_dense_fit_steps(estimator, settings, kind):
    X = sparse_features(400, 6, seed=1)
    y = outcomes(kind, X, seed=2)
    dense = estimator(random_state=3, **FAST, **settings).fit(X.toarray(), y)
    sparse = estimator(random_state=3, **FAST, **settings).fit(X, y)
    chosen = [repr((fit.acceptance_, fit.proposal_)) for fit in (dense, sparse)]
    assert chosen[0] == chosen[1]
    for name in dense.posterior_.draws:
        np.testing.assert_allclose(sparse.posterior_[name], dense.posterior_[name],
                                   rtol=1e-6, atol=1e-9, err_msg=name)
    np.testing.assert_array_equal(sparse.posterior_["n_data_read"],
                                  dense.posterior_["n_data_read"])
    # Predictions of sparse rows equal those of the same rows dense: over every draw to
    # rounding; within predict_tol (relative above 1 for a regressor's mean) by default,
    # where a row whose second-order error bound sits at the tolerance may take the
    # second-order estimate one way and every draw the other.
    method = "predict_proba" if hasattr(dense, "predict_proba") else "predict"
    default = getattr(dense, method)(X), getattr(dense, method)(X.toarray())
    np.testing.assert_allclose(default[0], default[1],
                               rtol=dense.predict_tol if method == "predict" else 0.0,
                               atol=dense.predict_tol)
    dense.set_params(predict_tol=None)
    np.testing.assert_allclose(getattr(dense, method)(X), getattr(dense, method)(X.toarray()),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("estimator, kind", [(MinibatchMHLogisticRegression, "binary"),
                                             (FireflySoftmaxClassifier, "classes"),
                                             (RobustTRegression, "real")])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_the_exact_full_data_pass_reads_sparse_rows_as_dense(estimator, kind, fit_intercept):
    """The exact test's full-data pass over CSR rows (the Hamiltonian paths' gradient:
    ``K`` outputs, extra parameters, sample weights, with and without intercepts; rows of
    0 to about 20 stored values, read four at a time and the rest one by one) takes the
    dense pass's steps."""
    X = sparse_features(300, 30, seed=4)
    y = outcomes(kind, X, seed=5)
    weights = np.random.default_rng(6).integers(1, 4, X.shape[0]).astype(float)
    settings = dict(acceptance="metropolis", proposal="hmc", fit_intercept=fit_intercept,
                    random_state=7, **FAST)
    dense = estimator(**settings).fit(X.toarray(), y, sample_weight=weights)
    sparse = estimator(**settings).fit(X, y, sample_weight=weights)
    for name in dense.posterior_.draws:
        np.testing.assert_allclose(sparse.posterior_[name], dense.posterior_[name],
                                   rtol=1e-6, atol=1e-9, err_msg=name)
    np.testing.assert_allclose(sparse.posterior_["lp"], dense.posterior_["lp"], rtol=1e-9)
    assert np.ptp(np.diff(X.indptr)) >= 8


def test_csc_and_other_formats_are_read_as_csr():
    X = sparse_features(300, 5, seed=4)
    y = outcomes("binary", X, seed=5)
    fits = [MinibatchMHLogisticRegression(random_state=6, **FAST).fit(data, y)
            for data in (X, X.tocsc(), X.tocoo(), sp.lil_matrix(X), sp.csr_matrix(X))]
    for fit in fits[1:]:
        np.testing.assert_array_equal(fit.posterior_["coef"], fits[0].posterior_["coef"])


def test_float32_and_int64_indexed_sparse_input_is_converted():
    X = sparse_features(300, 5, seed=4)
    y = outcomes("binary", X, seed=5)
    wide_index = sp.csr_array((X.data.astype(np.float32), X.indices.astype(np.int64),
                               X.indptr.astype(np.int64)), shape=X.shape)
    reference = MinibatchMHLogisticRegression(random_state=6, **FAST).fit(
        sp.csr_array((X.data.astype(np.float32).astype(np.float64), X.indices, X.indptr),
                     shape=X.shape), y)
    fit = MinibatchMHLogisticRegression(random_state=6, **FAST).fit(wide_index, y)
    np.testing.assert_array_equal(fit.posterior_["coef"], reference.posterior_["coef"])


@pytest.mark.slow
@pytest.mark.parametrize("estimator, kind", [(MinibatchMHLogisticRegression, "binary"),
                                             (FireflySoftmaxClassifier, "classes")])
def test_the_sparse_posterior_is_the_dense_posterior(estimator, kind):
    """Independent chains (other seeds): every coordinate's mean and sd agree within Monte
    Carlo error, with draws enough to see a 0.1 sd shift or a 10% sd error."""
    X = sparse_features(1500, 8, density=0.2, seed=7)
    y = outcomes(kind, X, seed=8)
    settings = dict(n_draws=6000, n_warmup=500, n_chains=2)
    dense = estimator(random_state=9, **settings).fit(X.toarray(), y)
    sparse = estimator(random_state=10, **settings).fit(X, y)
    assert_same_posterior(dense, sparse)


@pytest.mark.slow
def test_nothing_is_densified():
    """10,000 rows of 50,000 features, 3 stored values a row: dense, X would take 4 GB and a
    (d, d) matrix 20 GB. The fit's Python and NumPy allocations peak below three times the
    sparse matrix's bytes plus about a hundred vectors of the parameters' length (the MAP
    search's L-BFGS history, the passes' partial sums, the draws kept)."""
    n, d = 10_000, 50_000
    rng = np.random.default_rng(11)
    rows = np.repeat(np.arange(n), 3)
    X = sp.csr_array((rng.standard_normal(3 * n), (rows, rng.integers(0, d, 3 * n))),
                     shape=(n, d))
    y = (X @ rng.normal(size=d) + rng.logistic(size=n) > 0).astype(int)
    matrix_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    clf = MinibatchMHLogisticRegression(n_draws=5, n_warmup=5, n_chains=1, random_state=0)
    # A first, untraced fit loads the kernels from numba's cache: thousands of Python
    # objects, not the fit's, which tracemalloc would slow about 15 times (20 s).
    clone(clf).fit(X, y)
    tracemalloc.start()
    try:
        clf.fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    vector_bytes = 8 * (d + 1)
    assert peak < 3 * matrix_bytes + 150 * vector_bytes, (peak / 2**20, matrix_bytes / 2**20)
    assert clf.predict_proba(X[:10]).shape == (10, 2)


def test_a_nan_in_a_sparse_matrix_is_named_by_its_row():
    X = sparse_features(200, 4, seed=12).tolil()
    X[57, 2] = np.nan
    y = outcomes("binary", sp.csr_array(np.nan_to_num(X.toarray())), seed=13)
    with pytest.raises(ValueError, match="row 57"):
        MinibatchMHLogisticRegression(**FAST).fit(X.tocsr(), y)
    clf = MinibatchMHLogisticRegression(random_state=0, **FAST).fit(
        sparse_features(200, 4, seed=12), y)
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(X.tocsr())


def test_bad_sparse_input_gets_a_clear_error():
    X = sparse_features(200, 4, seed=14)
    y = outcomes("binary", X, seed=15)
    with pytest.raises((TypeError, ValueError), match="[Cc]omplex"):
        MinibatchMHLogisticRegression(**FAST).fit(X.astype(np.complex128), y)
    clf = MinibatchMHLogisticRegression(random_state=0, **FAST).fit(X, y)
    with pytest.raises(ValueError, match="4 features"):
        clf.predict(sparse_features(10, 5))
    with pytest.raises(TypeError, match="X=None"):
        clf.to_arviz(X=X)


def test_a_dense_matrix_beyond_memory_is_refused_by_name(monkeypatch):
    """Firefly's collapsed bounds and the control variates' Hessian are (d, d): beyond the
    machine's memory (here made small: 41 x 41 matrices, one per thread and their sum, take
    more than half of it) the fit stops before allocating them, naming them. The Laplace
    approximation is held diagonal, as the cost rule makes it for wide data."""
    X = sparse_features(300, 40, seed=16)
    y = outcomes("binary", X, seed=17)
    threads = _passes.pass_threads()
    monkeypatch.setattr(_validation, "physical_memory", lambda: 8 * 41**2 * (threads + 2) * 1.5)
    monkeypatch.setattr(estimators_base, "check_draws_memory", lambda *args: None)
    monkeypatch.setattr(_target, "full_covariance_affordable", lambda n_rows, n_params: False)
    with pytest.raises(ValueError, match="Firefly's collapsed bounds.*41 x 41"):
        MinibatchMHLogisticRegression(acceptance="firefly", **FAST).fit(X, y)
    with pytest.raises(ValueError, match="Hessian.*41 x 41"):
        MinibatchMHLogisticRegression(acceptance="minibatch", **FAST).fit(X, y)


@numba.njit
def dense_logistic_loglik(theta, data, i):
    """Logistic regression on ``data = [x_i, y_i]`` rows, read densely."""
    eta = theta[-1]
    for j in range(data.shape[1] - 1):
        eta += data[i, j] * theta[j]
    return data[i, data.shape[1] - 1] * eta - np.log1p(np.exp(eta))


@numba.njit
def _sparse_row(theta, data, i):
    """``(eta, y)`` of a sparse ``[x_i, y_i]`` row (its stored values only)."""
    eta, y, last = theta[-1], 0.0, data.shape[1] - 1
    for p in range(data.indptr[i], data.indptr[i + 1]):
        if data.indices[p] == last:
            y = data.data[p]
        else:
            eta += data.data[p] * theta[data.indices[p]]
    return eta, y


@numba.njit
def sparse_logistic_loglik(theta, data, i):
    eta, y = _sparse_row(theta, data, i)
    return y * eta - np.log1p(np.exp(eta))


@numba.njit
def dense_logistic_gradient(theta, data, i, out):
    eta = theta[-1]
    for j in range(data.shape[1] - 1):
        eta += data[i, j] * theta[j]
    slope = data[i, data.shape[1] - 1] - 1.0 / (1.0 + np.exp(-eta))
    for j in range(data.shape[1] - 1):
        out[j] = slope * data[i, j]
    out[-1] = slope


@numba.njit
def dense_logistic_hessian(theta, data, i, out):
    eta = theta[-1]
    for j in range(data.shape[1] - 1):
        eta += data[i, j] * theta[j]
    p = 1.0 / (1.0 + np.exp(-eta))
    d = data.shape[1]
    for a in range(d):
        xa = data[i, a] if a < d - 1 else 1.0
        for b in range(d):
            xb = data[i, b] if b < d - 1 else 1.0
            out[a, b] = -p * (1.0 - p) * xa * xb


@numba.njit
def sparse_logistic_gradient(theta, data, i, out):
    eta, y = _sparse_row(theta, data, i)
    slope = y - 1.0 / (1.0 + np.exp(-eta))
    out[:] = 0.0
    last = data.shape[1] - 1
    for p in range(data.indptr[i], data.indptr[i + 1]):
        if data.indices[p] != last:
            out[data.indices[p]] = slope * data.data[p]
    out[-1] = slope


@numba.njit
def sparse_logistic_hessian(theta, data, i, out):
    eta, _ = _sparse_row(theta, data, i)
    p = 1.0 / (1.0 + np.exp(-eta))
    row = np.zeros(theta.shape[0])
    last = data.shape[1] - 1
    for q in range(data.indptr[i], data.indptr[i + 1]):
        if data.indices[q] != last:
            row[data.indices[q]] = data.data[q]
    row[-1] = 1.0
    for a in range(row.shape[0]):
        for b in range(row.shape[0]):
            out[a, b] = -p * (1.0 - p) * row[a] * row[b]


def logistic_rows(n=1500, seed=20):
    """``[x_i, y_i]`` rows of a logistic regression on sparse features: dense and CSR."""
    rng = np.random.default_rng(seed)
    X = sparse_features(n, 4, density=0.4, seed=seed).toarray()
    y = rng.random(n) < 1 / (1 + np.exp(-(X @ np.array([1.0, -1.0, 0.5, 2.0]) - 0.5)))
    rows = np.column_stack([X, y.astype(float)])
    return rows, sp.csr_array(rows)


@pytest.mark.parametrize("acceptance", ["metropolis", "barker", "minibatch", "austerity",
                                        "confidence"])
def test_sample_on_sparse_data_takes_the_dense_steps(acceptance):
    """A user's model reading the CSR arrays of sparse data gives the draws of the same model
    reading the dense rows (the same numbers, summed in the same order)."""
    dense, sparse = logistic_rows()
    if acceptance == "confidence":  # a logistic row's Lipschitz constant: max |[x_i, 1]|
        lipschitz = float(np.sqrt(np.max(np.sum(dense[:, :-1] ** 2, axis=1)) + 1.0))
        acceptance = ConfidenceSampler(lipschitz=lipschitz)
    settings = dict(step_size=0.05, acceptance=acceptance, n_draws=300, random_state=21)
    a = sample(dense_logistic_loglik, dense, np.zeros(5), **settings)
    b = sample(sparse_logistic_loglik, sparse, np.zeros(5), **settings)
    np.testing.assert_allclose(b.draws, a.draws, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(b.n_data_read, a.n_data_read)
    assert b.n_data == dense.shape[0]


@pytest.mark.parametrize("acceptance, proposal", [("minibatch", "random_walk"),
                                                  ("metropolis", "hmc")])
def test_sample_on_sparse_data_with_derivatives(acceptance, proposal):
    """With the user's gradient and Hessian (the MAP search, the control variates' sums and
    Hamiltonian paths read them)."""
    dense, sparse = logistic_rows()
    settings = dict(step_size=0.05, acceptance=acceptance, proposal=proposal, n_draws=200,
                    random_state=22)
    a = sample(dense_logistic_loglik, dense, np.zeros(5), gradient=dense_logistic_gradient,
               hessian=dense_logistic_hessian, **settings)
    b = sample(sparse_logistic_loglik, sparse, np.zeros(5), gradient=sparse_logistic_gradient,
               hessian=sparse_logistic_hessian, **settings)
    np.testing.assert_allclose(b.draws, a.draws, rtol=1e-7, atol=1e-9)


def test_acceptance_probability_on_sparse_data():
    dense, sparse = logistic_rows()
    theta, proposal = np.zeros(5), np.full(5, 0.02)
    settings = dict(acceptance="minibatch", n_trials=200, random_state=23)
    assert (acceptance_probability(sparse_logistic_loglik, sparse, theta, proposal, **settings)
            == acceptance_probability(dense_logistic_loglik, dense, theta, proposal,
                                      **settings))


def test_sample_names_the_row_of_a_nan_in_sparse_data():
    _, sparse = logistic_rows(200)
    sparse = sparse.tolil()
    sparse[31, 0] = np.nan
    with pytest.raises(ValueError, match="row 31"):
        sample(sparse_logistic_loglik, sparse.tocsr(), np.zeros(5), step_size=0.1)


def test_consensus_shards_take_sparse_x():
    from skbayes_mh import ConsensusMonteCarlo

    X = sparse_features(600, 4, seed=18)
    y = outcomes("binary", X, seed=19)
    dense = ConsensusMonteCarlo(MinibatchMHLogisticRegression(**FAST), n_shards=2,
                                random_state=0).fit(X.toarray(), y)
    sparse = ConsensusMonteCarlo(MinibatchMHLogisticRegression(**FAST), n_shards=2,
                                 random_state=0).fit(X, y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-6, atol=1e-9)

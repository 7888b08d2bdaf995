"""The low-rank-plus-diagonal Laplace approximation of wide posteriors: every family's
Hessian-times-vectors pass against its full Hessian (dense and sparse rows), the prior's
precision products, the randomized eigen-decomposition against the exact inverse, and the
``"auto"`` choice of that shape (with Hamiltonian paths) where a full covariance is not
affordable."""
import numpy as np
import pytest
import scipy.sparse as sp

from skbayes_mh import _data, _passes
from skbayes_mh._data import kernel_csr
from skbayes_mh._validation import read_only
from skbayes_mh.models import FAMILIES, LinearData
from skbayes_mh.models import _optimize
from skbayes_mh.models._optimize import LowRankCovariance, low_rank_laplace
from skbayes_mh.models._prior import GAUSSIAN, BuiltinPrior
from skbayes_mh.sampling import Shape, Target

#: Constructor arguments of the families that take some.
EXAMPLES = {"SoftmaxModel": dict(n_outputs=3), "CentredSoftmaxModel": dict(n_classes=4),
            "StudentTModel": dict(nu=4.0), "CumulativeModel": dict(n_classes=4)}


def _family_data(family, sparse, n_rows=80, n_features=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    X[rng.random(X.shape) < 0.5] = 0.0  # half the entries zero: a real sparse pattern
    if family.outcome == "classes":
        y = rng.integers(0, getattr(family, "n_classes", max(family.n_blocks, 2)),
                         size=n_rows).astype(float)
    elif family.outcome == "proportions":
        y = rng.integers(0, 5, size=n_rows) / 4.0
    elif family.outcome == "counts":
        y = rng.poisson(2.0, size=n_rows).astype(float)
    elif family.outcome == "positive":
        y = rng.gamma(2.0, 1.0, size=n_rows)
    else:
        y = X @ rng.normal(size=n_features) + rng.standard_t(4, size=n_rows)
    X = kernel_csr(sp.csr_array(X)) if sparse else read_only(X)
    return LinearData(X, read_only(y), read_only(np.zeros(0)), True)


@pytest.mark.parametrize("grouped", [False, True], ids=["one-block", "two-columns"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_hessian_times_vectors_is_the_full_hessian_times_them(name, sparse, grouped,
                                                              monkeypatch):
    if grouped:  # the design's sums added two columns at a time (as on wide data)
        monkeypatch.setattr(_passes, "BLOCK_TEMPORARY_BYTES", 2 * 8 * 5)
    family = FAMILIES[name](**EXAMPLES.get(name, {}))
    data = _family_data(family, sparse)
    d = family.n_params(data)
    rng = np.random.default_rng(1)
    theta = 0.3 * rng.normal(size=d)
    vectors = rng.normal(size=(d, 7))
    hessian = family.loglik_derivatives(data, theta, 2, full=True)[2]
    np.testing.assert_allclose(family.hessian_times(data, theta, vectors), hessian @ vectors,
                               rtol=1e-10, atol=1e-10 * np.abs(hessian).max())


def test_ritz_pairs_rotated_over_the_basis_in_row_groups_are_the_pairs(monkeypatch):
    monkeypatch.setattr(_passes, "BLOCK_TEMPORARY_BYTES", 4 * 8 * 60)  # rotated 21 rows a time
    rng = np.random.default_rng(3)
    a = rng.normal(size=(60, 60))
    operator = a @ a.T
    basis = np.linalg.qr(rng.normal(size=(60, 11)))[0]
    values, vectors, residuals = _optimize._ritz_pairs(lambda v: operator @ v, basis.copy())
    projected = basis.T @ operator @ basis
    np.testing.assert_allclose(values, np.linalg.eigvalsh(projected), rtol=1e-10)
    expected = np.linalg.norm(operator @ vectors - vectors * values, axis=0)
    np.testing.assert_allclose(residuals, expected, rtol=1e-8, atol=1e-10 * values.max())
    assert residuals.max() > 1.0  # a subspace, not invariant: the residuals are not zero


@pytest.mark.parametrize("grouped", [False, True], ids=["one-block", "one-column"])
def test_prior_precision_times_vectors(grouped, monkeypatch):
    if grouped:
        monkeypatch.setattr(_passes, "BLOCK_TEMPORARY_BYTES", 8)
    means = np.array([3.0, -1.0])
    scales = np.array([1.0, 2.0, 5.0, 0.5, 1.5, 4.0])
    prior = BuiltinPrior(GAUSSIAN, scales, means=means, n_outputs=2, block=3, intercept=True)
    theta = np.array([0.2, -0.4, 1.0, 0.7, 0.1, -2.0])
    vectors = np.random.default_rng(2).normal(size=(6, 4))
    np.testing.assert_allclose(prior.precision_times(theta, vectors),
                               prior.precision(theta) @ vectors, rtol=1e-12, atol=1e-12)
    prior.power = 0.4  # a tempered prior; added into ``out``
    out = np.ones((6, 4))
    assert prior.precision_times(theta, vectors, out=out) is out
    np.testing.assert_allclose(out, 1.0 + prior.precision(theta) @ vectors,
                               rtol=1e-12, atol=1e-12)


def _dense(covariance):
    """A LowRankCovariance as a (d, d) matrix."""
    U, g, D = covariance.basis, covariance.gain, np.diag(covariance.sd)
    return D @ (np.eye(covariance.sd.size) + U.T @ np.diag(g**2 - 1) @ U) @ D


def _low_rank_likelihood(d=60, r=6, seed=3):
    """``H = P + B B'`` with ``B`` of rank ``r``: the prior's diagonal precision ``P`` and
    ``H``."""
    rng = np.random.default_rng(seed)
    prior_precision = rng.uniform(0.5, 4.0, size=d)
    B = rng.normal(size=(d, r)) * np.array([30.0, 10.0, 5.0, 2.0, 1.0, 0.5])
    return prior_precision, np.diag(prior_precision) + B @ B.T


@pytest.mark.parametrize("offered_jacobi", [False, True], ids=["prior", "prior-or-jacobi"])
def test_randomized_low_rank_laplace_is_exact_for_a_low_rank_likelihood(offered_jacobi):
    # The 6 directions found make the covariance H^-1 exactly; offered the diagonal
    # Laplace's scales too, the shape stays this exact one on the prior's.
    prior_precision, H = _low_rank_likelihood()
    r = 6
    covariance, passes = low_rank_laplace(
        lambda V: H @ V, 1 / np.sqrt(prior_precision), r,
        diagonal_sd=1 / np.sqrt(np.diag(H)) if offered_jacobi else None)
    if not offered_jacobi:
        assert passes == 3
    np.testing.assert_allclose(covariance.basis @ covariance.basis.T, np.eye(r), atol=1e-12)
    np.testing.assert_allclose(_dense(covariance), np.linalg.inv(H), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(covariance.variances(), np.diag(np.linalg.inv(H)), rtol=1e-8)


def test_block_products_a_few_columns_a_pass_give_the_same_shape_and_count_the_passes(
        monkeypatch):
    # On wide data a block of vectors goes through the data a group of columns at a time
    # (each pass's temporaries are a group's size): the same covariance as one pass a block,
    # and every pass counted.
    H, _ = _collinear_precision(d=120)
    jacobi = 1 / np.sqrt(np.diag(H))
    prior_sd = 10 * jacobi.max() * np.ones(H.shape[0])
    widths = []

    def precision_times(vectors):
        # One column at a time: BLAS rounds a matrix product by how many columns it has,
        # which the grouping changes; the grouping itself must change nothing.
        widths.append(vectors.shape[1])
        return np.column_stack([H @ vector for vector in vectors.T])

    whole, whole_passes = low_rank_laplace(precision_times, prior_sd, 8, diagonal_sd=jacobi)
    steps = _optimize.LOW_RANK_LANCZOS_STEPS
    # The widest block: the range finder's 18 columns stacked with the Lanczos vectors.
    assert max(widths) == 8 + _optimize.LOW_RANK_OVERSAMPLE + steps
    assert whole_passes == len(widths) == 3 + 3 + steps - 1
    widths.clear()
    monkeypatch.setattr(_passes, "PASS_BLOCK_BYTES", 8 * 120 * 4)  # four columns a pass
    grouped, passes = low_rank_laplace(precision_times, prior_sd, 8, diagonal_sd=jacobi)
    assert max(widths) == 4
    # Blocks of 18 columns (the range finder's) in 5 passes; the stack of 18 + 100 in 30.
    assert passes == len(widths) == 3 * 5 + 2 * 5 + 30 + steps - 1
    np.testing.assert_allclose(_dense(grouped), _dense(whole), rtol=1e-9,
                               atol=1e-9 * np.abs(_dense(whole)).max())


def _whitened_spectrum(covariance, H):
    """The eigenvalues of ``L' H L`` for the shape's factor ``L`` (``C = L L'``)."""
    U, g = covariance.basis, covariance.gain
    L = covariance.sd[:, None] * (np.eye(H.shape[0]) + U.T @ ((g - 1)[:, None] * U))
    return np.linalg.eigvalsh(L.T @ H @ L)


def _collinear_precision(d=400, seed=11):
    """A precision like a bag of words': each coordinate's own scale spread over four
    decades, correlations that leave the Jacobi-whitened spectrum in [0.2, 3], and at each
    end one direction outside it (a contrast of collinear columns only the prior pins
    down, 0.004; a common direction, 60)."""
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    spectrum = np.concatenate([[0.004], rng.uniform(0.2, 3.0, d - 2), [60.0]])
    whitened = (Q * spectrum) @ Q.T
    scale = 1 / np.sqrt(np.diag(whitened))  # unit diagonal after Jacobi's scaling
    whitened = scale[:, None] * whitened * scale[None, :]
    sd = 10.0 ** rng.uniform(-2, 2, size=d)
    return whitened / sd[:, None] / sd[None, :], sd


def test_collinear_columns_take_the_diagonal_laplace_and_both_ends_of_its_spectrum():
    H, _ = _collinear_precision()
    jacobi = 1 / np.sqrt(np.diag(H))
    prior_sd = 10 * jacobi.max() * np.ones(H.shape[0])  # a vague prior
    exact = np.linalg.eigvalsh(jacobi[:, None] * H * jacobi[None, :])
    # The best any split of 8 directions between the two ends can leave: both outliers out.
    best = min(exact[-1 - (8 - i)] / exact[i] for i in range(9))
    prior_only, _ = low_rank_laplace(lambda V: H @ V, prior_sd, 8)
    covariance, passes = low_rank_laplace(lambda V: H @ V, prior_sd, 8, diagonal_sd=jacobi)
    spectrum = _whitened_spectrum(covariance, H)
    # Both outliers gone, the rest scaled so that its widest direction is the unit (the
    # Lanczos estimate of the smallest eigenvalue left is within its 10% tolerance).
    assert spectrum[-1] / spectrum[0] <= 1.2 * best
    assert 0.9 <= spectrum[0] <= 1.1
    prior_spectrum = _whitened_spectrum(prior_only, H)
    assert prior_spectrum[-1] / prior_spectrum[0] > 100 * best
    # Range finder and Lanczos steps, then the Ritz pairs on both: every product counted.
    assert passes == 3 + 3 + _optimize.LOW_RANK_LANCZOS_STEPS - 1


def test_low_rank_shape_factor_and_scales():
    rng = np.random.default_rng(4)
    d, k = 9, 3
    basis = np.linalg.qr(rng.normal(size=(d, k)))[0].T.copy()
    covariance = LowRankCovariance(rng.uniform(0.5, 2.0, d), basis, np.array([0.1, 3.0, 0.7]))
    shape = Shape.from_covariance(covariance)
    L = np.column_stack([shape.times(e) for e in np.eye(d)])
    np.testing.assert_allclose(L @ L.T, _dense(covariance), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(shape.scales(), np.sqrt(np.diag(_dense(covariance))), rtol=1e-12)


def _logistic_data(n_rows=400, n_features=24, seed=5):
    rng = np.random.default_rng(seed)
    # Correlated features: the posterior is far from its diagonal.
    X = rng.normal(size=(n_rows, 4)) @ rng.normal(size=(4, n_features))
    X += 0.3 * rng.normal(size=X.shape)
    y = (rng.random(n_rows) < 1 / (1 + np.exp(-X @ rng.normal(size=n_features) / 4)))
    return X, y.astype(float)


def test_a_low_rank_laplace_with_every_direction_is_the_full_laplace():
    X, y = _logistic_data()
    data = LinearData(read_only(X), read_only(y), read_only(np.zeros(0)), True)
    family = FAMILIES["LogisticModel"]()
    d = family.n_params(data)
    prior = BuiltinPrior(GAUSSIAN, np.full(d, 2.0), n_outputs=1, block=data.block,
                         intercept=True)
    full = Target.linear(family, data, prior, full=True)
    low = Target.linear(family, data, prior, full=False, low_rank=d)
    assert low.low_rank is not None and not low.full_covariance
    # The wide MAP search (L-BFGS) stops within a hundredth of a posterior sd.
    sd = np.sqrt(np.diag(full.covariance))
    assert np.all(np.abs(low.mean - full.mean) < 0.01 * sd)
    np.testing.assert_allclose(_dense(low.low_rank), full.covariance, rtol=1e-3,
                               atol=1e-3 * np.abs(full.covariance).max())
    np.testing.assert_allclose(low.covariance, np.diag(full.covariance), rtol=1e-3)


def test_auto_takes_a_low_rank_shape_and_hamiltonian_paths_beyond_the_full_size(monkeypatch):
    from skbayes_mh import MinibatchMHLogisticRegression
    from skbayes_mh.models import _optimize

    from skbayes_mh._core import auto

    X, y = _logistic_data()
    monkeypatch.setattr(_optimize, "FULL_COVARIANCE_MAX_DIM", 10)
    clf = MinibatchMHLogisticRegression(n_draws=50, n_warmup=50, random_state=0).fit(X, y)
    assert clf.proposal_.name == "hmc"
    # The data passes record the low-rank search (three block passes beyond the MAP's).
    assert clf.data_passes_["map_laplace"] >= 3
    # Paths whose nominal cost exceeds the budget give way to the random walk.
    nominal = 4 * 100 * auto.AUTO_NOMINAL_LEAPFROG_STEPS * X.shape[0] * X.shape[1]
    monkeypatch.setattr(auto, "AUTO_HAMILTONIAN_MAX_WORK", nominal - 1)
    clf.fit(X, y)
    assert clf.proposal_.name == "random_walk"
    monkeypatch.setattr(auto, "AUTO_HAMILTONIAN_MAX_WORK", nominal)
    assert clf.fit(X, y).proposal_.name == "hmc"


def test_a_low_rank_fit_samples_the_full_covariance_fits_posterior(monkeypatch):
    # The same posterior through Hamiltonian paths shaped by the full Laplace covariance and
    # by a low-rank-plus-diagonal one with 8 directions (of 24: what the correlated features
    # inform), within Monte Carlo error (draws enough to see a 0.1 sd shift or a 10% sd
    # error).
    from skbayes_mh import MinibatchMHLogisticRegression
    from skbayes_mh.models import _optimize

    from _stats import assert_same_posterior

    X, y = _logistic_data()
    settings = dict(n_draws=2600, n_warmup=500, random_state=1)
    full = MinibatchMHLogisticRegression(**settings).fit(X, y)
    monkeypatch.setattr(_optimize, "FULL_COVARIANCE_MAX_DIM", 10)
    monkeypatch.setattr(_optimize, "LOW_RANK_MAX_RANK", 8)
    low = MinibatchMHLogisticRegression(**settings).fit(X, y)
    assert low.proposal_.name == full.proposal_.name == "hmc"
    assert_same_posterior(full, low)


def test_a_sparse_chunk_of_rows_shares_the_matrix_values_and_equals_scipys_slice():
    rng = np.random.default_rng(4)
    dense = rng.normal(size=(50, 12))
    dense[rng.random(dense.shape) < 0.7] = 0.0
    X = kernel_csr(sp.csr_array(dense))
    rows = _data.csr_rows(X, 17, 41)
    assert np.shares_memory(rows.data, X.data) and np.shares_memory(rows.indices, X.indices)
    np.testing.assert_array_equal(rows.toarray(), dense[17:41])
    np.testing.assert_array_equal(_data.squared(rows).toarray(), dense[17:41] ** 2)
    np.testing.assert_array_equal(_data.csr_rows(X, 5, 5).toarray(), dense[5:5])
    values = rng.normal(size=24)
    data = LinearData(X, read_only(rng.normal(size=50)), read_only(np.zeros(0)), True)
    np.testing.assert_allclose(data.design_gram(17, 41, values, diagonal=True),
                               np.append((dense[17:41] ** 2).T @ values, values.sum()))

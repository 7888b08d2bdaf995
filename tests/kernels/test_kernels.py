"""Each small numba kernel against a NumPy/SciPy reference."""
import itertools
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import log_expit

from skbayes_mh._kernels._common import log_sigmoid, sample_discrete
from skbayes_mh._kernels._jit import STATUS_BAD_LOGLIK, STATUS_OK
from skbayes_mh._kernels.minibatch import berry_esseen_bound
from skbayes_mh._kernels.passes import row_sums
from skbayes_mh._kernels.pool import draw_rows, make_pool, new_pool
from skbayes_mh._validation import read_only
from skbayes_mh.sampling._api import _row_target

from _models import gaussian_mean_loglik, nan_beyond_one_loglik, zero_beyond_one_loglik


def _row_sum(loglik, x, theta):
    target = _row_target(loglik, read_only(x), np.asarray(theta, dtype=float), None, 1.0)
    d = len(theta)
    return row_sums(target.spec, np.asarray(theta, dtype=float), 0, x.shape[0], 0, np.zeros(d),
                    np.zeros((d, d)))


def test_loglik_sum_matches_numpy():
    x = np.random.default_rng(0).normal(size=(1000, 1))
    total, status = _row_sum(gaussian_mean_loglik, x, [0.3])
    assert status == STATUS_OK
    assert total == pytest.approx(np.sum(-0.5 * (x[:, 0] - 0.3) ** 2), rel=1e-12)


def test_loglik_sum_flags_nan_and_passes_minus_inf():
    x = np.zeros((10, 1))
    assert _row_sum(nan_beyond_one_loglik, x, [0.5])[1] == STATUS_OK
    assert _row_sum(nan_beyond_one_loglik, x, [2.0])[1] == STATUS_BAD_LOGLIK
    total, status = _row_sum(zero_beyond_one_loglik, x, [2.0])
    assert status == STATUS_OK and total == -math.inf


@pytest.mark.slow
@pytest.mark.parametrize("dense", [True, False])
def test_random_rows_are_uniform_subsets(dense):
    """Both pools draw every subset of k rows with probability 1 / C(n, k), also when a
    batch grows in two steps, and each new batch starts afresh."""
    n, k, trials = 10, 4, 42_000
    rng = np.random.default_rng(1)
    pool = new_pool(n, dense)
    subsets = {subset: 0 for subset in itertools.combinations(range(n), k)}
    first = np.zeros(n)
    for _ in range(trials):
        draw_rows(pool, 0, 3, rng)
        draw_rows(pool, 3, k - 3, rng)  # growing a batch keeps it distinct
        chosen = pool[0][:k]
        subsets[tuple(sorted(chosen))] += 1
        first[chosen[0]] += 1
    counts = np.array(list(subsets.values()))
    assert counts.sum() == trials
    assert stats.chisquare(counts).pvalue > 1e-3
    assert stats.chisquare(first).pvalue > 1e-3


@pytest.mark.parametrize("n", [1, 7, 5000])
def test_sparse_pool_draws_every_row_once_as_it_grows(n):
    """Drawing all n rows gives a permutation (the sparse table doubles on the way), and so
    does the next batch after the table is cleared."""
    rng = np.random.default_rng(2)
    pool = make_pool(n, False)
    for _ in range(2):
        draw_rows(pool, 0, 1, rng)
        draw_rows(pool, 1, n - 1, rng)
        assert sorted(pool[0]) == list(range(n))
    # The table held at most one entry per drawn row, at a load factor of at most 1/2.
    assert pool[3][0] <= n and pool[3][0] <= 2 ** pool[3][1] // 2


@pytest.mark.parametrize("x", [-800.0, -30.0, -1.0, 0.0, 2.5, 40.0, 800.0])
def test_log_sigmoid_matches_scipy(x):
    assert log_sigmoid(x) == pytest.approx(float(log_expit(x)), rel=1e-14, abs=1e-300)


@pytest.mark.slow
def test_sample_discrete_frequencies_match_weights():
    support = np.array([-2.0, 0.0, 1.0, 5.0])
    weights = np.array([0.1, 0.2, 0.3, 0.4])
    rng = np.random.default_rng(2)
    draws = np.array([sample_discrete(support, np.cumsum(weights), rng) for _ in range(40_000)])
    counts = np.array([(draws == s).sum() for s in support])
    assert counts.sum() == draws.size
    assert stats.chisquare(counts, 40_000 * weights).pvalue > 1e-3


def test_berry_esseen_bound_matches_numpy():
    values = np.random.default_rng(3).exponential(size=200)
    count = 150
    x = values[:count]
    z = np.abs(x - x.mean()) / x.std()
    expected = (6.4 * np.mean(z**3) + 2.0 * np.mean(z)) / np.sqrt(count)
    assert berry_esseen_bound(values, count, x.mean()) == pytest.approx(expected, rel=1e-12)
    assert berry_esseen_bound(np.ones(10), 10, 1.0) == 0.0


def test_prefetch_row_changes_nothing():
    from skbayes_mh._kernels._common import prefetch_row

    data = read_only(np.arange(20.0).reshape(4, 5))
    for i in range(4):
        prefetch_row(data, i)
    np.testing.assert_array_equal(data, np.arange(20.0).reshape(4, 5))


def _proposal(kind, scale, covariance=None, diag=None, mean=None, df=0.0):
    """A kernel proposal tuple shaped by ``covariance`` (a matrix or a LowRankCovariance) or
    per-coordinate ``diag``."""
    from skbayes_mh._kernels.specs import NO_MOVES, Proposal
    from skbayes_mh.sampling import Shape

    shape = (Shape.from_covariance(covariance) if covariance is not None
             else Shape(np.zeros((0, 0)), np.asarray(diag, dtype=float)))
    d = shape.diag.size or shape.factor.shape[0]
    mean = np.zeros(d) if mean is None else np.asarray(mean, dtype=float)
    return Proposal(kind, float(scale), shape.factor, shape.diag, shape.basis, shape.gain, mean,
                    float(df), NO_MOVES)


def _draws(proposal, theta, n, gradient=None, seed=5):
    from skbayes_mh._kernels.proposals import propose

    rng = np.random.default_rng(seed)
    d = theta.size
    gradient = np.zeros(d) if gradient is None else gradient
    out, noise = np.empty(d), np.empty(d)
    work = (np.empty(d), np.empty(d), np.empty(d))
    draws = np.empty((n, d))
    for k in range(n):
        propose(proposal, theta, gradient, rng, noise, work, out)
        draws[k] = out
    return draws


@pytest.mark.slow
def test_random_walk_with_a_cholesky_factor_has_that_covariance():
    from skbayes_mh._kernels.proposals import RANDOM_WALK

    covariance = np.array([[2.0, 0.8, 0.1], [0.8, 1.0, -0.3], [0.1, -0.3, 0.5]])
    theta = np.array([1.0, -2.0, 0.5])
    draws = _draws(_proposal(RANDOM_WALK, 1.0, covariance), theta, 40_000)
    np.testing.assert_allclose(draws.mean(axis=0), theta, atol=4 * np.sqrt(2.0 / 40_000))
    # Entries of a sample covariance of 40,000 draws: standard error below 0.015 here.
    np.testing.assert_allclose(np.cov(draws.T), covariance, atol=0.06)
    diagonal = _draws(_proposal(RANDOM_WALK, 1.0, diag=[0.1, 1.0, 3.0]), theta, 40_000)
    np.testing.assert_allclose(diagonal.std(axis=0), [0.1, 1.0, 3.0], rtol=0.03)


def _low_rank_covariance(d=5, seed=8):
    """A low-rank-plus-diagonal covariance (two directions) and its (d, d) matrix."""
    from skbayes_mh.models._optimize import LowRankCovariance

    rng = np.random.default_rng(seed)
    basis = np.ascontiguousarray(np.linalg.qr(rng.normal(size=(d, 2)))[0].T)
    covariance = LowRankCovariance(rng.uniform(0.5, 2.0, d), basis, np.array([0.2, 2.5]))
    D = np.diag(covariance.sd)
    dense = D @ (np.eye(d) + basis.T @ np.diag(covariance.gain**2 - 1) @ basis) @ D
    return covariance, dense


def test_low_rank_shape_kernels_are_one_factor_its_transpose_and_inverse():
    from skbayes_mh._kernels.proposals import (RANDOM_WALK, shape_solve, shape_times,
                                               shape_transpose_times)

    covariance, dense = _low_rank_covariance()
    proposal = _proposal(RANDOM_WALK, 1.0, covariance)
    d = dense.shape[0]
    L, inverse, transpose = (np.empty((d, d)) for _ in range(3))
    out = np.empty(d)
    for a, e in enumerate(np.eye(d)):
        for function, matrix in ((shape_times, L), (shape_solve, inverse),
                                 (shape_transpose_times, transpose)):
            function(proposal, e, out)
            matrix[:, a] = out
    np.testing.assert_allclose(L @ L.T, dense, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(inverse @ L, np.eye(d), atol=1e-12)
    np.testing.assert_allclose(transpose, L.T, atol=1e-12)
    theta = np.linspace(-1, 1, d)
    draws = _draws(proposal, theta, 40_000)
    # Entries of a sample covariance of 40,000 draws: standard error below 0.03 here.
    np.testing.assert_allclose(np.cov(draws.T), dense, atol=0.12)


@pytest.mark.slow
@pytest.mark.parametrize("df", [0.0, 4.0])
def test_pcn_keeps_its_reference_and_reports_its_density_ratio(df):
    # Draws from the reference, moved once by the autoregressive proposal, stay distributed
    # as the reference (the move is reversible with respect to it), and the log ratio the
    # kernel reports is log ref(theta) - log ref(theta') for the reference's own density.
    from scipy.stats import multivariate_normal, multivariate_t

    from skbayes_mh._kernels.proposals import PCN, proposal_log_ratio

    covariance = np.array([[1.0, 0.6], [0.6, 2.0]])
    mean = np.array([0.5, -1.0])
    proposal = _proposal(PCN, 0.6, covariance, mean=mean, df=df)
    reference = (multivariate_normal(mean, covariance) if df == 0.0
                 else multivariate_t(mean, covariance, df=df))
    starts = reference.rvs(size=20_000, random_state=np.random.default_rng(6))
    moved = np.array([_draws(proposal, start, 1, seed=k)[0] for k, start in enumerate(starts)])
    for q in (0.1, 0.5, 0.9):  # each coordinate's quantiles, within 4 standard errors
        for a in range(2):
            level = np.quantile(starts[:, a], q)
            assert abs(np.mean(moved[:, a] <= level) - q) < 4 * np.sqrt(q * (1 - q) / 20_000)
    work = (np.empty(2), np.empty(2), np.empty(2))
    for start, end in zip(starts[:5], moved[:5]):
        ratio = proposal_log_ratio(proposal, start, end, np.zeros(2), np.zeros(2), work)
        assert ratio == pytest.approx(reference.logpdf(start) - reference.logpdf(end), rel=1e-10)


@pytest.mark.parametrize("low_rank", [False, True], ids=["cholesky", "low-rank"])
def test_mala_log_ratio_matches_the_gaussian_densities(low_rank):
    from scipy.stats import multivariate_normal

    from skbayes_mh._kernels.proposals import MALA, proposal_log_ratio, propose

    if low_rank:
        shape, covariance = _low_rank_covariance()
    else:
        shape = covariance = np.array([[1.0, 0.3], [0.3, 0.5]])
    d = covariance.shape[0]
    scale = 0.7
    proposal = _proposal(MALA, scale, shape)
    rng = np.random.default_rng(9)
    theta, gradient, gradient_prop = rng.normal(size=(3, d))
    out, noise = np.empty(d), np.empty(d)
    work = (np.empty(d), np.empty(d), np.empty(d))
    propose(proposal, theta, gradient, np.random.default_rng(7), noise, work, out)

    def log_q(to, start, g):
        mean = start + 0.5 * scale**2 * covariance @ g
        return multivariate_normal(mean, scale**2 * covariance).logpdf(to)

    ratio = proposal_log_ratio(proposal, theta, out, gradient_prop, noise, work)
    assert ratio == pytest.approx(log_q(theta, out, gradient_prop) - log_q(out, theta, gradient),
                                  rel=1e-10, abs=1e-12)


def test_builtin_priors_match_scipy():
    from scipy.stats import laplace, norm

    from skbayes_mh.models._prior import GAUSSIAN, LAPLACE, NO_PRIOR, BuiltinPrior

    theta = np.array([0.3, -2.0, 5.0])
    scales = np.array([1.0, 0.5, 10.0])
    locations = np.array([0.0, 1.0, -2.0])
    assert BuiltinPrior(NO_PRIOR, scales).log_density(theta)[0] == 0.0
    for kind, reference in ((GAUSSIAN, norm), (LAPLACE, laplace)):
        prior = BuiltinPrior(kind, scales, locations)
        a, gradient = prior.log_density(theta, want_grad=True)
        b = prior.log_density(locations)[0]
        expected = (reference.logpdf(theta, loc=locations, scale=scales)
                    - reference.logpdf(locations, loc=locations, scale=scales)).sum()
        assert a - b == pytest.approx(expected, rel=1e-12)
        h = 1e-6
        numeric = [(prior.log_density(theta + h * e)[0] - prior.log_density(theta - h * e)[0])
                   / (2 * h) for e in np.eye(3)]
        np.testing.assert_allclose(gradient, numeric, rtol=1e-6)


def test_centred_intercept_prior_and_its_precision():
    # Two blocks of [w1, w2, b]: each intercept's prior is on b + means . w.
    from scipy.stats import norm

    from skbayes_mh.models._prior import GAUSSIAN, BuiltinPrior

    means = np.array([3.0, -1.0])
    scales = np.array([1.0, 2.0, 5.0, 0.5, 1.5, 4.0])
    prior = BuiltinPrior(GAUSSIAN, scales, means=means, n_outputs=2, block=3, intercept=True)
    theta = np.array([0.2, -0.4, 1.0, 0.7, 0.1, -2.0])
    expected = 0.0
    for k in range(2):
        w, b = theta[3 * k:3 * k + 2], theta[3 * k + 2]
        expected += norm.logpdf(w, scale=scales[3 * k:3 * k + 2]).sum()
        expected += norm.logpdf(b + means @ w, scale=scales[3 * k + 2])
    zero = norm.logpdf(0.0, scale=scales).sum()
    value, gradient = prior.log_density(theta, want_grad=True)
    assert value == pytest.approx(expected - zero, rel=1e-12)
    h = 1e-5
    hessian = np.array([(prior.log_density(theta + h * e, True)[1]
                         - prior.log_density(theta - h * e, True)[1]) / (2 * h) for e in np.eye(6)])
    np.testing.assert_allclose(prior.precision(theta), -hessian, atol=1e-8)
    np.testing.assert_allclose(prior.precision(theta, diagonal=True), -np.diag(hessian), atol=1e-8)


def test_recorded_log_posterior_of_exact_tests():
    from skbayes_mh import sample

    from _models import standard_normal_log_prior

    x = np.random.default_rng(6).normal(size=(300, 1))
    result = sample(gaussian_mean_loglik, x, [0.0], step_size=0.05, acceptance="barker",
                    log_prior=standard_normal_log_prior, temperature=2.0, n_draws=50,
                    random_state=0)
    theta = result.draws[:, 0]
    expected = -0.5 * theta**2 + np.array([-0.5 * np.sum((x[:, 0] - t) ** 2) for t in theta]) / 2
    np.testing.assert_allclose(result.log_posterior, expected, rtol=1e-10)
    minibatch = sample(gaussian_mean_loglik, x, [0.0], step_size=0.05, n_draws=5,
                       random_state=0)
    assert np.all(np.isnan(minibatch.log_posterior))


def _logistic_spec(params):
    from skbayes_mh.models.logistic import logistic_link, logistic_link_rows

    X = np.random.default_rng(0).standard_normal((20, 3))
    y = (X[:, 0] > 0).astype(np.float64)
    return (X, y, np.ones(0), params, logistic_link, logistic_link_rows, 1, 0, 1, np.zeros(0))


def _derivative_outputs(n_rows=20):
    return np.empty(n_rows), np.empty((n_rows, 1)), np.empty((n_rows, 1, 1))


def test_kernels_take_read_only_inputs():
    """Every array a kernel only reads may be read-only (a Ray or loky worker's view)."""
    from skbayes_mh._kernels.passes import linear_derivatives

    theta = np.array([0.3, -0.2, 0.1, 0.05])
    outputs = [_derivative_outputs() for _ in range(2)]
    spec = _logistic_spec(np.zeros(0))
    assert linear_derivatives(spec, theta, 0, 20, 2, *outputs[0]) == STATUS_OK
    frozen = [np.array(a) for a in spec[:4]] + [theta.copy()]
    for array in frozen:
        array.setflags(write=False)
    spec = (*frozen[:4], *spec[4:])
    assert linear_derivatives(spec, frozen[4], 0, 20, 2, *outputs[1]) == STATUS_OK
    for a, b in zip(*outputs):
        np.testing.assert_array_equal(a, b)


def test_a_wrong_kernel_argument_is_named_not_a_numba_dispatch_error():
    from skbayes_mh._kernels.passes import linear_derivatives

    theta = np.zeros(4)
    values, slopes, curvatures = _derivative_outputs()
    spec = _logistic_spec(np.zeros(0))
    slopes.setflags(write=False)
    with pytest.raises(TypeError, match=r"linear_derivatives: slopes must be a writable "
                                        r"C-contiguous 2-D float64 array \(the kernel writes "
                                        r"into it\); got a read-only"):
        linear_derivatives(spec, theta, 0, 20, 2, values, slopes, curvatures)
    slopes = np.empty((20, 1))
    with pytest.raises(TypeError, match=r"spec\.params must be a C-contiguous 1-D float64 "
                                        r"array; got a writable C-contiguous 1-D int64"):
        linear_derivatives(_logistic_spec(np.zeros(0, dtype=np.int64)), theta, 0, 20, 2, values,
                           slopes, curvatures)
    with pytest.raises(TypeError, match=r"theta must be a C-contiguous 1-D float64 array; "
                                        r"got a writable non-contiguous"):
        linear_derivatives(spec, np.zeros(8)[::2], 0, 20, 2, values, slopes, curvatures)
    # The spec's functions reach the kernel as addresses: one that is not jitted is named.
    not_jitted = (*spec[:4], lambda *args: 0.0, *spec[5:])
    with pytest.raises(TypeError, match=r"linear_derivatives: spec\.link must be a function "
                                        r"compiled with numba\.njit for .*; got function"):
        linear_derivatives(not_jitted, theta, 0, 20, 2, values, slopes, curvatures)


@pytest.mark.parametrize("acceptance", ["metropolis", "firefly"])
def test_a_chain_state_field_of_the_wrong_kind_is_named(acceptance):
    """The chain loops take their state and outputs as named tuples (``MHChain`` or
    ``FireflyChain``, ``Trace``): a read-only state array is named by its field."""
    import warnings

    from skbayes_mh import MinibatchMHLogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = MinibatchMHLogisticRegression(acceptance=acceptance, n_draws=20, n_warmup=20,
                                            n_chains=1, warm_start=True,
                                            random_state=0).fit(X, y)
    chain = clf._chains[0]
    chain.state.theta.setflags(write=False)
    kernel = "mh_exact" if acceptance == "metropolis" else "firefly_linear"
    with pytest.raises(TypeError, match=rf"{kernel}: chain\.theta must be a writable "
                                        r"C-contiguous 1-D float64 array"):
        chain.sampler.run(chain.state, 5, np.random.default_rng(0))

"""NegativeBinomialRegression: the link and the NumPy side against SciPy's ``nbinom`` and
finite differences, scikit-learn citizenship, agreement with a long exact chain of an
independently written model, predictions, and the refusal of Firefly."""
import math

import numba
import numpy as np
import pytest
from scipy import special, stats

from skbayes_mh import NegativeBinomialRegression
from skbayes_mh.models.negative_binomial import (NegativeBinomialModel, digamma,
                                                 negative_binomial_link, trigamma)

from _models import FAST, long_metropolis_chain, rate_tolerance, stored_reference
from _stats import assert_same_distribution


def counts(n, seed=0, weights=(0.3, -0.2), intercept=1.0, dispersion=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(weights)))
    mu = np.exp(X @ np.array(weights) + intercept)
    r = 1.0 / dispersion
    return X, rng.negative_binomial(r, r / (r + mu)).astype(float)


def test_digamma_and_trigamma_match_scipy():
    x = np.array([1e-6, 0.01, 0.3, 1.0, 2.5, 5.99, 6.0, 10.0, 123.4, 1e5, 1e9])
    np.testing.assert_allclose([digamma(v) for v in x], special.digamma(x), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose([trigamma(v) for v in x], special.polygamma(1, x), rtol=1e-9)


@pytest.mark.parametrize("eta", [-3.0, 0.2, 2.0, 8.0])
@pytest.mark.parametrize("log_dispersion", [-4.0, -1.0, 0.3, 2.0])
def test_link_matches_scipy_and_finite_differences(eta, log_dispersion):
    r = math.exp(-log_dispersion)
    p = r / (r + math.exp(eta))
    h = 1e-5
    for y in (0.0, 1.0, 7.0, 300.0):
        u = np.array([eta, log_dispersion])
        d1, d2 = np.zeros(2), np.zeros((2, 2))
        value = negative_binomial_link(u, y, np.zeros(0), 2, d1, d2)
        # The link leaves out -log y!, a constant in the parameters.
        assert value == pytest.approx(stats.nbinom.logpmf(y, r, p) + special.gammaln(y + 1),
                                      rel=1e-12, abs=1e-12)
        for a in range(2):
            step = np.zeros(2)
            step[a] = h
            up, down = np.zeros(2), np.zeros(2)
            scratch = np.zeros((2, 2))
            f_up = negative_binomial_link(u + step, y, np.zeros(0), 1, up, scratch)
            f_down = negative_binomial_link(u - step, y, np.zeros(0), 1, down, scratch)
            assert d1[a] == pytest.approx((f_up - f_down) / (2 * h), rel=1e-6, abs=1e-6)
            np.testing.assert_allclose(d2[a], (up - down) / (2 * h), rtol=1e-5, atol=1e-5)


def test_numpy_side_matches_scipy():
    model = NegativeBinomialModel()
    rng = np.random.default_rng(0)
    eta = rng.normal(1.0, 1.0, size=(4, 30, 1))
    dispersion = np.array([0.1, 0.5, 1.0, 3.0])
    variables = {"dispersion": dispersion}
    y = rng.integers(0, 20, size=30).astype(float)
    r = 1.0 / dispersion[:, None]
    p = r / (r + np.exp(eta[..., 0]))
    np.testing.assert_allclose(model.log_likelihood(eta, variables, y),
                               stats.nbinom.logpmf(y[None, :], r, p), rtol=1e-12, atol=1e-12)
    quantiles = np.array([0.05, 0.5, 0.95])
    found = model.mixture_quantiles(eta, variables, quantiles)
    for row in range(30):
        for j, q in enumerate(quantiles):
            k = found[row, j]
            cdf = stats.nbinom.cdf(np.array([[k - 1], [k]]), r[:, 0], p[:, row]).mean(axis=1)
            assert cdf[1] >= q and (k == 0 or cdf[0] < q)  # the smallest count reaching q
    # Simulation: one draw, many rows with the same mean; mean and variance within 4 sds.
    flat = np.full((1, 200_000, 1), np.log(3.0))
    draws = model.simulate(flat, {"dispersion": np.array([0.5])}, rng)[0]
    mean, variance = 3.0, 3.0 + 0.5 * 9.0
    assert abs(draws.mean() - mean) < 4 * math.sqrt(variance / draws.size)
    assert abs(draws.var() / variance - 1) < 0.03


@numba.njit
def reference_loglik(theta, data, i):
    """The same model written out independently: ``data[i] = [x_1, x_2, y]``, theta ``[w_1,
    w_2, b, log alpha]``."""
    mu = math.exp(theta[0] * data[i, 0] + theta[1] * data[i, 1] + theta[2])
    r = math.exp(-theta[3])
    y = data[i, 2]
    return (math.lgamma(y + r) - math.lgamma(r) - math.lgamma(y + 1.0)
            + r * math.log(r / (r + mu)) + y * math.log(mu / (r + mu)))


@numba.njit
def reference_log_prior(theta):
    """``w ~ N(0, 1)``, ``b ~ N(0, 10^2)``, ``alpha ~ Exponential(1)`` on ``log alpha``
    (Jacobian included): the estimator's prior with ``autoscale=False``."""
    return (-0.5 * (theta[0] ** 2 + theta[1] ** 2) - 0.5 * (theta[2] / 10.0) ** 2
            + theta[3] - math.exp(theta[3]))


def independent_data():
    """The data of the independently written model's long reference."""
    X, y = counts(400, seed=1)
    return X, y


def independent_chain(n_draws):
    """The data and every tenth of ``n_draws`` steps of a random-walk Metropolis chain of
    the independently written model (``benchmarks/paper/family_references.py`` stores
    its summary)."""
    X, y = independent_data()
    start = np.array([0.3, -0.2, 1.0, math.log(0.5)])
    return X, y, long_metropolis_chain(reference_loglik, reference_log_prior,
                                       np.column_stack([X, y]), start, step_size=0.06,
                                       n_draws=n_draws)


@pytest.fixture(scope="module")
def long_exact_chain_of_independent_model():
    """The data and the stored summary of a long random-walk Metropolis chain of the
    independently written model."""
    X, y = independent_data()
    return X, y, stored_reference("negative_binomial", X, y)


@pytest.mark.slow
def test_default_fit_agrees_with_a_long_exact_chain_of_an_independent_model(
        long_exact_chain_of_independent_model):
    X, y, reference = long_exact_chain_of_independent_model
    # The reference's fixed prior (the default learns the weights' scale from the data)
    reg = NegativeBinomialRegression(prior_scale=1.0, autoscale=False, n_draws=4000,
                                     n_chains=2, random_state=2).fit(X, y)
    assert_same_distribution(reg._theta_draws(), reference)


def poisson_counts(n, seed):
    """Counts with no overdispersion: the negative binomial's Poisson limit."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, rng.poisson(np.exp(X @ [0.3, -0.2] + 0.5)).astype(float)


def test_the_control_variates_follow_the_dispersion_s_tail_near_the_poisson_limit():
    """Poisson counts leave ``log alpha`` a long left tail (its Exponential prior's: each
    row's likelihood hardly changes as ``alpha`` goes to 0). There the control variates'
    proxies read the dispersion as ``alpha``, in which the rows' log-likelihood is nearly
    quadratic down to 0: their full-data sum stays within 0.05 of the exact log-likelihood 3 and 8
    units of ``log alpha`` below the centre, where a quadratic in ``log alpha`` is off by
    12 and 99 (a Hamiltonian path on it would hardly reach there). Their per-row sum is their
    full-data sum: over every row the estimate is the exact log posterior."""
    from skbayes_mh.models._prior import GAUSSIAN, LOG_SCALE
    from skbayes_mh.sampling import control_variates

    from _models import linear_target

    X, y = poisson_counts(20_000, seed=5)
    target = linear_target(NegativeBinomialModel(), X, y, [1.0, 1.0, 10.0, 1.0],
                           kind=GAUSSIAN | LOG_SCALE)
    center = target.mean
    cv, _ = control_variates(target, center)
    assert np.array_equal(cv[9], [0.0, 0.0, 0.0, 1.0])  # the dispersion read as alpha
    thetas = center + np.array([[0.0, 0.0, 0.0, -3.0], [0.0, 0.0, 0.0, -8.0]])
    remainders = target.row_terms(thetas, cv, n_rows=len(y)).sum(axis=1)
    assert np.all(np.abs(remainders) < 0.05), remainders
    # The same proxies with the dispersion read as its log (the kernels' default).
    total, gradient, hessian = target.loglik_derivatives(center)
    exact = np.array([target.loglik_derivatives(theta, order=0)[0] for theta in thetas])
    deltas = thetas - center
    in_log = total + deltas @ gradient + 0.5 * np.einsum("si,ij,sj->s", deltas, hessian, deltas)
    assert np.all(np.abs(exact - in_log) > 10.0), exact - in_log
    np.testing.assert_allclose(target.log_posterior_estimates(thetas, cv, n_rows=len(y)),
                               [target.log_posterior(theta) for theta in thetas],
                               rtol=1e-10)
    # Over-dispersed counts pin the dispersion: a quadratic in its log holds within 3 sds
    # (to 0.06 nats here), and the proxies keep it.
    X, y = counts(20_000, seed=5)
    pinned = linear_target(NegativeBinomialModel(), X, y, [1.0, 1.0, 10.0, 1.0],
                           kind=GAUSSIAN | LOG_SCALE)
    assert control_variates(pinned, pinned.mean)[0][9].size == 0


def test_the_kernels_proxies_in_alpha_sum_to_their_full_data_sum():
    """A minibatch test whose first batch is every row decides as the exact Barker test on
    the full-data ratio only if the rows' proxies (read in ``alpha``) sum to the proxies'
    full-data sum (they enter the decision with opposite signs). Moves up the dispersion's
    range from its centre and its tail, where the proxies change by nats: with the
    full-data sums left in ``log alpha`` these moves were accepted at 0.69, 0.98 and 0.91
    against 0.31, 0.80 and 0.003."""
    from skbayes_mh.acceptance import MinibatchBarker
    from skbayes_mh.models._prior import GAUSSIAN, LOG_SCALE
    from skbayes_mh.proposals import resolve_proposal
    from skbayes_mh.sampling import MetropolisHastings, Shape, control_variates

    from _models import linear_target

    X, y = poisson_counts(2000, seed=5)
    target = linear_target(NegativeBinomialModel(), X, y, [1.0, 1.0, 10.0, 1.0],
                           kind=GAUSSIAN | LOG_SCALE)
    center = target.mean
    cv, _ = control_variates(target, center)
    assert np.array_equal(cv[9], [0.0, 0.0, 0.0, 1.0])
    sampler = MetropolisHastings(target, MinibatchBarker(batch_size=len(y)),
                                 resolve_proposal("random_walk"),
                                 Shape.from_covariance(target.covariance), 1.0, cv)
    rng = np.random.default_rng(9)
    up = np.sqrt(target.covariance[-1, -1]) * np.array([0.0, 0.0, 0.0, 1.0])
    tail = center - np.array([0.0, 0.0, 0.0, 3.0])
    n_trials = 1000
    for theta, theta_prop in ((center, center + up), (tail, center + up),
                              (center, center + 2 * up)):
        log_prior_ratio = (target.prior.log_density(theta_prop)[0]
                           - target.prior.log_density(theta)[0])
        expected = special.expit(target.log_posterior(theta_prop) - target.log_posterior(theta))
        frequency = sampler.acceptance_frequency(theta, theta_prop, log_prior_ratio, n_trials,
                                                 rng)
        assert abs(frequency - expected) < rate_tolerance(expected, n_trials), (frequency,
                                                                                expected)


@pytest.mark.slow
def test_the_minibatch_test_samples_the_exact_posterior_near_the_poisson_limit():
    """Poisson counts, where the posterior of ``log alpha`` has a long tail: the minibatch
    test with control variates (proxies in ``alpha``; Hamiltonian paths on them) samples the
    exact test's posterior, every parameter's mean and sd within both fits' Monte Carlo
    error, in a test that sees a 0.1 sd shift and a 10% sd error (the heavy-tailed ``log
    alpha``'s sd needs the draws: 0.070 sd and 9.5% with these); and it read a few percent
    of the rows an iteration."""
    from _stats import assert_same_posterior

    X, y = poisson_counts(2000, seed=6)
    common = dict(prior_scale=1.0, n_warmup=500, n_chains=4)
    minibatch = NegativeBinomialRegression(acceptance="minibatch", n_draws=15_000, thin=3,
                                           random_state=7, **common).fit(X, y)
    assert minibatch.control_variates_
    assert np.mean(minibatch.posterior_.sample_stats["rows_per_iteration"]) < 0.1 * len(y)
    exact = NegativeBinomialRegression(acceptance="metropolis", n_draws=11_000,
                                       random_state=8, **common).fit(X, y)
    assert np.quantile(np.log(exact.posterior_.get("dispersion")), 0.01) < (
        np.log(exact.dispersion_) - 3.0)  # the long tail
    assert_same_posterior(minibatch, exact, label="minibatch against exact")


def test_predictions_are_posterior_predictive_means():
    X, y = counts(500, seed=4)
    reg = NegativeBinomialRegression(random_state=0, **FAST).fit(X, y)
    coef = reg.posterior_.get("coef", flat=True)
    intercept = reg.posterior_.get("intercept", flat=True)
    alpha = reg.posterior_.get("dispersion", flat=True)
    mu = np.exp(X[:6] @ coef.T + intercept)
    mean, std = reg.predict(X[:6], return_std=True)
    np.testing.assert_allclose(mean, mu.mean(axis=1), rtol=1e-12)
    noise = (mu + alpha * mu**2).mean(axis=1)
    np.testing.assert_allclose(std, np.sqrt(noise + mu.var(axis=1)), rtol=1e-12)
    assert reg.dispersion_ == pytest.approx(alpha.mean())


def test_firefly_is_refused_and_bad_counts_too():
    X, y = counts(100)
    with pytest.raises(ValueError, match="no global quadratic lower bound"):
        NegativeBinomialRegression(acceptance="firefly", **FAST).fit(X, y)
    with pytest.raises(ValueError, match="non-negative"):
        NegativeBinomialRegression(**FAST).fit(X, y - 5)


def test_a_step_far_too_large_rejects_and_warns_instead_of_failing_on_nan():
    """Near-Poisson counts with an isotropic step far above the posterior's sd: Hamiltonian
    paths run to means beyond every float, where the likelihood is zero (a rejection);
    the fit warns that the chains did not move rather than raising on a NaN likelihood."""
    from sklearn.exceptions import ConvergenceWarning
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    y = rng.poisson(np.exp(X @ [0.3, -0.2, 0.1] + 1.0))
    with pytest.warns(ConvergenceWarning, match="never moved"):
        reg = NegativeBinomialRegression(step_size=0.2, n_draws=50, n_warmup=50, n_chains=2,
                                         random_state=0).fit(X, y)
    assert np.all(np.isfinite(reg.coef_)) and reg.acceptance_rate_ == 0.0

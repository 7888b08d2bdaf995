"""Simulation-based calibration of the default fit as a user meets it on tall data: the
minibatch test with control variates and Hamiltonian paths on their proxies, with the MAP,
the warm-up tuning and the thinning the fit chooses itself (``test_calibration.py``
calibrates each test in isolation, with the method and checks described there).
``SKBAYES_MH_SBC_SCALE`` multiplies the replications here too. And the default fit of
a family with a sampled extra parameter on small data: Gamma regression; of binomial
regression on rows of several trials; and of ordinal regression (its cut-points)."""
import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from skbayes_mh import (BinomialRegression, GammaRegression, MinibatchMHLogisticRegression,
                        OrdinalRegression)
from skbayes_mh.linear_model._ordinal import GAP_PRIOR_SCALE
from skbayes_mh.models import BinomialModel, CumulativeModel, GammaModel, LogisticModel
from skbayes_mh.models._prior import GAUSSIAN, LOG_SCALE

from _models import linear_target
from test_calibration import (N_RANK_DRAWS, SCALE, assert_uniform_ranks,
                              detectable_variance_error)

pytestmark = pytest.mark.slow


def laplace_rank(draws, theta_star, laplace):
    """The SBC rank of ``theta_star`` among :data:`N_RANK_DRAWS` evenly spaced ``draws``
    (one chain's, ``(n_draws, d)``) by the test quantity of every SBC here: the Mahalanobis
    distance in the Laplace approximation at the data (``laplace``, a ``linear_target``), a
    fixed function of the parameters and the data."""
    draws = draws[np.linspace(0, len(draws) - 1, N_RANK_DRAWS).round().astype(int)]
    precision = np.linalg.inv(laplace.covariance)

    def quantity(theta):
        centred = theta - laplace.mean
        return np.einsum("...i,ij,...j->...", centred, precision, centred)

    return int(np.sum(quantity(draws) < quantity(theta_star)))


def default_fit_ranks(n_replications, n_rows, n_features, seed):
    """SBC ranks of ``MinibatchMHLogisticRegression``'s default fit (its own MAP, control
    variates, test, proposal, warm-up and thinning; one chain of 150 kept draws), on tall
    data at temperature 1, with the raw-scale prior ``N(0, 1)`` on every weight and the
    intercept (``autoscale=False, intercept_prior_scale=1``, so that ``theta*`` is drawn
    from exactly the prior the fit uses), and the fits' resolved test and proposal."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n_rows, n_features)) * np.sqrt(3.0)
    ranks, resolved = [], set()
    for replication in range(n_replications):
        generator = np.random.default_rng([seed, replication])
        theta_star = generator.normal(size=n_features + 1)
        eta = X @ theta_star[:-1] + theta_star[-1]
        y = (generator.random(n_rows) < 1.0 / (1.0 + np.exp(-eta))).astype(int)
        with warnings.catch_warnings():  # 150 draws: short of the ESS a fit wants
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = MinibatchMHLogisticRegression(autoscale=False, intercept_prior_scale=1.0,
                                                n_chains=1, n_draws=150,
                                                random_state=replication).fit(X, y)
        resolved.add((fit.acceptance_.name, fit.proposal_.name, fit.control_variates_))
        laplace = linear_target(LogisticModel(), X, y, np.ones(n_features + 1))
        ranks.append(laplace_rank(fit._theta_draws()[0], theta_star, laplace))
    return np.array(ranks), resolved


def test_simulation_based_calibration_of_the_default_fit():
    """The default sampler as a user meets it on tall data (20,000 rows: the minibatch test
    with control variates and Hamiltonian paths on their proxies, everything tuned by the
    fit), calibrated end to end: 500 replications detect a 14% posterior-variance error."""
    n_replications, n_params = int(round(500 * SCALE)), 5
    detectable = detectable_variance_error(n_replications, n_params)
    assert detectable <= 0.14 / np.sqrt(SCALE) + 1e-12
    ranks, resolved = default_fit_ranks(n_replications, 20_000, n_params - 1, seed=13)
    assert resolved == {("minibatch", "hmc", True)}
    assert_uniform_ranks(ranks, detectable)


def test_simulation_based_calibration_of_the_default_gamma_fit():
    """SBC of ``GammaRegression``'s default sampler (the exact test with Hamiltonian paths
    in the Laplace shape, everything tuned by the fit) on 100 rows, under the fixed prior
    the parameters are drawn from:
    ``w, b ~ N(0, 1)``, ``phi ~ Exponential(mean 0.2)``. The test quantity is each draw's
    Mahalanobis distance in the Laplace approximation at the data, a fixed function of the
    parameters and the data; 250 replications detect a 22% posterior-variance error."""
    n_replications, n_features, n_rows = int(round(250 * SCALE)), 2, 100
    detectable = detectable_variance_error(n_replications, n_features + 2)
    assert detectable <= 0.22 / np.sqrt(SCALE) + 1e-12
    rng = np.random.default_rng(21)
    X = rng.uniform(-1.0, 1.0, size=(n_rows, n_features)) * np.sqrt(3.0)
    scales = np.array([1.0] * (n_features + 1) + [0.2])
    ranks = []
    for replication in range(n_replications):
        generator = np.random.default_rng([21, replication])
        theta_star = np.append(generator.normal(size=n_features + 1),
                               np.log(generator.exponential(0.2)))
        mu = np.exp(X @ theta_star[:n_features] + theta_star[n_features])
        dispersion = math.exp(theta_star[-1])
        y = generator.gamma(1.0 / dispersion, dispersion * mu)
        with warnings.catch_warnings():  # 150 draws: short of the ESS a fit wants
            warnings.simplefilter("ignore", ConvergenceWarning)
            # The known prior the parameters were drawn from: SBC calibrates a posterior
            # under a fixed prior (the default's prior_scale="auto" chooses it from the data).
            fit = GammaRegression(prior_scale=1.0, autoscale=False, intercept_prior_scale=1.0,
                                  dispersion_prior_scale=0.2, n_chains=1, n_draws=150,
                                  random_state=replication).fit(X, y)
        laplace = linear_target(GammaModel(), X, y, scales, kind=GAUSSIAN | LOG_SCALE)
        ranks.append(laplace_rank(fit._theta_draws()[0], theta_star, laplace))
    assert_uniform_ranks(np.array(ranks), detectable)


def test_simulation_based_calibration_of_the_default_binomial_fit():
    """SBC of ``BinomialRegression``'s default sampler on 100 rows of 1 to 9 trials (the
    exact test on proportions weighted by their trials, everything tuned by the fit), under
    the fixed prior the parameters are drawn from, ``w, b ~ N(0, 1)``. The test quantity is
    each draw's Mahalanobis distance in the Laplace approximation at the data; 300
    replications detect a 24% posterior-variance error."""
    n_replications, n_features, n_rows = int(round(300 * SCALE)), 2, 100
    detectable = detectable_variance_error(n_replications, n_features + 1)
    assert detectable <= 0.24 / np.sqrt(SCALE) + 1e-12
    rng = np.random.default_rng(23)
    X = rng.uniform(-1.0, 1.0, size=(n_rows, n_features)) * np.sqrt(3.0)
    trials = rng.integers(1, 10, size=n_rows)
    ranks = []
    for replication in range(n_replications):
        generator = np.random.default_rng([23, replication])
        theta_star = generator.normal(size=n_features + 1)
        p = 1.0 / (1.0 + np.exp(-(X @ theta_star[:n_features] + theta_star[n_features])))
        successes = generator.binomial(trials, p)
        with warnings.catch_warnings():  # 150 draws: short of the ESS a fit wants
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = BinomialRegression(autoscale=False, intercept_prior_scale=1.0, n_chains=1,
                                     n_draws=150, random_state=replication).fit(
                X, np.column_stack([successes, trials]))
        laplace = linear_target(BinomialModel(), X, successes / trials,
                                np.ones(n_features + 1), weights=trials)
        ranks.append(laplace_rank(fit._theta_draws()[0], theta_star, laplace))
    assert_uniform_ranks(np.array(ranks), detectable)


def test_simulation_based_calibration_of_the_default_ordinal_fit():
    """SBC of ``OrdinalRegression``'s default sampler (cumulative logit, four classes) on
    120 rows, under the prior the parameters are drawn from: ``w, b ~ N(0, 1)`` and the
    estimator's ``N(0, 2^2)`` on each log-gap between cut-points. The test quantity is each
    draw's Mahalanobis distance in the Laplace approximation at the data; 200 replications
    detect a 22% posterior-variance error."""
    n_replications, n_features, n_rows, n_classes = int(round(200 * SCALE)), 2, 120, 4
    n_params = n_features + n_classes - 1
    detectable = detectable_variance_error(n_replications, n_params)
    assert detectable <= 0.22 / np.sqrt(SCALE) + 1e-12
    rng = np.random.default_rng(29)
    X = rng.uniform(-1.0, 1.0, size=(n_rows, n_features)) * np.sqrt(3.0)
    scales = np.array([1.0] * (n_features + 1) + [GAP_PRIOR_SCALE] * (n_classes - 2))
    model = CumulativeModel(n_classes)
    ranks = []
    for replication in range(n_replications):
        generator = np.random.default_rng([29, replication])
        y = np.zeros(0)
        # The fit's classes are those seen: draws whose data miss a class are drawn again
        # (a selection on the data alone, which leaves theta* | y a posterior draw).
        while np.unique(y).size < n_classes:
            theta_star = generator.normal(size=n_params) * scales
            eta = (X @ theta_star[:n_features])[None, :, None]
            variables = model.posterior_variables(theta_star[None], n_features, True)
            cumulative = np.cumsum(model.class_probabilities(eta, variables)[0], axis=1)
            y = (generator.random(n_rows)[:, None] > cumulative).sum(axis=1)
        with warnings.catch_warnings():  # 150 draws: short of the ESS a fit wants
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = OrdinalRegression(autoscale=False, intercept_prior_scale=1.0, n_chains=1,
                                    n_draws=150, random_state=replication).fit(X, y)
        ranks.append(laplace_rank(fit._theta_draws()[0], theta_star,
                                  linear_target(model, X, y, scales)))
    assert_uniform_ranks(np.array(ranks), detectable)

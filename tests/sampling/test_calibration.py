"""Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari, Gelman 2018) of every
acceptance test.

Each replication draws ``theta* ~ p(theta)``, data ``y ~ p(y | theta*)``, then a chain
targeting ``p(theta | y)``; the rank of ``theta*`` among the chain's (thinned, nearly
independent) draws is uniform on ``0..L`` exactly when the chain samples the posterior.

The model is Bayesian logistic regression, ``theta ~ N(0, I_J)``, ``y_i ~ Bernoulli(
sigmoid(x_i . theta))``: SBC needs no conjugacy, and this model has what every test needs
(a Lipschitz constant for the confidence sampler, collapsible bounds for Firefly, control
variates for the subsampling tests). The ranks are of a data-dependent test quantity
(Modrak et al. 2023): the squared Mahalanobis distance ``T(theta) = (theta - m)' C^-1
(theta - m)`` from the Laplace approximation ``(m, C)`` of each replication's posterior.
A posterior variance that is wrong by a factor ``1 + delta`` in every direction moves the
draws' ``T`` by ``delta sqrt(J / 2)`` standard deviations, so one rank per replication
carries the error of all ``J`` directions.

Two checks per test, each at significance ``ALPHA``:

* the rank histogram's chi-square test of uniformity (any miscalibration, and chains that
  mix too slowly for their thinning, which pile ranks at the ends);
* the mean rank against ``L / 2`` (the direction a variance error moves it: too wide a
  posterior puts ``theta*`` low among the draws).

:func:`detectable_variance_error` gives the error the mean-rank check detects with power
``POWER``; each case states it, and its replication count is chosen so that it is at most
the case's target. ``SKBAYES_MH_SBC_SCALE`` multiplies the replication counts and divides
the targets by its square root: 6.25 detects errors 2.5 times smaller in every case, a 2%
variance error for the 20-parameter cases (about 10 minutes; CI runs at 1, about 90 s).
"""
import os

import numpy as np
import pytest
from scipy import stats

from skbayes_mh.acceptance import Austerity, ConfidenceSampler, resolve_acceptance
from skbayes_mh.models import LogisticModel
from skbayes_mh.proposals import resolve_proposal
from skbayes_mh.sampling import FireflySampler, MetropolisHastings, Shape
from skbayes_mh.sampling import control_variates as build_control_variates

from _models import linear_target

pytestmark = pytest.mark.slow

ALPHA = 1e-3
POWER = 0.9
#: Draws kept per replication (ranks 0..L).
N_RANK_DRAWS = 19
SCALE = float(os.environ.get("SKBAYES_MH_SBC_SCALE", "1"))


def detectable_variance_error(n_replications, n_params, n_draws=N_RANK_DRAWS, alpha=ALPHA,
                              power=POWER):
    """The relative posterior-variance error ``delta`` that the two-sided mean-rank check
    detects with probability ``power``: the draws' chi-square test quantity moves by
    ``delta sqrt(J / 2)`` of its sd, which moves the normalised mean rank by about that
    shift over ``2 sqrt(pi)`` (two normals, one shifted); the mean rank's sd is that of a
    discrete uniform on ``0..L`` over ``sqrt(n)``."""
    rank_sd = np.sqrt(((n_draws + 1) ** 2 - 1) / 12.0) / n_draws
    needed = (stats.norm.isf(alpha / 2) + stats.norm.ppf(power)) * rank_sd / np.sqrt(
        n_replications)
    return needed * 2.0 * np.sqrt(np.pi) / np.sqrt(n_params / 2.0)


def ranks_of_replications(acceptance, n_params, n_rows, n_replications, proposal, thin,
                          n_warmup, seed):
    """SBC ranks of ``n_replications`` replications, with the rows read per iteration and
    the acceptance rate."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n_rows, n_params))
    proposal = resolve_proposal(proposal)
    test = resolve_acceptance(acceptance)
    acceptance = test.name
    ranks, reads, accepted = [], [], []
    for replication in range(n_replications):
        generator = np.random.default_rng([seed, replication])
        theta_star = generator.normal(size=n_params)
        y = (generator.random(n_rows) < 1.0 / (1.0 + np.exp(-X @ theta_star))).astype(float)
        target = linear_target(LogisticModel(), X, y, np.ones(n_params), intercept=False)
        mean, covariance = target.mean, target.covariance
        shape = Shape.from_covariance(covariance)
        scale = proposal.initial_scale(n_params)
        if acceptance == "firefly":
            bound = target.model.firefly_bound(target.data, mean, test.bound,
                                               target.inv_temperature)
            sampler = FireflySampler(target, test, proposal, shape, scale, bound)
        else:
            cv = None
            if not test.exact:
                cv, _ = build_control_variates(
                    target, whitening_covariance=covariance if acceptance == "confidence"
                    else None)
            sampler = MetropolisHastings(target, test, proposal, shape, scale, cv)
        state = sampler.init(generator.multivariate_normal(mean, covariance), generator)
        run = sampler.run(state, n_warmup + N_RANK_DRAWS * thin, generator)
        draws = run["draws"][n_warmup + thin - 1::thin]
        precision = np.linalg.inv(covariance)

        def quantity(theta):
            centred = theta - mean
            return np.einsum("...i,ij,...j->...", centred, precision, centred)

        ranks.append(int(np.sum(quantity(draws) < quantity(theta_star))))
        reads.append(run["n_data_read"].mean())
        accepted.append(run["accepted"].mean())
    return np.array(ranks), float(np.mean(reads)), float(np.mean(accepted))


#: acceptance test, parameters J, rows N, replications, proposal, thinning, warm-up, and
#: the variance error the replication count must detect (see the module docstring).
CASES = [
    ("metropolis", 20, 500, 1000, "hmc", 3, 10, 0.05),
    ("barker", 20, 500, 1000, "hmc", 3, 10, 0.05),
    # Its Hamiltonian paths on the proxies are accepted about 43% of the time: thinning by 5
    # left enough autocorrelation to pile ranks at both ends in a 6,250-replication run.
    ("minibatch", 20, 500, 1000, "hmc", 15, 20, 0.05),
    (Austerity(batch_size=50), 20, 1000, 1000, "hmc", 5, 20, 0.05),
    # The confidence sampler's bound grows with the path's whitened length cubed: with 20
    # parameters it reads every row, so it is calibrated where it subsamples.
    (ConfidenceSampler(batch_size=20), 3, 4000, 1000, "hmc", 5, 20, 0.13),
    # Firefly mixes slowly (MALA with auxiliary variables): fewer parameters, more thinning.
    ("firefly", 5, 500, 1000, "mala", 10, 50, 0.10),
]


@pytest.mark.parametrize("acceptance, n_params, n_rows, n_replications, proposal, thin, "
                         "n_warmup, target_error", CASES,
                         ids=[resolve_acceptance(case[0]).name for case in CASES])
def test_simulation_based_calibration(acceptance, n_params, n_rows, n_replications, proposal,
                                      thin, n_warmup, target_error):
    n_replications = int(round(n_replications * SCALE))
    detectable = detectable_variance_error(n_replications, n_params)
    assert detectable <= target_error / np.sqrt(SCALE) + 1e-12, (
        f"{n_replications} replications detect only a {detectable:.1%} variance error")
    ranks, reads, accepted = ranks_of_replications(acceptance, n_params, n_rows,
                                                   n_replications, proposal, thin, n_warmup,
                                                   seed=7)
    assert accepted > 0.2  # the chains moved
    if not resolve_acceptance(acceptance).exact:
        assert reads < 0.5 * n_rows  # the subsampling tests read a fraction of the rows
    assert_uniform_ranks(ranks, detectable)


def assert_uniform_ranks(ranks, detectable):
    """The two checks of the module docstring on SBC ``ranks`` (0..L), each at ``ALPHA``;
    ``detectable`` (the variance error they detect) goes into the message."""
    histogram = np.bincount(ranks, minlength=N_RANK_DRAWS + 1)
    chi_square = stats.chisquare(histogram)
    assert chi_square.pvalue > ALPHA, (histogram, chi_square.pvalue)
    rank_sd = np.sqrt(((N_RANK_DRAWS + 1) ** 2 - 1) / 12.0)
    z = (ranks.mean() - N_RANK_DRAWS / 2) / (rank_sd / np.sqrt(ranks.size))
    assert abs(z) < stats.norm.isf(ALPHA / 2), (
        f"mean rank {ranks.mean():.3f} is {z:.2f} standard errors from {N_RANK_DRAWS / 2}; "
        f"detectable variance error {detectable:.1%}")


def test_the_checks_detect_the_variance_error_they_state():
    """The power claim, on an exact sampler made wrong on purpose: iid draws from the
    Laplace posterior with every variance inflated by the detectable error are flagged by
    the mean-rank check in about ``POWER`` of repeated studies, and correct iid draws in
    about ``ALPHA`` (i.e. never, in 60 studies)."""
    n_params, n_replications = 20, 1000
    delta = detectable_variance_error(n_replications, n_params)
    rng = np.random.default_rng(11)
    rank_sd = np.sqrt(((N_RANK_DRAWS + 1) ** 2 - 1) / 12.0)
    critical = stats.norm.isf(ALPHA / 2)
    flagged = {0.0: 0, delta: 0}
    n_studies = 60
    for inflation in flagged:
        for _ in range(n_studies):
            theta_star = rng.normal(size=(n_replications, n_params))
            draws = rng.normal(size=(n_replications, N_RANK_DRAWS, n_params)) * np.sqrt(
                1.0 + inflation)
            ranks = np.sum((draws**2).sum(-1) < (theta_star**2).sum(-1)[:, None], axis=1)
            z = (ranks.mean() - N_RANK_DRAWS / 2) / (rank_sd / np.sqrt(n_replications))
            flagged[inflation] += abs(z) > critical
    assert flagged[0.0] <= 2
    # Power 0.9 over 60 studies: at least 45 flagged (binomial, 4 sd below 54).
    assert flagged[delta] >= 45, (delta, flagged)


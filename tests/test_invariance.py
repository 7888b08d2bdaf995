"""Invariance: chains started at exact draws from the posterior must stay distributed as
the posterior after any number of steps. Bayesian linear regression with a Gaussian prior,
where the posterior is Gaussian in closed form."""
import numpy as np
import pytest

from skbayes_mh import sample
from skbayes_mh.acceptance import Austerity, Barker, Metropolis, MinibatchBarker

from _models import linear_gaussian_loglik, standard_normal_log_prior

N_DATA = 2000
N_CHAINS = 1000
N_STEPS = 25


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    x = np.column_stack([np.ones(N_DATA), rng.normal(size=(N_DATA, 2))])
    y = x @ np.array([0.3, -0.5, 1.0]) + rng.normal(size=N_DATA)
    covariance = np.linalg.inv(x.T @ x + np.eye(3))  # unit noise, N(0, I) prior
    mean = covariance @ x.T @ y
    return np.column_stack([x, y]), mean, covariance


@pytest.mark.parametrize("test", [Metropolis(), Barker(), MinibatchBarker(batch_size=50),
                                  Austerity(epsilon=0.01, batch_size=100)],
                         ids=["metropolis", "barker", "minibatch", "austerity"])
def test_posterior_moments_hold_after_steps(problem, test):
    data, mean, covariance = problem
    sd = np.sqrt(np.diag(covariance))
    starts = np.random.default_rng(1).multivariate_normal(mean, covariance, size=N_CHAINS)
    # Small steps for the minibatch test keep its batches well below N (the regime it is for).
    step = 0.7 * sd if test.exact else 0.2 * sd
    finals, reads, accepted = [], [], []
    for k, start in enumerate(starts):
        result = sample(linear_gaussian_loglik, data, start, step_size=step,
                        log_prior=standard_normal_log_prior, acceptance=test,
                        n_samples=N_STEPS, random_state=1000 + k)
        finals.append(result.draws[-1])
        reads.append(result.mean_data_read)
        accepted.append(result.acceptance_rate)
    finals = np.array(finals)
    assert np.mean(accepted) > 0.2  # the chains moved

    # Means: four standard errors of a mean of N_CHAINS independent posterior draws.
    z = (finals.mean(axis=0) - mean) / (sd / np.sqrt(N_CHAINS))
    assert np.all(np.abs(z) < 4), z
    # Covariance, through the Mahalanobis distance: chi^2_3, mean 3, variance 6.
    centred = finals - mean
    mahalanobis = np.einsum("ij,jk,ik->i", centred, np.linalg.inv(covariance), centred)
    assert abs(mahalanobis.mean() - 3.0) < 4 * np.sqrt(6.0 / N_CHAINS)
    # Per-coordinate variances: relative standard error sqrt(2 / N_CHAINS).
    ratio = finals.var(axis=0, ddof=1) / sd**2
    assert np.all(np.abs(ratio - 1) < 4 * np.sqrt(2.0 / N_CHAINS)), ratio
    if not test.exact:
        assert np.mean(reads) < 0.5 * N_DATA

"""Invariance: chains started at exact draws from the posterior must stay distributed as
the posterior after any number of steps. Bayesian linear regression with a Gaussian prior,
where the posterior is Gaussian in closed form; for the confidence sampler, which needs a
global Lipschitz bound, logistic regression with its posterior on a fine grid."""
import numpy as np
import pytest

from skbayes_mh import sample
from skbayes_mh.acceptance import Barker, ConfidenceSampler, Metropolis, MinibatchBarker

from _models import (linear_gaussian_loglik, logistic_grid_posterior, logistic_lipschitz,
                     standard_normal_log_prior)

from _stats import Independent, Moments, assert_same_distribution

N_DATA = 2000
#: The linear-Gaussian invariance test: chains, and states kept from each (the last of
#: each of ``N_KEPT`` equal stretches of its steps).
N_INVARIANCE_CHAINS = 800
N_KEPT = 6


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    x = np.column_stack([np.ones(N_DATA), rng.normal(size=(N_DATA, 2))])
    y = x @ np.array([0.3, -0.5, 1.0]) + rng.normal(size=N_DATA)
    covariance = np.linalg.inv(x.T @ x + np.eye(3))  # unit noise, N(0, I) prior
    mean = covariance @ x.T @ y
    return np.column_stack([x, y]), mean, covariance


# Austerity is checked with control variates (test_control_variates.py), its regime:
# without them, on this problem, reading under half the rows takes epsilon >= 0.02 and
# steps of 0.4 sd, where its chains' sds ran 3 to 6% wide (300 chains x 240 steps).
@pytest.mark.parametrize("test", [Metropolis(), Barker(), MinibatchBarker(batch_size=50)],
                         ids=["metropolis", "barker", "minibatch"])
@pytest.mark.slow
def test_posterior_moments_hold_after_steps(problem, test):
    """Chains started at exact posterior draws keep the posterior: the states they pass
    through have its means and sds (each chain's kept states a group of the assertion's
    batch means), with enough of them to see a 0.1 sd shift or a 10% sd error. The
    minibatch test takes steps of 0.4 sd, its batches
    well below N (the regime they are for), and many of them: 240 are several
    autocorrelation times, so a stationary bias shows whole, where 25 steps of 0.2 sd
    showed about a third of it."""
    data, mean, covariance = problem
    sd = np.sqrt(np.diag(covariance))
    starts = np.random.default_rng(1).multivariate_normal(mean, covariance,
                                                          size=N_INVARIANCE_CHAINS)
    step, n_steps = (0.7 * sd, 120) if test.exact else (0.4 * sd, 240)
    kept, reads, accepted = [], [], []
    for k, start in enumerate(starts):
        result = sample(linear_gaussian_loglik, data, start, step_size=step,
                        log_prior=standard_normal_log_prior, acceptance=test,
                        n_draws=n_steps, random_state=1000 + k)
        kept.append(result.draws[n_steps // N_KEPT - 1::n_steps // N_KEPT])
        reads.append(result.mean_data_read)
        accepted.append(result.acceptance_rate)
    kept = np.array(kept)
    assert np.mean(accepted) > 0.2  # the chains moved
    assert_same_distribution(Independent(kept), Moments(mean, sd))
    # The joint shape, through the Mahalanobis distance of the final states: chi^2_3.
    centred = kept[:, -1] - mean
    mahalanobis = np.einsum("ij,jk,ik->i", centred, np.linalg.inv(covariance), centred)
    assert abs(mahalanobis.mean() - 3.0) < 4 * np.sqrt(6.0 / N_INVARIANCE_CHAINS)
    if not test.exact:
        assert np.mean(reads) < 0.5 * N_DATA


#: The confidence sampler's invariance test: chains, their steps (in posterior sds) and
#: their number, and states kept from each (evenly over its second half).
N_CONFIDENCE_CHAINS = 2000
CONFIDENCE_STEP = 0.3
N_CONFIDENCE_STEPS = 140
N_CONFIDENCE_KEPT = 4


@pytest.fixture(scope="module")
def bounded_logistic_grid_posterior():
    """Two-parameter logistic regression with x in [-1, 1] (so the per-datum Lipschitz
    constant is max ||(x_i, 1)|| <= sqrt 2) and a N(0, I) prior: the posterior on a fine grid,
    and the built-in logistic model's target of the same posterior (its minibatch rows cost
    67 ns each against 114 for a user's row function through ``sample()``, whose confidence
    tests are in ``test_confidence.py``; the 280,000 iterations below read about 1,000 rows
    each)."""
    n_data = 1000
    rng = np.random.default_rng(3)
    x = rng.uniform(-1.0, 1.0, size=n_data)
    y = (rng.random(n_data) < 1.0 / (1.0 + np.exp(-(1.5 * x - 0.4)))).astype(float)
    found = logistic_grid_posterior(x, y, 241)
    return (np.column_stack([found["design"], y]), found["grid"], found["weights"],
            found["spacing"], found["mean"], found["sd"], found["grid_covariance"],
            found["target"])


@pytest.mark.slow
def test_confidence_sampler_keeps_the_posterior(bounded_logistic_grid_posterior):
    """Chains started at exact draws from the grid posterior keep it: the states they pass
    through in the second half of their steps have its means and sds, with enough of them
    to see a 0.1 sd shift or a 10% sd error. Steps of 0.3 sd, accepted about 85% of the
    time, decorrelate the chains' states in about 30 steps, so over 70 to 140 steps a
    stationary bias shows almost whole; about 4% of the tests stop before reading every
    row (their decisions are the approximate ones). The test sees a mean shift of 0.09 sd
    and an sd error of 5.5% (2,000 chains, 4 states each)."""
    from skbayes_mh.proposals import resolve_proposal
    from skbayes_mh.sampling import MetropolisHastings, Shape, run_chain

    data, grid, weights, spacing, mean, sd, covariance, target = bounded_logistic_grid_posterior
    n_data = data.shape[0]
    # Exact draws from the grid posterior (a cell, then uniform within it: the cell's
    # variance spacing^2 / 12 is below 1e-4 of the posterior's).
    rng = np.random.default_rng(4)
    cells = rng.choice(len(grid), size=N_CONFIDENCE_CHAINS, p=weights)
    starts = grid[cells] + (rng.random((N_CONFIDENCE_CHAINS, 2)) - 0.5) * spacing
    test = ConfidenceSampler(delta=0.05, batch_size=100,
                             lipschitz=logistic_lipschitz(data[:, :2]))
    half, stride = N_CONFIDENCE_STEPS // 2, N_CONFIDENCE_STEPS // 2 // N_CONFIDENCE_KEPT
    kept, early, accepted = [], [], []
    for k, start in enumerate(starts):
        sampler = MetropolisHastings(target, test, resolve_proposal("random_walk"),
                                     Shape(np.zeros((0, 0)), CONFIDENCE_STEP * sd), 1.0, None)
        chain = run_chain(sampler, start.copy(), 5000 + k, 0, N_CONFIDENCE_STEPS)
        kept.append(chain.draws[half - 1::stride][-N_CONFIDENCE_KEPT:])
        early.append(np.mean(chain.stats["n_data_read"] < n_data))
        accepted.append(chain.stats["acceptance_rate"].mean())
    kept = np.array(kept)
    assert 0.5 < np.mean(accepted) < 0.95, np.mean(accepted)
    assert np.mean(early) > 0.025, np.mean(early)  # 4% with this seed
    finals = kept[:, -1]
    # The chains travelled: most ended over half an sd from their start.
    assert np.mean(np.abs(finals - starts) > 0.5 * sd) > 0.5
    assert_same_distribution(Independent(kept), Moments(mean, sd), label="confidence")
    # The joint shape, through the Mahalanobis distance of the final states. Not exactly
    # chi^2 (the posterior is not Gaussian): its mean is 2 by construction, and its sd
    # under the grid posterior is computed on the grid.
    inverse = np.linalg.inv(covariance)
    centred = finals - mean
    mahalanobis = np.einsum("ij,jk,ik->i", centred, inverse, centred)
    grid_centred = grid - mean
    grid_mahalanobis = np.einsum("ij,jk,ik->i", grid_centred, inverse, grid_centred)
    mahalanobis_sd = np.sqrt(weights @ (grid_mahalanobis - 2.0) ** 2)
    assert abs(mahalanobis.mean() - 2.0) < 4 * mahalanobis_sd / np.sqrt(N_CONFIDENCE_CHAINS)


@pytest.mark.slow
@pytest.mark.parametrize("proposal", ["hmc", "mala"])
def test_gradient_proposals_keep_the_conjugate_posterior(problem, proposal):
    # Hamiltonian paths and Langevin steps with the full-data gradient, each with its exact
    # log ratio (kinetic energies; forward and backward densities) in the Metropolis test.
    from _models import linear_gaussian_gradient

    data, mean, covariance = problem
    sd = np.sqrt(np.diag(covariance))
    n_chains = 400
    starts = np.random.default_rng(2).multivariate_normal(mean, covariance, size=n_chains)
    finals, accepted = [], []
    for k, start in enumerate(starts):
        # A deliberately coarse step (acceptance well below 1): a wrong ratio would show.
        result = sample(linear_gaussian_loglik, data, start, step_size=1.2 * sd,
                        gradient=linear_gaussian_gradient, log_prior=standard_normal_log_prior,
                        acceptance="metropolis", proposal=proposal, n_draws=10,
                        random_state=5000 + k)
        finals.append(result.draws[-1])
        accepted.append(result.acceptance_rate)
    # The chains moved far: most final points are over half an sd from their start.
    _assert_moved_and_kept(np.array(finals), starts, accepted, mean, sd, moved=0.5)


def _assert_moved_and_kept(finals, starts, accepted, mean, sd, moved):
    """Chains started at the posterior, after their steps: acceptance between 0.2 and 0.95,
    means within four standard errors, variances within four relative standard errors, and
    most final points over ``moved`` sd from their start."""
    n_chains = finals.shape[0]
    assert 0.2 < np.mean(accepted) < 0.95, np.mean(accepted)
    z = (finals.mean(axis=0) - mean) / (sd / np.sqrt(n_chains))
    assert np.all(np.abs(z) < 4), z
    ratio = finals.var(axis=0, ddof=1) / sd**2
    assert np.all(np.abs(ratio - 1) < 4 * np.sqrt(2.0 / n_chains)), ratio
    assert np.mean(np.abs(finals - starts) > moved * sd) > 0.5


@pytest.mark.parametrize("proposal", ["hmc", "mala", "random_walk"])
def test_a_low_rank_shape_keeps_the_conjugate_posterior(problem, proposal):
    # A low-rank-plus-diagonal proposal shape (one direction corrected, deliberately not the
    # posterior's) with each proposal's exact log ratio: chains started at the posterior
    # stay there.
    from skbayes_mh.models._optimize import LowRankCovariance
    from skbayes_mh.proposals import resolve_proposal
    from skbayes_mh.sampling import MetropolisHastings, Shape, run_chain
    from skbayes_mh.sampling._api import _row_target

    from _models import linear_gaussian_gradient

    data, mean, covariance = problem
    sd = np.sqrt(np.diag(covariance))
    direction = np.array([[1.0, -1.0, 0.5]]) / 1.5
    shape = Shape.from_covariance(LowRankCovariance(sd, direction, np.array([2.0])))
    target = _row_target(linear_gaussian_loglik, data, mean.copy(), standard_normal_log_prior,
                         1.0, gradient=linear_gaussian_gradient)
    n_chains = 400
    starts = np.random.default_rng(3).multivariate_normal(mean, covariance, size=n_chains)
    finals, accepted = [], []
    for k, start in enumerate(starts):
        sampler = MetropolisHastings(target, Metropolis(), resolve_proposal(proposal), shape,
                                     1.1, None)
        chain = run_chain(sampler, start, 7000 + k, 0, 10)
        finals.append(chain.draws[-1])
        accepted.append(chain.stats["acceptance_rate"].mean())
    _assert_moved_and_kept(np.array(finals), starts, accepted, mean, sd, moved=0.3)


@pytest.mark.slow
def test_hamiltonian_paths_have_their_mean_length():
    """Step counts are the jittered length over the step, rounded up or down at random:
    their mean is the mean path over the step (rounding always up would add half a step,
    most of a path of one or two large steps). The mean path: pi / 2 under Metropolis'
    acceptance, 3 pi / 8 under Barker's, or as given."""
    from skbayes_mh._kernels.proposals import HMC as HMC_KIND, hmc_step_count
    from skbayes_mh._kernels.specs import NO_MOVES, Proposal
    from skbayes_mh.proposals import HMC

    assert HMC().kernel_parameter(barker=False) == pytest.approx(np.pi / 2)
    assert HMC().kernel_parameter(barker=True) == pytest.approx(3 * np.pi / 8)
    assert HMC(path_length=0.7).kernel_parameter(barker=True) == 0.7
    with pytest.raises(ValueError, match="path_length"):
        HMC(path_length=-1.0)._validate_params()
    rng = np.random.default_rng(0)
    mean_path, step = 1.0, 0.45  # lengths in [0.5, 1.5]: 1.1 to 3.3 steps, 1 to 4 whole
    proposal = Proposal(HMC_KIND, step, np.zeros((0, 0)), np.ones(2), np.zeros((0, 2)),
                        np.ones(0), np.zeros(2), mean_path, NO_MOVES)
    counts = np.array([hmc_step_count(proposal, rng) for _ in range(100_000)])
    assert set(np.unique(counts)) == {1, 2, 3, 4}
    standard_error = counts.std() / np.sqrt(counts.size)
    assert abs(counts.mean() - mean_path / step) < 5 * standard_error

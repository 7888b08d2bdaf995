"""The mixture-of-Gaussians experiment of Seita et al. (Section 6.1), at a smaller N.

The paper runs N = 1,000,000 at temperature 10,000 (``benchmarks/paper/mixture_minibatch.py``);
here N = 5,000 at temperature 50 keeps ``N / T = 100``, so the tempered posterior has the
same shape and the minibatch test the same batch sizes (~160 rows)."""
import numpy as np
import pytest

from skbayes_mh import sample
from skbayes_mh.acceptance import MinibatchBarker

from _models import batch_means_standard_error
from _mixture import (histogram_distances, make_mixture_data, mixture_log_prior,  # benchmarks/
                      mixture_loglik, posterior_on_grid)

N_DATA = 5000
TEMPERATURE = 50.0
EDGES_1 = np.linspace(-1.5, 2.5, 21)
EDGES_2 = np.linspace(-3.0, 3.0, 31)


@pytest.fixture(scope="module")
def experiment():
    data = make_mixture_data(N_DATA, random_state=0)
    truth = posterior_on_grid(data, EDGES_1, EDGES_2, TEMPERATURE)
    result = sample(mixture_loglik, data, [0.0, 1.0], step_size=0.15,
                    log_prior=mixture_log_prior, acceptance=MinibatchBarker(batch_size=50),
                    n_draws=100_000, n_warmup=1000, temperature=TEMPERATURE, random_state=1)
    return truth, result


@pytest.mark.slow
def test_average_minibatch_size_as_in_the_paper(experiment):
    _, result = experiment
    # Paper: 172 rows per test at N = 10^6; standard deviation 0.15 per coordinate.
    assert 120 < result.mean_data_read < 220


def test_histogram_close_to_the_integrated_posterior(experiment):
    truth, result = experiment
    draws = result.draws
    n_effective = int(np.min(draws.var(axis=0) / batch_means_standard_error(draws) ** 2))
    rng = np.random.default_rng(2)
    iid = [0.5 * np.abs(rng.multinomial(n_effective, truth.ravel()) / n_effective
                        - truth.ravel()).sum() for _ in range(400)]
    distance = histogram_distances(draws, EDGES_1, EDGES_2, truth)["total_variation"]
    # No further than an i.i.d. sample of the chain's effective size would be, 99% of the time.
    assert distance <= np.percentile(iid, 99)


def test_moments_match_the_integrated_posterior(experiment):
    truth, result = experiment
    centres_1 = 0.5 * (EDGES_1[1:] + EDGES_1[:-1])
    centres_2 = 0.5 * (EDGES_2[1:] + EDGES_2[:-1])
    exact_mean = np.array([truth.sum(axis=1) @ centres_1, truth.sum(axis=0) @ centres_2])
    # The grid has cells of 0.2: its mean is exact to a small fraction of that.
    standard_error = batch_means_standard_error(result.draws)
    assert np.all(np.abs(result.draws.mean(axis=0) - exact_mean) < 4 * standard_error + 0.01)
    # Both modes are visited with the right mass.
    upper_mode = truth[:, centres_2 > 0].sum()
    in_upper = (result.draws[:, 1] > 0).astype(float)
    assert abs(in_upper.mean() - upper_mode) < 4 * batch_means_standard_error(in_upper) + 0.01

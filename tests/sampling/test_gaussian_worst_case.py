"""The worst-case Gaussian example of Seita et al. (their Section 2.2): x_i ~ N(0.5, 1),
uniform prior, random-walk proposal N(theta, 1/N). The posterior is N(mean(x), 1/N)."""
import numpy as np
import pytest

from skbayes_mh import sample

from _models import batch_means_standard_error, gaussian_mean_loglik

N_DATA = 10_000
N_SAMPLES = 30_000


@pytest.fixture(scope="module")
def data():
    return np.random.default_rng(7).normal(0.5, 1.0, size=(N_DATA, 1))


@pytest.mark.slow
@pytest.mark.parametrize("acceptance", ["metropolis", "barker", "minibatch"])
def test_posterior_recovered(data, acceptance):
    exact_mean, exact_sd = data.mean(), 1 / np.sqrt(N_DATA)
    result = sample(gaussian_mean_loglik, data, [0.5], step_size=exact_sd, acceptance=acceptance,
                    n_draws=N_SAMPLES, n_warmup=1000, random_state=11)
    draws = result.draws[:, 0]
    standard_error = batch_means_standard_error(draws)
    assert abs(draws.mean() - exact_mean) < 4 * standard_error
    effective_size = draws.var() / standard_error**2
    # The sd of a chain with this effective size is known to about 1 / sqrt(2 ESS).
    assert abs(draws.std() / exact_sd - 1) < 4 / np.sqrt(2 * effective_size)
    if acceptance == "minibatch":
        assert result.mean_data_read < 0.5 * N_DATA
    else:
        assert result.mean_data_read == pytest.approx(N_DATA, rel=1e-3)

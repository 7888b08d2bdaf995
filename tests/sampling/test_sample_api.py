"""``skbayes_mh.sample``: results, reproducibility, temperature, and bad input that must
fail with a clear error naming the problem."""
import math

import numba
import numpy as np
import pytest

from skbayes_mh import sample
from skbayes_mh.acceptance import ACCEPTANCE_TESTS, MinibatchBarker, resolve_acceptance

from _models import (batch_means_standard_error, gaussian_mean_loglik, integer_loglik,
                     nan_beyond_one_loglik, positive_log_prior, zero_beyond_one_loglik)

X = np.random.default_rng(0).normal(0.5, 1.0, size=(2000, 1))


def run(**kwargs):
    arguments = dict(loglik=gaussian_mean_loglik, data=X, theta0=[0.5], step_size=0.02,
                     n_draws=200, random_state=0)
    arguments.update(kwargs)
    return sample(**arguments)


#: Tests that need a model bound the Gaussian likelihood does not have.
NEEDS_BOUND = {"confidence", "firefly"}


@pytest.mark.parametrize("acceptance", sorted(set(ACCEPTANCE_TESTS) - NEEDS_BOUND))
def test_result_shapes_and_bookkeeping(acceptance):
    result = run(acceptance=acceptance, n_draws=300)
    assert result.draws.shape == (300, 1)
    assert result.accepted.shape == result.n_data_read.shape == (300,)
    assert result.accepted.dtype == bool
    assert result.acceptance_rate == pytest.approx(result.accepted.mean())
    # The chain only moves on accepted iterations.
    moved = np.r_[True, np.diff(result.draws[:, 0]) != 0]
    np.testing.assert_array_equal(moved[1:], result.accepted[1:])
    if ACCEPTANCE_TESTS[acceptance].exact:
        # Every row once for the proposal; the current state's sum is cached after the first.
        assert np.all(result.n_data_read[1:] == X.shape[0])
    else:
        # Subsampling tests read whole batches (their first batch at least), at most N rows.
        first_batch = resolve_acceptance(acceptance).batch_size
        assert first_batch <= result.n_data_read.min()
        assert result.n_data_read.max() <= X.shape[0]


def test_same_seed_same_draws_and_different_seed_differs():
    a, b = run(random_state=3), run(random_state=3)
    np.testing.assert_array_equal(a.draws, b.draws)
    np.testing.assert_array_equal(a.n_data_read, b.n_data_read)
    assert not np.array_equal(a.draws, run(random_state=4).draws)


def test_temperature_widens_the_posterior():
    # x_i ~ N(theta, 1) with a flat prior at temperature K: posterior N(mean(x), K / N).
    temperature = 16.0
    result = run(acceptance="metropolis", temperature=temperature, n_draws=20_000,
                 step_size=math.sqrt(temperature / X.shape[0]), random_state=5)
    draws = result.draws[:, 0]
    effective_size = draws.var() / batch_means_standard_error(draws) ** 2
    expected_sd = math.sqrt(temperature / X.shape[0])
    assert abs(draws.std() / expected_sd - 1) < 4 / math.sqrt(2 * effective_size)
    assert abs(draws.mean() - X.mean()) < 4 * batch_means_standard_error(draws)


def test_per_coordinate_step_size_is_used():
    @numba.njit
    def two_means(theta, data, i):
        return -0.5 * ((data[i, 0] - theta[0]) ** 2 + (data[i, 0] - theta[1]) ** 2)

    result = sample(two_means, X, [0.5, 0.5], step_size=[0.02, 0.0001], acceptance="barker",
                    n_draws=500, random_state=0)
    spread = np.ptp(result.draws, axis=0)
    assert spread[0] > 20 * spread[1]


def test_minus_inf_loglik_proposals_are_rejected():
    result = run(loglik=zero_beyond_one_loglik, theta0=[0.95], step_size=0.1, n_draws=2000,
                 acceptance="metropolis")
    assert result.draws.max() <= 1.0
    assert result.acceptance_rate > 0.1


@pytest.mark.parametrize("acceptance", ["metropolis", "minibatch"])
def test_minus_inf_log_prior_is_rejected_without_reading_data(acceptance):
    # Data centred at 0: the truncated posterior sits against the prior's boundary.
    result = run(data=X - X.mean(), log_prior=positive_log_prior, theta0=[0.02],
                 step_size=0.05, n_draws=2000, acceptance=acceptance)
    assert result.draws.min() > 0.0
    rejected_unread = (result.n_data_read == 0)
    assert rejected_unread.any() and not result.accepted[rejected_unread].any()


@pytest.mark.parametrize("acceptance", ["metropolis", "minibatch"])
def test_nan_loglik_names_the_iteration(acceptance):
    with pytest.raises(ValueError, match=r"loglik returned NaN.*sampling iteration \d+"):
        run(loglik=nan_beyond_one_loglik, theta0=[0.9], step_size=0.3, n_draws=5000,
            acceptance=acceptance)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(step_size=-0.1), ValueError, "step_size"),
    (dict(step_size=0.0), ValueError, "step_size"),
    (dict(step_size=[0.1, 0.1]), ValueError, "step_size"),
    (dict(step_size="auto"), ValueError, "step_size"),
    (dict(step_size=object()), TypeError, "step_size must be a positive number"),
    (dict(step_size=None), TypeError, "step_size must be a positive number"),
    (dict(step_size=[0.1, [0.1]]), TypeError, "step_size must be a positive number"),
    (dict(acceptance="sign-test"), ValueError, "acceptance"),
    (dict(acceptance=3), TypeError, "acceptance"),
    (dict(acceptance=MinibatchBarker(batch_size=0)), ValueError, "batch_size"),
    (dict(acceptance=MinibatchBarker(batch_size=1)), ValueError, "batch_size"),
    (dict(acceptance=MinibatchBarker(sigma=2.0)), ValueError, "sigma"),
    (dict(acceptance=MinibatchBarker(delta=1.5)), ValueError, "delta"),
    (dict(loglik="loglik"), TypeError, "loglik"),
    (dict(loglik=lambda theta, data, i: 0.0), TypeError, "numba.njit"),
    (dict(loglik=integer_loglik), TypeError, "must return a float"),
    (dict(n_draws=0), ValueError, "n_draws"),
    (dict(n_draws=2.5), TypeError, "n_draws"),
    (dict(n_warmup=-1), ValueError, "n_warmup"),
    (dict(n_draws=10**13), ValueError, r"n_draws=10,000,000,000,000 asks .* GiB"),
    (dict(temperature=0.0), ValueError, "temperature"),
    (dict(theta0=[[0.5]]), ValueError, "theta0"),
    (dict(theta0=[np.nan]), ValueError, "theta0"),
    (dict(data=X[:, 0]), ValueError, "data must be a 2-D"),
    (dict(data=np.empty((0, 1))), ValueError, "data is empty"),
    (dict(data=np.array([[1.0], [np.inf]])), ValueError, "data contains NaN"),
    (dict(theta0=[-1.0], log_prior=positive_log_prior), ValueError, "theta0"),
    (dict(theta0=[2.0], loglik=zero_beyond_one_loglik), ValueError, "theta0 has zero likelihood"),
])
def test_bad_input_raises_a_clear_error(kwargs, error, message):
    with pytest.raises(error, match=message):
        run(**kwargs)


def test_loglik_with_wrong_arity_is_a_type_error():
    @numba.njit
    def two_arguments(theta, data):
        return 0.0

    with pytest.raises(TypeError, match="loglik could not be compiled"):
        run(loglik=two_arguments)


def test_read_only_and_non_contiguous_data(tmp_path):
    memmap = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", shape=(2000, 2))
    memmap[:, 0] = X[:, 0]
    memmap.flush()
    read_only = np.load(tmp_path / "x.npy", mmap_mode="r")
    a = run(data=read_only[:, :1])
    b = run(data=X)
    np.testing.assert_array_equal(a.draws, b.draws)


def test_acceptance_objects_are_cloned_not_modified():
    test = MinibatchBarker(batch_size=50)
    resolved = resolve_acceptance(test)
    assert resolved is not test and resolved.get_params() == test.get_params()
    result = run(acceptance=test)
    assert result.acceptance is not test


def test_confidence_sampler_without_a_bound_is_refused_clearly():
    with pytest.raises(ValueError, match="lipschitz"):
        run(acceptance="confidence")


def test_a_targets_kernel_tuple_is_made_once_per_spec_and_never_sent():
    """The chain loops' tuple of a target's addresses is packed once per process and spec
    (not for every kernel call), made anew for a new spec (rows gathered anew) without
    keeping the old one alive, and left out when the target is pickled (addresses mean
    nothing in another process)."""
    import pickle

    from skbayes_mh.models import LogisticModel

    from _models import linear_target

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    y = (rng.random(50) < 0.5).astype(float)
    target = linear_target(LogisticModel(), X, y, np.ones(3))
    first = target.kernel_model()
    assert target.kernel_model() is first
    assert "_kernel_tuples" not in pickle.loads(pickle.dumps(target)).__dict__
    target.spec = tuple(list(target.spec))  # the same arrays in a new spec
    second = target.kernel_model()
    assert second is not first and target.kernel_model() is second
    assert [spec is target.spec for spec, _ in target.__dict__["_kernel_tuples"].values()] == [True]

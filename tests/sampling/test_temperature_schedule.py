"""Temperature schedules (``temperature=[(0, K0), (t1, K1), ...]``): each iteration runs at
its piece's temperature, what the chain cached under the old one is forgotten at a change,
and the draws after the last change sample that temperature's posterior."""
import math

import numpy as np
import pytest

from skbayes_mh import sample
from skbayes_mh.sampling._schedule import TemperatureSchedule, check_temperature

from _models import (batch_means_standard_error, linear_gaussian_gradient,
                     linear_gaussian_hessian, linear_gaussian_loglik, slope_intercept_problem)
from _stats import Moments, assert_same_distribution

# y_i = x_i . theta + N(0, 1), flat prior: at temperature K the posterior is
# N(theta_hat, K (X'X)^-1).
_rng = np.random.default_rng(7)
_X = np.column_stack([np.ones(2000), _rng.normal(size=2000)])
DATA = np.column_stack([_X, _X @ [0.5, -1.0] + _rng.normal(size=2000)])
THETA_HAT = np.linalg.solve(_X.T @ _X, _X.T @ DATA[:, -1])
SD = np.sqrt(np.diag(np.linalg.inv(_X.T @ _X)))


class RecordingSampler:
    """A stand-in for a chain sampler: records each piece it is asked to run."""

    def __init__(self):
        self.inv_temperature = 1.0
        self.pieces = []
        self.invalidated = 0

    def invalidate(self, state):
        self.invalidated += 1

    def run_iterations(self, state, n_iter, rng, where):
        self.pieces.append((n_iter, self.inv_temperature))
        return {"draws": np.full((n_iter, 1), self.inv_temperature)}


def test_runs_are_cut_where_the_temperature_changes():
    schedule = TemperatureSchedule(((0, 4.0), (10, 2.0), (25, 1.0)))
    sampler = RecordingSampler()
    outputs = [schedule.run(sampler, None, 7, None, "sampling") for _ in range(5)]
    assert sampler.pieces == [(7, 0.25), (3, 0.25), (4, 0.5), (7, 0.5), (4, 0.5), (3, 1.0),
                              (7, 1.0)]
    # The first piece changes 1 to 1/4, then the changes at iterations 10 and 25.
    assert sampler.invalidated == 3
    draws = np.concatenate([out["draws"][:, 0] for out in outputs])
    np.testing.assert_array_equal(draws, np.repeat([0.25, 0.5, 1.0], [10, 15, 10]))
    assert [schedule.temperature_at(t) for t in (0, 9, 10, 24, 25, 10**6)] == [4, 4, 2, 2, 1, 1]
    assert schedule.iteration == 35


def test_a_number_is_not_a_schedule():
    assert check_temperature(3, 1e-100) == (3.0, None)
    assert check_temperature([(0, 100), (400, 1.5)], 1e-100) == (1.5, ((0, 100.0), (400, 1.5)))


@pytest.mark.parametrize("temperature, error, message", [
    ([(1, 2.0)], ValueError, "start at iteration 0"),
    ([], ValueError, "empty"),
    ([(0, 2.0), (0, 1.0)], ValueError, "increase strictly"),
    ([(0, 2.0), (5, 0.0)], ValueError, "entry 1 must be finite and >= 1e-100"),
    ([(0, 2.0), (5, np.nan)], ValueError, "entry 1 must be finite"),
    ([(0.5, 2.0)], ValueError, "entry 0: the iteration must be an integer"),
    ([(True, 2.0)], ValueError, "entry 0: the iteration must be an integer"),
    ([(0, 2.0, 3)], ValueError, "entry 0 must be an .iteration, temperature. pair"),
    ([(0, "hot")], TypeError, "entry 0 must be a real number"),
    ("hot", TypeError, "temperature must be a number or a schedule"),
    ({0: 1.0}, TypeError, "temperature must be a number or a schedule"),
])
def test_bad_schedules_raise_a_clear_error(temperature, error, message):
    with pytest.raises(error, match=message):
        sample(linear_gaussian_loglik, DATA, [0.0, 0.0], step_size=0.01, n_draws=5,
               temperature=temperature)


def test_each_iteration_reports_its_own_temperatures_log_posterior():
    # The exact test records log p + loglik / K at every iteration: K = 9 before iteration
    # 300 (counted from the first warm-up iteration), 1 after.
    result = sample(linear_gaussian_loglik, DATA, THETA_HAT, step_size=0.02,
                    acceptance="metropolis", n_warmup=100, n_draws=500,
                    temperature=[(0, 9.0), (300, 1.0)], random_state=0)
    assert result.temperature == ((0, 9.0), (300, 1.0))
    residuals = DATA[:, -1][None, :] - result.draws @ _X.T
    loglik = -0.5 * np.sum(residuals**2, axis=1)
    temperature = np.where(np.arange(100, 600) < 300, 9.0, 1.0)
    np.testing.assert_allclose(result.log_posterior, loglik / temperature, rtol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("acceptance, proposal, with_derivatives", [
    ("metropolis", "random_walk", False),
    ("metropolis", "mala", True),  # the cached gradient is the old temperature's
    ("minibatch", "random_walk", True),  # control variates
])
def test_draws_after_the_drop_sample_the_final_posterior(acceptance, proposal,
                                                         with_derivatives):
    derivatives = (dict(gradient=linear_gaussian_gradient, hessian=linear_gaussian_hessian)
                   if with_derivatives else {})
    step = 1.2 * SD if proposal == "random_walk" else 0.8 * SD
    hot = 3_000
    result = sample(linear_gaussian_loglik, DATA, [0.0, 0.0], step_size=step,
                    acceptance=acceptance, proposal=proposal, n_draws=hot + 30_000,
                    temperature=[(0, 25.0), (hot, 1.0)], random_state=3, **derivatives)
    before = result.draws[hot // 2:hot]
    # Before the drop the chain spreads at the hot posterior's scale (5 sds)...
    assert np.all(before.std(axis=0) > 2.5 * SD)
    draws = result.draws[hot + 1_000:]
    for k in range(2):
        chain = draws[:, k]
        standard_error = batch_means_standard_error(chain)
        effective_size = chain.var() / standard_error**2
        # ... after it, the exact posterior's mean and sd within Monte Carlo error.
        assert abs(chain.mean() - THETA_HAT[k]) < 4 * standard_error
        assert abs(chain.std() / SD[k] - 1) < 4 / math.sqrt(2 * effective_size)


class StepSampler(RecordingSampler):
    """... with a step and a proposal, as the schedule's step rescaling reads them."""

    def __init__(self, around_reference=False, max_scale=np.inf):
        super().__init__()
        self.scale, self.max_scale = 0.5, max_scale
        self.proposal = type("Proposal", (), {"around_reference": around_reference})()

    def run_iterations(self, state, n_iter, rng, where):
        self.pieces.append((n_iter, self.inv_temperature, self.scale))
        return {"draws": np.zeros((n_iter, 1))}


def test_a_tuned_step_follows_the_square_root_of_the_temperature():
    # The sampler's step was set for the final temperature 1: sqrt(16) times it at 16,
    # then back by sqrt(1 / 4) at 4 and sqrt(1 / 4) at 1.
    sampler = StepSampler()
    schedule = TemperatureSchedule(((0, 16.0), (5, 4.0), (9, 1.0)), rescale_step=True)
    schedule.run(sampler, None, 12, None, "warm-up")
    assert sampler.pieces == [(5, 1 / 16, 2.0), (4, 0.25, 1.0), (3, 1.0, 0.5)]
    # Capped at the proposal's largest scale; pCN's innovation share and a step the user
    # set (rescale_step=False) are left alone.
    capped = StepSampler(max_scale=1.5)
    TemperatureSchedule(((0, 16.0), (5, 1.0)), rescale_step=True).run(capped, None, 8, None, "")
    assert [scale for _, _, scale in capped.pieces] == [1.5, 0.375]
    for sampler, rescale in ((StepSampler(around_reference=True), True), (StepSampler(), False)):
        TemperatureSchedule(((0, 16.0), (5, 1.0)), rescale_step=rescale).run(sampler, None, 8,
                                                                              None, "")
        assert [scale for _, _, scale in sampler.pieces] == [0.5, 0.5]


def test_shape_and_thin_learn_from_the_final_temperature_only():
    from skbayes_mh.sampling import AutoThin
    from skbayes_mh.sampling._tuning import ShapeTuner

    sampler = StepSampler()
    sampler.schedule = TemperatureSchedule(((0, 100.0), (300, 1.0)))
    sampler.shape = None
    rng = np.random.default_rng(0)
    tuner = ShapeTuner(np.ones(2), full=True)
    # 20 windows of 50: hot draws (sd 10) before iteration 300, cold (sd 1) after; the
    # update after window 5 (a quarter) has no cold draw yet and keeps the shape.
    for window in range(20):
        sd = 10.0 if window * 50 < 300 else 1.0
        info = {"draws": rng.normal(scale=sd, size=(50, 2)), "accepted": np.ones(50, bool)}
        tuner.update(sampler, info, window, 20)
        if window == 4:
            assert sampler.shape is None
    # The updates at half and three quarters read cold windows only (blended with the
    # initial unit covariance): no sd-10 draw inflates them.
    np.testing.assert_allclose(sampler.shape.scales(), 1.0, rtol=0.15)
    # thin="auto" reads the draws at the final temperature: a random walk of tau about 40
    # before the change, independent draws after.
    hot = np.cumsum(rng.normal(size=(300, 3)), axis=0)
    cold = rng.normal(size=(700, 3))
    assert AutoThin(10)(np.vstack([hot, cold]), sampler) <= 2


def test_the_last_change_must_come_within_the_warm_up():
    from skbayes_mh import MinibatchMHLogisticRegression

    X = np.random.default_rng(0).normal(size=(50, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=r"last change \(iteration 300\) must come within the "
                                         r"warm-up \(n_warmup=200\)"):
        MinibatchMHLogisticRegression(temperature=[(0, 10.0), (300, 1.0)], n_warmup=200,
                                      n_draws=10).fit(X, y)
    with pytest.raises(ValueError, match="temperature"):
        MinibatchMHLogisticRegression(temperature="hot").fit(X, y)
    with pytest.raises(ValueError, match="start at iteration 0"):
        MinibatchMHLogisticRegression(temperature=[(5, 10.0)]).fit(X, y)


@pytest.mark.slow
def test_an_estimators_tempered_warm_up_keeps_the_exact_posterior(monkeypatch):
    # One feature and an intercept, the posterior integrated on a grid (as in
    # test_logistic_estimator.py): the chains spread at temperature 30 for 400 iterations,
    # then sample temperature 1 with the step rescaled and tuned on.
    import skbayes_mh._core.fit as fit_module
    from skbayes_mh import MinibatchMHLogisticRegression

    x, y, exact_mean, exact_sd = slope_intercept_problem()
    made = []

    class Recorded(TemperatureSchedule):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(fit_module, "TemperatureSchedule", Recorded)
    clf = MinibatchMHLogisticRegression(prior_scale=2.0, autoscale=False,
                                        temperature=[(0, 30.0), (400, 1.0)], n_draws=3000,
                                        n_warmup=1000, n_chains=4, n_jobs=2, random_state=0)
    clf.fit(x[:, None], y)
    # Every chain ran under the schedule, its tuned step rescaled at the change.
    assert len(made) == 4 and all(schedule.rescale_step for schedule in made)
    assert all(schedule.last_change == 400 for schedule in made)
    draws = np.stack([clf.posterior_["coef"][..., 0], clf.posterior_["intercept"]], axis=-1)
    assert_same_distribution(draws, Moments(exact_mean, exact_sd))

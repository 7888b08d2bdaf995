"""The warm-up's first window: the step scale is re-tuned every few iterations there (the
transient from an over-dispersed start), by the window afterwards. And ``n_warmup="auto"``'s
end of a chain's warm-up once it is tuned and past its start (``SettledWarmup``)."""
import numpy as np
import pytest

from skbayes_mh.sampling import ScaleTuner, run_chain
from skbayes_mh.sampling._driver import N_WINDOWS, TRANSIENT_CHUNK
from skbayes_mh.sampling._tuning import TRANSIENT_GAIN, SettledWarmup


class ThresholdSampler:
    """A stand-in sampler that accepts every move while its scale is below ``critical`` and
    none above: where a Hamiltonian path from far out in the tails stands with a scale right
    for the posterior (it accepts nothing until the scale shrinks)."""

    target_acceptance_rate = 0.7
    max_scale = np.inf

    def __init__(self, scale, critical):
        self.scale = scale
        self.critical = critical
        self.runs = []

    def init(self, theta0, rng):
        return np.asarray(theta0, dtype=float)

    def run(self, state, n_iter, rng, where):
        self.runs.append((where, n_iter, self.scale))
        accepted = np.full(n_iter, self.scale < self.critical)
        return {"draws": np.zeros((n_iter, state.size)), "accepted": accepted,
                "n_data_read": np.ones(n_iter, dtype=np.int64), "lp": np.zeros(n_iter)}


class RecordingTuner:
    def __init__(self):
        self.transient, self.windows = [], []

    def update_transient(self, sampler, info):
        self.transient.append(info["accepted"].size)

    def update(self, sampler, info, window, n_windows):
        self.windows.append((window, info["accepted"].size))


def test_the_first_window_updates_every_few_iterations():
    n_warmup = 400
    sampler, tuner = ThresholdSampler(1.0, 2.0), RecordingTuner()
    run_chain(sampler, np.zeros(2), 0, n_warmup, 10, tuners=[tuner])
    window = n_warmup // N_WINDOWS
    assert tuner.transient == [TRANSIENT_CHUNK] * (window // TRANSIENT_CHUNK)
    # Every window, the first included whole, still reaches update().
    assert tuner.windows == [(k, window) for k in range(N_WINDOWS)]


class RecordingScaleTuner(ScaleTuner):
    def __init__(self):
        super().__init__()
        self.scales = []

    def update_transient(self, sampler, info):
        super().update_transient(sampler, info)
        self.scales.append(sampler.scale)

    def update(self, sampler, info, window, n_windows):
        super().update(sampler, info, window, n_windows)
        self.scales.append(sampler.scale)


def test_a_scale_that_accepts_nothing_is_cut_within_the_first_window():
    """From 4 times the largest scale that moves, the scale is below it after two pieces of
    the first window, and after the window within a factor of it: the transient's updates
    settle where the acceptance is near the target, and the window's own update leaves
    them (before, one update after the whole window cut the scale by exp(-1.4) only)."""
    critical = 1.0
    sampler = ThresholdSampler(4.0 * critical, critical)
    tuner = RecordingScaleTuner()
    run_chain(sampler, np.zeros(2), 0, 1000, 10, tuners=[tuner])
    pieces = 50 // TRANSIENT_CHUNK
    assert tuner.transient_updates == pieces
    cut = np.exp(-0.7 * TRANSIENT_GAIN)  # a piece that accepts nothing
    assert tuner.scales[:2] == pytest.approx([4.0 * cut, 4.0 * cut ** 2])
    assert tuner.scales[1] < critical
    after_window = tuner.scales[pieces]
    assert after_window == tuner.scales[pieces - 1]  # window 0's update left it
    assert critical * cut < after_window < critical / cut


def test_without_transient_updates_the_first_window_tunes_as_before():
    """A tuner used on its own (no driver calls to ``update_transient``) updates after
    window 0 by its Robbins-Monro step, gain 2."""
    sampler = ThresholdSampler(4.0, 1.0)
    tuner = ScaleTuner()
    tuner.update(sampler, {"accepted": np.zeros(50, dtype=bool)}, 0, N_WINDOWS)
    assert sampler.scale == pytest.approx(4.0 * np.exp(-0.7 * 2.0))


def test_pooled_window_moments_are_those_of_all_the_draws():
    """The per-coordinate shape of a wide model is refined from each window's moments, not
    its draws: pooled, they are the mean and variances of the windows' draws together."""
    from skbayes_mh.sampling._tuning import pooled_moments

    rng = np.random.default_rng(0)
    windows = [rng.normal(loc=k, scale=1 + k, size=(n, 5)) for k, n in enumerate((7, 30, 1, 12))]
    mean, variances = pooled_moments([(w.shape[0], w.mean(axis=0), w.var(axis=0))
                                      for w in windows])
    everything = np.concatenate(windows)
    np.testing.assert_allclose(mean, everything.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(variances, everything.var(axis=0), rtol=1e-12)


class ScriptedSampler:
    """A stand-in sampler whose iterations' log posterior and acceptance are given
    functions of the iteration's index (the warm-up's end reads only those)."""

    target_acceptance_rate = 0.7
    max_scale = np.inf
    scale = 1.0

    def __init__(self, lp, accepted):
        self.lp, self.accepted, self.done = lp, accepted, 0

    def init(self, theta0, rng):
        return np.asarray(theta0, dtype=float)

    def run(self, state, n_iter, rng, where):
        index = np.arange(self.done, self.done + n_iter)
        self.done += n_iter
        return {"draws": np.zeros((n_iter, state.size)), "accepted": self.accepted(index),
                "n_data_read": np.ones(n_iter, dtype=np.int64), "lp": self.lp(index)}


def on_target(index):
    """Seven in ten iterations accepted: the target rate exactly."""
    return index % 10 < 7


@pytest.mark.parametrize("lp, accepted, ends", [
    (lambda index: (-1.0) ** index, on_target, True),  # settled
    (lambda index: 0.05 * index + (-1.0) ** index, on_target, False),
    (lambda index: (-1.0) ** index, lambda index: index % 10 < 9, False),  # rate 0.9
    (lambda index: (-1.0) ** index, lambda index: index % 2 < 1, False),  # rate 0.5
], ids=["settled", "drifting", "accepting-too-often", "accepting-too-rarely"])
def test_the_warm_up_ends_at_the_first_window_allowed_only_when_settled(lp, accepted, ends):
    """A chain whose log posterior has no trend and whose acceptance sits at the target
    ends its warm-up after ``SettledWarmup.MIN_WINDOWS`` windows; a drifting level or a
    rate 0.2 from the target runs the whole warm-up. The kept draws follow either way."""
    n_warmup, n_draws = 400, 25
    sampler = ScriptedSampler(lp, accepted)
    chain = run_chain(sampler, np.zeros(2), 0, n_warmup, n_draws, warmup_until=SettledWarmup())
    window = n_warmup // N_WINDOWS
    assert chain.n_warmup == (SettledWarmup.MIN_WINDOWS * window if ends else n_warmup)
    assert chain.n_draws == n_draws and sampler.done == chain.n_warmup + n_draws


def test_a_chain_that_never_moved_or_returned_nan_runs_its_whole_warm_up():
    for lp in (lambda index: np.zeros(index.size),
               lambda index: np.where(index == 50, np.nan, (-1.0) ** index)):
        chain = run_chain(ScriptedSampler(lp, on_target), np.zeros(2), 0, 400, 5,
                          warmup_until=SettledWarmup())
        assert chain.n_warmup == 400


@pytest.mark.slow
def test_a_far_start_is_not_cut_short():
    """Random-walk chains with the scale tuner, on a Gaussian posterior: started 100
    posterior sds away, each warm-up ends only once the chain is in the posterior, so
    its first kept draws already sit within the bulk (each coordinate within 4.5 sds of
    the mean; judged on the acceptance rate alone, 11 of these 20 chains started keeping
    draws outside it); started at the mean, they end well before the cap."""
    from skbayes_mh.acceptance import Metropolis
    from skbayes_mh.proposals import resolve_proposal
    from skbayes_mh.sampling import MetropolisHastings, Shape
    from skbayes_mh.sampling._api import _row_target

    from _models import linear_gaussian_loglik, standard_normal_log_prior

    rng = np.random.default_rng(0)
    x = np.column_stack([np.ones(200), rng.normal(size=(200, 2))])
    y = x @ np.array([0.3, -0.5, 1.0]) + rng.normal(size=200)
    covariance = np.linalg.inv(x.T @ x + np.eye(3))
    mean, sd = covariance @ x.T @ y, np.sqrt(np.diag(covariance))
    target = _row_target(linear_gaussian_loglik, np.column_stack([x, y]), mean.copy(),
                         standard_normal_log_prior, 1.0)
    n_warmup, near = 300, []
    for seed in range(20):
        for distance in (100, 0):
            sampler = MetropolisHastings(target, Metropolis(), resolve_proposal("random_walk"),
                                         Shape(np.zeros((0, 0)), sd), 0.5, None)
            chain = run_chain(sampler, mean + distance * sd, seed, n_warmup, 20,
                              tuners=[ScaleTuner()], warmup_until=SettledWarmup())
            assert np.all(np.abs(chain.draws - mean) < 4.5 * sd), (seed, chain.n_warmup)
            if distance == 0:
                near.append(chain.n_warmup)
    assert np.median(near) < n_warmup, near

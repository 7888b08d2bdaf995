"""The acceptance probability of every test against its formula, on a grid of true
log ratios Delta and per-datum spreads.

With ``loglik = theta * x_i``, ``theta = 0`` and ``theta' = 1``, the per-datum log ratios
are exactly ``x_i = Delta / N + spread * z_i`` (``z`` standardised), so the full-data
log ratio is exactly ``Delta``.
"""
import numpy as np
import pytest
from scipy.special import expit

from skbayes_mh import acceptance_probability
from skbayes_mh.acceptance import Barker, Metropolis, MinibatchBarker

from _models import linear_loglik, per_datum_ratios, rate_tolerance

N = 1000
N_TRIALS = 20_000
DELTAS = [-3.0, -1.0, 0.0, 0.5, 2.0]
#: Spreads for which the minibatch test stops at the first batch of 10, at ~95 rows, and
#: at ~720 of the 1000 rows: N^2 spread^2 (1/b - 1/N) < 1.
SPREADS = [3e-4, 1e-2, 5e-2]


def measured(test, x, seed=1):
    return acceptance_probability(linear_loglik, x, [0.0], [1.0], acceptance=test,
                                  n_trials=N_TRIALS, random_state=seed)


@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("spread", [SPREADS[0], SPREADS[2]])
@pytest.mark.parametrize("test, formula", [
    (Metropolis(), lambda d: min(1.0, np.exp(d))),
    (Barker(), expit),
])
def test_exact_tests_follow_their_formulas(test, formula, spread, delta):
    p, rows = measured(test, per_datum_ratios(delta, spread, N))
    expected = formula(delta)
    if expected == 1.0:  # Metropolis at delta >= 0 accepts every time: no Monte Carlo error
        assert p == 1.0
    else:
        assert abs(p - expected) <= rate_tolerance(expected, N_TRIALS)
    assert rows == 2 * N  # no cache between trials: current and proposal, every row


@pytest.mark.slow
@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("spread, expected_rows", list(zip(SPREADS, [10, 95, 720])))
def test_minibatch_follows_barker(spread, expected_rows, delta):
    test = MinibatchBarker(batch_size=10)
    p, rows = measured(test, per_datum_ratios(delta, spread, N))
    # Gaussian per-datum ratios: the normal approximation is exact in the limit, so the
    # only error the test states is the correction distribution's.
    tolerance = rate_tolerance(expit(delta), N_TRIALS) + test.correction.sup_error
    assert abs(p - expit(delta)) <= tolerance
    assert rows == pytest.approx(expected_rows, abs=10)


@pytest.mark.slow
@pytest.mark.parametrize("delta", [-1.0, 0.5])
def test_minibatch_with_delta_stays_within_its_stated_bound(delta):
    # Skewed (exponential) per-datum ratios, where the normal approximation is worst.
    test = MinibatchBarker(batch_size=10, delta=0.2)
    x = per_datum_ratios(delta, 5e-3, N, shape="exponential")
    p, rows = measured(test, x)
    assert abs(p - expit(delta)) <= rate_tolerance(expit(delta), N_TRIALS) + test.stated_error()
    # The Berry-Esseen requirement makes it read more than the variance condition alone.
    _, rows_without = measured(MinibatchBarker(batch_size=10), x)
    assert rows > rows_without


@pytest.mark.parametrize("sigma", [0.5, 1.2])
def test_minibatch_at_other_sigmas(sigma):
    test = MinibatchBarker(batch_size=10, sigma=sigma)
    p, _ = measured(test, per_datum_ratios(0.5, 1e-2, N))
    assert abs(p - expit(0.5)) <= rate_tolerance(expit(0.5), N_TRIALS) + test.correction.sup_error


@pytest.mark.slow
def test_minibatch_is_exact_barker_at_full_data():
    # A spread so large that the batch always grows to N: then s^2 = 0 (finite-population
    # correction) and the test is the exact Barker test, not "accept iff Delta* > 0".
    for delta in (-1.0, 0.5):
        p, rows = measured(MinibatchBarker(batch_size=10), per_datum_ratios(delta, 0.5, N))
        assert rows == N
        assert abs(p - expit(delta)) <= rate_tolerance(expit(delta), N_TRIALS)


def test_minibatch_adds_noise_even_when_the_decision_looks_certain():
    # Identical per-datum ratios: s^2 = 0 from the first batch and |Delta*/s| is infinite.
    # A sign-test shortcut would accept always; the Barker test accepts with S(Delta).
    p, rows = measured(MinibatchBarker(batch_size=10), per_datum_ratios(1.0, 0.0, N))
    assert rows == 10
    assert abs(p - expit(1.0)) <= rate_tolerance(expit(1.0), N_TRIALS)


def test_log_psi_and_temperature_enter_delta():
    x = per_datum_ratios(2.0, 3e-4, N)
    # Tempered: Delta = 2 / 4 + log_psi.
    for test in (Barker(), MinibatchBarker(batch_size=10)):
        p, _ = acceptance_probability(linear_loglik, x, [0.0], [1.0], acceptance=test,
                                      log_psi=-1.0, temperature=4.0, n_trials=N_TRIALS,
                                      random_state=5)
        assert abs(p - expit(-0.5)) <= rate_tolerance(expit(-0.5), N_TRIALS) + 1e-5

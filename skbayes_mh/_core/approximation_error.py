"""An approximate test's error in acceptance probability, estimated from a fit's chains and,
past the warning's threshold, measured (``convergence.check_test_error`` reports it)."""
import functools

import numpy as np
from scipy import special, stats
from sklearn.utils import Bunch

from .convergence import TEST_ERROR_WARNING, normality_error

#: The error of an approximate test is estimated at this many pairs of consecutive draws
#: of each chain ...
ERROR_CHECK_PAIRS = 5
#: ... from the rows' log ratios on a random subsample of this many rows.
ERROR_CHECK_ROWS = 5_000
#: An estimate past the warning's threshold is checked by running the test again at those
#: pairs (:func:`measured_test_error`), reading at most about this many rows in all ...
ERROR_MEASURE_ROWS = 1e7
#: ... in this many trials a pair at least and at most.
ERROR_MEASURE_TRIALS = (200, 1000)


class Moves:
    """Pairs of consecutive draws of a fit's chains (:data:`ERROR_CHECK_PAIRS` a chain),
    as an approximate test sees them: ``ratios`` (pairs, rows), each row's tempered log
    ratio less its control variate (with control variates ``cv``) on
    :data:`ERROR_CHECK_ROWS` random rows; ``spreads``, their sds; ``deltas``, the full-data
    log posterior ratios (computed when first asked for). Pairs that did not move are left
    out."""

    def __init__(self, target, draws, cv):
        self.target, self.cv, self.n_data = target, cv, target.n_data
        index = np.linspace(0, draws.shape[1] - 2, ERROR_CHECK_PAIRS if draws.shape[1] > 1
                            else 0).round().astype(int)
        before = draws[:, index].reshape(-1, draws.shape[2])
        after = draws[:, index + 1].reshape(-1, draws.shape[2])
        terms = target.row_terms(np.concatenate([before, after]), cv, ERROR_CHECK_ROWS)
        # Tempered, and without the subsample's N / rows weight.
        ratios = (terms[len(before):] - terms[:len(before)]) * target.inv_temperature * (
            min(ERROR_CHECK_ROWS, self.n_data) / self.n_data)
        moved = np.ptp(ratios, axis=1) > 0
        self.before, self.after, self.ratios = before[moved], after[moved], ratios[moved]
        self.spreads = self.ratios.std(axis=1)

    def __len__(self):
        return len(self.ratios)

    @functools.cached_property
    def deltas(self):
        levels = self.target.log_posteriors(np.concatenate([self.before, self.after]),
                                            self.cv)
        return levels[len(self.before):] - levels[:len(self.before)]


def test_error(chains, draws):
    """An approximate test's estimated per-test error in acceptance probability, from the
    chains that ran it, at their :class:`Moves`: the sum of ``design``, the error the
    test's own analysis gives there (``AcceptanceTest.design_error``), and, for a test that
    takes the minibatch mean as normal (``normal_mean``), ``normality``, the first Edgeworth
    term of that approximation (:func:`~skbayes_mh._core.convergence.normality_error`) at
    the moves' median skewness and the rows a test read on average.

    Returns
    -------
    Bunch or None
        ``test``, ``per_test`` (the sum), ``design``, ``normality``, ``skewness``,
        ``rows_per_test``; None for an exact test.
    """
    sampler = chains[0].sampler
    acceptance = sampler.acceptance
    if acceptance.exact:
        return None
    rows = float(np.mean([c.stats["rows_per_iteration"].mean() for c in chains]))
    # The moves matter only to the tests that take the minibatch mean as normal.
    moves = (Moves(sampler.target, draws, getattr(sampler, "cv", None))
             if acceptance.normal_mean else ())
    skewness = normality = 0.0
    if len(moves):
        skewness = float(np.nanmedian(np.abs(stats.skew(moves.ratios, axis=1))))
        normality = float(normality_error(skewness, rows, sampler.target.n_data))
    design = acceptance.design_error(moves)
    estimated = design + normality
    measured = (measured_test_error(sampler, moves, rows)
                if estimated > TEST_ERROR_WARNING and len(moves) else None)
    return Bunch(test=acceptance.name, per_test=estimated if measured is None else measured,
                 estimated=estimated, measured=measured, design=design, normality=normality,
                 skewness=skewness, rows_per_test=rows,
                 n_moves=len(moves) if measured is not None else 0)


def measured_test_error(sampler, moves, rows_per_test, random_state=0):
    """The test's root-mean-square error in acceptance probability at ``moves``, measured:
    the test run again on each pair (:data:`ERROR_MEASURE_TRIALS` times, within
    :data:`ERROR_MEASURE_ROWS` rows in all), its acceptance frequency against the exact
    test's probability there (``S(Delta)`` for a Barker test, ``min(1, e^Delta)`` else, from
    the full-data log posteriors), the frequencies' binomial variance taken out.

    The Edgeworth estimate is a screen, not this: with a few rows far out (California
    housing's, in a robust regression) the rows' log ratios have skewness 10 to 60, past
    the expansion's reach, and it gave 0.17-0.23 where the test measured 0 to 0.011."""
    target = sampler.target
    n_trials = int(np.clip(ERROR_MEASURE_ROWS / (len(moves) * max(rows_per_test, 1.0)),
                           *ERROR_MEASURE_TRIALS))
    levels = target.log_posteriors(np.concatenate([moves.before, moves.after]))
    deltas = levels[len(moves):] - levels[:len(moves)]
    rng = np.random.default_rng(random_state)
    squares = []
    for theta, theta_prop, delta in zip(moves.before, moves.after, deltas):
        log_prior_ratio = (target.prior.log_density(theta_prop)[0]
                           - target.prior.log_density(theta)[0])
        frequency = sampler.acceptance_frequency(theta, theta_prop, log_prior_ratio,
                                                 n_trials, rng)
        exact = float(special.expit(delta) if sampler.acceptance.barker
                      else np.exp(min(delta, 0.0)))
        squares.append((frequency - exact) ** 2 - exact * (1.0 - exact) / n_trials)
    return float(np.sqrt(max(float(np.mean(squares)), 0.0)))

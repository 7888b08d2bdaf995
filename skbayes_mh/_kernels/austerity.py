"""The approximate Metropolis-Hastings test of Korattikara, Chen and Welling, "Austerity in
MCMC Land: Cutting the Metropolis-Hastings Budget" (ICML 2014, Algorithm 1): a sequential
t-test of "the mean log-likelihood ratio exceeds mu0" on growing random minibatches.
"""
import math
from collections import namedtuple

import numpy as np

from ._common import integer
from ._jit import STATUS_OK, jit
from .decisions import context_view, decision_op, param_positions
from .special import student_t_sf
from .subsample import BATCH_GROWN, early_outcome, grow_batch

#: The test's parameters: rows a minibatch grows by, and the t-test's level ``epsilon``.
AusterityParams = namedtuple("AusterityParams", "batch_size epsilon")
PARAM = param_positions(AusterityParams)


@jit
def austerity_decide(context, theta, theta_prop, log_psi, delta, rng):
    """Accept iff the mean of the tempered per-row log ratios ``lambda_i`` exceeds
    ``mu0 = (log u - log_psi) / N``, decided on a minibatch as soon as a t-test is confident.
    See ``decisions.py`` for the shared signature.

    With ``n`` rows: ``t = (mean - mu0) / s`` where ``s = (S_n / sqrt(n)) sqrt(1 - (n-1)/(N-1))``
    (sample sd ``S_n`` and the finite-population correction); decide when the Student-t tail
    ``P(T_{n-1} > |t|)`` falls below ``epsilon``, else add ``batch_size`` rows. At ``n = N``
    the decision is the exact Metropolis-Hastings test. With control variates ``lambda_i``
    are the residuals of the rows' Taylor proxies, whose full-data sum is in ``log_psi``.
    """
    spec, inv_temperature, test, cv, workspace, pool, scratch = context
    n_data = scratch.shape[0]
    batch_size = int(test.params[PARAM.batch_size])
    epsilon = test.params[PARAM.epsilon]
    mu0 = (math.log(rng.random()) - log_psi) / n_data
    sums = np.zeros(3)
    count = integer(0)  # one compilation of grow_batch, not one more for 0
    while True:
        outcome, count, mean, sample_variance = grow_batch(
            spec, theta, theta_prop, cv, inv_temperature, pool, scratch, count,
            min(batch_size, n_data - count), rng, sums, workspace[0])
        if outcome != BATCH_GROWN:
            return early_outcome(outcome, count)
        if count == n_data:
            break
        if count >= 2:
            s = math.sqrt(sample_variance / count * (1.0 - (count - 1.0) / (n_data - 1.0)))
            if s == 0.0 or student_t_sf(abs(mean - mu0) / s, count - 1.0) < epsilon:
                break
    return mean > mu0, count, STATUS_OK


@decision_op
def austerity_op(context, theta, theta_prop, log_psi, delta, rng):
    """:func:`austerity_decide`, compiled on its own."""
    return austerity_decide(context_view(context), theta, theta_prop, log_psi, delta, rng)


@jit
def _normal_cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


#: Kernel half-width in transition standard deviations, and the largest grid a stage uses.
_KERNEL_REACH = 9.0
_MAX_GRID = 400_000
#: Running probability below which the remaining stages are not computed.
_NEGLIGIBLE = 1e-15


@jit
def random_walk_error(effect, n_data, stage_rows, thresholds, min_grid):
    """Error and cost of the sequential t-test under the Gaussian random-walk model of
    Korattikara et al. (Section 5): per-datum ratios with population sd ``sigma``, and the
    sample standard deviation replaced by ``sigma``.

    Let ``S_n`` be the sum of ``n`` ratios drawn without replacement minus ``n mu``: a
    Gaussian bridge with ``Var S_n = sigma^2 n (N - n) / (N - 1)``, and ``y_n`` its
    standardised value. Then ``y_{n'} | y_n ~ N(rho y_n, 1 - rho^2)`` with
    ``rho^2 = n (N - n') / (n' (N - n))``, and stage ``n``'s t statistic is ``y_n + s_n``
    with ``s_n = z n / (N sd(S_n / sigma sqrt(N)))`` for the standardised effect
    ``z = (mu - mu0) sqrt(N) / sigma``: the stage continues while ``y_n`` lies in
    ``[-c_n - s_n, c_n - s_n]``, ``c_n`` its Student-t threshold. The density of the walks
    still running is carried on a trapezoid grid of that interval, at most a third of the
    transition sd apart; the masses that stop are integrated exactly against the Gaussian
    transition.

    Parameters
    ----------
    effect : float
        The standardised effect ``z``; the exact decision is "accept" iff ``z > 0``.
    n_data : int
        N.
    stage_rows : ndarray of shape (n_stages,)
        Rows read at each stage, increasing, the last one ``< N`` (after it, all N are read).
    thresholds : ndarray of shape (n_stages,)
        ``c_n``: a stage decides when ``|t| > c_n``.
    min_grid : int
        Fewest points carrying the density.

    Returns
    -------
    error : float
        Probability that the test's decision differs from the exact one.
    expected_rows : float
        Expected rows read.
    """
    big_n = float(n_data)
    root_two_pi = math.sqrt(2.0 * math.pi)
    mass = np.zeros(1)
    old_start = 0.0
    old_spacing = 1.0
    stop_accept = 0.0
    stop_reject = 0.0
    expected_rows = 0.0
    running = 1.0
    previous_rows = 0.0
    for stage in range(stage_rows.shape[0]):
        n = float(stage_rows[stage])
        sd = math.sqrt(n * (big_n - n) / (big_n * (big_n - 1.0)))
        shift = effect * n / (big_n * sd)
        low = -thresholds[stage] - shift
        high = thresholds[stage] - shift
        if stage == 0:
            rho = 0.0
            tau = 1.0
        else:
            rho = math.sqrt(previous_rows * (big_n - n) / (n * (big_n - previous_rows)))
            tau = math.sqrt(max(1.0 - rho * rho, 1e-300))
        n_grid = min(max(min_grid, int(math.ceil(3.0 * (high - low) / tau)) + 1), _MAX_GRID)
        spacing = (high - low) / (n_grid - 1)
        new_mass = np.zeros(n_grid)
        accept_mass = 0.0
        reject_mass = 0.0
        if stage == 0:
            accept_mass = 1.0 - _normal_cdf(high)
            reject_mass = _normal_cdf(low)
            for k in range(n_grid):
                y = low + k * spacing
                new_mass[k] = math.exp(-0.5 * y * y) / root_two_pi
        else:
            for j in range(mass.shape[0]):
                centre = rho * (old_start + j * old_spacing)
                accept_mass += mass[j] * (1.0 - _normal_cdf((high - centre) / tau))
                reject_mass += mass[j] * _normal_cdf((low - centre) / tau)
            for k in range(n_grid):
                y = low + k * spacing
                # Old nodes whose transition reaches y: rho y_j within the kernel's reach.
                first = max(0, int(math.floor(((y - _KERNEL_REACH * tau) / rho - old_start)
                                              / old_spacing)))
                last = min(mass.shape[0] - 1,
                           int(math.ceil(((y + _KERNEL_REACH * tau) / rho - old_start)
                                         / old_spacing)))
                total = 0.0
                for j in range(first, last + 1):
                    u = (y - rho * (old_start + j * old_spacing)) / tau
                    total += mass[j] * math.exp(-0.5 * u * u)
                new_mass[k] = total / (tau * root_two_pi)
        # Trapezoid weights: carry mass = density x weight.
        for k in range(n_grid):
            new_mass[k] *= spacing if 0 < k < n_grid - 1 else 0.5 * spacing
        mass = new_mass
        old_start = low
        old_spacing = spacing
        stop_accept += accept_mass
        stop_reject += reject_mass
        expected_rows += n * (accept_mass + reject_mass)
        previous_rows = n
        running = max(0.0, 1.0 - stop_accept - stop_reject)
        if running < _NEGLIGIBLE:
            break
    expected_rows += big_n * running
    error = stop_reject if effect > 0.0 else stop_accept
    return error, expected_rows

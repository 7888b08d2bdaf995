"""The minibatch Barker test with an additive correction variable (Seita, Pan, Chen and
Canny, "An Efficient Minibatch Acceptance Test for Metropolis-Hastings", UAI 2017,
Algorithm 1).
"""
import math
from collections import namedtuple

import numpy as np

from ._common import integer, sample_discrete
from ._jit import STATUS_OK, jit
from .decisions import context_view, decision_op, param_positions
from .subsample import BATCH_GROWN, early_outcome, grow_batch

#: The test's parameters: rows a minibatch grows by, the logistic-noise scale ``sigma`` the
#: batch's variance must fall below, and the largest Berry-Esseen bound allowed (NaN: no
#: requirement).
MinibatchParams = namedtuple("MinibatchParams", "batch_size sigma delta")
PARAM = param_positions(MinibatchParams)

#: Constants of the Berry-Esseen bound for sampling without replacement that the paper's
#: Corollary 1 uses: sup_x |P(standardised mean < x) - Phi(x)| <= (6.4 E|X|^3 + 2 E|X|) / sqrt(b).
BERRY_ESSEEN_THIRD_MOMENT = 6.4
BERRY_ESSEEN_FIRST_MOMENT = 2.0


@jit
def berry_esseen_bound(values, count, mean):
    """The Corollary 1 bound for the first ``count`` entries of ``values``.

    The standardised absolute moments ``E|X|`` and ``E|X|^3`` of the per-datum log ratios
    are estimated from the minibatch itself. A batch with zero spread is exact (bound 0).
    """
    m2 = 0.0
    for j in range(count):
        m2 += (values[j] - mean) ** 2
    m2 /= count
    if m2 == 0.0:
        return 0.0
    sd = math.sqrt(m2)
    m1 = 0.0
    m3 = 0.0
    for j in range(count):
        z = abs(values[j] - mean) / sd
        m1 += z
        m3 += z * z * z
    m1 /= count
    m3 /= count
    return (BERRY_ESSEEN_THIRD_MOMENT * m3 + BERRY_ESSEEN_FIRST_MOMENT * m1) / math.sqrt(count)


@jit
def minibatch_barker_decide(context, theta, theta_prop, log_psi, delta, rng):
    """Grow a random minibatch until the variance of ``Delta*`` is below ``sigma^2``, then
    accept iff ``Delta* + X_nc + X_corr > 0``. See ``decisions.py`` for the shared
    signature.

    ``Delta* = N mean_b(lambda_i) + log_psi`` with ``lambda_i`` the tempered per-row log
    ratio (minus its control-variate proxy, whose full-data sum is then in ``log_psi``), and
    its variance ``s^2 = N^2 (S_b^2 / b) (1 - b / N)`` (sample variance ``S_b^2``; the
    finite-population correction makes ``s^2 = 0`` at ``b = N``, where the test is the exact
    Barker test). ``X_nc ~ N(0, sigma^2 - s^2)`` and ``X_corr`` comes from the correction
    distribution, so ``Delta* - Delta + X_nc + X_corr`` is approximately standard logistic.
    The noise is always added: there is no shortcut for large ``|Delta* / s|``.
    """
    spec, inv_temperature, test, cv, workspace, pool, scratch = context
    n = scratch.shape[0]
    batch_size = int(test.params[PARAM.batch_size])
    sigma2 = test.params[PARAM.sigma] * test.params[PARAM.sigma]
    delta_max = test.params[PARAM.delta]
    sums = np.zeros(3)
    count = integer(0)  # one compilation of grow_batch, not one more for 0
    while True:
        outcome, count, mean, sample_variance = grow_batch(
            spec, theta, theta_prop, cv, inv_temperature, pool, scratch, count,
            min(batch_size, n - count), rng, sums, workspace[0])
        if outcome != BATCH_GROWN:
            return early_outcome(outcome, count)
        if count == n:
            s2 = 0.0
            break
        if count >= 2:
            s2 = n * n * sample_variance / count * (1.0 - count / n)
            if s2 < sigma2 and (math.isnan(delta_max)
                                or berry_esseen_bound(scratch, count, mean) <= delta_max):
                break
    delta_star = n * mean + log_psi
    x_nc = math.sqrt(sigma2 - s2) * rng.standard_normal()
    x_corr = sample_discrete(test.support, test.cdf, rng)
    return delta_star + x_nc + x_corr > 0.0, count, STATUS_OK


@decision_op
def minibatch_barker_op(context, theta, theta_prop, log_psi, delta, rng):
    """:func:`minibatch_barker_decide`, compiled on its own."""
    return minibatch_barker_decide(context_view(context), theta, theta_prop, log_psi, delta, rng)

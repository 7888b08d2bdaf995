"""The adaptive subsampling test of Bardenet, Doucet and Holmes ("Towards scaling up Markov
chain Monte Carlo: an adaptive subsampling approach", ICML 2014), with the empirical
Bernstein-Serfling bound of Bardenet and Maillard (Bernoulli 2015), and its version with
control variates ("On Markov chain Monte Carlo methods for tall data", JMLR 2017, Section 7).
"""
import math
from collections import namedtuple

import numpy as np

from ._common import integer, lower_solve
from ._jit import STATUS_OK, jit
from .decisions import context_view, decision_op, param_positions
from .subsample import BATCH_GROWN, early_outcome, grow_batch

#: The test's parameters: the first batch's rows, the total error level ``delta``, the
#: batches' growth factor ``gamma`` and the levels' decay exponent ``p``, the per-row
#: Lipschitz constant of the log-likelihood (NaN: none; control variates bound the range),
#: and the largest sample weight.
ConfidenceParams = namedtuple("ConfidenceParams", "batch_size delta gamma p lipschitz max_weight")
PARAM = param_positions(ConfidenceParams)

#: kappa = 7/3 + 3/sqrt(2) of the empirical Bernstein-Serfling bound (Bardenet and Maillard
#: 2015, Theorem 3).
BERNSTEIN_SERFLING_KAPPA = 7.0 / 3.0 + 3.0 / math.sqrt(2.0)


@jit
def bernstein_serfling_bound(n, n_data, sd, value_range, delta):
    """Half-width ``c`` with ``P(|mean_n - mean_N| > c) <= delta`` for a sample of ``n`` of
    ``n_data`` values drawn without replacement, with empirical sd ``sd`` (divisor n) and
    range ``value_range``: ``sd sqrt(2 rho log(10/delta) / n) + kappa range log(10/delta) / n``
    (the one-sided bound at ``delta / 2``, twice), ``rho`` the finite-population factor."""
    if n <= n_data / 2:
        rho = 1.0 - (n - 1.0) / n_data
    else:
        rho = (1.0 - n / n_data) * (1.0 + 1.0 / n)
    log_term = math.log(10.0 / delta)
    return (sd * math.sqrt(2.0 * rho * log_term / n)
            + BERNSTEIN_SERFLING_KAPPA * value_range * log_term / n)


@jit
def _whitened_distance(cv, theta, work):
    """``|L^{-1}(theta - center)|`` with ``L`` the control variates' whitening factor."""
    centred, whitened = work[0], work[1]
    for a in range(theta.shape[0]):
        centred[a] = theta[a] - cv.center[a]
    lower_solve(cv.whitening, centred, whitened)
    total = 0.0
    for a in range(theta.shape[0]):
        total += whitened[a] * whitened[a]
    return math.sqrt(total)


@jit
def ratio_range(theta, theta_prop, test, cv, inv_temperature, work):
    """A bound on the range over rows of the tempered per-row log ratios ``lambda_i``,
    without reading the data.

    Without control variates: ``2 L |theta' - theta|`` from the per-row Lipschitz constant
    ``L``. With them, ``lambda_i`` is the change of the row's Taylor remainder
    ``r_i = l_i - q_i``, and ``|r_i(t)| <= M3 |x_i . (t - c)|^3 / 6 <= M3 R^3 |t - c|_*^3 / 6``
    (``|.|_*`` the whitened norm, ``R`` the largest whitened row norm, ``M3`` a bound on the
    third derivative along the segment), so the range is at most twice the sum of the two
    remainders. Either is multiplied by the largest sample weight and ``1/K``.
    """
    scale = test.params[PARAM.max_weight] * inv_temperature
    if not cv.use:
        distance = 0.0
        for k in range(theta.shape[0]):
            distance += (theta_prop[k] - theta[k]) ** 2
        return 2.0 * test.params[PARAM.lipschitz] * math.sqrt(distance) * scale
    near = _whitened_distance(cv, theta, work)
    far = _whitened_distance(cv, theta_prop, work)
    m3 = cv.m3_scale * math.exp(cv.m3_rate * (cv.eta_center_max + cv.radius * max(near, far)))
    return 2.0 * m3 / 6.0 * cv.radius**3 * (near**3 + far**3) * scale


@jit
def confidence_decide(context, theta, theta_prop, log_psi, delta, rng):
    """Accept iff the mean of the tempered per-row log ratios ``lambda_i`` exceeds
    ``psi = (log u - log_psi) / N``, decided when a concentration bound separates them.
    See ``decisions.py`` for the shared signature.

    Round ``k`` grows the batch geometrically (``batch_size``, then ``ceil(gamma n)``) and
    stops when ``|mean - psi| >= c_k`` (the Bernstein-Serfling half-width at level
    ``delta_k = delta (p - 1) / (p k^p)``, so the levels sum to at most ``delta``) or when all
    N rows are read. The range of ``lambda_i`` comes from :func:`ratio_range`, never from a
    scan of the data.
    """
    spec, inv_temperature, test, cv, workspace, pool, scratch = context
    n_data = scratch.shape[0]
    batch_size = int(test.params[PARAM.batch_size])
    delta_level = test.params[PARAM.delta]
    gamma, p = test.params[PARAM.gamma], test.params[PARAM.p]
    value_range = ratio_range(theta, theta_prop, test, cv, inv_temperature, workspace[1])
    psi = (math.log(rng.random()) - log_psi) / n_data
    sums = np.zeros(3)
    count = integer(0)  # one compilation of grow_batch, not one more for 0
    target = min(batch_size, n_data)
    round_index = 0
    while True:
        round_index += 1
        outcome, count, mean, sample_variance = grow_batch(
            spec, theta, theta_prop, cv, inv_temperature, pool, scratch, count,
            target - count, rng, sums, workspace[0])
        if outcome != BATCH_GROWN:
            return early_outcome(outcome, count)
        if count == n_data:
            break
        delta_k = delta_level * (p - 1.0) / (p * round_index**p)
        sd = math.sqrt(sample_variance * (count - 1.0) / count)
        if abs(mean - psi) >= bernstein_serfling_bound(count, n_data, sd, value_range, delta_k):
            break
        target = min(n_data, max(count + 1, int(math.ceil(gamma * count))))
    return mean > psi, count, STATUS_OK


@decision_op
def confidence_op(context, theta, theta_prop, log_psi, delta, rng):
    """:func:`confidence_decide`, compiled on its own."""
    return confidence_decide(context_view(context), theta, theta_prop, log_psi, delta, rng)

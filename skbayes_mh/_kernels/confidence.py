"""The adaptive subsampling test of Bardenet, Doucet and Holmes ("Towards scaling up Markov
chain Monte Carlo: an adaptive subsampling approach", ICML 2014), with the empirical
Bernstein-Serfling bound of Bardenet and Maillard (Bernoulli 2015).

Packed ``params``: ``[batch_size, delta, gamma, p, lipschitz]``.
"""
import math

import numpy as np

from ._common import BATCH_GROWN, batch_mean_variance, early_outcome, grow_batch
from ._jit import DECIDE_SIGNATURE, F8, I8, STATUS_OK, jit

#: kappa = 7/3 + 3/sqrt(2) of the empirical Bernstein-Serfling bound (Bardenet and Maillard
#: 2015, Theorem 3).
BERNSTEIN_SERFLING_KAPPA = 7.0 / 3.0 + 3.0 / math.sqrt(2.0)


@jit(F8(I8, I8, F8, F8, F8))
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


@jit(DECIDE_SIGNATURE)
def confidence_decide(loglik, data, theta, theta_prop, log_psi, inv_temperature, loglik_sum,
                      params, correction_support, correction_cdf, index_pool, scratch, rng):
    """Accept iff the mean of ``lambda_i = (l_i(theta') - l_i(theta)) / K`` exceeds
    ``psi = (log u - log_psi) / N``, decided when a concentration bound separates them.

    Round ``k`` grows the batch geometrically (``batch_size``, then ``ceil(gamma n)``) and
    stops when ``|mean - psi| >= c_k`` (the Bernstein-Serfling half-width at level
    ``delta_k = delta (p - 1) / (p k^p)``, so the levels sum to at most ``delta``) or when all
    N rows are read. The range of ``lambda_i`` is ``2 L ||theta' - theta|| / K`` from the
    model's Lipschitz constant ``L`` (``|l_i(a) - l_i(b)| <= L ||a - b||`` for every i),
    never from a scan of the data. See ``_jit.DECIDE_SIGNATURE``.
    """
    n_data = data.shape[0]
    batch_size = int(params[0])
    delta, gamma, p, lipschitz = params[1], params[2], params[3], params[4]
    distance = 0.0
    for k in range(theta.shape[0]):
        distance += (theta_prop[k] - theta[k]) ** 2
    value_range = 2.0 * lipschitz * math.sqrt(distance) * inv_temperature
    psi = (math.log(rng.random()) - log_psi) / n_data
    sums = np.zeros(3)
    count = 0
    target = min(batch_size, n_data)
    round_index = 0
    while True:
        round_index += 1
        outcome, count = grow_batch(loglik, data, theta, theta_prop, inv_temperature, index_pool,
                                    scratch, count, target - count, rng, sums)
        if outcome != BATCH_GROWN:
            return early_outcome(outcome, count)
        mean, sample_variance = batch_mean_variance(sums, count)
        if count == n_data:
            break
        delta_k = delta * (p - 1.0) / (p * round_index**p)
        sd = math.sqrt(sample_variance * (count - 1.0) / count)
        if abs(mean - psi) >= bernstein_serfling_bound(count, n_data, sd, value_range, delta_k):
            break
        target = min(n_data, max(count + 1, int(math.ceil(gamma * count))))
    return mean > psi, count, math.nan, STATUS_OK

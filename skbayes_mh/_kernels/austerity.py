"""The approximate Metropolis-Hastings test of Korattikara, Chen and Welling, "Austerity in
MCMC Land: Cutting the Metropolis-Hastings Budget" (ICML 2014, Algorithm 1): a sequential
t-test of "the mean log-likelihood ratio exceeds mu0" on growing random minibatches.

Packed ``params``: ``[batch_size, epsilon]``.
"""
import math

import numpy as np

from ._common import BATCH_GROWN, batch_mean_variance, early_outcome, grow_batch
from ._jit import DECIDE_SIGNATURE, STATUS_OK, jit
from .special import student_t_sf


@jit(DECIDE_SIGNATURE)
def austerity_decide(loglik, data, theta, theta_prop, log_psi, inv_temperature, loglik_sum,
                     params, correction_support, correction_cdf, index_pool, scratch, rng):
    """Accept iff the mean of ``lambda_i = (l_i(theta') - l_i(theta)) / K`` exceeds
    ``mu0 = (log u - log_psi) / N``, decided on a minibatch as soon as a t-test is confident.

    With ``n`` rows: ``t = (mean - mu0) / s`` where ``s = (S_n / sqrt(n)) sqrt(1 - (n-1)/(N-1))``
    (sample sd ``S_n`` and the finite-population correction); decide when the Student-t tail
    ``P(T_{n-1} > |t|)`` falls below ``epsilon``, else add ``batch_size`` rows. At ``n = N``
    the decision is the exact Metropolis-Hastings test. See ``_jit.DECIDE_SIGNATURE``.
    """
    n_data = data.shape[0]
    batch_size = int(params[0])
    epsilon = params[1]
    mu0 = (math.log(rng.random()) - log_psi) / n_data
    sums = np.zeros(3)
    count = 0
    while True:
        outcome, count = grow_batch(loglik, data, theta, theta_prop, inv_temperature, index_pool,
                                    scratch, count, min(batch_size, n_data - count), rng, sums)
        if outcome != BATCH_GROWN:
            return early_outcome(outcome, count)
        mean, sample_variance = batch_mean_variance(sums, count)
        if count == n_data:
            break
        if count >= 2:
            s = math.sqrt(sample_variance / count * (1.0 - (count - 1.0) / (n_data - 1.0)))
            if s == 0.0 or student_t_sf(abs(mean - mu0) / s, count - 1.0) < epsilon:
                break
    return mean > mu0, count, math.nan, STATUS_OK

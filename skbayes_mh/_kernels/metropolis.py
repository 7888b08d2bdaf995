"""The exact Metropolis-Hastings test on the full data: accept with probability
``min(1, exp(Delta))``."""
import math

from ._common import exact_log_ratio
from ._jit import DECIDE_SIGNATURE, STATUS_OK, jit


@jit(DECIDE_SIGNATURE)
def metropolis_decide(loglik, data, theta, theta_prop, log_psi, inv_temperature, loglik_sum,
                      params, correction_support, correction_cdf, index_pool, scratch, rng):
    """Accept iff ``log(u) < Delta`` with ``u ~ U(0, 1)``. See ``_jit.DECIDE_SIGNATURE``."""
    delta, n_read, loglik_sum_prop, status = exact_log_ratio(
        loglik, data, theta, theta_prop, log_psi, inv_temperature, loglik_sum)
    if status != STATUS_OK:
        return False, n_read, math.nan, status
    is_accepted = math.log(rng.random()) < delta
    return is_accepted, n_read, loglik_sum_prop, STATUS_OK

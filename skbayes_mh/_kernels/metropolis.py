"""The exact Metropolis-Hastings test: accept with probability ``min(1, exp(Delta))``."""
import math

from ._jit import STATUS_OK, jit


@jit(inline="always")
def metropolis_decide(spec, theta, theta_prop, log_psi, delta, inv_temperature, test, cv,
                      workspace, pool, scratch, rng):
    """Accept iff ``log(u) < Delta`` with ``u ~ U(0, 1)``; ``Delta`` is the full-data log
    ratio the sampler computed. See ``mh.py`` for the shared signature."""
    return math.log(rng.random()) < delta, 0, STATUS_OK

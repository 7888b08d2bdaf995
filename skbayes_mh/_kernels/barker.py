"""The exact Barker test: accept with probability ``S(Delta) = 1 / (1 + exp(-Delta))``."""
import math

from ._common import log_sigmoid
from ._jit import STATUS_OK, jit


@jit(inline="always")
def barker_decide(spec, theta, theta_prop, log_psi, delta, inv_temperature, test, cv,
                  workspace, pool, scratch, rng):
    """Accept iff ``log(u) < log S(Delta)``; ``Delta`` is the full-data log ratio the sampler
    computed. See ``mh.py`` for the shared signature."""
    return math.log(rng.random()) < log_sigmoid(delta), 0, STATUS_OK

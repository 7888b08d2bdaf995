"""The exact Barker test: accept with probability ``S(Delta) = 1 / (1 + exp(-Delta))``."""
import math

from ._common import log_sigmoid
from ._jit import STATUS_OK, jit
from .decisions import decision_op


@jit(inline="always")
def barker_decide(context, theta, theta_prop, log_psi, delta, rng):
    """Accept iff ``log(u) < log S(Delta)``; ``Delta`` is the full-data log ratio the sampler
    computed. See ``decisions.py`` for the shared signature."""
    return math.log(rng.random()) < log_sigmoid(delta), 0, STATUS_OK


@decision_op
def barker_op(context, theta, theta_prop, log_psi, delta, rng):
    """:func:`barker_decide` (``context`` unread, so not viewed)."""
    return barker_decide(context, theta, theta_prop, log_psi, delta, rng)

"""The exact Metropolis-Hastings test: accept with probability ``min(1, exp(Delta))``."""
import math

from ._jit import STATUS_OK, jit
from .decisions import decision_op


@jit(inline="always")
def metropolis_decide(context, theta, theta_prop, log_psi, delta, rng):
    """Accept iff ``log(u) < Delta`` with ``u ~ U(0, 1)``; ``Delta`` is the full-data log
    ratio the sampler computed. See ``decisions.py`` for the shared signature."""
    return math.log(rng.random()) < delta, 0, STATUS_OK


@decision_op
def metropolis_op(context, theta, theta_prop, log_psi, delta, rng):
    """:func:`metropolis_decide` (``context`` unread, so not viewed)."""
    return metropolis_decide(context, theta, theta_prop, log_psi, delta, rng)

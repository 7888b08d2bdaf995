"""Built-in priors, evaluated natively in the chain loop.

A user's ``log_prior(theta)`` has a fixed signature and so cannot carry hyper-parameters
(such as an estimator's ``prior_scale``) without compiling a new function per value; the
estimators use these instead, with their scales passed as data.

``kind`` is ``NO_PRIOR``, ``GAUSSIAN`` or ``LAPLACE``, optionally ``| LOG_SCALE``: then the
last coordinate is the log of a scale ``s`` (a noise standard deviation) with an
exponential prior of mean ``scales[-1]`` on ``s``, i.e. ``log p = eta - exp(eta) / mean``
in ``eta = log s`` (Jacobian included), and the base prior covers the other coordinates.
"""
import math

from ._jit import F8, I8, VECTOR, jit

NO_PRIOR = 0
#: ``theta_k ~ N(0, scales_k^2)``.
GAUSSIAN = 1
#: ``theta_k ~ Laplace(0, scales_k)``.
LAPLACE = 2
#: Flag: the last coordinate is ``log s`` with ``s ~ Exponential(mean=scales[-1])``.
LOG_SCALE = 4


@jit
def log_prior_and_gradient(kind, scales, theta, want_grad, gradient):
    """Log density of the built-in prior ``kind`` at ``theta``, up to a constant; with
    ``want_grad``, its gradient is added to ``gradient`` (Laplace: the sign, 0 at 0)."""
    total = 0.0
    d = theta.shape[0]
    if kind & LOG_SCALE:
        d -= 1
        eta = theta[d]
        total += eta - math.exp(eta) / scales[d]
        if want_grad:
            gradient[d] += 1.0 - math.exp(eta) / scales[d]
    base = kind & 3
    for k in range(d):
        if base == GAUSSIAN:
            total -= 0.5 * (theta[k] / scales[k]) ** 2
            if want_grad:
                gradient[k] -= theta[k] / scales[k] ** 2
        elif base == LAPLACE:
            total -= math.fabs(theta[k]) / scales[k]
            if want_grad and theta[k] != 0.0:
                gradient[k] -= math.copysign(1.0, theta[k]) / scales[k]
    return total


@jit(F8(I8, VECTOR, VECTOR))
def builtin_log_prior(kind, scales, theta):
    """Log density of the built-in prior ``kind`` at ``theta``, up to a constant."""
    return log_prior_and_gradient(kind, scales, theta, False, theta)

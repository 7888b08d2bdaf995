"""Built-in priors, evaluated natively in the chain loop.

A user's ``log_prior(theta)`` has a fixed signature and so cannot carry hyper-parameters
(such as an estimator's ``prior_scale``) without compiling a new function per value; the
estimators use these instead, with their scales passed as data.
"""
import math

from ._jit import F8, I8, VECTOR, jit

NO_PRIOR = 0
#: ``theta_k ~ N(0, scales_k^2)``.
GAUSSIAN = 1
#: ``theta_k ~ Laplace(0, scales_k)``.
LAPLACE = 2


@jit(F8(I8, VECTOR, VECTOR))
def builtin_log_prior(kind, scales, theta):
    """Log density of the built-in prior ``kind`` at ``theta``, up to a constant."""
    total = 0.0
    if kind == GAUSSIAN:
        for k in range(theta.shape[0]):
            total -= 0.5 * (theta[k] / scales[k]) ** 2
    elif kind == LAPLACE:
        for k in range(theta.shape[0]):
            total -= math.fabs(theta[k]) / scales[k]
    return total

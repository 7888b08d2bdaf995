"""Log-gamma, digamma and trigamma in numba, for the families whose likelihood holds a
Gamma function of a sampled parameter (the negative binomial's size, the Gamma's shape):
the functions, and the tails of their Stirling series, from which differences that would
cancel are taken."""
import math

from .._kernels._jit import jit

#: Below this argument the digamma and trigamma series are first shifted up by recurrence;
#: at 6 their asymptotic series (to the x^-10 term) are accurate to about 1e-14.
_SERIES_FROM = 6.0


@jit
def digamma(x):
    """``psi(x) = d log Gamma(x) / dx`` for ``x > 0``."""
    shift = 0.0
    while x < _SERIES_FROM:
        shift -= 1.0 / x
        x += 1.0
    inv = 1.0 / (x * x)
    series = inv * (1.0 / 12 - inv * (1.0 / 120 - inv * (1.0 / 252 - inv * (1.0 / 240
                                                                             - inv / 132))))
    return shift + math.log(x) - 0.5 / x - series


@jit
def trigamma(x):
    """``psi'(x)`` for ``x > 0``."""
    shift = 0.0
    while x < _SERIES_FROM:
        shift += 1.0 / (x * x)
        x += 1.0
    inv = 1.0 / (x * x)
    series = (1.0 / x + 0.5 * inv
              + inv / x * (1.0 / 6 - inv * (1.0 / 30 - inv * (1.0 / 42 - inv * (1.0 / 30
                                                                                 - inv * 5.0 / 66)))))
    return shift + series


#: From this argument on, the Stirling series below are accurate to about 1e-16: the
#: families take differences of log-gamma, digamma and trigamma from them (at ``r + y`` and
#: ``r`` for the negative binomial, against ``log k`` for the Gamma) so that they stay
#: accurate as the argument grows, instead of cancelling.
STIRLING_FROM = 10.0


@jit
def stirling_tail(z):
    """``lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2)`` for ``z >= 10``."""
    inv = 1.0 / z
    inv2 = inv * inv
    return inv * (1.0 / 12 - inv2 * (1.0 / 360 - inv2 * (1.0 / 1260 - inv2 / 1680)))


@jit
def digamma_tail(z):
    """``psi(z) - (log z - 1 / (2 z))`` for ``z >= 10``."""
    inv2 = 1.0 / (z * z)
    return -inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 / 240)))


@jit
def trigamma_tail(z):
    """``psi'(z) - (1 / z + 1 / (2 z^2))`` for ``z >= 10``."""
    inv = 1.0 / z
    inv2 = inv * inv
    return inv2 * inv * (1.0 / 6 - inv2 * (1.0 / 30 - inv2 * (1.0 / 42 - inv2 / 30)))

"""Binary probit regression: ``p(y_i = 1 | x_i) = Phi(x_i . w + b)`` with ``Phi`` the standard
normal CDF. Its Firefly bound is the tangent quadratic of ``log Phi`` with curvature 1 (its
second derivative lies in ``(-1, 0)``)."""
import math

import numpy as np
from scipy.special import log_ndtr, ndtr

from .._kernels._jit import jit
from .._kernels.linear import link_rows_views
from ._base import BinaryModel

_SQRT_HALF = math.sqrt(0.5)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
#: Below this ``s`` the normal CDF is taken from the continued fraction of the Mills ratio
#: (``erfc`` keeps full relative precision down to about -37, and underflows past -38).
_MILLS_FROM = -30.0
#: Terms of that continued fraction: at ``|s| >= 30`` forty terms reach rounding error.
_MILLS_TERMS = 40
#: ``max |d^3 log Phi(s) / ds^3|`` (about 0.2957, at ``s`` near 1), rounded up: the bound the
#: confidence sampler's range bound needs with control variates.
PROBIT_THIRD_DERIVATIVE = 0.3


@jit
def log_ndtr_and_ratio(s):
    """``(log Phi(s), phi(s) / Phi(s))``, accurate in both tails."""
    if s >= _MILLS_FROM:
        if s > 0.0:
            upper = 0.5 * math.erfc(s * _SQRT_HALF)  # 1 - Phi(s), without cancellation
            log_cdf = math.log1p(-upper)
            cdf = 1.0 - upper
        else:
            cdf = 0.5 * math.erfc(-s * _SQRT_HALF)
            log_cdf = math.log(cdf)
        return log_cdf, math.exp(-0.5 * s * s - _LOG_SQRT_2PI) / cdf
    # Mills ratio R(x) = (1 - Phi(x)) / phi(x) for x = -s, by its continued fraction
    # x + 1 / (x + 2 / (x + 3 / ...)), evaluated from the tail.
    x = -s
    tail = x
    for k in range(_MILLS_TERMS, 0, -1):
        tail = x + k / tail
    mills = 1.0 / tail
    return -0.5 * s * s - _LOG_SQRT_2PI + math.log(mills), 1.0 / mills


@jit
def probit_link(u, y, params, order, d1, d2):
    """``log Phi(s)`` with ``s = (2 y - 1) eta`` (``y`` in {0, 1}; ``eta = u[0]``), and its
    derivatives ``(2 y - 1) lambda(s)`` and ``-lambda(s) (s + lambda(s))`` with ``lambda``
    the inverse Mills ratio ``phi / Phi``."""
    sign = 2.0 * y - 1.0
    s = sign * u[0]
    value, ratio = log_ndtr_and_ratio(s)
    if order >= 1:
        d1[0] = sign * ratio
        if order >= 2:
            d2[0, 0] = -ratio * (s + ratio)
    return value


@jit
def probit_bound(u_tangent, y, params, bound_params, linear, curvature):
    """``log Phi(s) >= log Phi(t) + lambda(t) (s - t) - (s - t)^2 / 2``, tight at ``s = t``:
    ``t`` is the tangent parameters' ``s`` (``bound_params[0] = 1``) or ``bound_params[1]``
    (untuned). As a quadratic in ``eta`` (``s = (2y - 1) eta``): ``c = log Phi(t) - lambda t -
    t^2 / 2``, ``l = (2y - 1) (lambda + t)``, ``A = 1``."""
    sign = 2.0 * y - 1.0
    t = sign * u_tangent[0] if bound_params[0] > 0.0 else bound_params[1]
    log_cdf, ratio = log_ndtr_and_ratio(t)
    linear[0] = sign * (ratio + t)
    curvature[0, 0] = 1.0
    return log_cdf - ratio * t - 0.5 * t * t, 0.0, 0.0


@jit
def probit_link_rows(U, y, start, count, params, order, values, slopes, curvatures):
    """:func:`probit_link` over a block of rows (``specs.LINK_ROWS``), calling it directly."""
    U, params, slopes, curvatures = link_rows_views(U, params, slopes, curvatures)
    last = curvatures.shape[0] - 1
    for r in range(count):
        hessian = curvatures[min(r, last)]
        values[r] = probit_link(U[r], y[start + r], params, order, slopes[r], hessian)


class ProbitModel(BinaryModel):
    """Binary probit regression (labels 0 and 1)."""

    name = "probit"
    inverse_link = staticmethod(ndtr)
    log_inverse_link = staticmethod(log_ndtr)

    @staticmethod
    def inverse_link_curvature(eta):
        """``Phi(eta)`` and ``-eta phi(eta)``."""
        return ndtr(eta), -eta * np.exp(-0.5 * eta * eta) / np.sqrt(2.0 * np.pi)

    @staticmethod
    def inverse_link_third_derivative(eta):
        """``(eta^2 - 1) phi(eta)``."""
        return (eta * eta - 1.0) * np.exp(-0.5 * eta * eta) / np.sqrt(2.0 * np.pi)

    @staticmethod
    def inverse_link_fourth_derivative(eta):
        """``eta (3 - eta^2) phi(eta)``."""
        return eta * (3.0 - eta * eta) * np.exp(-0.5 * eta * eta) / np.sqrt(2.0 * np.pi)
    link = probit_link
    link_rows = probit_link_rows
    bound_coefficients = probit_bound
    third_derivative = (PROBIT_THIRD_DERIVATIVE, 0.0)

    def firefly_bound_params(self, bound):
        """Tight at the MAP, or (untuned) at ``s = 0`` for every row."""
        return np.array([1.0, 0.0]) if bound == "map" else np.array([0.0, 0.0])

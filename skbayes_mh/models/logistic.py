"""Binary logistic regression: ``p(y_i = 1 | x_i) = S(x_i . w + b)`` with ``S`` the logistic
function; its Firefly bound is Jaakkola and Jordan's."""
import math

import numpy as np
from scipy.special import expit, log_expit

from .._kernels._common import log_sigmoid
from .._kernels._jit import jit
from .._kernels.linear import link_rows_views
from ._base import BinaryModel

#: The paper's untuned Jaakkola-Jordan parameter (Maclaurin and Adams 2014).
UNTUNED_XI = 1.5
#: ``max |d^3/d eta^3 log S(+-eta)| = max S (1 - S) |1 - 2 S| = 1 / (6 sqrt 3)``.
LOGISTIC_THIRD_DERIVATIVE = 1.0 / (6.0 * math.sqrt(3.0))


@jit
def logistic_link(u, y, params, order, d1, d2):
    """``y log S(eta) + (1 - y) log S(-eta)`` with ``eta = u[0]``, and its derivatives
    ``y - S(eta)`` and ``-S(eta) S(-eta)``: one ``exp`` and one ``log1p`` for all three."""
    eta = u[0]
    small = math.exp(-abs(eta))  # in (0, 1]: no overflow
    log_one_plus = math.log1p(small)
    # log S(eta) and log S(-eta): -log(1 + e^-|eta|), less |eta| on the side of its sign.
    log_s = -log_one_plus - (0.0 if eta >= 0.0 else -eta)
    log_s_minus = -log_one_plus - (eta if eta >= 0.0 else 0.0)
    if y == 1.0:
        value = log_s
    elif y == 0.0:
        value = log_s_minus
    else:
        value = y * log_s + (1.0 - y) * log_s_minus
    if order >= 1:
        p = 1.0 / (1.0 + small) if eta >= 0.0 else small / (1.0 + small)  # S(eta)
        d1[0] = y - p
        if order >= 2:
            d2[0, 0] = -p * (1.0 - p) if eta < 0.0 else -small / ((1.0 + small) * (1.0 + small))
    return value


@jit
def jaakkola_jordan_lambda(xi):
    """``lambda(xi) = tanh(xi / 2) / (4 xi)``, with its limit ``1/8 - xi^2 / 96`` near 0 (where
    the formula is 0/0)."""
    xi = abs(xi)
    if xi < 1e-6:
        return 0.125 - xi * xi / 96.0
    return math.tanh(0.5 * xi) / (4.0 * xi)


@jit
def logistic_bound(u_tangent, y, params, bound_params, linear, curvature):
    """Jaakkola-Jordan: ``log S(s) >= log S(xi) + (s - xi) / 2 - lambda(xi) (s^2 - xi^2)`` with
    ``s = (2y - 1) eta``, tight at ``s = +-xi``; ``xi = |eta_t|`` (``bound_params[0] = 1``,
    tight at the tangent parameters) or ``bound_params[1]`` (untuned). As a quadratic in
    ``eta``: ``c = log S(xi) - xi / 2 + lambda xi^2``, ``l = (2y - 1) / 2``,
    ``A = 2 lambda``."""
    xi = abs(u_tangent[0]) if bound_params[0] > 0.0 else bound_params[1]
    lam = jaakkola_jordan_lambda(xi)
    linear[0] = 0.5 * (2.0 * y - 1.0)
    curvature[0, 0] = 2.0 * lam
    return log_sigmoid(xi) - 0.5 * xi + lam * xi * xi, 0.0, 0.0


@jit
def logistic_link_rows(U, y, start, count, params, order, values, slopes, curvatures):
    """:func:`logistic_link` over a block of rows (``specs.LINK_ROWS``), calling it directly."""
    U, params, slopes, curvatures = link_rows_views(U, params, slopes, curvatures)
    last = curvatures.shape[0] - 1
    for r in range(count):
        hessian = curvatures[min(r, last)]
        values[r] = logistic_link(U[r], y[start + r], params, order, slopes[r], hessian)


def sigmoid(eta, out=None):
    """The logistic function ``1 / (1 + exp(-eta))`` of an array (or a number) through
    NumPy's vectorised ``exp``, for the predictions' every-draw path: SciPy's ``expit``
    evaluates ``exp`` an element at a time (5.5 ns an element against about 2 ns here).
    Within 4e-16 of ``expit``, relatively; below ``eta = -709`` ``exp(-eta)`` overflows
    and the value is 0, where ``expit``'s is below 1e-308. ``out``: an array of ``eta``'s
    shape to write the values in (as a ufunc's). A float32 ``eta`` gives float32 values
    (NumPy's float32 ``exp`` is vectorised where its float64 one is not: 1.4 against 5.2
    ns an element on AVX2), within 2.5e-7 of the float64 values of the same ``eta`` in
    float64 (``|eta| sigma'(eta) <= 0.224`` times float32's 6e-8 for its rounding, and a
    few of float32's roundings of ``sigma`` itself)."""
    eta = np.asarray(eta)
    if eta.dtype != np.float32:
        eta = eta.astype(np.float64, copy=False)
    values = np.empty_like(eta) if out is None else out
    np.negative(eta, out=values)
    with np.errstate(over="ignore"):
        np.exp(values, out=values)
    values += 1.0
    np.reciprocal(values, out=values)
    return values[()] if values.ndim == 0 else values


class LogisticModel(BinaryModel):
    """Binary logistic regression (labels 0 and 1)."""

    name = "logistic"
    inverse_link = staticmethod(sigmoid)
    single_precision_probabilities = True
    log_inverse_link = staticmethod(log_expit)

    @staticmethod
    def inverse_link_curvature(eta):
        """``s = expit(eta)`` and ``s (1 - s) (1 - 2 s)``."""
        s = expit(eta)
        return s, s * (1.0 - s) * (1.0 - 2.0 * s)

    @staticmethod
    def inverse_link_third_derivative(eta):
        """``s (1 - s) (1 - 6 s + 6 s^2)`` for ``s = expit(eta)``."""
        s = expit(eta)
        return s * (1.0 - s) * (1.0 - 6.0 * s + 6.0 * s * s)

    @staticmethod
    def inverse_link_fourth_derivative(eta):
        """``s (1 - s) (1 - 2 s) (1 - 12 s + 12 s^2)`` for ``s = expit(eta)``."""
        s = expit(eta)
        return s * (1.0 - s) * (1.0 - 2.0 * s) * (1.0 - 12.0 * s + 12.0 * s * s)
    link = logistic_link
    link_rows = logistic_link_rows
    bound_coefficients = logistic_bound
    third_derivative = (LOGISTIC_THIRD_DERIVATIVE, 0.0)

    def lipschitz(self, max_row_norm):
        """``|l_i(a) - l_i(b)| <= |[x_i, 1] . (a - b)|``: the log-sigmoid is 1-Lipschitz."""
        return float(max_row_norm)

    def firefly_bound_params(self, bound):
        return np.array([1.0, 0.0]) if bound == "map" else np.array([0.0, UNTUNED_XI])

"""The MAP of a posterior and the Laplace approximation at it, for any model that can
evaluate its negative log posterior with derivatives in full-data passes."""
import numpy as np
from scipy.optimize import minimize

#: The Laplace approximation (and so the proposal shape and the control variates' Hessian)
#: is a full covariance while that is affordable: at most this many parameters (a d x d
#: matrix is 128 MB there, and a fit holds a few) ...
FULL_COVARIANCE_MAX_DIM = 4096
#: ... and at most this many row-parameter-parameter products ``N d^2`` per full-data
#: Hessian pass (BLAS Gram matrices: about 35 GFLOP/s on two cores, so about 3 s a pass).
#: A dense proposal costs ``d^2`` per step, next to the full-data gradient's ``N d``: it
#: pays wherever the parameters are correlated. Beyond either limit: variances.
FULL_COVARIANCE_MAX_WORK = 1e11
#: Relative floor on the Laplace precision's eigenvalues (see :func:`laplace_covariance`).
EIGENVALUE_FLOOR = 1e-10
#: Newton's method stops when ``g' H^-1 g`` (twice the predicted decrease of the negative
#: log posterior; the squared distance to the optimum in posterior sd) falls below this.
NEWTON_DECREMENT = 1e-4
NEWTON_MAX_ITER = 50
#: Step halvings before Newton's method gives up on a step that does not decrease.
NEWTON_BACKTRACKS = 30


def full_covariance_affordable(n_rows, n_params):
    """Whether a full Laplace covariance is affordable for ``n_rows`` rows and ``n_params``
    parameters (:data:`FULL_COVARIANCE_MAX_DIM`, :data:`FULL_COVARIANCE_MAX_WORK`)."""
    return (n_params <= FULL_COVARIANCE_MAX_DIM
            and float(n_rows) * n_params * n_params <= FULL_COVARIANCE_MAX_WORK)


class _Cache:
    """Evaluate ``objective(theta, order)`` once per point for scipy's separate calls."""

    def __init__(self, objective, order):
        self.objective = objective
        self.order = order
        self.theta = None
        self.result = None
        self.n_passes = 0

    def __call__(self, theta):
        if self.theta is None or not np.array_equal(theta, self.theta):
            self.theta = np.array(theta)
            self.result = self.objective(self.theta, self.order)
            self.n_passes += 1
        return self.result

    def value(self, theta):
        return self(theta)[0]

    def gradient(self, theta):
        return self(theta)[1]

    def hessian(self, theta):
        return self(theta)[2]


def find_map(objective, theta0, full=True, smooth=True, max_iter=200):
    """Minimise a negative log posterior.

    Parameters
    ----------
    objective : callable ``(theta, order) -> (value, gradient, hessian)``
        ``order`` 1: value and gradient (hessian None); 2: also the Hessian, ``(d, d)`` when
        ``full`` and its diagonal ``(d,)`` otherwise.
    theta0 : ndarray of shape (d,)
    full : bool
        Use (and return) the full Hessian.
    smooth : bool
        Whether the objective is twice differentiable (a Laplace prior is not at 0): then a
        trust-region Newton method with the exact Hessian; otherwise L-BFGS.

    Returns
    -------
    theta : ndarray of shape (d,)
    hessian : ndarray of shape (d, d) or (d,)
        At ``theta`` (the diagonal when not ``full``).
    n_passes : int
        Full-data passes spent.
    """
    theta0 = np.asarray(theta0, dtype=np.float64)
    if full and smooth:
        cache = _Cache(objective, 2)
        result = minimize(cache.value, theta0, jac=cache.gradient, hess=cache.hessian,
                          method="trust-exact", options={"maxiter": max_iter, "gtol": 1e-8})
    else:
        cache = _Cache(objective, 1)
        result = minimize(cache.value, theta0, jac=cache.gradient, method="L-BFGS-B",
                          options={"maxiter": 5 * max_iter})
    theta = result.x
    hessian = objective(theta, 2)[2]
    return theta, hessian, cache.n_passes + 1


def newton_map(objective, theta0, max_iter=NEWTON_MAX_ITER):
    """Minimise a smooth, convex-near-the-optimum negative log posterior by Newton's method
    with backtracking, one full-data pass (value, gradient, Hessian) per iteration.

    It stops at an evaluated point ``theta`` from which the Newton step lands within
    ``sqrt(NEWTON_DECREMENT)`` posterior sd of the optimum (in the Laplace metric), and
    returns that step's end as the optimum without another pass. The Newton decrement
    ``lambda^2 = g' H^-1 g`` is the squared distance of ``theta`` itself; under quadratic
    convergence the next one is ``C lambda^4``, with ``C`` estimated from the last two
    decrements, so the search stops when ``lambda^2`` or, within one sd, ``C lambda^4`` is
    below ``NEWTON_DECREMENT``. On a tall data set, whose log-likelihood is nearly quadratic
    over many sd, that is two passes from a subsample's MAP.

    Returns
    -------
    theta_map : ndarray of shape (d,)
        ``theta - H^-1 g``.
    theta : ndarray of shape (d,)
        The last point evaluated, with the objective's ``value``, ``gradient`` and
        ``hessian`` there.
    value, gradient, hessian
    n_passes : int
    converged : bool
        False when the Hessian was not positive definite, a step would not decrease the
        objective, or ``max_iter`` ran out (a caller then falls back to :func:`find_map`).
    """
    theta = np.array(theta0, dtype=np.float64)
    value, gradient, hessian = objective(theta, 2)
    n_passes = 1
    previous = np.inf
    for _ in range(max_iter):
        if not np.isfinite(value):
            break
        try:
            factor = np.linalg.cholesky(0.5 * (hessian + hessian.T))
        except np.linalg.LinAlgError:
            break
        step = np.linalg.solve(factor.T, np.linalg.solve(factor, gradient))
        decrement = float(gradient @ step)
        predicted = decrement**2 / previous**2 * decrement  # C lambda^4, C = lambda^2 / prev^4
        if decrement < NEWTON_DECREMENT or (decrement < 1.0 and predicted < NEWTON_DECREMENT):
            return theta - step, theta, value, gradient, hessian, n_passes, True
        previous = decrement
        length = 1.0
        for _ in range(NEWTON_BACKTRACKS):
            trial = theta - length * step
            n_passes += 1
            try:
                trial_value, trial_gradient, trial_hessian = objective(trial, 2)
            except ValueError:  # the log-likelihood is not finite there: a shorter step
                trial_value = np.inf
            if trial_value <= value:
                break
            length *= 0.5
        else:
            break
        theta, value, gradient, hessian = trial, trial_value, trial_gradient, trial_hessian
    return theta, theta, value, gradient, hessian, n_passes, False


def laplace_covariance(hessian):
    """The inverse of a negative log posterior's Hessian (the Laplace covariance), or of its
    diagonal (variances).

    A Hessian that is not positive definite (at a saddle, or in floating point on extreme
    data) is repaired rather than inverted blindly: eigenvalues below ``EIGENVALUE_FLOOR``
    times the largest are raised to that floor, so the covariance is always a valid,
    finite proposal shape.

    Returns
    -------
    covariance : ndarray of shape (d, d) or (d,)
    repaired : bool
        Whether any eigenvalue (or diagonal entry) had to be raised.
    """
    hessian = np.asarray(hessian, dtype=np.float64)
    if hessian.ndim == 1:
        floor = EIGENVALUE_FLOOR * max(np.max(np.abs(hessian)), 1e-300)
        repaired = bool(np.any(~(hessian >= floor)))
        return 1.0 / np.maximum(np.nan_to_num(hessian, nan=floor), floor), repaired
    symmetric = 0.5 * (hessian + hessian.T)
    values, vectors = np.linalg.eigh(symmetric)
    floor = EIGENVALUE_FLOOR * max(np.max(np.abs(values)), 1e-300)
    repaired = bool(np.any(values < floor))
    values = np.maximum(values, floor)
    covariance = (vectors / values) @ vectors.T
    return 0.5 * (covariance + covariance.T), repaired

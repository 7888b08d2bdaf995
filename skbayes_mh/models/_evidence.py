"""A prior scale the data choose: the global scale of the weights' Gaussian priors that
maximises the model's evidence (type-II maximum likelihood, as scikit-learn's
``BayesianRidge`` and ``ARDRegression`` choose their precisions; MacKay 1992).

The weights ``w_j ~ N(0, (tau s_j)^2)`` (``s_j`` the prior's scales at ``tau = 1``). At a
fixed ``tau`` the Laplace approximation at the MAP ``w`` gives the evidence's derivative
in ``log tau``: ``q / tau^2 - gamma``, with ``q = sum_j (w_j / s_j)^2`` and ``gamma = m -
sum_j C_jj / (tau s_j)^2`` the number of the ``m`` weights' directions the data determine
(``C`` the Laplace covariance). The evidence is largest where ``tau^2 = q / gamma``: a
fixed point, each step a MAP search started from the last one's MAP.
"""
import numpy as np

#: Iterations of the fixed point at most ...
MAX_ITERATIONS = 30
#: ... stopping once ``log tau`` moves by less than this.
LOG_SCALE_TOLERANCE = 0.005
#: ``tau`` stays within this factor of 1 either way (data that say nothing of the weights
#: would otherwise drive it toward 0).
MAX_SCALE_RATIO = 1e3
#: The Laplace covariance of each step is full up to this many parameters (its diagonal
#: is what ``gamma`` reads); beyond, the diagonal Laplace approximation's variances, which
#: are smaller, so that ``gamma`` comes out larger and ``tau`` a little smaller.
FULL_MAX_PARAMS = 1024


def evidence_scale(model, data, prior, inv_temperature=1.0):
    """The scale of the weights' priors that maximises the evidence of ``model`` on
    ``data`` (see the module's docstring).

    Parameters
    ----------
    model : LinearModel
    data : LinearData
    prior : BuiltinPrior
        Gaussian; its weights' scales are those at ``tau = 1``.
    inv_temperature : float

    Returns
    -------
    scale : float
        ``tau``: multiply the weights' scales by it
        (:meth:`~skbayes_mh.models._prior.BuiltinPrior.with_weight_scale`).
    n_passes : float
        Full-data passes the MAP searches read.
    """
    weights = prior.weight_mask()
    m = int(weights.sum())
    if m == 0:
        return 1.0, 0.0
    unit = prior.scales[weights]
    full = model.n_params(data) <= FULL_MAX_PARAMS
    log_scale, theta, n_passes = 0.0, None, 0.0
    for _ in range(MAX_ITERATIONS):
        tau = np.exp(log_scale)
        try:
            theta, covariance, passes, _ = model.laplace(
                data, prior.with_weight_scale(tau), inv_temperature, full, theta0=theta)
        except ValueError as error:
            raise ValueError(
                f"prior_scale='auto' could not choose the weights' scale: the MAP search at "
                f"scale {tau:.3g} failed ({error}) Give prior_scale a number.") from error
        n_passes += passes
        variances = np.diag(covariance) if np.ndim(covariance) == 2 else covariance
        z = theta[weights] / unit
        gamma = m - float(np.sum(variances[weights] / unit**2)) / tau**2
        gamma = min(max(gamma, 1e-3), float(m))
        updated = 0.5 * np.log(max(float(z @ z), 1e-300) / gamma)
        updated = float(np.clip(updated, log_scale - 1.0, log_scale + 1.0))
        updated = float(np.clip(updated, -np.log(MAX_SCALE_RATIO), np.log(MAX_SCALE_RATIO)))
        moved, log_scale = abs(updated - log_scale), updated
        if moved < LOG_SCALE_TOLERANCE:
            break
    return float(np.exp(log_scale)), n_passes

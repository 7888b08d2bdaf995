"""Firefly Monte Carlo outside numba: the collapsible bounds of each model (per-datum
parameters and the collapsed sufficient statistics), and one chain with burn-in tuning."""
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_expit, logsumexp, softmax

from ._adaptation import N_WINDOWS, run_timed
from ._chains import chain_generator
from ._kernels.firefly import (LOGISTIC, ROBUST, SOFTMAX, firefly_iterate,
                               initialise_brightness, joint)
from .acceptance.firefly import RESAMPLES, UPDATES

#: The paper's untuned Jaakkola-Jordan parameter for logistic regression.
UNTUNED_XI = 1.5
#: Untuned Student-t bounds touch the likelihood where the residual is one scale.
UNTUNED_STANDARDISED_RESIDUAL = 1.0


@dataclass
class FireflyProblem:
    """A model with collapsible bounds, ready for the Firefly kernel.

    Attributes
    ----------
    model : int
        ``LOGISTIC``, ``SOFTMAX`` or ``ROBUST`` (``_kernels/firefly.py``).
    X : ndarray of shape (N, D)
        Design, intercept column included.
    y : ndarray of shape (N,)
        Labels: 0/1, or the class index.
    n_classes : int
        ``K`` (1 for logistic and Student-t regression: one linear predictor).
    bound : ndarray of shape (N, P)
        Per-datum bound parameters.
    quad, lin, const : ndarray (d, d), ndarray (d,), float
        ``sum_n log B_n(theta) = -theta' quad theta / 2 + lin . theta + const``.
    prior_kind : int, prior_scales : ndarray of shape (d,)
    inv_temperature : float
    theta_map : ndarray of shape (d,)
    covariance : ndarray of shape (d, d)
        Laplace covariance at the MAP: the proposals' preconditioner.
    """

    model: int
    X: np.ndarray
    y: np.ndarray
    n_classes: int
    bound: np.ndarray
    quad: np.ndarray
    lin: np.ndarray
    const: float
    prior_kind: int
    prior_scales: np.ndarray
    inv_temperature: float
    theta_map: np.ndarray
    covariance: np.ndarray


def jaakkola_jordan_lambda(xi):
    """``lambda(xi) = tanh(xi / 2) / (4 xi)``, with its limit 1/8 at ``xi = 0``."""
    xi = np.abs(np.asarray(xi, dtype=np.float64))
    small = xi < 1e-6
    safe = np.where(small, 1.0, xi)
    return np.where(small, 0.125 - xi**2 / 96.0, np.tanh(safe / 2.0) / (4.0 * safe))


def logistic_bound(design, y, xi):
    """Jaakkola-Jordan bounds ``log S(s) >= log S(xi) + (s - xi) / 2 - lambda(xi) (s^2 - xi^2)``
    with ``s = (2 y - 1) x . theta``, tight at ``s = +-xi``.

    Returns
    -------
    bound : (N, 2) ``[lambda, log S(xi) - xi / 2 + lambda xi^2]``
    quad, lin, const : the collapsed sum ``-theta' quad theta / 2 + lin . theta + const``:
        ``quad = 2 sum lambda_n x_n x_n'``, ``lin = sum (2 y_n - 1) x_n / 2``.
    """
    xi = np.broadcast_to(np.asarray(xi, dtype=np.float64), y.shape)
    lam = jaakkola_jordan_lambda(xi)
    constant = log_expit(xi) - xi / 2.0 + lam * xi**2
    quad = 2.0 * (design.T * lam) @ design
    lin = 0.5 * design.T @ (2.0 * y - 1.0)
    return np.column_stack([lam, constant]), quad, lin, float(constant.sum())


def softmax_curvature(psi, kind):
    """Per-datum curvature ``C_n`` (K x K) of a quadratic upper bound on ``logsumexp``,
    valid for every ``eta`` and tight at ``psi``:
    ``f(eta) <= f(psi) + (eta - psi) . softmax(psi) + (eta - psi)' C_n (eta - psi) / 2``.

    ``kind="bohning"``: Bohning's ``(I - 11' / K) / 2`` for every datum, an upper bound on
    the Hessian of ``f`` everywhere. ``kind="jebara"``: the bound of Jebara and Choromanska
    (NIPS 2012, Algorithm 1), built class by class (largest ``psi`` first) from
    Jaakkola-Jordan steps: ``C += 2 lambda(t) l l'`` with ``t`` the log ratio of the new
    class's mass to the mass so far and ``l`` the new class's offset from the running mean.
    Its curvature shrinks where the classes are well separated, as Jaakkola-Jordan's does
    for logistic regression (to which it reduces when ``K = 2``).

    Parameters
    ----------
    psi : ndarray of shape (N, K)
    kind : {"bohning", "jebara"}

    Returns
    -------
    curvature : ndarray of shape (N, K, K)
    """
    n_data, n_classes = psi.shape
    if kind == "bohning":
        hessian = 0.5 * (np.eye(n_classes) - 1.0 / n_classes)
        return np.broadcast_to(hessian, (n_data, n_classes, n_classes)).copy()
    rows = np.arange(n_data)
    ranked = np.argsort(-psi, axis=1)
    first = ranked[:, 0]
    log_mass = psi[rows, first]
    mean = np.zeros((n_data, n_classes))
    mean[rows, first] = 1.0
    curvature = np.zeros((n_data, n_classes, n_classes))
    for step in range(1, n_classes):
        k = ranked[:, step]
        t = psi[rows, k] - log_mass
        offset = -mean
        offset[rows, k] += 1.0
        curvature += (2.0 * jaakkola_jordan_lambda(t))[:, None, None] \
            * offset[:, :, None] * offset[:, None, :]
        mean += expit(t)[:, None] * offset
        log_mass = np.logaddexp(log_mass, psi[rows, k])
    return curvature


def softmax_bound(design, y, n_classes, psi, curvature="jebara"):
    """The bound ``log p(y | eta) >= eta_y - f(psi) - (eta - psi) . g - (eta - psi)' C_n
    (eta - psi) / 2`` with ``f = logsumexp``, ``g = softmax(psi)`` and ``C_n`` from
    :func:`softmax_curvature`, tight at ``eta = psi``; ``eta = W x``.

    Returns
    -------
    bound : (N, 2 K + 1 + K^2) ``[psi, f(psi), g, C_n (row-major)]``
    quad, lin, const : the collapsed sum, with theta the row-major ``K x D`` weights:
        block ``(a, b)`` of ``quad`` is ``sum_n C_n[a, b] x_n x_n'``,
        ``lin = sum_n (e_y - g_n + C_n psi_n) kron x_n``.
    """
    psi = np.asarray(psi, dtype=np.float64)
    n_data, n_features = design.shape
    lse = logsumexp(psi, axis=1)
    g = softmax(psi, axis=1)
    onehot = np.eye(n_classes)[y.astype(int)]
    curv = softmax_curvature(psi, curvature)
    quad = np.empty((n_classes, n_features, n_classes, n_features))
    for a in range(n_classes):
        for b in range(a, n_classes):
            quad[a, :, b, :] = (design.T * curv[:, a, b]) @ design
            quad[b, :, a, :] = quad[a, :, b, :].T
    curved_psi = np.einsum("nab,nb->na", curv, psi)
    lin = ((onehot - g + curved_psi).T @ design).ravel()
    const = float(np.sum(-lse + np.sum(psi * (g - 0.5 * curved_psi), axis=1)))
    params = np.column_stack([psi, lse, g, curv.reshape(n_data, -1)])
    size = n_classes * n_features
    return params, quad.reshape(size, size), lin, const


def student_t_bound(design, y, nu, u0):
    """Gaussian bounds on the Student-t log-likelihood
    ``l = -log s - (nu + 1) / 2 log(1 + u)``, ``u = r^2 / (nu s^2)``, ``r = y - x . w``:
    ``log(1 + u)`` is concave, so its tangent at ``u0`` lies above it and

        l >= gamma - log s - alpha r^2 / s^2,
        alpha = (nu + 1) / (2 nu (1 + u0)),
        gamma = -(nu + 1) / 2 (log(1 + u0) - u0 / (1 + u0)),

    tight (value and gradient) wherever ``r^2 / s^2 = nu u0``: a Gaussian in the residual
    (the Student-t's normalising constant is left out of both).

    Returns
    -------
    bound : (N, 3) ``[alpha, gamma, nu]``
    quad, lin, const : ``sum_n alpha_n (y_n - x_n . w)^2 = -(-w' quad w / 2 + lin . w +
        const)``, so that ``sum_n log B_n = sum gamma - N log s + exp(-2 log s) q(w)``:
        ``quad = 2 sum alpha x x'``, ``lin = 2 sum alpha y x``, ``const = -sum alpha y^2``.
    """
    u0 = np.broadcast_to(np.asarray(u0, dtype=np.float64), y.shape)
    alpha = (nu + 1.0) / (2.0 * nu * (1.0 + u0))
    gamma = -0.5 * (nu + 1.0) * (np.log1p(u0) - u0 / (1.0 + u0))
    quad = 2.0 * (design.T * alpha) @ design
    lin = 2.0 * design.T @ (alpha * y)
    const = -float(alpha @ y**2)
    return np.column_stack([alpha, gamma, np.full(y.shape, float(nu))]), quad, lin, const


def student_t_problem(design, y, nu, prior_kind, prior_scales, inv_temperature, theta_map,
                      covariance, bound):
    """The Firefly problem of Student-t regression: ``theta = [w, log s]`` (a sampled scale)
    or ``w`` (unit scale: a fixed scale is divided out of ``y`` and ``w`` beforehand).
    Bounds tight at the MAP residuals or untuned (tight at one scale)."""
    n_features = design.shape[1]
    if bound == "map":
        log_scale = theta_map[n_features] if theta_map.size > n_features else 0.0
        u0 = (y - design @ theta_map[:n_features]) ** 2 * np.exp(-2.0 * log_scale) / nu
    else:
        u0 = np.full(y.shape, UNTUNED_STANDARDISED_RESIDUAL**2 / nu)
    params, quad, lin, const = student_t_bound(design, y, nu, u0)
    return FireflyProblem(ROBUST, design, y, 1, params, inv_temperature * quad,
                          inv_temperature * lin, inv_temperature * const, prior_kind,
                          prior_scales, inv_temperature, theta_map, covariance)


def logistic_problem(design, y, prior_kind, prior_scales, inv_temperature, theta_map,
                     covariance, bound):
    """The Firefly problem of logistic regression, bounds tight at the MAP or untuned."""
    xi = np.abs(design @ theta_map) if bound == "map" else np.full(y.shape, UNTUNED_XI)
    params, quad, lin, const = logistic_bound(design, y, xi)
    return FireflyProblem(LOGISTIC, design, y, 1, params, inv_temperature * quad,
                          inv_temperature * lin, inv_temperature * const, prior_kind,
                          prior_scales, inv_temperature, theta_map, covariance)


def softmax_problem(design, y, n_classes, prior_kind, prior_scales, inv_temperature,
                    theta_map, covariance, bound, curvature="jebara"):
    """The Firefly problem of softmax regression, bounds tight at the MAP or untuned
    (``psi = 0``), with the curvature of :func:`softmax_curvature`."""
    weights = theta_map.reshape(n_classes, design.shape[1])
    psi = design @ weights.T if bound == "map" else np.zeros((design.shape[0], n_classes))
    params, quad, lin, const = softmax_bound(design, y, n_classes, psi, curvature)
    return FireflyProblem(SOFTMAX, design, y, n_classes, params, inv_temperature * quad,
                          inv_temperature * lin, inv_temperature * const, prior_kind,
                          prior_scales, inv_temperature, theta_map, covariance)


def _initial_step(update, d):
    """Preconditioned scales: random walk 2.38 / sqrt(d), MALA 1.65 d^(-1/6) (optimal
    scalings for a Gaussian target), slice bracket 2 (sd units along the direction)."""
    return {"mh": 2.38 / np.sqrt(d), "mala": 1.65 * d ** (-1.0 / 6.0), "slice": 2.0}[update]


#: With ``q_db=None``, dark points proposed bright per iteration, as a fraction of the bright
#: count (see :func:`_auto_q_db`).
DARK_PROPOSALS_PER_BRIGHT = 0.25


def _auto_q_db(n_bright, n_data):
    """``q_db`` giving ``DARK_PROPOSALS_PER_BRIGHT`` dark proposals per bright point per
    iteration, at least one.

    Each dark proposal is a likelihood query at a random row (a cache miss on large data),
    while the parameter update queries the same bright rows again and again. On the MNIST
    benchmarks (logistic MH, softmax MALA), a quarter gave more effective samples per
    second than one dark proposal per bright point, at nearly the same effective samples
    per iteration. Fewer still lets brightness relax too slowly from a poor start.
    """
    target = DARK_PROPOSALS_PER_BRIGHT * max(n_bright, 1.0)
    return float(np.clip(max(target, 1.0) / max(n_data - n_bright, 1.0), 1.0 / n_data, 1.0))


def run_firefly_chain(problem, firefly, theta0, seed, n_burnin, n_samples, thin, step_size,
                      progress=None, regular=False):
    """One Firefly chain: brightness drawn from ``p(z | theta0)``, burn-in tuning of the
    step (Robbins-Monro toward the update's target acceptance rate) and of ``q_db`` (when
    ``None``), then frozen for the kept draws.

    With ``regular=True`` the same updates, preconditioner and tuning run as regular
    full-data MCMC (every point queried at every evaluation): the baseline of the
    benchmarks.

    Returns
    -------
    dict with ``draws`` (n_samples, d), ``lp`` (log pseudo-posterior), ``acceptance_rate``,
    ``n_data_read`` (likelihood queries of the ``thin`` iterations behind each draw),
    ``n_bright``, ``seconds`` (cumulative), ``step`` (d,) and ``q_db``.
    """
    rng = chain_generator(seed)
    n_data = problem.X.shape[0]
    theta = np.array(theta0, dtype=np.float64)
    d = theta.size
    order = np.empty(n_data, dtype=np.int64)
    position = np.empty(n_data, dtype=np.int64)
    state = np.zeros(1, dtype=np.int64)
    point_diff = np.zeros(n_data)
    # Slopes: one per class, and one more for a trailing log-scale (Student-t).
    point_slope = np.zeros((n_data, problem.n_classes + 1))
    eta, slope = np.empty(problem.n_classes), np.empty(problem.n_classes + 1)
    index_pool = np.arange(n_data, dtype=np.int64)
    quad, lin, const = problem.quad, problem.lin, problem.const
    if regular:
        quad, lin, const = np.zeros_like(quad), np.zeros_like(lin), 0.0
        order[:] = np.arange(n_data)
        position[:] = np.arange(n_data)
        state[0] = n_data
        joint(problem.model, theta, problem.X, problem.y, problem.bound, problem.n_classes,
              problem.inv_temperature, quad, lin, const, problem.prior_kind,
              problem.prior_scales, order, n_data, point_diff, False, np.zeros(theta.size), eta,
              slope, point_slope, True)
    else:
        initialise_brightness(problem.model, theta, problem.X, problem.y, problem.bound,
                              problem.n_classes, problem.inv_temperature, order, position,
                              state, point_diff, rng)
    try:
        factor = np.linalg.cholesky(problem.covariance)
    except np.linalg.LinAlgError:
        factor = np.diag(np.sqrt(np.maximum(np.diag(problem.covariance), 1e-300)))
    factor = np.ascontiguousarray(factor)
    update = UPDATES[firefly.update]
    resample = RESAMPLES[firefly.resample]
    resample_count = max(1, int(round(firefly.resample_fraction * n_data)))
    gradient = np.zeros(d)
    slopes = np.empty((n_data, problem.n_classes + 1))
    joint(problem.model, theta, problem.X, problem.y, problem.bound, problem.n_classes,
          problem.inv_temperature, quad, lin, const, problem.prior_kind, problem.prior_scales,
          order, int(state[0]), np.empty(n_data), True, gradient, eta, slope, slopes, regular)
    point_slope[order[:state[0]]] = slopes[:state[0]]
    q_db = firefly.q_db if firefly.q_db is not None else _auto_q_db(state[0], n_data)
    step = _initial_step(firefly.update, d) if step_size == "auto" else float(step_size)

    def iterate(n_iter, step, q_db):
        draws = np.empty((n_iter, d))
        accepted = np.zeros(n_iter, dtype=np.bool_)
        queries = np.zeros(n_iter, dtype=np.int64)
        bright = np.zeros(n_iter, dtype=np.int64)
        lp = np.empty(n_iter)
        firefly_iterate(problem.model, problem.X, problem.y, problem.bound, problem.n_classes,
                        problem.inv_temperature, quad, lin, const, problem.prior_kind,
                        problem.prior_scales, theta, update, step, factor, resample, q_db,
                        resample_count, order, position, state, point_diff, point_slope, gradient,
                        index_pool, rng, draws, accepted, queries, bright, lp, regular)
        return draws, accepted, queries, bright, lp

    target = firefly.target_acceptance_rate
    window = max(1, n_burnin // N_WINDOWS)
    for k in range(N_WINDOWS if n_burnin else 0):
        n_iter = window if k < N_WINDOWS - 1 else n_burnin - window * (N_WINDOWS - 1)
        if n_iter <= 0:
            continue
        _, accepted, _, bright, _ = iterate(n_iter, step, q_db)
        if step_size == "auto" and np.isfinite(target):
            step *= np.exp((accepted.mean() - target) * 2.0 / np.sqrt(k + 1.0))
        if firefly.q_db is None and not regular:
            q_db = _auto_q_db(bright.mean(), n_data)
        if progress is not None:
            progress.update(n_iter)

    outputs, seconds = run_timed(lambda n: iterate(n, step, q_db), n_samples * thin,
                                 cost_index=2, progress=progress)
    draws, accepted, queries, bright, lp = outputs
    keep = slice(thin - 1, None, thin)
    return {"draws": draws[keep], "lp": lp[keep], "seconds": seconds[keep],
            "acceptance_rate": accepted.reshape(n_samples, thin).mean(axis=1),
            "n_data_read": queries.reshape(n_samples, thin).sum(axis=1),
            "n_bright": bright[keep], "step": step * np.sqrt(np.sum(factor**2, axis=1)),
            "q_db": q_db}

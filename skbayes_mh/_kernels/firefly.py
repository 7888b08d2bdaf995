"""Firefly Monte Carlo (Maclaurin and Adams, UAI 2014): exact MCMC on the joint of the
parameters and brightness variables ``z_n``, touching only the bright data points.

With per-datum likelihoods ``L_n(theta)`` and lower bounds ``0 < B_n(theta) <= L_n(theta)``,
``p(z_n = 1 | theta) = 1 - B_n / L_n`` and the joint is

    p(theta, z) ~ p(theta) prod_n B_n(theta) prod_{z_n = 1} (L_n(theta) / B_n(theta) - 1).

``sum_n log B_n`` is quadratic in theta for the bounds used here, so it is collapsed into
sufficient statistics (``Q``, ``r``, ``c``: ``-theta' Q theta / 2 + r . theta + c``), computed
once. Each evaluation then costs ``O(d^2)`` plus one likelihood query per bright point.

Models (``model``): ``LOGISTIC`` (Jaakkola-Jordan bound, per-datum ``[lambda(xi), c(xi)]``)
and ``SOFTMAX`` (a quadratic bound on ``logsumexp`` with per-datum curvature ``C``, Bohning's
or Jebara-Choromanska's: per-datum ``[psi (K), logsumexp(psi), softmax(psi) (K), C (K^2)]``)
and ``ROBUST`` (Student-t regression, a Gaussian bound in the residual: ``[alpha, gamma,
nu]``). A model sees datum ``n`` through ``eta_n = W x_n`` (``K`` values, ``K = 1`` for
logistic and Student-t) and returns ``l_n``, ``b_n`` and ``d(l_n - b_n) / d eta_n``: the
gradient in theta follows as an outer product with ``x_n`` (theta is ``W`` flattened
row-major, ``K x D``), plus, for a trailing ``log s`` (Student-t with a sampled scale),
a ``K + 1``-th slope.

The bright set is the paper's arr/tab structure: ``order`` lists the points bright first
(``order[:n_bright]``) then dark, and ``position`` is its inverse, so brightening, darkening,
the i-th bright and the i-th dark point are O(1).
"""
import math

import numpy as np

from ._common import draw_without_replacement, log_sigmoid
from ._jit import jit
from .priors import log_prior_and_gradient

LOGISTIC = 0
SOFTMAX = 1
ROBUST = 2

MH = 0
MALA = 1
SLICE = 2

IMPLICIT = 0
EXPLICIT = 1

#: Stepping-out steps allowed in the slice update, split at random between the two sides
#: (Neal 2003, Figure 3: the split keeps the update reversible).
_SLICE_MAX_STEPS = 60


@jit
def log_expm1(d):
    """``log(exp(d) - 1)`` for ``d >= 0`` (``-inf`` at ``d <= 0``: the point cannot be bright)."""
    if d <= 0.0:
        return -math.inf
    return d + math.log(-math.expm1(-d))


@jit(fastmath={"reassoc", "contract"})
def _row_dot(X, i, theta, start):
    """``X[i] . theta[start:start + D]``. Reassociation lets LLVM vectorise the sum (a
    sequential float reduction cannot be); it changes only the rounding of dot products,
    never an acceptance decision's arithmetic."""
    total = 0.0
    for j in range(X.shape[1]):
        total += X[i, j] * theta[start + j]
    return total


@jit
def point(model, theta, X, y, bound, i, n_classes, inv_temperature, eta, slope,
          likelihood_only=False, want_slope=True):
    """``(l_i, b_i)`` at ``theta`` (both times ``inv_temperature``); with ``want_slope``,
    ``slope`` (length ``n_classes + 1``) receives ``d(l_i - b_i) / d eta_i`` and, for
    ``ROBUST``, ``d(l_i - b_i) / d log s`` last; or the slopes of ``l_i`` alone with
    ``likelihood_only`` (regular MCMC: the bound is not used)."""
    n_features = X.shape[1]
    if model == ROBUST:
        # Student-t regression: bound row [alpha, gamma, nu]; theta = [w, log s] or w (s = 1).
        residual = y[i] - _row_dot(X, i, theta, 0)
        log_scale = theta[n_features] if theta.shape[0] > n_features else 0.0
        precision = math.exp(-2.0 * log_scale)
        z = residual * residual * precision
        nu = bound[i, 2]
        weight = (nu + 1.0) / (nu + z)  # -2 dl/dz
        loglik = -log_scale - 0.5 * (nu + 1.0) * math.log1p(z / nu)
        if likelihood_only:
            if want_slope:
                slope[0] = inv_temperature * weight * residual * precision
                slope[1] = inv_temperature * (weight * z - 1.0)
            return inv_temperature * loglik, 0.0
        log_bound = bound[i, 1] - log_scale - bound[i, 0] * z
        if want_slope:
            # d(l - b)/dz = alpha - weight / 2; dz/d(x . w) = -2 r / s^2, dz/d log s = -2 z.
            gap_slope = bound[i, 0] - 0.5 * weight
            slope[0] = -2.0 * inv_temperature * gap_slope * residual * precision
            slope[1] = -2.0 * inv_temperature * gap_slope * z
        return inv_temperature * loglik, inv_temperature * log_bound
    if model == LOGISTIC:
        s = _row_dot(X, i, theta, 0)
        sign = 2.0 * y[i] - 1.0
        s *= sign
        lam = bound[i, 0]
        loglik = log_sigmoid(s)
        log_bound = bound[i, 1] + 0.5 * s - lam * s * s
        # d l / d s = sigmoid(-s), d b / d s = 1/2 - 2 lambda s; d s / d eta = sign.
        if likelihood_only:
            slope[0] = inv_temperature * sign * math.exp(log_sigmoid(-s))
            return inv_temperature * loglik, 0.0
        slope[0] = inv_temperature * sign * (math.exp(log_sigmoid(-s)) - 0.5 + 2.0 * lam * s)
        return inv_temperature * loglik, inv_temperature * log_bound
    # Softmax: eta = W x.
    top = -math.inf
    for k in range(n_classes):
        total = _row_dot(X, i, theta, k * n_features)
        eta[k] = total
        top = max(top, total)
    normaliser = 0.0
    for k in range(n_classes):
        normaliser += math.exp(eta[k] - top)
    lse = top + math.log(normaliser)
    label = int(y[i])
    loglik = eta[label] - lse
    if likelihood_only:
        if not want_slope:
            return inv_temperature * loglik, 0.0
        for k in range(n_classes):
            slope[k] = inv_temperature * ((1.0 if k == label else 0.0) - math.exp(eta[k] - lse))
        return inv_temperature * loglik, 0.0
    # Bound row [psi (K), logsumexp(psi), softmax(psi) (K), C (K x K row-major)].
    curvature = 2 * n_classes + 1
    linear = 0.0
    square = 0.0
    for k in range(n_classes):
        gap = eta[k] - bound[i, k]
        linear += gap * bound[i, n_classes + 1 + k]
        curved = 0.0
        for m in range(n_classes):
            curved += bound[i, curvature + k * n_classes + m] * (eta[m] - bound[i, m])
        square += gap * curved
        slope[k] = curved
    log_bound = eta[label] - bound[i, n_classes] - linear - 0.5 * square
    if not want_slope:
        return inv_temperature * loglik, inv_temperature * log_bound
    for k in range(n_classes):
        slope[k] = inv_temperature * (-math.exp(eta[k] - lse) + bound[i, n_classes + 1 + k]
                                      + slope[k])
    return inv_temperature * loglik, inv_temperature * log_bound


@jit
def _add_outer(gradient, weight, slope, X, i, n_classes):
    """``gradient += weight * d(l_i - b_i) / d theta``: the outer product of the slopes with
    ``x_i`` over the ``K x D`` weights, and ``slope[K]`` for a trailing log-scale."""
    n_features = X.shape[1]
    for k in range(n_classes):
        scaled = weight * slope[k]
        base = k * n_features
        for j in range(n_features):
            gradient[base + j] += scaled * X[i, j]
    if gradient.shape[0] > n_classes * n_features:
        gradient[n_classes * n_features] += weight * slope[n_classes]


@jit
def collapsed_and_prior(theta, quad, lin, const, prior_kind, prior_scales, scale_count,
                        want_grad, gradient):
    """``log p(theta) + sum_n log B_n(theta)`` (up to a constant); with ``want_grad``,
    ``gradient`` is set to its gradient.

    The collapsed sum is ``q(w) = -w' quad w / 2 + lin . w + const`` over the first
    ``quad.shape[0]`` coordinates ``w``. A trailing coordinate ``eta = log s`` (the Student-t
    model with a sampled scale) makes it ``exp(-2 eta) q(w) - scale_count eta``, with
    ``scale_count`` the number of points times the inverse temperature (0 in regular mode:
    then the ``-eta`` of each point is in its likelihood).
    """
    d = quad.shape[0]
    value = const
    for a in range(d):
        q_theta = _row_dot(quad, a, theta, 0)
        value += theta[a] * (lin[a] - 0.5 * q_theta)
        if want_grad:
            gradient[a] = lin[a] - q_theta
    if theta.shape[0] > d:
        weight = math.exp(-2.0 * theta[d])
        if want_grad:
            for a in range(d):
                gradient[a] *= weight
            gradient[d] = -2.0 * weight * value - scale_count
        value = weight * value - scale_count * theta[d]
    return value + log_prior_and_gradient(prior_kind, prior_scales, theta, want_grad, gradient)


@jit
def joint(model, theta, X, y, bound, n_classes, inv_temperature, quad, lin, const, prior_kind,
          prior_scales, order, n_bright, diffs, want_grad, gradient, eta, slope, slopes,
          regular=False):
    """Log pseudo-posterior ``log p(theta, z)`` (up to a constant) for the current bright set:
    ``n_bright`` likelihood queries. ``diffs[p]`` receives ``l - b`` of the ``p``-th bright
    point; with ``want_grad``, ``gradient`` its gradient and ``slopes[p]`` the point's
    ``d(l - b) / d eta`` (``slope``: scratch). With ``regular`` (every point bright, zero
    collapsed statistics) it is the full-data log posterior and ``diffs`` receives ``l``."""
    value = collapsed_and_prior(theta, quad, lin, const, prior_kind, prior_scales,
                                0.0 if regular else X.shape[0] * inv_temperature, want_grad,
                                gradient)
    for p in range(n_bright):
        i = order[p]
        loglik, log_bound = point(model, theta, X, y, bound, i, n_classes, inv_temperature,
                                  eta, slope, regular, want_grad)
        if want_grad:
            for k in range(n_classes + 1):
                slopes[p, k] = slope[k]
        if regular:
            diffs[p] = loglik
            value += loglik
            if want_grad:
                _add_outer(gradient, 1.0, slope, X, i, n_classes)
            continue
        diff = loglik - log_bound
        diffs[p] = diff
        value += log_expm1(diff)
        if want_grad and diff > 0.0:
            _add_outer(gradient, 1.0 / -math.expm1(-diff), slope, X, i, n_classes)
    return value


@jit
def _brighten(order, position, state, i):
    """Move dark point ``i`` into the bright block (swap with the first dark point)."""
    n_bright = state[0]
    j = order[n_bright]
    p = position[i]
    order[n_bright] = i
    order[p] = j
    position[i] = n_bright
    position[j] = p
    state[0] = n_bright + 1


@jit
def _darken(order, position, state, i):
    """Move bright point ``i`` out of the bright block (swap with the last bright point)."""
    last = state[0] - 1
    j = order[last]
    p = position[i]
    order[last] = i
    order[p] = j
    position[i] = last
    position[j] = p
    state[0] = last


@jit
def initialise_brightness(model, theta, X, y, bound, n_classes, inv_temperature, order,
                          position, state, point_diff, rng):
    """Draw every ``z_n`` from ``p(z_n | theta)`` (N queries): the chain starts with the
    brightness variables in equilibrium given theta."""
    n = X.shape[0]
    eta = np.empty(n_classes)
    slope = np.empty(n_classes + 1)
    for i in range(n):
        order[i] = i
        position[i] = i
    state[0] = 0
    for i in range(n):
        loglik, log_bound = point(model, theta, X, y, bound, i, n_classes, inv_temperature,
                                  eta, slope, False, False)
        diff = loglik - log_bound
        if rng.random() < -math.expm1(-max(diff, 0.0)):
            _brighten(order, position, state, i)
            point_diff[i] = diff
    return n


@jit
def _forward_solve(lower, vector, out):
    """``out = lower^{-1} vector`` for a lower-triangular ``lower``."""
    d = vector.shape[0]
    for a in range(d):
        total = vector[a]
        for b in range(a):
            total -= lower[a, b] * out[b]
        out[a] = total / lower[a, a]


@jit(fastmath={"reassoc", "contract"})
def _lower_times(lower, vector, out):
    """``out = lower vector`` for a lower-triangular ``lower``."""
    for a in range(vector.shape[0]):
        total = 0.0
        for b in range(a + 1):
            total += lower[a, b] * vector[b]
        out[a] = total


@jit
def _times_transpose(lower, vector, out):
    """``out = lower' vector``."""
    d = vector.shape[0]
    for a in range(d):
        total = 0.0
        for b in range(a, d):
            total += lower[b, a] * vector[b]
        out[a] = total


@jit
def firefly_iterate(model, X, y, bound, n_classes, inv_temperature, quad, lin, const,
                    prior_kind, prior_scales, theta, update, step, factor, resample, q_db,
                    resample_count, order, position, state, point_diff, point_slope, gradient,
                    index_pool, rng, out_draws, out_accepted, out_queries, out_bright, out_lp,
                    regular=False):
    """Run ``out_draws.shape[0]`` Firefly iterations in place: a parameter update on the
    pseudo-posterior given the bright set, then a brightness update given theta.

    Parameters
    ----------
    model : int
        ``LOGISTIC`` or ``SOFTMAX``.
    X : (N, D) float64, y : (N,) float64
        Design (intercept column included) and labels (0/1, or class index).
    bound : (N, P) float64
        Per-datum bound parameters (see the module docstring).
    quad, lin, const : (d, d), (d,), float
        Collapsed ``sum_n log B_n`` (already times ``inv_temperature``).
    theta : (d,) float64
        Current state; updated in place.
    update : int
        ``MH`` (random walk ``theta + step factor e``), ``MALA`` (preconditioned Langevin:
        ``theta + step^2 C grad / 2 + step factor e``, ``C = factor factor'``) or ``SLICE``
        (slice sampling along a random direction ``factor e / |e|``, bracket width ``step``).
    factor : (d, d) float64
        Lower-triangular proposal shape.
    resample : int
        ``IMPLICIT``: every bright point proposed dark, every dark point proposed bright with
        probability ``q_db`` (visited with geometric jumps), Metropolis-Hastings; ``EXPLICIT``:
        ``resample_count`` random points drawn from ``p(z_n | theta)``.
    order, position : (N,) int64, state : (1,) int64
        The bright set; ``state[0]`` is the bright count.
    point_diff : (N,) float64
        ``l_n - b_n`` at theta for the bright points.
    point_slope : (N, n_classes) float64
        ``d(l_n - b_n) / d eta_n`` at theta for the bright points (MALA only): darkening a
        point updates the gradient without a query.
    gradient : (d,) float64
        Gradient of the log pseudo-posterior at theta (MALA only; kept current).
    index_pool : (N,) int64
        A permutation of ``0..N-1`` (explicit resampling draws from it).
    out_draws : (n_iter, d); out_accepted : (n_iter,) bool; out_queries, out_bright :
    (n_iter,) int64; out_lp : (n_iter,) float64
        Per iteration: theta, whether the parameter update moved, likelihood queries, bright
        points after the iteration, log pseudo-posterior.
    """
    n = X.shape[0]
    d = theta.shape[0]
    eta = np.empty(n_classes)
    slope = np.empty(n_classes + 1)
    noise = np.empty(d)
    proposal = np.empty(d)
    proposal_gradient = np.empty(d)
    whitened = np.empty(d)
    shift = np.empty(d)
    diffs = np.empty(n)
    candidates = np.empty(n, dtype=np.int64)
    direction = np.empty(d)
    want_grad = update == MALA
    slopes = np.empty((n if want_grad else 1, n_classes + 1))
    # The collapsed bound and prior at theta, kept current (an O(d^2) evaluation per proposal).
    collapsed = collapsed_and_prior(theta, quad, lin, const, prior_kind, prior_scales,
                                    0.0 if regular else n * inv_temperature, False,
                                    proposal_gradient)
    # The bright points' part of the log pseudo-posterior, from the cached differences (no
    # queries), then kept current through every move and brightness change.
    bright_part = 0.0
    for p in range(state[0]):
        bright_part += point_diff[order[p]] if regular else log_expm1(point_diff[order[p]])
    current = collapsed + bright_part
    for it in range(out_draws.shape[0]):
        queries = 0
        n_bright = state[0]
        accepted = False
        if update == SLICE:
            norm = 0.0
            for a in range(d):
                noise[a] = rng.standard_normal()
                norm += noise[a] * noise[a]
            norm = math.sqrt(norm)
            for a in range(d):
                noise[a] /= norm
            _lower_times(factor, noise, direction)
            level = current - rng.exponential()
            left = -step * rng.random()
            right = left + step
            left_steps = int(_SLICE_MAX_STEPS * rng.random())
            right_steps = _SLICE_MAX_STEPS - 1 - left_steps
            for _ in range(left_steps):
                for a in range(d):
                    proposal[a] = theta[a] + left * direction[a]
                queries += n_bright
                if joint(model, proposal, X, y, bound, n_classes, inv_temperature, quad, lin,
                         const, prior_kind, prior_scales, order, n_bright, diffs, False,
                         proposal_gradient, eta, slope, slopes, regular) <= level:
                    break
                left -= step
            for _ in range(right_steps):
                for a in range(d):
                    proposal[a] = theta[a] + right * direction[a]
                queries += n_bright
                if joint(model, proposal, X, y, bound, n_classes, inv_temperature, quad, lin,
                         const, prior_kind, prior_scales, order, n_bright, diffs, False,
                         proposal_gradient, eta, slope, slopes, regular) <= level:
                    break
                right += step
            while True:
                t = left + (right - left) * rng.random()
                for a in range(d):
                    proposal[a] = theta[a] + t * direction[a]
                queries += n_bright
                value = joint(model, proposal, X, y, bound, n_classes, inv_temperature, quad,
                              lin, const, prior_kind, prior_scales, order, n_bright, diffs,
                              False, proposal_gradient, eta, slope, slopes, regular)
                if value > level:
                    accepted = True
                    current = value
                    break
                if t < 0.0:
                    left = t
                else:
                    right = t
                if right - left < 1e-12:
                    break  # numerically stuck: stay (the bracket contains theta)
        else:
            for a in range(d):
                noise[a] = rng.standard_normal()
            if update == MALA:
                _times_transpose(factor, gradient, shift)  # factor' grad
            for a in range(d):
                whitened[a] = step * noise[a] + (0.5 * step * step * shift[a] if want_grad
                                                 else 0.0)
            _lower_times(factor, whitened, proposal)
            for a in range(d):
                proposal[a] += theta[a]
            queries += n_bright
            value = joint(model, proposal, X, y, bound, n_classes, inv_temperature, quad, lin,
                          const, prior_kind, prior_scales, order, n_bright, diffs, want_grad,
                          proposal_gradient, eta, slope, slopes, regular)
            log_ratio = value - current
            if want_grad and value > -math.inf:
                # Forward residual: step * noise. Reverse: L^{-1}(theta - theta') - step^2 L' g' / 2.
                for a in range(d):
                    shift[a] = theta[a] - proposal[a]
                _forward_solve(factor, shift, whitened)
                _times_transpose(factor, proposal_gradient, shift)
                forward = 0.0
                reverse = 0.0
                for a in range(d):
                    forward += noise[a] * noise[a]
                    residual = (whitened[a] - 0.5 * step * step * shift[a]) / step
                    reverse += residual * residual
                log_ratio += 0.5 * (forward - reverse)
            if value > -math.inf and math.log(rng.random()) < log_ratio:
                accepted = True
                current = value
        if accepted:
            for a in range(d):
                theta[a] = proposal[a]
                if want_grad:
                    gradient[a] = proposal_gradient[a]
            bright_part = 0.0
            for p in range(n_bright):
                i = order[p]
                point_diff[i] = diffs[p]
                bright_part += diffs[p] if regular else log_expm1(diffs[p])
                if want_grad:
                    for k in range(n_classes + 1):
                        point_slope[i, k] = slopes[p, k]
            collapsed = current - bright_part

        # Brightness update given theta.
        if regular:
            pass
        elif resample == IMPLICIT:
            n_dark = n - n_bright
            n_candidates = 0
            if q_db >= 1.0:
                for p in range(n_dark):
                    candidates[n_candidates] = order[n_bright + p]
                    n_candidates += 1
            elif q_db > 0.0:
                log_stay = math.log1p(-q_db)
                p = -1
                while True:
                    p += 1 + int(math.log(1.0 - rng.random()) / log_stay)
                    if p >= n_dark:
                        break
                    candidates[n_candidates] = order[n_bright + p]
                    n_candidates += 1
            # Bright -> dark (proposed with probability 1): cached l - b, no query.
            p = 0
            while p < state[0] and p < n_bright:
                i = order[p]
                if rng.random() * math.expm1(point_diff[i]) < q_db:
                    _darken(order, position, state, i)
                    bright_part -= log_expm1(point_diff[i])
                    if want_grad:
                        _add_outer(gradient, -1.0 / -math.expm1(-point_diff[i]),
                                   point_slope[i], X, i, n_classes)
                    n_bright -= 1  # the last bright point moved to p: visit it next
                else:
                    p += 1
            # Dark -> bright (proposed with probability q_db): one query each.
            for c in range(n_candidates):
                i = candidates[c]
                queries += 1
                loglik, log_bound = point(model, theta, X, y, bound, i, n_classes,
                                          inv_temperature, eta, slope, False, want_grad)
                diff = loglik - log_bound
                if diff > 0.0 and rng.random() * q_db < math.expm1(diff):
                    _brighten(order, position, state, i)
                    point_diff[i] = diff
                    bright_part += log_expm1(diff)
                    if want_grad:
                        _add_outer(gradient, 1.0 / -math.expm1(-diff), slope, X, i, n_classes)
                        point_slope[i] = slope
        else:
            draw_without_replacement(index_pool, 0, resample_count, rng)
            for c in range(resample_count):
                i = index_pool[c]
                queries += 1
                loglik, log_bound = point(model, theta, X, y, bound, i, n_classes,
                                          inv_temperature, eta, slope, False, want_grad)
                diff = loglik - log_bound
                bright = position[i] < state[0]
                make_bright = rng.random() < -math.expm1(-max(diff, 0.0))
                # theta has not moved since point i's cached difference: only changes matter.
                if make_bright and not bright:
                    _brighten(order, position, state, i)
                    point_diff[i] = diff
                    bright_part += log_expm1(diff)
                    if want_grad:
                        _add_outer(gradient, 1.0 / -math.expm1(-diff), slope, X, i, n_classes)
                        point_slope[i] = slope
                elif bright and not make_bright:
                    _darken(order, position, state, i)
                    bright_part -= log_expm1(point_diff[i])
                    if want_grad:
                        _add_outer(gradient, -1.0 / -math.expm1(-point_diff[i]), slope, X, i,
                                   n_classes)
        for a in range(d):
            out_draws[it, a] = theta[a]
        out_accepted[it] = accepted
        out_queries[it] = queries
        out_bright[it] = state[0]
        current = collapsed + bright_part
        out_lp[it] = current
    return 0

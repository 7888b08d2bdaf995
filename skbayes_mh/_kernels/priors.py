"""Built-in priors (:data:`.specs.Prior`), evaluated natively in the samplers.

A user's ``log_prior(theta)`` has a fixed signature and so cannot carry hyper-parameters
(such as an estimator's ``prior_scale``) without compiling a new function per value; the
estimators use these instead, with their scales passed as data.

``kind`` is ``NO_PRIOR``, ``GAUSSIAN`` or ``LAPLACE``, optionally ``| LOG_SCALE``: then the
last coordinate is the log of a scale ``s`` (a noise standard deviation) with an
exponential prior of mean ``scales[-1]`` on ``s``, i.e. ``log p = eta - exp(eta) / mean``
in ``eta = log s`` (Jacobian included), and the base prior covers the other coordinates:
coordinate ``k`` has the base density at ``(theta_k - locations_k) / scales_k``. The whole
log density is multiplied by ``power``: 1 for the prior itself, ``1 / S`` for the prior of
one of ``S`` shards whose sub-posteriors are combined (consensus Monte Carlo).

With feature ``means`` (not empty), each block's intercept ``b_k`` is replaced in its prior
by the intercept at the mean of the features, ``b_k + means . w_k``: the intercept of
centred predictors, as in rstanarm, so that its prior does not depend on where the
features' origin lies.

Group-level effects (``scale_of`` not empty, one entry per coordinate): a coordinate with
``scale_of[k] = a >= 0`` is a group's effect, centred, ``theta_k ~ N(locations_k,
exp(theta_a)^2)``, whose log sd ``theta_a`` is sampled with it; that coordinate has
``scale_of[a] = GROUP_SD`` and the sd a half-normal prior of scale ``scales[a]``: ``log p =
eta - exp(2 eta) / (2 scales[a]^2)`` in ``eta = log sd`` (Jacobian included). The sds'
coordinates come last; ``LOG_SCALE`` then marks the last coordinate before them. Entries
of -1 keep the base prior. An sd marked ``GROUP_SD_RESCALED`` or ``GROUP_SD_INTERWOVEN``
instead of ``GROUP_SD`` has the same prior; the Metropolis-Hastings chains then also move
it with its effects (``mh.py``: ``_rescale_proposal``).

Correlated terms (``correlations`` not empty): the ``k`` terms of one grouping have each
level's effects ``u_g = loc_g + diag(sd) L z_g``, ``z_g ~ N(0, I)``, so that ``u_g ~ N(loc_g,
diag(sd) R diag(sd))`` with the correlation matrix ``R = L L'``. ``L`` (lower triangular,
unit rows) comes from ``k (k - 1) / 2`` unconstrained coordinates, marked
``GROUP_CORRELATION``, as Stan builds a Cholesky factor of a correlation matrix: their
tanh are the canonical partial correlations, row by row (Lewandowski, Kurowicka and Joe
2009), with the log Jacobian of both maps, under an LKJ prior of shape
:data:`LKJ_SHAPE` on ``R``. ``correlations`` holds per such grouping ``k``, its number of
levels ``G``, its first correlation coordinate, its ``k`` sds' coordinates and the ``k``
terms' first effects' coordinates (level ``l`` of term ``t`` at ``first_t + l``).
"""
import math

import numpy as np

from ._jit import jit

NO_PRIOR = 0
#: ``theta_k ~ N(location_k, scales_k^2)``.
GAUSSIAN = 1
#: ``theta_k ~ Laplace(location_k, scales_k)``.
LAPLACE = 2
#: Flag: the last coordinate is ``log s`` with ``s ~ Exponential(mean=scales[-1])``.
LOG_SCALE = 4
#: ``scale_of[a]`` of a group-level sd's coordinate (its log), half-normal of scale
#: ``scales[a]``; ``scale_of[k] = a`` then makes coordinate ``k`` an effect of that sd.
GROUP_SD = -2
#: ``scale_of[a]`` of a group-level sd like ``GROUP_SD``, whose chains also take rescaling
#: moves: its effects multiplied by the factor its sd is (the non-centred update of the
#: sd, for groups of few rows, whose centred effects trap the sd near 0).
GROUP_SD_RESCALED = -3
#: ``scale_of[a]`` of a group-level sd like ``GROUP_SD_RESCALED`` whose Hamiltonian paths
#: keep its effects centred: the rescaling moves (the non-centred update) interleaved with
#: centred paths, as Yu and Meng's (2011) interweaving, for effects the data determine
#: whose sd's posterior still reaches toward 0 (few groups).
GROUP_SD_INTERWOVEN = -5
#: ``scale_of[k]`` of a coordinate under the base prior.
BASE = -1
#: ``scale_of[k]`` of one of the unconstrained coordinates of a grouping's correlation
#: matrix (``correlations``).
GROUP_CORRELATION = -4
#: The LKJ prior's shape on a grouping's correlation matrix, ``p(R) ~ det(R)^(shape - 1)``:
#: 2 (rather than the uniform 1) keeps a correlation away from +-1 unless the data put it
#: there, as in PyMC's examples and Stan's guidance for few groups.
LKJ_SHAPE = 2.0
#: The most terms of one grouping whose effects are correlated (a kernel's fixed scratch).
MAX_CORRELATED_TERMS = 8


@jit
def _base(base, z, scale, want_grad):
    """Log density (up to a constant) of the base family at ``z`` (already centred) and its
    derivative in ``z``."""
    if base == GAUSSIAN:
        return -0.5 * (z / scale) ** 2, -z / scale**2
    if base == LAPLACE:
        slope = 0.0 if z == 0.0 else -math.copysign(1.0, z) / scale
        return -math.fabs(z) / scale, slope
    return 0.0, 0.0


@jit
def log_prior_and_gradient(prior, theta, want_grad, gradient):
    """Log density of the built-in ``prior`` at ``theta``, up to a constant; with
    ``want_grad``, its gradient is added to ``gradient`` (Laplace: the sign, 0 at 0)."""
    total = 0.0
    power = prior.power
    d = theta.shape[0]
    base = prior.kind & 3
    if prior.scale_of.shape[0] > 0:
        total += _group_terms(prior, theta, want_grad, gradient)
        while d > 0 and prior.scale_of[d - 1] <= GROUP_SD:
            d -= 1
    if prior.kind & LOG_SCALE:
        d -= 1
        eta = theta[d]
        total += eta - math.exp(eta) / prior.scales[d]
        if want_grad:
            gradient[d] += power * (1.0 - math.exp(eta) / prior.scales[d])
    if base == 0:
        return power * total
    centred = prior.means.shape[0] > 0 and prior.intercept == 1
    grouped = prior.scale_of.shape[0] > 0
    for k in range(d):
        if centred and k < prior.n_outputs * prior.block and k % prior.block == prior.block - 1:
            continue  # a centred intercept: below, with its block
        if grouped and prior.scale_of[k] != BASE:
            continue  # a group's effect: in _group_terms
        value, slope = _base(base, theta[k] - prior.locations[k], prior.scales[k], want_grad)
        total += value
        if want_grad:
            gradient[k] += power * slope
    if centred:
        n_features = prior.block - 1
        for k in range(prior.n_outputs):
            start = k * prior.block
            intercept = start + n_features
            at_mean = theta[intercept]
            for j in range(n_features):
                at_mean += prior.means[j] * theta[start + j]
            value, slope = _base(base, at_mean - prior.locations[intercept],
                                 prior.scales[intercept], want_grad)
            total += value
            if want_grad:
                gradient[intercept] += power * slope
                for j in range(n_features):
                    gradient[start + j] += power * prior.means[j] * slope
    return power * total


@jit
def _group_terms(prior, theta, want_grad, gradient):
    """The group-level effects' and their sds' part of :func:`log_prior_and_gradient`
    (see the module's docstring), before ``prior.power`` multiplies it; with
    ``want_grad``, its gradient (times ``prior.power``) added to ``gradient``."""
    total = 0.0
    power = prior.power
    for k in range(theta.shape[0]):
        a = prior.scale_of[k]
        if a == GROUP_SD or a == GROUP_SD_RESCALED or a == GROUP_SD_INTERWOVEN:
            eta = theta[k]
            spread = math.exp(2.0 * eta) / prior.scales[k] ** 2
            total += eta - 0.5 * spread
            if want_grad:
                gradient[k] += power * (1.0 - spread)
        elif a >= 0 and not _is_correlated(prior.correlations, a):
            eta = theta[a]
            z = (theta[k] - prior.locations[k]) * math.exp(-eta)
            total += -0.5 * z * z - eta
            if want_grad:
                gradient[k] += power * (-z * math.exp(-eta))
                gradient[a] += power * (z * z - 1.0)
    start = 0
    while start < prior.correlations.shape[0]:
        total += _correlated_terms(prior, start, theta, want_grad, gradient)
        start += 3 + 2 * prior.correlations[start]
    return total


@jit
def _is_correlated(correlations, sd_coordinate):
    """Whether the sd of coordinate ``sd_coordinate`` is one of a correlated grouping's."""
    start = 0
    while start < correlations.shape[0]:
        k = correlations[start]
        for t in range(k):
            if correlations[start + 3 + t] == sd_coordinate:
                return True
        start += 3 + 2 * k
    return False


@jit
def correlation_factor(theta, first, k, factor, partial, remaining):
    """The Cholesky factor ``L`` (into ``factor[:k, :k]``) of the correlation matrix whose
    unconstrained coordinates start at ``theta[first]``, as Stan's
    ``cholesky_corr_constrain`` builds it: the tanh of each coordinate (``partial``) is a
    canonical partial correlation, ``L_ij = partial_ij * remaining_ij`` with ``remaining_ij
    = sqrt(1 - sum_{m < j} L_im^2)``, ``L_ii = remaining_ii``. Returns the log Jacobian of
    both maps (from the coordinates to the partial correlations to ``L``)."""
    log_jacobian = 0.0
    c = first
    factor[0, 0] = 1.0
    for i in range(1, k):
        squares = 0.0
        for j in range(i):
            z = math.tanh(theta[c])
            c += 1
            partial[i, j] = z
            log_jacobian += math.log1p(-z * z)  # d tanh / dx
            remaining[i, j] = math.sqrt(max(1.0 - squares, 0.0))
            if j > 0:
                log_jacobian += math.log(remaining[i, j])  # the partial correlations' map
            factor[i, j] = z * remaining[i, j]
            squares += factor[i, j] ** 2
        remaining[i, i] = math.sqrt(max(1.0 - squares, 0.0))
        factor[i, i] = remaining[i, i]
    return log_jacobian


@jit
def _correlated_terms(prior, start, theta, want_grad, gradient):
    """One correlated grouping's part of :func:`_group_terms` (its table at ``start`` in
    ``prior.correlations``): the effects' multivariate normal, the LKJ prior and the log
    Jacobian of the correlation coordinates; the sds' own half-normals are elsewhere.

    With ``a_g = (u_g - loc_g) / sd`` and ``w_g = L^-1 a_g``, ``v_g = L'^-1 w_g``: ``log p =
    sum_g (-|w_g|^2 / 2) - G sum_i log L_ii - G sum_t log sd_t + LKJ + Jacobian``; its
    gradient is ``-v_gt / sd_t`` on an effect, ``sum_g v_gt a_gt - G`` on a log sd, and on
    ``L`` (lower triangle) ``sum_g v_g w_g'`` plus the diagonal's terms, carried to the
    unconstrained coordinates row by row in reverse."""
    table = prior.correlations
    power = prior.power
    k, n_levels, first = table[start], table[start + 1], table[start + 2]
    factor = np.zeros((MAX_CORRELATED_TERMS, MAX_CORRELATED_TERMS))
    partial = np.zeros((MAX_CORRELATED_TERMS, MAX_CORRELATED_TERMS))  # tanh, row by row
    remaining = np.ones((MAX_CORRELATED_TERMS, MAX_CORRELATED_TERMS))  # s_j of row i
    total = correlation_factor(theta, first, k, factor, partial, remaining)
    log_diagonal = 0.0
    for i in range(1, k):
        if factor[i, i] <= 0.0:
            return -math.inf
        log_diagonal += math.log(factor[i, i])
        total += (k - i - 1 + 2.0 * LKJ_SHAPE - 2.0) * math.log(factor[i, i])
    total -= n_levels * log_diagonal
    sd = np.empty(MAX_CORRELATED_TERMS)
    for t in range(k):
        sd[t] = math.exp(theta[table[start + 3 + t]])
        total -= n_levels * theta[table[start + 3 + t]]
    a = np.empty(MAX_CORRELATED_TERMS)
    w = np.empty(MAX_CORRELATED_TERMS)
    v = np.empty(MAX_CORRELATED_TERMS)
    adjoint = np.zeros((MAX_CORRELATED_TERMS, MAX_CORRELATED_TERMS))  # d log p / d L
    sd_gradient = np.zeros(MAX_CORRELATED_TERMS)
    for g in range(n_levels):
        for t in range(k):
            e = table[start + 3 + k + t] + g
            a[t] = (theta[e] - prior.locations[e]) / sd[t]
        for i in range(k):  # w = L^-1 a
            acc = a[i]
            for j in range(i):
                acc -= factor[i, j] * w[j]
            w[i] = acc / factor[i, i]
            total -= 0.5 * w[i] * w[i]
        if not want_grad:
            continue
        for i in range(k - 1, -1, -1):  # v = L'^-1 w
            acc = w[i]
            for j in range(i + 1, k):
                acc -= factor[j, i] * v[j]
            v[i] = acc / factor[i, i]
        for t in range(k):
            e = table[start + 3 + k + t] + g
            gradient[e] -= power * v[t] / sd[t]
            sd_gradient[t] += v[t] * a[t]
            for j in range(t + 1):
                adjoint[t, j] += v[t] * w[j]
    if not want_grad:
        return total
    for t in range(k):
        gradient[table[start + 3 + t]] += power * (sd_gradient[t] - n_levels)
    # Back through L to the unconstrained coordinates, one row at a time.
    c = first
    for i in range(1, k):
        diagonal = adjoint[i, i] + (k - i - 1 + 2.0 * LKJ_SHAPE - 2.0 - n_levels) / factor[i, i]
        bar_squares = -0.5 * diagonal / remaining[i, i]  # d / d (sum of squares so far)
        for j in range(i - 1, -1, -1):
            bar_factor = adjoint[i, j] + 2.0 * factor[i, j] * bar_squares
            z = partial[i, j]
            bar_z = bar_factor * remaining[i, j]
            if j > 0:
                bar_remaining = bar_factor * z + 1.0 / remaining[i, j]
                bar_squares += -0.5 * bar_remaining / remaining[i, j]
            gradient[c + j] += power * (bar_z * (1.0 - z * z) - 2.0 * z)
        c += i
    return total

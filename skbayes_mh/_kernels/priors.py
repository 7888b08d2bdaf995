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
of -1 keep the base prior. An sd marked ``GROUP_SD_RESCALED`` instead of ``GROUP_SD`` has
the same prior; the Metropolis-Hastings chains then also move it with its effects
(``mh.py``: ``_rescale_move``).
"""
import math

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
#: ``scale_of[k]`` of a coordinate under the base prior.
BASE = -1


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
        if a <= GROUP_SD:  # GROUP_SD or GROUP_SD_RESCALED
            eta = theta[k]
            spread = math.exp(2.0 * eta) / prior.scales[k] ** 2
            total += eta - 0.5 * spread
            if want_grad:
                gradient[k] += power * (1.0 - spread)
        elif a >= 0:
            eta = theta[a]
            z = (theta[k] - prior.locations[k]) * math.exp(-eta)
            total += -0.5 * z * z - eta
            if want_grad:
                gradient[k] += power * (-z * math.exp(-eta))
                gradient[a] += power * (z * z - 1.0)
    return total

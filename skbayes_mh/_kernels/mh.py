"""The Metropolis-Hastings chain loop: a proposal (``proposals.py``) or a slice update
(``slice.py``), an acceptance test's decision (``decisions.py``: one signature, called
through the test's op), and the control-variate proxy sums, for either kind of model
(``specs.py``).
"""
import math
from collections import namedtuple

import numpy as np
from numba import types

from ._entry import TUPLE_FIELDS, entry_kernel
from ._jit import BOOL, F8, I8, RNG, STATUS_BAD_LOG_PRIOR, STATUS_OK, VECTOR, jit
from .decisions import decide
from .priors import (GROUP_SD_INTERWOVEN, GROUP_SD_RESCALED, MAX_CORRELATED_TERMS,
                     correlation_factor, log_prior_and_gradient)
from .proposals import HMC, MALA, hmc_step_count, move_functions, shape_times, shape_transpose_times
from ._common import borrow, borrow_workspace, copy_into, flag, keep_alive
from .pool import DENSE_POOL_MAX_ROWS, POOL, make_pool
from .rows import data_pass, make_workspace, n_rows, spec_log_prior
from .slice import register_target, slice_update
from .specs import CONTROL_VARIATES, MODEL, PRIOR, PROPOSAL, TEST, TRACE
from .views import cv_view, model_view, prior_view, proposal_view, rebind


@jit
def log_prior_total(spec, prior, theta, want_grad, gradient):
    """``(log p(theta), status)``: the built-in prior plus the model's own term; with
    ``want_grad`` the built-in prior's gradient is added to ``gradient``."""
    value = spec_log_prior(spec, theta)
    if math.isnan(value) or value == math.inf:
        return math.nan, STATUS_BAD_LOG_PRIOR
    return value + log_prior_and_gradient(prior, theta, want_grad, gradient), STATUS_OK


@jit
def full_loglik(spec, theta, want_grad, gradient, work):
    """``(sum_i w_i l_i(theta), status)`` over all rows; with ``want_grad`` its gradient is
    added to ``gradient``. A row at -inf makes the sum -inf (zero likelihood, valid); NaN or
    +inf is ``STATUS_BAD_LOGLIK``."""
    spec, theta, gradient, work = rebind(spec), rebind(theta), rebind(gradient), rebind(work)
    return data_pass(spec, theta, want_grad, gradient, work)


@jit
def proxy_total(cv, theta, want_grad, gradient, scale, buffer):
    """The proxies' full-data sum ``Q(theta) = G . delta + delta' H delta / 2`` with
    ``delta = phi(theta) - phi(c)`` (``phi`` the identity, or ``exp`` on ``cv.exp_coords``),
    0 without control variates; with ``want_grad`` ``scale * phi'(theta) (G + H delta)`` is
    added to ``gradient``. ``H delta`` reads ``H``'s CSR form where it has one (its
    nonzero entries in the same order: the same sums)."""
    if not cv.use:
        return 0.0
    d = theta.shape[0]
    sparse = cv.hess_indptr.shape[0] > 0
    mapped = cv.exp_coords.shape[0] > 0
    for a in range(d):
        if mapped and cv.exp_coords[a] != 0.0:
            buffer[a] = math.exp(theta[a]) - math.exp(cv.center[a])
        else:
            buffer[a] = theta[a] - cv.center[a]
    total = 0.0
    for a in range(d):
        hessian_times = 0.0
        if sparse:
            for k in range(cv.hess_indptr[a], cv.hess_indptr[a + 1]):
                hessian_times += cv.hess_values[k] * buffer[cv.hess_indices[k]]
        else:
            for b in range(d):
                hessian_times += cv.hess[a, b] * buffer[b]
        total += buffer[a] * (cv.grad[a] + 0.5 * hessian_times)
        if want_grad:
            slope = math.exp(theta[a]) if mapped and cv.exp_coords[a] != 0.0 else 1.0
            gradient[a] += scale * slope * (cv.grad[a] + hessian_times)
    return total


#: What the slice update evaluates in this sampler: the tempered full-data log posterior;
#: ``last`` keeps ``[loglik, log prior]`` of the last evaluation.
PosteriorContext = namedtuple("PosteriorContext", "spec prior inv_temperature work last")


@jit
def _posterior_value(context, point):
    spec, prior, inv_temperature, work, last = context
    prior_value, status = log_prior_total(spec, prior, point, flag(False), point)
    if status != STATUS_OK:
        return math.nan, status
    last[1] = prior_value
    if prior_value == -math.inf:
        last[0] = math.nan
        return -math.inf, STATUS_OK
    loglik, status = full_loglik(spec, point, flag(False), point, work)
    last[0] = loglik
    if status != STATUS_OK:
        return math.nan, status
    return prior_value + loglik * inv_temperature, STATUS_OK


register_target(PosteriorContext, _posterior_value)


@jit
def _gradient_at(spec, prior, cv, theta, exact, inv_temperature, gradient, work, buffer):
    """Gradient of the log target at ``theta`` (exact: full data; else the proxies), with
    the full-data log-likelihood when computed (NaN otherwise)."""
    gradient[:] = 0.0
    _, status = log_prior_total(spec, prior, theta, flag(True), gradient)
    if status != STATUS_OK:
        return math.nan, status
    if exact:
        loglik, status = _loglik_with_gradient(spec, theta, gradient, inv_temperature, work, buffer)
        return loglik, status
    proxy_total(cv, theta, flag(True), gradient, inv_temperature, buffer)
    return math.nan, STATUS_OK


@jit(inline="always")
def _test_inputs(exact, log_psi, loglik_change, proxy_change, impossible, inv_temperature):
    """``(log psi, delta)`` for a test's decision: an exact test's ``delta`` is the whole
    log ratio (-inf where the proposal's likelihood is 0) and a subsampling test's ``delta``
    is NaN, its control variates' proxy change joining ``log psi``."""
    if exact:
        return log_psi, -math.inf if impossible else (
            loglik_change * inv_temperature + log_psi)
    return log_psi + proxy_change * inv_temperature, math.nan


@jit(inline="always")
def _loglik_with_gradient(spec, theta, gradient, inv_temperature, work, buffer):
    """Full-data log-likelihood, adding its tempered gradient to ``gradient``."""
    buffer[:] = 0.0
    loglik, status = full_loglik(spec, theta, flag(True), buffer, work)
    for a in range(theta.shape[0]):
        gradient[a] += inv_temperature * buffer[a]
    return loglik, status


@jit(inline="always")
def _takes_rescaling_moves(code):
    """Whether an sd's ``scale_of`` entry ``code`` gives its chains rescaling moves
    (``GROUP_SD_RESCALED``, ``GROUP_SD_INTERWOVEN``)."""
    return code == GROUP_SD_RESCALED or code == GROUP_SD_INTERWOVEN


@jit(inline="always")
def _rescaled_effect(prior, k):
    """The coordinate of the log sd of ``k`` where ``k`` is an effect of an sd marked
    ``GROUP_SD_RESCALED``, else -1."""
    if prior.scale_of.shape[0] == 0:
        return -1
    a = prior.scale_of[k]
    if a >= 0 and prior.scale_of[a] == GROUP_SD_RESCALED:
        return a
    return -1


@jit(inline="always")
def _to_path(prior, theta, phi):
    """``phi``: ``theta`` in the coordinates of non-centred paths, each effect of an sd
    marked ``GROUP_SD_RESCALED`` as ``z_k = (theta_k - loc_k) / sd`` (``sd = exp(theta_a)``,
    its log sd's coordinate ``a`` unchanged)."""
    for k in range(theta.shape[0]):
        a = _rescaled_effect(prior, k)
        phi[k] = theta[k] if a < 0 else (theta[k] - prior.locations[k]) * math.exp(-theta[a])


@jit(inline="always")
def _from_path(prior, phi, theta):
    """The inverse of :func:`_to_path`: ``theta_k = loc_k + exp(phi_a) phi_k``."""
    for k in range(phi.shape[0]):
        a = _rescaled_effect(prior, k)
        theta[k] = phi[k] if a < 0 else prior.locations[k] + math.exp(phi[a]) * phi[k]


@jit(inline="always")
def _path_gradient(prior, theta, gradient, out):
    """``out``: the gradient in the coordinates of :func:`_to_path` of the log target plus
    the log Jacobian ``sum_k phi_a(k)`` (one per rescaled effect), from ``gradient`` (the
    log target's in ``theta``): ``sd g_k`` on an effect, and on its log sd ``g_a`` plus
    ``(theta_k - loc_k) g_k + 1`` for each of its effects."""
    d = theta.shape[0]
    for a in range(d):
        out[a] = gradient[a]
    for k in range(d):
        a = _rescaled_effect(prior, k)
        if a >= 0:
            out[k] = gradient[k] * math.exp(theta[a])
            out[a] += (theta[k] - prior.locations[k]) * gradient[k] + 1.0


@jit(inline="always")
def _hmc_move(spec, prior, proposal, cv, exact, inv_temperature, theta, gradient, rng,
              momentum, vectors, theta_prop, gradient_prop, work, buffer):
    """One Hamiltonian path from ``theta`` (``gradient``: the log target's there) to
    ``theta_prop``, leaving the log target's gradient at its end in ``gradient_prop``: the
    leapfrog integrator in the coordinates the proposal shape whitens (see
    ``proposals.py``), with the full-data gradient (exact tests) or the control variates'
    proxy.

    With ``paths`` (an sd marked ``GROUP_SD_RESCALED``), the path runs in the coordinates
    of :func:`_to_path`, where those sds' effects are non-centred (``z = e / sd``), and
    ``proposal``'s shape is in those coordinates (``sampling/_shape.py``:
    ``NonCentredPaths``): the leapfrog integrator is volume-preserving there, so the path
    is exact for the log target plus the log Jacobian of ``theta(phi)``, whose change
    enters the log ratio.

    Returns ``(status, log prior at theta', loglik at theta' (NaN unless exact),
    log ratio |p|^2 / 2 - |p'|^2 / 2 (plus the log Jacobian's change), rows read)``; a
    path that leaves the prior's support or overflows ends with log prior ``-inf``
    (rejected).
    """
    spec, prior, proposal, cv = rebind(spec), rebind(prior), rebind(proposal), rebind(cv)
    d = theta.shape[0]
    n = n_rows(spec)
    whitened_gradient, velocity, position = vectors[0], vectors[1], vectors[2]
    paths = False
    for k in range(d):
        paths = paths or _rescaled_effect(prior, k) >= 0
    kinetic = 0.0
    for a in range(d):
        momentum[a] = rng.standard_normal()
        kinetic += 0.5 * momentum[a] * momentum[a]
        theta_prop[a] = theta[a]
    step = proposal.scale
    if paths:
        _to_path(prior, theta, position)
        _path_gradient(prior, theta, gradient, buffer)
        shape_transpose_times(proposal, buffer, whitened_gradient)
    else:
        copy_into(position, theta)
        shape_transpose_times(proposal, gradient, whitened_gradient)
    loglik = math.nan
    n_read = 0
    for _ in range(hmc_step_count(proposal, rng)):
        for a in range(d):
            momentum[a] += 0.5 * step * whitened_gradient[a]
        shape_times(proposal, momentum, velocity)
        for a in range(d):
            position[a] += step * velocity[a]
        if paths:
            _from_path(prior, position, theta_prop)
        else:
            copy_into(theta_prop, position)
        diverged = False
        for a in range(d):
            diverged = diverged or not math.isfinite(theta_prop[a])
        if diverged:
            return STATUS_OK, -math.inf, math.nan, math.nan, n_read  # overflowed: reject
        loglik, status = _gradient_at(spec, prior, cv, theta_prop, flag(exact), inv_temperature,
                                      gradient_prop, work, buffer)
        if exact:
            n_read += n
        if status != STATUS_OK:
            return status, math.nan, math.nan, math.nan, n_read
        if not math.isfinite(loglik) and exact:
            return STATUS_OK, -math.inf, loglik, math.nan, n_read  # zero likelihood: reject
        if paths:
            _path_gradient(prior, theta_prop, gradient_prop, buffer)
            shape_transpose_times(proposal, buffer, whitened_gradient)
        else:
            shape_transpose_times(proposal, gradient_prop, whitened_gradient)
        for a in range(d):
            momentum[a] += 0.5 * step * whitened_gradient[a]
    kinetic_prop = 0.0
    for a in range(d):
        kinetic_prop += 0.5 * momentum[a] * momentum[a]
    log_ratio = kinetic - kinetic_prop
    if paths:  # the log Jacobian's change: sum over rescaled effects of their log sd's
        for k in range(d):
            a = _rescaled_effect(prior, k)
            if a >= 0:
                log_ratio += theta_prop[a] - theta[a]
    prior_prop, status = log_prior_total(spec, prior, theta_prop, flag(False), buffer)
    if not math.isfinite(log_ratio):
        prior_prop = -math.inf  # a diverging path: reject
    return status, prior_prop, loglik, log_ratio, n_read


#: The scales of a rescaling move's log factor (``_rescale_proposal``), one drawn at random
#: each move: the log sd's width given the effects' pattern ranges from a few hundredths
#: (many groups) to about one (a few), and a random walk's best scale is about 2.4 widths.
RESCALE_STEPS = (0.1, 0.3, 1.0)
RESCALE_MOVES = 4


@jit
def _rescale_proposal(sd_index, prior, theta, rng, theta_prop):
    """A rescaling move of a group-level term (its sd's coordinate ``sd_index``, marked
    ``GROUP_SD_RESCALED``): the log sd moves by ``log c ~ N(0, t^2)`` (``t`` one of
    :data:`RESCALE_STEPS` at random) and each of its ``m`` effects ``e_k`` to ``loc_k + c
    (e_k - loc_k)``, the non-centred update of the sd. The map is its own inverse at
    ``1 / c``, equally likely, and its Jacobian is ``c^m``, so the move is exact with log
    ratio ``m log c`` (Green 1995); the effects' prior ratio ``c^-m`` cancels it, leaving
    the sd's prior and the likelihood to decide, tested as any move
    (:func:`_transformed_move`). Where few rows inform each effect, the centred effects pin
    the sd, and this move frees it (Yu and Meng 2011, "To center or not to center").

    Writes the proposal into ``theta_prop`` and returns its log Jacobian. Compiled on its
    own (it reads no data), once for every layout."""
    d = theta.shape[0]
    u = rng.random()
    step = RESCALE_STEPS[0] if u < 1.0 / 3.0 else (RESCALE_STEPS[1] if u < 2.0 / 3.0
                                                   else RESCALE_STEPS[2])
    log_factor = step * rng.standard_normal()
    factor = math.exp(log_factor)
    n_effects = 0
    for a in range(d):
        theta_prop[a] = theta[a]
        if prior.scale_of[a] == sd_index:
            theta_prop[a] = prior.locations[a] + factor * (theta[a] - prior.locations[a])
            n_effects += 1
    theta_prop[sd_index] = theta[sd_index] + log_factor
    return n_effects * log_factor


@jit(inline="always")
def _transformed_move(log_jacobian, spec, prior, cv, exact, want_grad, inv_temperature, theta,
                      gradient, rng, theta_prop, gradient_prop, work, buffer, context, current):
    """Decide a move from ``theta`` to ``theta_prop`` made by a map that is its own inverse
    at the reverse proposal (equally likely), of log Jacobian ``log_jacobian``: the prior,
    likelihood (the full data, or a subsampling test with its proxies) and Jacobian decide,
    as for any move. ``current`` is ``[log prior, loglik, proxy]`` at ``theta``, updated on
    acceptance (with ``theta`` and, with ``want_grad``, ``gradient``). Returns ``(status,
    rows read)``."""
    if want_grad:
        gradient_prop[:] = 0.0
    prior_prop, status = log_prior_total(spec, prior, theta_prop, want_grad, gradient_prop)
    if status != STATUS_OK or prior_prop == -math.inf:
        return status, 0
    n_read = 0
    loglik_prop, proxy_prop = math.nan, 0.0
    if exact:
        if want_grad:
            loglik_prop, status = _loglik_with_gradient(spec, theta_prop, gradient_prop,
                                                        inv_temperature, work, buffer)
        else:
            loglik_prop, status = full_loglik(spec, theta_prop, flag(False), buffer, work)
        n_read = n_rows(spec)
        if status != STATUS_OK:
            return status, n_read
    else:
        proxy_prop = proxy_total(cv, theta_prop, want_grad, gradient_prop, inv_temperature,
                                 buffer)
    log_psi, delta = _test_inputs(exact, prior_prop - current[0] + log_jacobian,
                                  loglik_prop - current[1], proxy_prop - current[2],
                                  loglik_prop == -math.inf, inv_temperature)
    accepted, rows, status = decide(context, theta, theta_prop, log_psi, delta, rng)
    n_read += rows
    if status != STATUS_OK:
        return status, n_read
    if accepted:
        copy_into(theta, theta_prop)
        current[0], current[1], current[2] = prior_prop, loglik_prop, proxy_prop
        if want_grad:
            copy_into(gradient, gradient_prop)
    return STATUS_OK, n_read


@jit
def _moving_groupings(prior):
    """Per entry of ``prior.correlations``: where a correlated grouping with a rescaled term
    starts (its correlations then take :func:`_correlation_proposal`'s moves), else -1."""
    table = prior.correlations
    out = np.full(table.shape[0], -1, dtype=np.int64)
    start = 0
    while start < table.shape[0]:
        if _rescaled_grouping(prior, start):
            out[start] = start
        start += 3 + 2 * table[start]
    return out


@jit
def _rescaled_grouping(prior, start):
    """Whether the correlated grouping at ``start`` of ``prior.correlations`` has a term whose
    sd is marked ``GROUP_SD_RESCALED``."""
    table = prior.correlations
    for t in range(table[start]):
        if _takes_rescaling_moves(prior.scale_of[table[start + 3 + t]]):
            return True
    return False


@jit
def _correlation_proposal(start, prior, theta, rng, theta_prop):
    """A move of a correlated grouping's correlations (its table at ``start`` in
    ``prior.correlations``) that carries the effects with them: one of its unconstrained
    correlation coordinates moves by ``N(0, t^2)`` (``t`` one of :data:`RESCALE_STEPS`),
    changing the Cholesky factor ``L`` to ``L'``, and each level's effects move to ``loc +
    sd L' L^-1 (u - loc) / sd``, so that their whitened values ``L^-1 (u - loc) / sd`` stay
    put: the non-centred update of the correlations, which where few rows inform each
    effect the centred effects pin. The map is its own inverse at the reverse step, with
    log Jacobian ``G sum_i log(L'_ii / L_ii)`` (``G`` levels); it is decided as any move
    (:func:`_transformed_move`).

    Writes the proposal into ``theta_prop`` and returns its log Jacobian (NaN: no move, a
    correlation at +-1 in floating point). Compiled on its own (it reads no data), once
    for every layout."""
    table = prior.correlations
    k, n_levels, first = table[start], table[start + 1], table[start + 2]
    d = theta.shape[0]
    for a in range(d):
        theta_prop[a] = theta[a]
    u = rng.random()
    step = RESCALE_STEPS[0] if u < 1.0 / 3.0 else (RESCALE_STEPS[1] if u < 2.0 / 3.0
                                                   else RESCALE_STEPS[2])
    n_pairs = k * (k - 1) // 2
    c = first + min(int(rng.random() * n_pairs), n_pairs - 1)
    theta_prop[c] = theta[c] + step * rng.standard_normal()
    size = MAX_CORRELATED_TERMS
    factor, factor_prop = np.zeros((size, size)), np.zeros((size, size))
    partial, remaining = np.zeros((size, size)), np.ones((size, size))
    correlation_factor(theta, first, k, factor, partial, remaining)
    correlation_factor(theta_prop, first, k, factor_prop, partial, remaining)
    log_jacobian = 0.0
    for i in range(1, k):
        if factor_prop[i, i] <= 0.0 or factor[i, i] <= 0.0:
            return math.nan
        log_jacobian += n_levels * math.log(factor_prop[i, i] / factor[i, i])
    sd = np.empty(size)
    for t in range(k):
        sd[t] = math.exp(theta[table[start + 3 + t]])
    whitened = np.empty(size)
    for g in range(n_levels):
        for i in range(k):  # whitened = L^-1 (u - loc) / sd
            e = table[start + 3 + k + i] + g
            acc = (theta[e] - prior.locations[e]) / sd[i]
            for j in range(i):
                acc -= factor[i, j] * whitened[j]
            whitened[i] = acc / factor[i, i]
        for i in range(k):  # u' = loc + sd L' whitened
            e = table[start + 3 + k + i] + g
            acc = 0.0
            for j in range(i + 1):
                acc += factor_prop[i, j] * whitened[j]
            theta_prop[e] = prior.locations[e] + sd[i] * acc
    return log_jacobian


@jit(inline="always")
def mh_loop(spec, prior, proposal, cv, inv_temperature, chain, rng, trace, exact_loop, passed):
    """Run ``trace.draws.shape[0]`` iterations, updating ``chain`` (:data:`MHChain`) in
    place.

    ``exact_loop`` (the constant ``True`` or ``False`` in the entry kernel this loop is
    inlined into) says which tests the loop runs: the exact ones (True), for which it
    computes the full-data log ratio ``delta``, or the subsampling tests, whose log ratio is
    the proxies' where they have control variates. The test decides through its op
    (``decisions.decide``); ``passed`` is ``(model, test, cv)`` as Python passed them to
    the entry kernel (arrays borrowed).

    In ``chain``, ``cache[0]`` is the full-data log-likelihood at ``theta`` when known (NaN
    otherwise: it is then computed here if the test or update needs it), and ``gradient``
    the log target's gradient at ``theta`` (MALA; current whenever ``cache[0]`` is known,
    recomputed otherwise); ``pool`` is the chain's pool of random rows (``pool.py``; an
    empty one for the exact tests). Per iteration ``trace`` (:data:`~.specs.Trace`)
    receives theta, whether it moved, the data rows read, and the tempered log posterior
    where the full-data log-likelihood is known (NaN where it is not, as for the
    subsampling tests). After each move, each group-level sd marked ``GROUP_SD_RESCALED``
    takes a rescaling move (:func:`_rescale_proposal`); ``trace``'s acceptance is the move's
    (the one its scale is tuned by), its rows read include the rescaling moves'.

    Returns ``(status, iteration)``: ``STATUS_OK`` and -1, or the first failure.
    """
    spec, prior, proposal, cv = rebind(spec), rebind(prior), rebind(proposal), rebind(cv)
    theta, cache, gradient, pool = chain
    theta, cache, gradient = rebind(theta), rebind(cache), rebind(gradient)
    out_draws, out_accepted, out_n_read, out_lp, _ = trace
    n_iter, d = out_draws.shape
    n = n_rows(spec)
    # Scratch, borrowed (see ``_common.borrow``) and kept alive to the end.
    owners = (make_workspace(spec, d), np.empty((6, d)))
    work = borrow_workspace(owners[0])
    vectors = (borrow(owners[1][0]), borrow(owners[1][1]), borrow(owners[1][2]))
    noise = borrow(owners[1][3])
    theta_prop = borrow(owners[1][4])
    gradient_prop = borrow(owners[1][5])
    buffer = np.empty(d)
    exact = flag(exact_loop)
    scratch = np.empty(0 if exact else n)
    pool = rebind(pool)
    model, passed_test, passed_cv = passed
    context = (model, inv_temperature, passed_test, passed_cv, (work, vectors), pool, scratch)
    want_grad = proposal.kind == MALA or proposal.kind == HMC
    propose, proposal_log_ratio = move_functions(proposal)

    log_prior_current, status = log_prior_total(spec, prior, theta, flag(False), buffer)
    if status != STATUS_OK:
        return status, 0
    loglik_current = cache[0]
    pending_reads = 0
    if exact and math.isnan(loglik_current):
        if want_grad:
            loglik_current, status = _gradient_at(spec, prior, cv, theta, flag(True),
                                                  inv_temperature, gradient, work, buffer)
        else:
            loglik_current, status = full_loglik(spec, theta, flag(False), buffer, work)
        pending_reads = n
        if status != STATUS_OK:
            return status, 0
    elif want_grad and not exact:
        _gradient_at(spec, prior, cv, theta, flag(False), inv_temperature, gradient, work, buffer)
    proxy_current = proxy_total(cv, theta, flag(False), buffer, 0.0, buffer)
    rescaled = 0
    for a in range(prior.scale_of.shape[0]):
        if _takes_rescaling_moves(prior.scale_of[a]):
            rescaled += 1
    correlated = _moving_groupings(prior)
    current = np.empty(3)

    for it in range(n_iter):
        n_read = pending_reads
        pending_reads = 0
        accepted = False
        if proposal.kind == HMC:
            status, prior_prop, loglik_prop, log_ratio, reads = _hmc_move(
                spec, prior, proposal, cv, exact, inv_temperature, theta, gradient, rng,
                noise, vectors, theta_prop, gradient_prop, work, buffer)
            n_read += reads
            if status != STATUS_OK:
                return status, it
            proxy_prop = 0.0 if exact else proxy_total(cv, theta_prop, flag(False), buffer, 0.0,
                                                       buffer)
        else:
            propose(proposal, theta, gradient, rng, noise, vectors, theta_prop)
            if want_grad:
                gradient_prop[:] = 0.0
            prior_prop, status = log_prior_total(spec, prior, theta_prop, want_grad,
                                                 gradient_prop)
            if status != STATUS_OK:
                return status, it
        # A proposal outside the prior's support is rejected unread.
        if prior_prop > -math.inf:
            if proposal.kind != HMC:
                loglik_prop = math.nan
                if exact:
                    if want_grad:
                        loglik_prop, status = _loglik_with_gradient(
                            spec, theta_prop, gradient_prop, inv_temperature, work, buffer)
                    else:
                        loglik_prop, status = full_loglik(spec, theta_prop, flag(False), buffer,
                                                          work)
                    n_read += n
                    if status != STATUS_OK:
                        return status, it
                    proxy_prop = 0.0
                else:
                    proxy_prop = proxy_total(cv, theta_prop, want_grad, gradient_prop,
                                             inv_temperature, buffer)
                log_ratio = proposal_log_ratio(proposal, theta, theta_prop, gradient_prop,
                                               noise, vectors)
            log_psi, delta = _test_inputs(exact, prior_prop - log_prior_current + log_ratio,
                                          loglik_prop - loglik_current,
                                          proxy_prop - proxy_current,
                                          loglik_prop == -math.inf, inv_temperature)
            accepted, rows, status = decide(context, theta, theta_prop, log_psi, delta, rng)
            n_read += rows
            if status != STATUS_OK:
                return status, it
            if accepted:
                copy_into(theta, theta_prop)
                log_prior_current = prior_prop
                loglik_current = loglik_prop
                proxy_current = proxy_prop
                if want_grad:
                    copy_into(gradient, gradient_prop)
        if rescaled > 0:
            current[0], current[1], current[2] = log_prior_current, loglik_current, proxy_current
            # Each rescaled sd's moves, then each correlated grouping's (one call site of
            # the decision, which holds the likelihood's code, inlined once).
            for slot in range((d + correlated.shape[0]) * RESCALE_MOVES):
                a = slot % d if slot < d * RESCALE_MOVES else -1
                if a >= 0:
                    if not _takes_rescaling_moves(prior.scale_of[a]):
                        continue
                    log_jacobian = _rescale_proposal(a, prior, theta, rng, theta_prop)
                else:
                    start = correlated[(slot - d * RESCALE_MOVES) // RESCALE_MOVES]
                    if start < 0:
                        continue
                    log_jacobian = _correlation_proposal(start, prior, theta, rng, theta_prop)
                    if math.isnan(log_jacobian):
                        continue
                status, reads = _transformed_move(log_jacobian, spec, prior, cv, exact,
                                                  want_grad, inv_temperature, theta, gradient,
                                                  rng, theta_prop, gradient_prop, work, buffer,
                                                  context, current)
                n_read += reads
                if status != STATUS_OK:
                    return status, it
            log_prior_current, loglik_current, proxy_current = current[0], current[1], current[2]
        copy_into(out_draws[it], theta)
        out_accepted[it] = accepted
        out_n_read[it] = n_read
        out_lp[it] = log_prior_current + loglik_current * inv_temperature
    cache[0] = loglik_current
    keep_alive(owners)
    return STATUS_OK, -1


@jit(inline="always")
def slice_loop(spec, prior, proposal, inv_temperature, chain, rng, trace):
    """:func:`mh_loop` for slice updates (``slice.py``), which evaluate the full-data
    posterior at every point they try: ``trace.n_read`` counts N rows per evaluation, and
    ``chain.cache[0]`` keeps the log-likelihood at ``theta`` as in :func:`mh_loop`."""
    spec, prior, proposal = rebind(spec), rebind(prior), rebind(proposal)
    theta, cache, _, _ = chain
    theta, cache = rebind(theta), rebind(cache)
    out_draws, out_accepted, out_n_read, out_lp, _ = trace
    n_iter, d = out_draws.shape
    n = n_rows(spec)
    owners = (make_workspace(spec, d), np.empty((3, d)), np.full(2, math.nan))
    work = borrow_workspace(owners[0])
    unit, direction, point = borrow(owners[1][0]), borrow(owners[1][1]), borrow(owners[1][2])
    last = borrow(owners[2])
    context = PosteriorContext(spec, prior, inv_temperature, work, last)
    log_prior_current, status = log_prior_total(spec, prior, theta, flag(False), point)
    if status != STATUS_OK:
        return status, 0
    loglik_current = cache[0]
    pending_reads = 0
    if math.isnan(loglik_current):
        loglik_current, status = full_loglik(spec, theta, flag(False), point, work)
        pending_reads = n
        if status != STATUS_OK:
            return status, 0
    for it in range(n_iter):
        current = log_prior_current + loglik_current * inv_temperature
        _, accepted, n_evaluations, status = slice_update(context, theta, current, proposal,
                                                          rng, unit, direction, point)
        if status != STATUS_OK:
            return status, it
        # The last evaluation was at the returned theta.
        loglik_current, log_prior_current = last[0], last[1]
        copy_into(out_draws[it], theta)
        out_accepted[it] = accepted
        out_n_read[it] = pending_reads + n_evaluations * n
        pending_reads = 0
        out_lp[it] = log_prior_current + loglik_current * inv_temperature
    cache[0] = loglik_current
    keep_alive(owners)
    return STATUS_OK, -1


@jit(inline="always")
def repeat_loop(spec, cv, passed, exact, theta, theta_prop, log_psi, inv_temperature, rng,
                n_trials):
    """Run one acceptance test ``n_trials`` times on the same pair ``(theta, theta')``;
    ``exact`` says whether it is an exact test (``passed`` as in :func:`mh_loop`).

    Returns ``(n_accepted, n_data_read, status)``. Each trial starts with nothing cached, so
    an exact test reads ``2 N`` rows per trial here.
    """
    d = theta.shape[0]
    n = n_rows(spec)
    owners = (make_workspace(spec, d), np.empty((3, d)))
    work = borrow_workspace(owners[0])
    vectors = (borrow(owners[1][0]), borrow(owners[1][1]), borrow(owners[1][2]))
    pool = make_pool(n, n <= DENSE_POOL_MAX_ROWS)
    scratch = np.empty(n)
    model, passed_test, passed_cv = passed
    context = (model, inv_temperature, passed_test, passed_cv, (work, vectors), pool, scratch)
    n_accepted = 0
    n_read = 0
    if not exact:
        # With control variates the test reads residuals: the proxies' exact change joins
        # log_psi, as in the chain loop (0 without them).
        buffer = np.empty(d)
        log_psi += inv_temperature * (proxy_total(cv, theta_prop, flag(False), buffer, 0.0, buffer)
                                      - proxy_total(cv, theta, flag(False), buffer, 0.0, buffer))
    for _ in range(n_trials):
        delta = math.nan
        if exact:
            current, status = full_loglik(spec, theta, flag(False), vectors[0], work)
            if status != STATUS_OK:
                return n_accepted, n_read, status
            proposed, status = full_loglik(spec, theta_prop, flag(False), vectors[0], work)
            if status != STATUS_OK:
                return n_accepted, n_read, status
            n_read += 2 * n
            delta = -math.inf if proposed == -math.inf else (
                (proposed - current) * inv_temperature + log_psi)
        accepted, rows, status = decide(context, theta, theta_prop, log_psi, delta, rng)
        if status != STATUS_OK:
            return n_accepted, n_read, status
        n_accepted += accepted
        n_read += rows
    keep_alive(owners)
    return n_accepted, n_read, STATUS_OK


#: A Metropolis-Hastings chain's state, updated in place: ``theta``, the full-data
#: log-likelihood there (``cache[0]``, NaN: unknown; a one-element array because a run
#: stops and resumes with it), the log target's gradient (MALA) and the chain's pool of
#: random rows (``pool.py``).
MHChain = namedtuple("MHChain", "theta cache gradient pool")
MH_CHAIN = types.Tuple((VECTOR, VECTOR, VECTOR, POOL))
TUPLE_FIELDS[MH_CHAIN] = MHChain
_CHAIN_ARGS = (PRIOR, PROPOSAL, TEST, CONTROL_VARIATES, F8, MH_CHAIN, RNG, TRACE)
_CHAIN_RESULT = types.Tuple((I8, I8))


_CHAIN_SIGNATURE = _CHAIN_RESULT(MODEL, *_CHAIN_ARGS)


@entry_kernel(_CHAIN_SIGNATURE)
def mh_exact(model, prior, proposal, test, cv, inv_temperature, chain, rng, trace):
    """:func:`mh_loop` with an exact test, for every model (:data:`.specs.Model`)."""
    return mh_loop(model_view(model), prior_view(prior), proposal_view(proposal), cv_view(cv),
                   inv_temperature, chain, rng, trace, True, rebind((model, test, cv)))


@entry_kernel(_CHAIN_SIGNATURE)
def mh_subsampled(model, prior, proposal, test, cv, inv_temperature, chain, rng, trace):
    """:func:`mh_loop` with a subsampling test, for every model."""
    return mh_loop(model_view(model), prior_view(prior), proposal_view(proposal), cv_view(cv),
                   inv_temperature, chain, rng, trace, False, rebind((model, test, cv)))


@entry_kernel(_CHAIN_SIGNATURE)
def slice_chain(model, prior, proposal, test, cv, inv_temperature, chain, rng, trace):
    """:func:`slice_loop` for every model (``test`` and ``cv`` unused)."""
    return slice_loop(model_view(model), prior_view(prior), proposal_view(proposal),
                      inv_temperature, chain, rng, trace)


#: The entry kernel of a chain by update: ``"exact"`` (an exact test), ``"subsampled"`` (a
#: subsampling test) or ``"slice"``. Each compiles only its own code, once for every model
#: and data layout (``layouts.py``).
CHAIN_KERNELS = {"exact": mh_exact, "subsampled": mh_subsampled, "slice": slice_chain}


@entry_kernel(types.Tuple((I8, I8, I8))(MODEL, TEST, CONTROL_VARIATES, BOOL, VECTOR, VECTOR, F8,
                                        F8, RNG, I8))
def repeat_test(model, test, cv, exact, theta, theta_prop, log_psi, inv_temperature, rng,
                n_trials):
    """:func:`repeat_loop` for every model (:data:`.specs.Model`); ``exact``: whether the
    test is an exact one."""
    return repeat_loop(model_view(model), cv_view(cv), rebind((model, test, cv)), exact,
                       borrow(theta), borrow(theta_prop), log_psi, inv_temperature, rng,
                       n_trials)

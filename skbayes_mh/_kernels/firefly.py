"""Firefly Monte Carlo (Maclaurin and Adams, UAI 2014): exact MCMC on the joint of the
parameters and brightness variables ``z_n``, touching only the bright data points.

With per-row likelihoods ``L_n(theta)`` and lower bounds ``0 < B_n(theta) <= L_n(theta)``,
``p(z_n = 1 | theta) = 1 - B_n / L_n`` and the joint is

    p(theta, z) ~ p(theta) prod_n B_n(theta) prod_{z_n = 1} (L_n(theta) / B_n(theta) - 1).

``sum_n log B_n`` collapses into sufficient statistics (``specs.FireflyBound``), computed
once, so each evaluation costs ``O(d^2)`` plus one likelihood query per bright point. A
model supplies its link and its per-row bound in ``u`` (``specs.py``); the kernel does the
rest. Every ``l_n`` and ``b_n`` here is tempered and weighted (``w_n / K`` times the row's).

The bright set is a bit per row (``bright_bits``, N / 8 bytes) and the list of the bright
rows (``bright_rows[:n_bright]``), with each bright point's cached ``l - b`` (and gradient
in ``u``) at the same position: brightening appends, darkening compacts the list, and a
dark point is found by testing its bit. The per-point arrays are reserved at N entries but
only their first ``n_bright`` are ever written, so memory follows the bright set, not N.

The parameter update is any of the shared ones (``proposals.py``, ``slice.py``) on the
pseudo-posterior ``p(theta | z)``, accepted exactly; then the brightness update given
theta: ``IMPLICIT`` (Algorithm 2: every bright point proposed dark, each dark point proposed
bright with probability ``q_db``, visited by geometric jumps over the rows that skip the
bright ones) or ``EXPLICIT`` (Algorithm 1: ``resample_count`` random points redrawn from
``p(z_n | theta)``).
"""
import math
from collections import namedtuple

import numpy as np
from numba import types

from ._common import (address_of, borrow, borrow_for_user, borrow_workspace, copy_into, flag,
                      integer, keep_alive, log_expm1)
from ._entry import by_data_layout, entry_kernel
from ._jit import BOOL, F8, I8, MATRIX, RNG, STATUS_BAD_LOGLIK, STATUS_OK, VECTOR, jit, readonly
from .linear import add_gradient, linear_u
from .mh import log_prior_total
from .pool import DENSE_POOL_MAX_ROWS, draw_rows, make_pool
from .proposals import MALA, SLICE, propose, proposal_log_ratio
from .rows import make_workspace, row_label, row_weight
from .slice import register_target, slice_update
from .specs import (BRIGHTNESS_UPDATE, FIREFLY_BOUND, FIREFLY_CHAIN, FIREFLY_MODEL, IN_VECTOR,
                    LINEAR_SPECS, PRIOR, PROPOSAL, QUERY_CONTEXT, TRACE)
from .views import (as_functions, bound_view, firefly_model_view, linear_view, prior_view,
                    proposal_view, rebind)

IMPLICIT = 0
EXPLICIT = 1


@jit(inline="always")
def bound_value(spec, bound, u, u_tangent, y, want_slope, slope, coefficient_l, coefficient_a):
    """The row's lower bound ``b(u)`` (untempered, unweighted); with ``want_slope``,
    ``slope`` receives ``db/du``."""
    n_outputs = spec.n_outputs
    c, c0, s = bound.coefficients(u_tangent, y, spec.params, bound.bound_params, coefficient_l,
                                  coefficient_a)
    log_scale = u[n_outputs] if spec.n_extra > 0 else bound.fixed_log_scale
    weight = math.exp(-2.0 * log_scale)
    linear = 0.0
    square = 0.0
    for k in range(n_outputs):
        curved = 0.0
        for m in range(n_outputs):
            curved += coefficient_a[k, m] * u[m]
        linear += coefficient_l[k] * u[k]
        square += u[k] * curved
        if want_slope:
            slope[k] = weight * (coefficient_l[k] - curved)
    inner = c + linear - 0.5 * square
    if want_slope and spec.n_extra > 0:
        slope[n_outputs] = -2.0 * weight * inner - s
    return weight * inner + c0 - s * log_scale


@jit(inline="always")
def point_terms(spec, bound, theta, i, inv_temperature, want_slope, slope, work, bound_work):
    """``(l_i, b_i)`` at ``theta`` (tempered and weighted); with ``want_slope``, ``slope``
    receives ``d(l_i - b_i) / du``."""
    u, _, _, d1, d2 = work
    bound_slope, coefficient_l, coefficient_a, u_tangent = bound_work
    linear_u(spec, theta, i, u)
    if bound.tangent_u.shape[0] > 0:
        for a in range(u_tangent.shape[0]):
            u_tangent[a] = bound.tangent_u[i, a]
    else:
        linear_u(spec, bound.tangent, i, u_tangent)
    y = row_label(spec, i)
    scale = row_weight(spec.weights, i) * inv_temperature
    loglik = spec.link(u, y, spec.params, 1 if want_slope else 0, d1, d2)
    log_bound = bound_value(spec, bound, u, u_tangent, y, want_slope, bound_slope,
                            coefficient_l, coefficient_a)
    if want_slope:
        for a in range(u.shape[0]):
            slope[a] = scale * (d1[a] - bound_slope[a])
    return scale * loglik, scale * log_bound


@jit(inline="always")
def query_context(bound, work, bound_work):
    """The address of what a query reads besides its row (:data:`.specs.QUERY_CONTEXT`), for
    the model's ``point_terms`` (valid in the function this is inlined into)."""
    return address_of((bound, work, bound_work), QUERY_CONTEXT)


@jit
def make_bound_work(spec):
    """Scratch for :func:`point_terms`: the bound's slope, its coefficients ``l``, ``A``, and
    the row's ``u`` at the tangent parameters."""
    m = spec.n_outputs + spec.n_extra
    return (np.empty(m), np.empty(spec.n_outputs), np.empty((spec.n_outputs, spec.n_outputs)),
            np.empty(m))


@jit(inline="always")
def borrow_bound_work(bound_work):
    """:func:`borrow` each scratch array of :func:`make_bound_work`."""
    return (borrow(bound_work[0]), borrow(bound_work[1]), borrow(bound_work[2]),
            borrow(bound_work[3]))


@jit
def collapsed(bound, theta, n_linear, want_grad, gradient):
    """``sum_n log B_n(theta)`` from the collapsed statistics; with ``want_grad``, its
    gradient is added to ``gradient``."""
    quad = bound.quad
    value = bound.const
    for a in range(n_linear):
        q_theta = 0.0
        for b in range(n_linear):
            q_theta += quad[a, b] * theta[b]
        value += theta[a] * (bound.lin[a] - 0.5 * q_theta)
        if want_grad:
            gradient[a] += bound.lin[a] - q_theta  # rescaled below with a log-scale
    if theta.shape[0] > n_linear:
        log_scale = theta[n_linear]
    else:
        log_scale = bound.fixed_log_scale
    weight = math.exp(-2.0 * log_scale)
    if weight != 1.0 and want_grad:
        for a in range(n_linear):
            gradient[a] *= weight  # only this function has added to the linear part yet
    if theta.shape[0] > n_linear and want_grad:
        gradient[n_linear] += -2.0 * weight * value - bound.scale_count
    return weight * value - bound.scale_count * log_scale


@jit
def pseudo_posterior(spec, prior, bound, theta, bright_rows, n_bright, inv_temperature, diffs,
                     want_grad, gradient, slopes, work, bound_work):
    """``(log p(theta, z), status)`` up to a constant for the bright set
    ``bright_rows[:n_bright]``: ``n_bright`` likelihood queries. ``diffs[p]`` receives
    ``l - b`` of the ``p``-th bright point; with ``want_grad``, ``gradient`` is set to the
    gradient and ``slopes[p]`` to the point's ``d(l - b) / du``."""
    spec, prior, bound, work, bound_work = (rebind(spec), rebind(prior), rebind(bound),
                                            rebind(work), rebind(bound_work))
    theta, bright_rows, diffs, gradient, slopes = (rebind(theta), rebind(bright_rows),
                                                   rebind(diffs), rebind(gradient),
                                                   rebind(slopes))
    query = query_context(bound, work, bound_work)
    n_linear = spec.n_outputs * spec.width
    if want_grad:
        gradient[:] = 0.0
    value = collapsed(bound, theta, n_linear, want_grad, gradient)
    prior_value, status = log_prior_total(spec, prior, theta, want_grad, gradient)
    if status != STATUS_OK:
        return math.nan, status
    value += prior_value
    return spec.bright_part(spec.layout, query, value, theta, bright_rows, n_bright,
                            inv_temperature, want_grad, diffs, slopes, gradient)


@jit(inline="always")
def bright_part(spec, bound, value, theta, bright_rows, n_bright, inv_temperature, want_grad,
                diffs, slopes, gradient, work, bound_work):
    """The bright points' part of :func:`pseudo_posterior` for a linear model's spec (the
    ``bright_part`` op of ``specs.FireflyModel``): ``(value + sum_p log(exp(l - b) - 1),
    status)``, with ``diffs`` and, with ``want_grad``, ``slopes`` and the gradient as
    there."""
    for p in range(n_bright):
        i = bright_rows[p]
        loglik, log_bound = point_terms(spec, bound, theta, i, inv_temperature, want_grad,
                                        slopes[p], work, bound_work)
        diff = loglik - log_bound
        if math.isnan(diff):
            return math.nan, STATUS_BAD_LOGLIK
        diffs[p] = diff
        value += log_expm1(diff)
        if want_grad and diff > 0.0:
            add_gradient(spec, i, slopes[p], 1.0 / -math.expm1(-diff), gradient)
    return value, STATUS_OK


#: What the slice update evaluates in this sampler: the pseudo-posterior given the bright set
#: (``diffs`` receives the bright points' ``l - b`` at the last point evaluated).
PseudoPosteriorContext = namedtuple("PseudoPosteriorContext", "spec prior bound bright_rows "
                                    "n_bright inv_temperature diffs slopes work bound_work")


@jit
def _pseudo_value(context, point):
    (spec, prior, bound, bright_rows, n_bright, inv_temperature, diffs, slopes, work,
     bound_work) = context
    return pseudo_posterior(spec, prior, bound, point, bright_rows, n_bright, inv_temperature,
                            diffs, flag(False), point, slopes, work, bound_work)


register_target(PseudoPosteriorContext, _pseudo_value)


@jit(inline="always")
def is_bright(bright_bits, i):
    """Whether row ``i`` is bright."""
    return (bright_bits[i >> 3] >> (i & 7)) & 1 == 1


@jit(inline="always")
def _set_bit(bright_bits, i, bright):
    mask = 1 << (i & 7)
    if bright:
        bright_bits[i >> 3] = bright_bits[i >> 3] | mask
    else:
        bright_bits[i >> 3] = bright_bits[i >> 3] & (255 - mask)


@jit(inline="always")
def _gap(spec, query, theta, i, inv_temperature, want_slope, slope):
    """``l_i - b_i`` at ``theta`` (a likelihood query; ``query`` from
    :func:`query_context`)."""
    loglik, log_bound = spec.point_terms(spec.layout, query, theta, i, inv_temperature,
                                         want_slope, slope)
    return loglik - log_bound


@jit(inline="always")
def _make_bright(spec, bright_rows, bright_bits, state, point_diff, point_slope, gradient,
                 want_grad, i, diff, slope):
    """Append dark point ``i`` to the bright list with ``l - b = diff`` (and slope ``slope``
    for MALA's gradient); returns its term of the log pseudo-posterior."""
    p = state[0]
    bright_rows[p] = i
    _set_bit(bright_bits, i, True)
    point_diff[p] = diff
    if want_grad:
        spec.add_gradient(spec.layout, i, slope, 1.0 / -math.expm1(-diff), gradient)
        copy_into(point_slope[p], slope)
    state[0] = p + 1
    return log_expm1(diff)


@jit(inline="always")
def _leave(spec, bright_rows, bright_bits, point_diff, point_slope, gradient, want_grad, p):
    """Darken the bright point at position ``p`` from its cached ``l - b`` and slope (no
    query; the caller closes the gap in the list); returns the term it leaves the log
    pseudo-posterior."""
    i = bright_rows[p]
    _set_bit(bright_bits, i, False)
    if want_grad:
        spec.add_gradient(spec.layout, i, point_slope[p], -1.0 / -math.expm1(-point_diff[p]),
                          gradient)
    return log_expm1(point_diff[p])


@jit(inline="always")
def _move(bright_rows, point_diff, point_slope, want_grad, source, destination):
    """Move the bright list's entry ``source`` to ``destination``."""
    bright_rows[destination] = bright_rows[source]
    point_diff[destination] = point_diff[source]
    if want_grad:
        copy_into(point_slope[destination], point_slope[source])


@jit
def _bright_probability(diff):
    """``p(z = 1 | theta) = 1 - B / L = 1 - exp(-(l - b))``."""
    return -math.expm1(-max(diff, 0.0))


@jit(inline="always")
def initialise_loop(spec, bound, inv_temperature, chain, rng):
    """Draw every ``z_n`` from ``p(z_n | theta)`` (N queries) into the bright set of
    ``chain`` (a :data:`~.specs.FireflyChain`): the chain starts with the brightness
    variables in equilibrium given theta. ``bright_bits`` must be all 0. Returns the
    status."""
    theta, bright_rows, bright_bits, state, point_diff, _, _, _ = rebind(chain)
    n = spec.n_rows
    m = spec.n_outputs + spec.n_extra
    owners = (make_workspace(spec, theta.shape[0]), make_bound_work(spec), np.empty(m),
              np.empty((1, m)))
    work = borrow_workspace(owners[0])
    bound_work = borrow_bound_work(owners[1])
    slope = borrow(owners[2])
    query = query_context(bound, work, bound_work)
    state[0] = 0
    for i in range(n):
        loglik, log_bound = spec.point_terms(spec.layout, query, theta, i, inv_temperature,
                                             flag(False), slope)
        diff = loglik - log_bound
        if math.isnan(diff):
            return STATUS_BAD_LOGLIK
        if rng.random() < _bright_probability(diff):
            _make_bright(spec, bright_rows, bright_bits, state, point_diff, owners[3], slope,
                         False, i, diff, slope)
    keep_alive(owners)
    return STATUS_OK


@jit(inline="always")
def firefly_loop(spec, prior, bound, proposal, inv_temperature, update, chain, rng, trace):
    """Run ``trace.draws.shape[0]`` Firefly iterations, updating ``chain`` in place.

    ``update`` is the brightness update (:data:`~.specs.BrightnessUpdate`), ``chain`` the
    state (:data:`~.specs.FireflyChain`; ``current[0]`` NaN: the log pseudo-posterior and
    its gradient are recomputed here). Per iteration ``trace`` (:data:`~.specs.Trace`)
    receives theta, whether the parameter update moved, the likelihood queries, the log
    pseudo-posterior and the bright count after the iteration.

    Returns ``(status, iteration)``.
    """
    spec, prior, bound, proposal = rebind(spec), rebind(prior), rebind(bound), rebind(proposal)
    resample, q_db, resample_count = update
    (theta, bright_rows, bright_bits, state, point_diff, point_slope, gradient,
     current) = rebind(chain)
    out_draws, out_accepted, out_queries, out_lp, out_bright = trace
    n = spec.n_rows
    d = theta.shape[0]
    m = spec.n_outputs + spec.n_extra
    # Scratch, borrowed (see ``_common.borrow``) and kept alive to the end.
    owners = (make_workspace(spec, d), make_bound_work(spec), np.empty((6, d)), np.empty(m))
    work = borrow_workspace(owners[0])
    bound_work = borrow_bound_work(owners[1])
    vectors = (borrow(owners[2][0]), borrow(owners[2][1]), borrow(owners[2][2]))
    noise = borrow(owners[2][3])
    proposal_point = borrow(owners[2][4])
    proposal_gradient = borrow(owners[2][5])
    slope = borrow(owners[3])
    query = query_context(bound, work, bound_work)
    # Indexed by bright position: reserved at N, written up to the bright count.
    diffs = np.empty(n)
    want_grad = proposal.kind == MALA
    slopes = np.empty((n if want_grad else 1, m))
    explicit_rows = n if resample == EXPLICIT else 0
    pool = make_pool(explicit_rows, explicit_rows <= DENSE_POOL_MAX_ROWS)

    if math.isnan(current[0]):
        value, status = pseudo_posterior(spec, prior, bound, theta, bright_rows, state[0],
                                         inv_temperature, diffs, want_grad, gradient, slopes,
                                         work, bound_work)
        if status != STATUS_OK:
            return status, 0
        current[0] = value
        for p in range(state[0]):
            point_diff[p] = diffs[p]
            if want_grad:
                copy_into(point_slope[p], slopes[p])
    # The bright points' part of the log pseudo-posterior, from the cached differences (no
    # queries), then kept current through every move and brightness change.
    bright_part = 0.0
    for p in range(state[0]):
        bright_part += log_expm1(point_diff[p])
    value = current[0]
    collapsed_part = value - bright_part
    for it in range(out_draws.shape[0]):
        queries = 0
        n_bright = state[0]
        accepted = False
        if proposal.kind == SLICE:
            context = PseudoPosteriorContext(spec, prior, bound, bright_rows, n_bright,
                                             inv_temperature, diffs, slopes, work, bound_work)
            value, accepted, n_evaluations, status = slice_update(
                context, theta, value, proposal, rng, vectors[0], vectors[1], proposal_point)
            queries += n_evaluations * n_bright
            if status != STATUS_OK:
                return status, it
        else:
            propose(proposal, theta, gradient, rng, noise, vectors, proposal_point)
            proposed, status = pseudo_posterior(spec, prior, bound, proposal_point, bright_rows,
                                                n_bright, inv_temperature, diffs, want_grad,
                                                proposal_gradient, slopes, work, bound_work)
            queries += n_bright
            if status != STATUS_OK:
                return status, it
            if proposed > -math.inf:
                log_ratio = proposed - value + proposal_log_ratio(
                    proposal, theta, proposal_point, proposal_gradient, noise, vectors)
                if math.log(rng.random()) < log_ratio:
                    accepted = True
                    value = proposed
                    copy_into(theta, proposal_point)
                    if want_grad:
                        copy_into(gradient, proposal_gradient)
        if accepted:
            bright_part = 0.0
            for p in range(n_bright):
                point_diff[p] = diffs[p]
                bright_part += log_expm1(diffs[p])
                if want_grad:
                    copy_into(point_slope[p], slopes[p])
            collapsed_part = value - bright_part

        # Brightness update given theta: one Metropolis-Hastings update of every z_n from
        # its value at the start of this step (the order does not matter: given theta the
        # z_n are independent).
        if resample == IMPLICIT:
            # Dark -> bright, each dark point proposed with probability q_db (one query
            # each), appended after the points bright at the start.
            if q_db > 0.0:
                log_stay = math.log1p(-q_db) if q_db < 1.0 else -math.inf
                i = -1
                while True:
                    i += 1 if q_db >= 1.0 else 1 + int(math.log(1.0 - rng.random()) / log_stay)
                    if i >= n:
                        break
                    if is_bright(bright_bits, i):
                        continue
                    queries += 1
                    diff = _gap(spec, query, theta, i, inv_temperature, want_grad, slope)
                    if math.isnan(diff):
                        return STATUS_BAD_LOGLIK, it
                    if diff > 0.0 and rng.random() * q_db < math.expm1(diff):
                        bright_part += _make_bright(spec, bright_rows, bright_bits, state,
                                                    point_diff, point_slope, gradient,
                                                    want_grad, i, diff, slope)
            # Bright -> dark (proposed with probability 1) for the points bright at the
            # start: cached l - b, no query; the list is compacted in place.
            kept = 0
            for p in range(n_bright):
                if rng.random() * math.expm1(point_diff[p]) < q_db:
                    bright_part -= _leave(spec, bright_rows, bright_bits, point_diff,
                                          point_slope, gradient, want_grad, p)
                else:
                    if kept != p:
                        _move(bright_rows, point_diff, point_slope, want_grad, p, kept)
                    kept += 1
            for p in range(n_bright, state[0]):
                _move(bright_rows, point_diff, point_slope, want_grad, p, kept)
                kept += 1
            state[0] = kept
        else:
            draw_rows(pool, integer(0), resample_count, rng)
            for c in range(resample_count):
                i = pool[0][c]
                queries += 1
                diff = _gap(spec, query, theta, i, inv_temperature, want_grad, slope)
                if math.isnan(diff):
                    return STATUS_BAD_LOGLIK, it
                bright = is_bright(bright_bits, i)
                make_bright = rng.random() < _bright_probability(diff)
                # theta has not moved since point i's cached difference: only changes matter.
                if make_bright and not bright:
                    bright_part += _make_bright(spec, bright_rows, bright_bits, state,
                                                point_diff, point_slope, gradient, want_grad,
                                                i, diff, slope)
                elif bright and not make_bright:
                    p = 0
                    while bright_rows[p] != i:
                        p += 1
                    bright_part -= _leave(spec, bright_rows, bright_bits, point_diff,
                                          point_slope, gradient, want_grad, p)
                    state[0] -= 1
                    _move(bright_rows, point_diff, point_slope, want_grad, state[0], p)
        value = collapsed_part + bright_part
        copy_into(out_draws[it], theta)
        out_accepted[it] = accepted
        out_queries[it] = queries
        out_bright[it] = state[0]
        out_lp[it] = value
    current[0] = value
    keep_alive(owners)
    return STATUS_OK, -1


@entry_kernel(types.Tuple((I8, I8))(FIREFLY_MODEL, PRIOR, FIREFLY_BOUND, PROPOSAL, F8,
                                   BRIGHTNESS_UPDATE, FIREFLY_CHAIN, RNG, TRACE),
              functions_as_addresses=True)
def firefly_linear(model, prior, bound, proposal, inv_temperature, update, chain, rng, trace):
    """:func:`firefly_loop` for a linear-predictor model in either layout
    (:data:`.specs.FireflyModel`)."""
    return firefly_loop(firefly_model_view(model), prior_view(prior),
                        bound_view(as_functions(bound)), proposal_view(proposal),
                        inv_temperature, update, chain, rng, trace)


_D3 = types.Array(F8, 3, "C")


@entry_kernel(*[I8(spec, FIREFLY_BOUND, I8, I8, VECTOR, MATRIX, _D3, VECTOR, MATRIX)
                for spec in LINEAR_SPECS], select=by_data_layout, functions_as_addresses=True)
def bound_coefficients(spec, bound, start, stop, constants, linear, curvatures, scale_terms,
                       tangent_u):
    """The weighted bound coefficients ``c``, ``l``, ``A`` and ``s`` of rows ``start..stop-1``
    (row ``i`` at ``r = i - start``), to be collapsed with BLAS, and each row's ``u`` at the
    tangent parameters into ``tangent_u[r]``. Returns the status."""
    model = linear_view(as_functions(spec))
    bounds = bound_view(as_functions(bound))
    for i in range(start, stop):
        r = i - start
        u_tangent = tangent_u[r]
        linear_u(model, bounds.tangent, i, u_tangent)
        weight = row_weight(model.weights, i)
        c, c0, s = bounds.coefficients(u_tangent, row_label(model, i), model.params,
                                       bounds.bound_params, linear[r], curvatures[r])
        if not (math.isfinite(c) and math.isfinite(s)):
            return STATUS_BAD_LOGLIK
        constants[r] = weight * c
        scale_terms[r] = weight * s
        for a in range(model.n_outputs):
            linear[r, a] *= weight
            for b in range(model.n_outputs):
                curvatures[r, a, b] *= weight
    return STATUS_OK


@entry_kernel(I8(FIREFLY_MODEL, FIREFLY_BOUND, F8, FIREFLY_CHAIN, RNG),
              functions_as_addresses=True)
def firefly_initialise(model, bound, inv_temperature, chain, rng):
    """:func:`initialise_loop` for a linear-predictor model (:data:`.specs.FireflyModel`)."""
    return initialise_loop(firefly_model_view(model), bound_view(as_functions(bound)),
                           inv_temperature, chain, rng)


@entry_kernel(I8(FIREFLY_MODEL, FIREFLY_BOUND, IN_VECTOR, F8, MATRIX),
              functions_as_addresses=True)
def firefly_terms(model, bound, theta, inv_temperature, out):
    """Every row's ``(l_i, b_i)`` at ``theta`` into ``out`` (N, 2), tempered and weighted:
    for checking the bounds. Returns the status."""
    model = firefly_model_view(model)
    bounds = bound_view(as_functions(bound))
    m = model.n_outputs + model.n_extra
    owners = (make_workspace(model, theta.shape[0]), make_bound_work(model), np.empty(m))
    work = borrow_workspace(owners[0])
    bound_work = borrow_bound_work(owners[1])
    theta = borrow_for_user(theta)
    query = query_context(bounds, work, bound_work)
    for i in range(model.n_rows):
        out[i, 0], out[i, 1] = model.point_terms(model.layout, query, theta, i,
                                                 inv_temperature, flag(False), owners[2])
    keep_alive(owners)
    return STATUS_OK


@entry_kernel(types.Tuple((F8, I8))(FIREFLY_MODEL, PRIOR, FIREFLY_BOUND, IN_VECTOR,
                                   readonly(I8, 1), I8, F8, BOOL, VECTOR),
              functions_as_addresses=True)
def firefly_pseudo_posterior(model, prior, bound, theta, bright_rows, n_bright, inv_temperature,
                             want_grad, gradient):
    """:func:`pseudo_posterior` for the bright set ``bright_rows[:n_bright]``: its value and, with
    ``want_grad``, its gradient in ``gradient`` (for checking the gradient)."""
    model = firefly_model_view(model)
    m = model.n_outputs + model.n_extra
    n = model.n_rows
    owners = (make_workspace(model, theta.shape[0]), make_bound_work(model))
    work = borrow_workspace(owners[0])
    bound_work = borrow_bound_work(owners[1])
    value, status = pseudo_posterior(model, prior_view(prior), bound_view(as_functions(bound)),
                                     borrow_for_user(theta), borrow_for_user(bright_rows), n_bright,
                                     inv_temperature, np.empty(n), want_grad, gradient,
                                     np.empty((n, m)), work, bound_work)
    keep_alive(owners)
    return value, status

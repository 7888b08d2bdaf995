"""Growing random minibatches: the one place where the subsampling tests read data."""
import math

import numpy as np

from ._common import borrow, borrow_read_only, keep_alive
from ._jit import STATUS_BAD_LOGLIK, STATUS_OK, jit
from .linear import (block_width, linear_u_pair, linear_u_triple, map_extra_derivatives,
                     map_extra_entries, quadratic_change)
from .pool import draw_rows
from .rows import prefetch, row_label, row_terms, row_weight
from .views import rebind

#: Outcomes of ``grow_batch``.
BATCH_GROWN = 0
#: A row has log-likelihood -inf at the proposal: Delta = -inf, reject.
BATCH_CERTAIN_REJECT = 1
#: A row has log-likelihood -inf at the current state: Delta = +inf, accept.
BATCH_CERTAIN_ACCEPT = 2
#: A row gave NaN or +inf.
BATCH_BAD_LOGLIK = 3

#: How many minibatch rows ahead of the one being evaluated are prefetched (see
#: ``benchmarks/perf/minibatch_speed.py``: 4 was fastest on MNIST-shaped rows of 6 KB).
PREFETCH_AHEAD = 4
#: Rows of a linear model's minibatch whose links one call of the model's ``link_rows``
#: evaluates (:func:`linear_batch_values`). A call through the model's function pointer
#: costs more than a logistic link's arithmetic, and a row needs two (three with control
#: variates): row by row, a minibatch row of a 10-feature logistic model cost 123 ns
#: (164 ns with control variates) where the exact test's full pass costs 29 ns a row.
LINK_CHUNK = 32


@jit
def grow_batch(spec, theta, theta_prop, cv, inv_temperature, pool, scratch, count, grow,
               rng, sums, work):
    """Add ``grow`` random rows (without replacement) to a minibatch of ``count`` rows of the
    model ``spec`` (a :data:`.specs.Model`).

    For each new row ``i``, ``lambda_i = ([l_i(theta') - l_i(theta)] - [q_i(theta') -
    q_i(theta)]) / K`` (the proxy term only with control variates) goes to ``scratch[j]``
    (``j`` its position in the batch) and into ``sums``: ``[shift, sum(lambda - shift),
    sum((lambda - shift)^2)]`` with ``shift`` the batch's first value, so the variance needs
    no division per row and suffers no cancellation.

    Returns
    -------
    outcome : int
        ``BATCH_GROWN``, or an early ``BATCH_CERTAIN_REJECT`` / ``BATCH_CERTAIN_ACCEPT`` /
        ``BATCH_BAD_LOGLIK``.
    n_read : int
        Rows in the batch (or read before the early outcome).
    mean, variance : float
        The batch's mean and sample variance of ``lambda`` (divisor ``n_read - 1``; 0 for one
        row), after a ``BATCH_GROWN``.
    """
    spec, cv, work = rebind(spec), rebind(cv), rebind(work)
    theta, theta_prop, pool, scratch, sums = (rebind(theta), rebind(theta_prop),
                                                    rebind(pool), rebind(scratch),
                                                    rebind(sums))
    draw_rows(pool, count, grow, rng)
    end = count + grow
    outcome, n_read = spec.ops.batch_values(spec.layout, theta, theta_prop, cv, pool[0], count,
                                            end, inv_temperature, scratch, work)
    if outcome != BATCH_GROWN:
        return outcome, n_read, math.nan, math.nan
    shift, total, square = sums[0], sums[1], sums[2]
    for j in range(count, end):
        value = scratch[j]
        if j == 0:
            shift = value
        total += value - shift
        square += (value - shift) * (value - shift)
    sums[0], sums[1], sums[2] = shift, total, square
    mean, variance = batch_mean_variance(sums, end)
    return BATCH_GROWN, end, mean, variance


@jit(inline="always")
def batch_values(spec, theta, theta_prop, cv, batch, start, stop, inv_temperature, values,
                 work):
    """The ``batch_values`` op (``specs.Ops``) on a model's own spec: ``values[j] =
    lambda_i`` (see :func:`grow_batch`) for the rows ``i = batch[j]``, ``start <= j < stop``,
    prefetching the rows ahead.

    Returns ``(BATCH_GROWN, stop)``, or an early outcome and the rows read up to the row
    that decided it.
    """
    for j in range(start, min(start + PREFETCH_AHEAD, stop)):
        prefetch(spec, batch[j])
    for j in range(start, stop):
        if j + PREFETCH_AHEAD < stop:
            prefetch(spec, batch[j + PREFETCH_AHEAD])
        proposed, current, proxy = row_terms(spec, theta, theta_prop, cv, batch[j], work)
        outcome = row_outcome(proposed, current, proxy)
        if outcome != BATCH_GROWN:
            return outcome, j + 1
        values[j] = (proposed - current - proxy) * inv_temperature
    return BATCH_GROWN, stop


@jit(inline="always")
def row_outcome(proposed, current, proxy):
    """What a row's weighted terms (:func:`.rows.row_terms`) decide: ``BATCH_GROWN`` (its
    ``lambda_i`` is finite), or the early outcome a NaN, ``+inf`` or ``-inf`` forces."""
    if (math.isnan(proposed) or math.isnan(current) or math.isnan(proxy)
            or proposed == math.inf or current == math.inf):
        return BATCH_BAD_LOGLIK
    if proposed == -math.inf:
        return BATCH_CERTAIN_REJECT
    if current == -math.inf:
        return BATCH_CERTAIN_ACCEPT
    return BATCH_GROWN


@jit(inline="always")
def linear_batch_values(spec, theta, theta_prop, cv, batch, start, stop, inv_temperature,
                        values, work):
    """:func:`batch_values` for a linear model (a :data:`.specs.LinearSpec`): the same values
    and outcomes, with the rows' links evaluated :data:`LINK_CHUNK` rows a call of the
    model's ``link_rows`` (the linear predictors, labels and weights read row by row as
    :func:`.rows.row_terms` reads them). Rows after an early outcome's within its chunk are
    evaluated too, and ignored."""
    m = work[0].shape[0]
    size = min(LINK_CHUNK, stop - start)
    if size <= 0:
        return BATCH_GROWN, stop
    use_cv = cv.use
    centre_rows = size if use_cv else 0
    owners = (np.empty((size, m)), np.empty((size, m)), np.empty((centre_rows, m)),
              np.empty((size, m)), np.empty((max(centre_rows, 1), m, m)))
    U, U_prop, U_center = borrow(owners[0]), borrow(owners[1]), borrow(owners[2])
    slopes, curvatures = borrow(owners[3]), borrow(owners[4])
    vectors = (np.empty(size), np.empty(size), np.empty(size), np.empty(size))
    labels, current, proposed = (borrow(vectors[0]), borrow(vectors[1]),
                                 borrow(vectors[2]))
    at_center = borrow(vectors[3])
    K = spec.n_outputs
    extra_start = K * block_width(spec)
    for j in range(start, min(start + PREFETCH_AHEAD, stop)):
        prefetch(spec, batch[j])
    first = start
    while first < stop:
        count = min(size, stop - first)
        for r in range(count):
            j = first + r
            if j + PREFETCH_AHEAD < stop:
                prefetch(spec, batch[j + PREFETCH_AHEAD])
            i = batch[j]
            if use_cv:
                linear_u_triple(spec, theta, theta_prop, cv.center, i, U[r], U_prop[r],
                                U_center[r])
            else:
                linear_u_pair(spec, theta, theta_prop, i, U[r], U_prop[r])
            labels[r] = row_label(spec, i)
        y = borrow_read_only(labels)
        spec.link_rows(U, y, 0, count, spec.params, 0, current, slopes, curvatures)
        spec.link_rows(U_prop, y, 0, count, spec.params, 0, proposed, slopes, curvatures)
        if use_cv:
            spec.link_rows(U_center, y, 0, count, spec.params, 2, at_center, slopes,
                           curvatures)
        for r in range(count):
            j = first + r
            weight = row_weight(spec.weights, batch[j])
            proxy = 0.0
            if use_cv:
                if cv.exp_coords.shape[0] > 0:
                    map_extra_derivatives(slopes[r], curvatures[r], U_center[r], K,
                                          cv.exp_coords, extra_start)
                    map_extra_entries(U[r], K, cv.exp_coords, extra_start)
                    map_extra_entries(U_prop[r], K, cv.exp_coords, extra_start)
                    map_extra_entries(U_center[r], K, cv.exp_coords, extra_start)
                proxy = weight * quadratic_change(slopes[r], curvatures[r], U_prop[r], U[r],
                                                  U_center[r])
            value_prop, value = weight * proposed[r], weight * current[r]
            outcome = row_outcome(value_prop, value, proxy)
            if outcome != BATCH_GROWN:
                keep_alive((owners, vectors))
                return outcome, j + 1
            values[j] = (value_prop - value - proxy) * inv_temperature
        first += count
    keep_alive((owners, vectors))
    return BATCH_GROWN, stop


@jit
def batch_mean_variance(sums, count):
    """Mean and sample variance (divisor ``count - 1``; 0 for one row) from the batch sums."""
    mean = sums[0] + sums[1] / count
    if count < 2:
        return mean, 0.0
    return mean, max(sums[2] - sums[1] * sums[1] / count, 0.0) / (count - 1)


@jit
def early_outcome(outcome, n_read):
    """The decision-kernel result for an early ``grow_batch`` outcome."""
    if outcome == BATCH_BAD_LOGLIK:
        return False, n_read, STATUS_BAD_LOGLIK
    return outcome == BATCH_CERTAIN_ACCEPT, n_read, STATUS_OK

"""Growing random minibatches: the one place where the subsampling tests read data."""
import math

from ._jit import STATUS_BAD_LOGLIK, STATUS_OK, jit
from .pool import draw_rows
from .rows import prefetch, row_terms
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
        if (math.isnan(proposed) or math.isnan(current) or math.isnan(proxy)
                or proposed == math.inf or current == math.inf):
            return BATCH_BAD_LOGLIK, j + 1
        if proposed == -math.inf:
            return BATCH_CERTAIN_REJECT, j + 1
        if current == -math.inf:
            return BATCH_CERTAIN_ACCEPT, j + 1
        values[j] = (proposed - current - proxy) * inv_temperature
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

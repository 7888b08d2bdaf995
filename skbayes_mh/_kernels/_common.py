"""Small kernels shared by the acceptance tests: full-data sums, the one place that draws
minibatches, and numerically stable scalar helpers."""
import math

import numpy as np

from ._jit import DATA, F8, I8, INDEX, LOGLIK, RNG, STATUS_BAD_LOGLIK, STATUS_OK, VECTOR, jit
from numba import types


@jit(types.Tuple((F8, I8))(LOGLIK, DATA, VECTOR))
def loglik_sum(loglik, data, theta):
    """Full-data log-likelihood ``sum_i loglik(theta, data, i)``.

    Returns ``(total, status)``; ``status`` is ``STATUS_BAD_LOGLIK`` when a row gives NaN
    or +inf. A row giving -inf makes the total -inf (zero likelihood), which is valid.
    """
    total = 0.0
    for i in range(data.shape[0]):
        value = loglik(theta, data, i)
        if math.isnan(value) or value == math.inf:
            return math.nan, STATUS_BAD_LOGLIK
        total += value
    return total, STATUS_OK


@jit(types.void(INDEX, I8, I8, RNG))
def draw_without_replacement(index_pool, start, count, rng):
    """Extend a random subset by ``count`` rows, without replacement.

    A partial Fisher-Yates shuffle: on return ``index_pool[start:start + count]`` holds
    rows drawn uniformly from those not in ``index_pool[:start]``. ``index_pool`` is any
    permutation of ``0..N-1`` (it is left permuted for the next call).
    """
    n = index_pool.shape[0]
    for j in range(start, start + count):
        # A uniform integer in [j, n) from one double: ``rng.integers`` costs ~100 ns in numba,
        # this ~5 ns; the non-uniformity is at most (n - j) / 2**53.
        k = min(j + np.int64(rng.random() * (n - j)), n - 1)
        held = index_pool[j]
        index_pool[j] = index_pool[k]
        index_pool[k] = held


@jit(F8(F8))
def log_sigmoid(x):
    """``log(1 / (1 + exp(-x)))`` without overflow."""
    if x >= 0.0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


@jit(F8(VECTOR, VECTOR, RNG))
def sample_discrete(support, cdf, rng):
    """One draw from the discrete distribution with points ``support`` and cumulative
    weights ``cdf`` (non-decreasing, last entry 1)."""
    u = rng.random()
    lo = 0
    hi = cdf.shape[0] - 1
    while lo < hi:  # first j with cdf[j] > u
        mid = (lo + hi) // 2
        if cdf[mid] > u:
            hi = mid
        else:
            lo = mid + 1
    return support[lo]


@jit(types.Tuple((F8, I8, F8, I8))(LOGLIK, DATA, VECTOR, VECTOR, F8, F8, F8))
def exact_log_ratio(loglik, data, theta, theta_prop, log_psi, inv_temperature, loglik_sum_current):
    """The full-data log acceptance ratio ``Delta = (l(theta') - l(theta)) / K + log_psi``.

    ``l(theta)`` is taken from the cache ``loglik_sum_current`` when it is known (not NaN),
    so a test reads every row once, for the proposal only.

    Returns ``(delta, n_data_read, loglik_sum_prop, status)``.
    """
    n_read = 0
    if math.isnan(loglik_sum_current):
        loglik_sum_current, status = loglik_sum(loglik, data, theta)
        n_read += data.shape[0]
        if status != STATUS_OK:
            return math.nan, n_read, math.nan, status
    loglik_sum_prop, status = loglik_sum(loglik, data, theta_prop)
    n_read += data.shape[0]
    if status != STATUS_OK:
        return math.nan, n_read, math.nan, status
    if loglik_sum_prop == -math.inf:
        return -math.inf, n_read, loglik_sum_prop, STATUS_OK
    delta = (loglik_sum_prop - loglik_sum_current) * inv_temperature + log_psi
    return delta, n_read, loglik_sum_prop, STATUS_OK


@jit(F8(VECTOR))
def flat_log_prior(theta):
    """The improper flat prior: ``log p(theta) = 0``."""
    return 0.0

"""The chain loop: propose by a Gaussian random walk, ask an acceptance test, record."""
import math

import numpy as np
from numba import types

from .austerity import austerity_decide
from .barker import barker_decide
from .confidence import confidence_decide
from .metropolis import metropolis_decide
from .minibatch import minibatch_barker_decide
from .priors import builtin_log_prior
from ._jit import (DATA, F8, FLAGS, I8, INDEX, LOG_PRIOR, LOGLIK, MATRIX, RNG,
                   STATUS_BAD_LOG_PRIOR, STATUS_OK, VECTOR, jit)

#: Which decision kernel ``run_chain`` calls, by the ``kernel_id`` of an acceptance object.
METROPOLIS = 0
BARKER = 1
MINIBATCH_BARKER = 2
AUSTERITY = 3
CONFIDENCE = 4


@jit
def decide(kernel_id, loglik, data, theta, theta_prop, log_psi, inv_temperature, loglik_sum,
           params, correction_support, correction_cdf, index_pool, scratch, rng):
    """Dispatch to the decision kernel ``kernel_id`` (all share ``DECIDE_SIGNATURE``)."""
    if kernel_id == METROPOLIS:
        return metropolis_decide(loglik, data, theta, theta_prop, log_psi, inv_temperature,
                                 loglik_sum, params, correction_support, correction_cdf,
                                 index_pool, scratch, rng)
    if kernel_id == BARKER:
        return barker_decide(loglik, data, theta, theta_prop, log_psi, inv_temperature,
                             loglik_sum, params, correction_support, correction_cdf,
                             index_pool, scratch, rng)
    if kernel_id == CONFIDENCE:
        return confidence_decide(loglik, data, theta, theta_prop, log_psi, inv_temperature,
                                 loglik_sum, params, correction_support, correction_cdf,
                                 index_pool, scratch, rng)
    if kernel_id == AUSTERITY:
        return austerity_decide(loglik, data, theta, theta_prop, log_psi, inv_temperature,
                                loglik_sum, params, correction_support, correction_cdf,
                                index_pool, scratch, rng)
    return minibatch_barker_decide(loglik, data, theta, theta_prop, log_psi, inv_temperature,
                                   loglik_sum, params, correction_support, correction_cdf,
                                   index_pool, scratch, rng)


@jit(types.void(VECTOR, VECTOR, MATRIX, RNG, VECTOR))
def propose(theta, step, factor, rng, theta_prop):
    """Gaussian random walk: ``theta_prop = theta + L z`` with ``z ~ N(0, I)``.

    ``L = diag(step)`` when ``factor`` is empty (shape (0, 0)), else the lower-triangular
    ``factor`` (a Cholesky factor of the proposal covariance).
    """
    d = theta.shape[0]
    if factor.shape[0] == 0:
        for k in range(d):
            theta_prop[k] = theta[k] + step[k] * rng.standard_normal()
        return
    for k in range(d):
        theta_prop[k] = rng.standard_normal()  # z, overwritten from the last row up
    for k in range(d - 1, -1, -1):
        total = 0.0
        for j in range(k + 1):
            total += factor[k, j] * theta_prop[j]
        theta_prop[k] = theta[k] + total


@jit(types.Tuple((I8, I8))(LOGLIK, LOG_PRIOR, I8, VECTOR, DATA, VECTOR, VECTOR, VECTOR, MATRIX,
                           I8, VECTOR, VECTOR, VECTOR, F8, RNG, MATRIX, FLAGS, INDEX, VECTOR))
def run_chain(loglik, log_prior, prior_kind, prior_scales, data, theta, cache, step, factor,
              kernel_id, params, correction_support, correction_cdf, inv_temperature, rng,
              out_draws, out_accepted, out_n_read, out_log_posterior):
    """Run ``out_draws.shape[0]`` random-walk Metropolis-Hastings iterations from ``theta``.

    Parameters
    ----------
    loglik, log_prior : first-class functions of types ``LOGLIK`` and ``LOG_PRIOR``.
    prior_kind : int, prior_scales : (d,) array
        A built-in prior (``priors.py``) added to ``log_prior``.
    data : (N, p) read-only array
    theta : (d,) array
        The current state; it holds the final state on return. Its log-prior must be finite.
    cache : (1,) array
        The full-data log-likelihood of ``theta`` when known (NaN otherwise); updated, so
        that consecutive calls on one chain keep it.
    step : (d,) array, factor : (d, d) or (0, 0) array
        The proposal: per-coordinate standard deviations, or a Cholesky factor (see
        ``propose``).
    kernel_id, params, correction_support, correction_cdf
        The acceptance test: which decision kernel and its packed parameters.
    inv_temperature : float
        ``1 / K``: every log-likelihood ratio is scaled by it (the prior is not).
    rng : numpy.random.Generator
        This chain's own generator.
    out_draws : (n_iter, d), out_accepted : (n_iter,) bool, out_n_read : (n_iter,) int64,
    out_log_posterior : (n_iter,)
        Filled with the state after each iteration, whether it accepted, the data rows its
        test read, and ``log p(theta) + loglik(theta) / K`` where the test knows the
        full-data log-likelihood (NaN where it does not, as for minibatch tests).

    Returns
    -------
    status : int
        ``STATUS_OK`` or the code of the first failure.
    iteration : int
        The iteration where the failure happened (-1 when ``status`` is OK).
    """
    n_iter, d = out_draws.shape
    theta_prop = np.empty(d)
    index_pool = np.arange(data.shape[0])
    scratch = np.empty(data.shape[0])
    log_prior_current = log_prior(theta) + builtin_log_prior(prior_kind, prior_scales, theta)
    loglik_sum = cache[0]  # the full-data log-likelihood of theta, when a test knows it
    for it in range(n_iter):
        propose(theta, step, factor, rng, theta_prop)
        log_prior_prop = log_prior(theta_prop)
        if math.isnan(log_prior_prop) or log_prior_prop == math.inf:
            return STATUS_BAD_LOG_PRIOR, it
        log_prior_prop += builtin_log_prior(prior_kind, prior_scales, theta_prop)
        is_accepted = False
        n_read = 0
        if log_prior_prop > -math.inf:  # a proposal outside the prior's support is rejected unread
            # The random walk is symmetric, so log_psi is the log prior ratio alone.
            log_psi = log_prior_prop - log_prior_current
            is_accepted, n_read, loglik_sum_prop, status = decide(
                kernel_id, loglik, data, theta, theta_prop, log_psi, inv_temperature,
                loglik_sum, params, correction_support, correction_cdf, index_pool, scratch, rng)
            if status != STATUS_OK:
                return status, it
            if is_accepted:
                theta[:] = theta_prop
                log_prior_current = log_prior_prop
                loglik_sum = loglik_sum_prop
        out_draws[it] = theta
        out_accepted[it] = is_accepted
        out_n_read[it] = n_read
        out_log_posterior[it] = log_prior_current + loglik_sum * inv_temperature
    cache[0] = loglik_sum
    return STATUS_OK, -1


@jit(types.Tuple((I8, I8, I8))(LOGLIK, DATA, VECTOR, VECTOR, F8, I8, VECTOR, VECTOR, VECTOR,
                               F8, RNG, I8))
def repeat_decision(loglik, data, theta, theta_prop, log_psi, kernel_id, params,
                    correction_support, correction_cdf, inv_temperature, rng, n_trials):
    """Run one acceptance test ``n_trials`` times on the same pair ``(theta, theta_prop)``.

    Returns ``(n_accepted, n_data_read, status)``: accepted trials, rows read in total, and
    ``STATUS_OK`` or the first failure's code. Each trial starts with no cached
    log-likelihood, so an exact test reads ``2 N`` rows per trial here.
    """
    index_pool = np.arange(data.shape[0])
    scratch = np.empty(data.shape[0])
    n_accepted = 0
    n_read = 0
    for _ in range(n_trials):
        is_accepted, read, _sum, status = decide(
            kernel_id, loglik, data, theta, theta_prop, log_psi, inv_temperature, math.nan,
            params, correction_support, correction_cdf, index_pool, scratch, rng)
        if status != STATUS_OK:
            return n_accepted, n_read, status
        n_accepted += is_accepted
        n_read += read
    return n_accepted, n_read, STATUS_OK

"""Burn-in adaptation of the random-walk proposal, then a frozen proposal for the kept draws.

During burn-in the proposal's overall scale follows a Robbins-Monro recursion toward a
target acceptance rate, and its shape is re-estimated from the burn-in draws (adaptive
Metropolis, Haario, Saksman and Tamminen 2001): a full covariance up to
``FULL_COVARIANCE_MAX_DIM`` dimensions, per-coordinate variances above (a dense proposal
costs d^2 per iteration). Everything is frozen before the first kept draw, so the kept
chain is a valid, time-homogeneous Markov chain.
"""
import time

import numpy as np

from ._chains import chain_generator

#: Above this dimension the proposal shape is diagonal.
FULL_COVARIANCE_MAX_DIM = 100
#: Burn-in is cut into this many windows; scale and shape are updated between them.
N_WINDOWS = 20
#: The shape is re-estimated after these fractions of the burn-in, each time from the draws
#: after the first tenth (the transient from the starting point).
SHAPE_UPDATES = (0.25, 0.5, 0.75)
#: The kept iterations are timed in this many chunks (per-draw seconds are interpolated).
N_TIMING_CHUNKS = 20


def _shape(covariance, full):
    """(Cholesky factor, None) of a covariance, or (None, standard deviations) when the
    shape is diagonal or the covariance is not positive definite."""
    if full:
        try:
            return np.linalg.cholesky(covariance), None
        except np.linalg.LinAlgError:
            pass
    return None, np.sqrt(np.maximum(np.diag(covariance), 1e-300))


def _updated_covariance(draws, n_moves, initial_covariance, full):
    """The burn-in draws' covariance, shrunk toward the initial one by how many accepted
    moves stand behind it (``n_moves / (n_moves + 20 d)``): early, correlated draws say
    little about the shape."""
    d = draws.shape[1]
    weight = n_moves / (n_moves + 20.0 * d)
    covariance = np.atleast_2d(np.cov(draws.T)) if full else np.diag(draws.var(axis=0))
    return weight * covariance + (1 - weight) * initial_covariance


def run_chain_with_adaptation(target, theta0, seed, n_burnin, n_samples, thin, step_size,
                              initial_covariance, target_accept, progress=None):
    """Run one chain: adaptive (``step_size="auto"``) or fixed burn-in, then kept draws.

    ``initial_covariance`` ((d, d), or (d,) variances) is the first proposal shape, e.g.
    the Laplace approximation; the burn-in draws refine it.

    Returns
    -------
    dict with ``draws`` (n_samples, d), ``acceptance_rate`` (n_samples,) (fraction of the
    ``thin`` iterations behind each draw that accepted), ``n_data_read`` (n_samples,)
    (rows read by those iterations), ``lp`` (n_samples,), ``seconds`` (n_samples,)
    (cumulative wall time of the kept iterations), ``step`` (d,) (per-coordinate proposal
    sd) and ``factor`` ((d, d) Cholesky factor or None).
    """
    rng = chain_generator(seed)
    theta = np.array(theta0, dtype=np.float64)
    cache = np.full(1, np.nan)  # full-data log-likelihood of theta, kept across calls
    d = theta.size
    factor = None
    if step_size == "auto":
        full = d <= FULL_COVARIANCE_MAX_DIM
        initial = np.asarray(initial_covariance, dtype=np.float64)
        if initial.ndim == 1:
            initial = np.diag(initial)
        if not full:
            initial = np.diag(np.diag(initial))
        chol, shape_sd = _shape(initial, full)
        log_scale = np.log(2.38 / np.sqrt(d))
        window = max(1, n_burnin // N_WINDOWS)
        history, moves = [], []
        updates = {int(f * N_WINDOWS) for f in SHAPE_UPDATES}
        for k in range(N_WINDOWS if n_burnin else 0):
            n_iter = window if k < N_WINDOWS - 1 else n_burnin - window * (N_WINDOWS - 1)
            scale = np.exp(log_scale)
            draws, accepted, _, _ = target.iterate(
                theta, rng, n_iter, scale * (shape_sd if chol is None else np.ones(d)),
                None if chol is None else scale * chol, what="burn-in", cache=cache)
            history.append(draws)
            moves.append(accepted.sum())
            log_scale += (accepted.mean() - target_accept) * 2.0 / np.sqrt(k + 1.0)
            if k + 1 in updates:
                first = max(1, N_WINDOWS // 10)
                covariance = _updated_covariance(np.concatenate(history[first:]),
                                                 sum(moves[first:]), initial, full)
                chol, shape_sd = _shape(covariance, full)
            if progress is not None:
                progress.update(n_iter)
        scale = np.exp(log_scale)
        step = scale * (shape_sd if chol is None else np.sqrt(np.sum(chol**2, axis=1)))
        factor = None if chol is None else scale * chol
    else:
        step = np.full(d, float(step_size))
        if n_burnin:
            target.iterate(theta, rng, n_burnin, step, what="burn-in", cache=cache)
            if progress is not None:
                progress.update(n_burnin)

    outputs, seconds = run_timed(
        lambda n: target.iterate(theta, rng, n, step, factor, cache=cache),
        n_samples * thin, cost_index=2, progress=progress)
    draws, accepted, n_read, lp = outputs
    keep = slice(thin - 1, None, thin)
    return {"draws": draws[keep], "lp": lp[keep], "seconds": seconds[keep],
            "acceptance_rate": accepted.reshape(n_samples, thin).mean(axis=1),
            "n_data_read": n_read.reshape(n_samples, thin).sum(axis=1),
            "step": step, "factor": factor}


def run_timed(iterate, n_iter, cost_index, progress=None):
    """Run the kept iterations in ``N_TIMING_CHUNKS`` timed chunks.

    ``iterate(n)`` runs ``n`` iterations and returns a tuple of per-iteration arrays; output
    ``cost_index`` counts the data read per iteration. Each chunk's wall time is shared
    among its iterations in proportion to ``1 + data read``.

    Returns
    -------
    outputs : tuple of the concatenated arrays
    seconds : (n_iter,) cumulative wall time after each iteration
    """
    chunks = np.array_split(np.arange(n_iter), min(N_TIMING_CHUNKS, n_iter))
    parts, chunk_ends = [], []
    start = time.perf_counter()
    for chunk in chunks:
        parts.append(iterate(chunk.size))
        chunk_ends.append(time.perf_counter() - start)
        if progress is not None:
            progress.update(chunk.size)
    outputs = tuple(np.concatenate(p) for p in zip(*parts))
    seconds = np.empty(n_iter)
    begin = 0.0
    for chunk, end in zip(chunks, chunk_ends):
        cost = np.cumsum(1.0 + outputs[cost_index][chunk])
        seconds[chunk] = begin + (end - begin) * cost / cost[-1]
        begin = end
    return outputs, seconds

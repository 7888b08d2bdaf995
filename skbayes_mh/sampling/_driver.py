"""The one driver every sampler runs under: warm-up in windows with tuners, then the kept
draws with everything frozen, timed in chunks, with progress and interruption."""
import time
from dataclasses import dataclass

import numpy as np

#: Warm-up is cut into this many windows; tuners update between them.
N_WINDOWS = 20
#: The kept iterations run in at least this many chunks (the per-draw seconds are
#: interpolated within a chunk by the data each iteration read).
MIN_CHUNKS = 20
#: ... and no chunk runs much longer than this, so that an interruption is honoured soon.
MAX_CHUNK_SECONDS = 0.25


@dataclass
class ChainResult:
    """One chain's output.

    Attributes
    ----------
    draws : ndarray of shape (n_draws, d)
    stats : dict of ndarray of shape (n_draws,)
        ``lp``, ``acceptance_rate`` (fraction of the ``thin`` iterations behind a draw that
        accepted), ``n_data_read`` (rows or likelihood queries of those iterations),
        ``seconds`` (cumulative wall time of the kept iterations), and the sampler's own
        (``n_bright``).
    warmup_draws : ndarray of shape (n_warmup, d)
    state : object
        The sampler's final state.
    sampler : object
        The sampler, with its tuned, frozen parameters.
    thin : int
        Iterations per kept draw (chosen after warm-up when ``run_chain`` got a rule).
    interrupted : bool
    """

    draws: np.ndarray
    stats: dict
    warmup_draws: np.ndarray
    state: object
    sampler: object
    thin: int = 1
    interrupted: bool = False


def run_chain(sampler, theta0, seed, n_warmup, n_draws, thin=1, tuners=(), progress=None,
              stop=None):
    """Warm up ``sampler`` from ``theta0``, then keep ``n_draws`` draws (every ``thin``-th
    iteration).

    Parameters
    ----------
    sampler : MetropolisHastings or FireflySampler
    theta0 : array-like of shape (d,)
    seed : int
        The chain's own generator is ``numpy.random.default_rng(seed)``.
    n_warmup, n_draws : int
    thin : int or callable
        Keep every ``thin``-th iteration; a callable ``thin(warmup_draws, sampler) -> int``
        chooses it once warm-up is over (see :class:`~skbayes_mh.sampling.AutoThin`).
    tuners : sequence
        Objects with ``update(sampler, info, window, n_windows)``, called after each warm-up
        window.
    progress : callable or None
        ``progress(n)`` after each window or chunk of ``n`` iterations.
    stop : threading.Event or None
        Checked between chunks: when set, the chain returns what it has.

    Returns
    -------
    ChainResult
    """
    rng = np.random.default_rng(int(seed))
    state = sampler.init(theta0, rng)
    warmup = []
    window = max(1, n_warmup // N_WINDOWS)
    for k in range(N_WINDOWS if n_warmup else 0):
        n_iter = window if k < N_WINDOWS - 1 else n_warmup - window * (N_WINDOWS - 1)
        if n_iter <= 0:
            continue
        info = sampler.run(state, n_iter, rng, where="warm-up")
        warmup.append(info["draws"])
        for tuner in tuners:
            tuner.update(sampler, info, k, N_WINDOWS)
        if progress is not None:
            progress(n_iter)
        if stop is not None and stop.is_set():
            break
    warmup_draws = np.concatenate(warmup) if warmup else np.empty((0, state.theta.size))
    if callable(thin):
        thin = int(thin(warmup_draws, sampler))
    outputs, interrupted = _kept_iterations(sampler, state, rng, n_draws, thin, progress, stop)
    n_kept = outputs["draws"].shape[0] // thin
    keep = slice(thin - 1, n_kept * thin, thin)
    per_draw = (n_kept, thin)
    stats = {"lp": outputs["lp"][keep], "seconds": outputs["seconds"][keep],
             "acceptance_rate": outputs["accepted"][:n_kept * thin].reshape(per_draw).mean(axis=1),
             "n_data_read": outputs["n_data_read"][:n_kept * thin].reshape(per_draw).sum(axis=1)}
    for name in ("n_bright",):
        if name in outputs:
            stats[name] = outputs[name][keep]
    return ChainResult(outputs["draws"][keep], stats, warmup_draws, state, sampler, thin,
                       interrupted)


def _kept_iterations(sampler, state, rng, n_draws, thin, progress, stop):
    """Run the ``n_draws * thin`` kept iterations in timed chunks; returns the concatenated
    per-iteration outputs with ``seconds`` (cumulative), and whether ``stop`` cut them short."""
    total = n_draws * thin
    parts = []
    done = 0
    chunk = max(thin, min(total, -(-total // MIN_CHUNKS)))
    start = time.perf_counter()
    begin = 0.0
    interrupted = False
    while done < total:
        n_iter = min(chunk, total - done)
        info = sampler.run(state, n_iter, rng)
        end = time.perf_counter() - start
        cost = np.cumsum(1.0 + info["n_data_read"])
        info["seconds"] = begin + (end - begin) * cost / cost[-1]
        parts.append(info)
        done += n_iter
        if progress is not None:
            progress(n_iter)
        # Keep chunks under MAX_CHUNK_SECONDS, in whole draws.
        per_iteration = (end - begin) / n_iter
        limit = max(thin, int(MAX_CHUNK_SECONDS / max(per_iteration, 1e-9)) // thin * thin)
        chunk = min(chunk, limit)
        begin = end
        if stop is not None and stop.is_set():
            interrupted = done < total
            break
    outputs = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
    return outputs, interrupted

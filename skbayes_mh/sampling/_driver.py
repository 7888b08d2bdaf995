"""The one driver every sampler runs under: warm-up in windows with tuners, then the kept
draws with everything frozen, all in short timed chunks so that progress is reported and an
interruption is honoured within a fraction of a second; a finished (or interrupted) chain can
be continued exactly where it stopped."""
import time
from dataclasses import dataclass, replace

import numpy as np

#: Warm-up is cut into this many windows; tuners update between them.
N_WINDOWS = 20
#: In the first window (the transient from the start), tuners with an ``update_transient``
#: method update after every this many iterations.
TRANSIENT_CHUNK = 5
#: The kept iterations run in at least this many chunks (the per-draw seconds are
#: interpolated within a chunk by the data each iteration read) ...
MIN_CHUNKS = 20
#: ... unless that makes chunks shorter than this: a call of the chain's kernel and the
#: chunk's bookkeeping cost about 30 us, which in chunks of a few iterations of small data
#: took 5-9% of a fit (a default fit of breast cancer, 569 rows: 162 -> 150 ms in one
#: chunk a round; the SBC test's fits of 200 rows 46 -> 42 ms). The draws do not depend
#: on the chunks.
MIN_CHUNK_SECONDS = 0.01
#: ... and no chunk (of warm-up or kept iterations) runs much longer than this, so that an
#: interruption is honoured soon.
MAX_CHUNK_SECONDS = 0.25


@dataclass
class ChainResult:
    """One chain's output.

    Attributes
    ----------
    draws : ndarray of shape (n_draws, d)
    stats : dict of ndarray of shape (n_draws,)
        ``lp``, ``acceptance_rate`` (fraction of the ``thin`` iterations behind a draw that
        accepted), ``n_data_read`` (rows or likelihood queries of those iterations, summed),
        ``rows_per_iteration`` (``n_data_read / thin``: their mean per iteration),
        ``seconds`` (cumulative wall time of the kept iterations), and the sampler's own
        (``n_bright``).
    state : object
        The sampler's state after the last iteration run.
    sampler : object
        The sampler, with its tuned, frozen parameters.
    thin : int
        Iterations per kept draw (chosen after warm-up when ``run_chain`` got a rule).
    interrupted : bool
        ``stop`` was set before the chain had run everything it was asked to.
    rng : numpy.random.Generator or None
        The chain's generator, where the next iteration continues it.
    warmup_complete : bool
        The warm-up ran to its end (only then can the chain be continued).
    seed : int or None
        The seed the chain's generator started from (what else the chain's draws derive
        from, such as a reduced fit's complement, derives from it too).
    n_warmup : int
        Warm-up iterations the chain ran (fewer than asked where ``run_chain``'s
        ``warmup_until`` ended it early).
    """

    draws: np.ndarray
    stats: dict
    state: object
    sampler: object
    thin: int = 1
    interrupted: bool = False
    rng: object = None
    warmup_complete: bool = True
    seed: int = None
    n_warmup: int = 0

    @property
    def n_draws(self):
        return self.draws.shape[0]


def run_chain(sampler, theta0, seed, n_warmup, n_draws, thin=1, tuners=(), progress=None,
              stop=None, out=None, warmup_until=None):
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
        ``progress(n)`` after each chunk of ``n`` iterations; with a callable ``thin`` or
        a warm-up ended early, ``progress.set_total(warm-up run + n_draws * thin)`` once
        ``thin`` is chosen, when it has that method.
    stop : StopSignal, threading.Event or None
        Checked between chunks: when set, the chain returns what it has (``interrupted``).
    out : ndarray of shape (n_draws, d) or None
        Where the kept draws are written, chunk by chunk (the result's ``draws`` is then a
        view of it): a wide model's draws are never held twice.
    warmup_until : callable or None
        ``warmup_until(sampler, info, window, n_windows) -> bool``, called after each
        warm-up window's tuners: True ends the warm-up there (``n_warmup`` is then the
        cap; see :class:`~skbayes_mh.sampling._tuning.SettledWarmup`).

    Returns
    -------
    ChainResult
    """
    rng = np.random.default_rng(int(seed))
    d = np.asarray(theta0).size
    if stop is not None and stop.is_set():  # never started
        return ChainResult(np.empty((0, d)), {}, None, sampler, 1, True, rng,
                           warmup_complete=n_warmup == 0, seed=int(seed))
    state = sampler.init(theta0, rng)
    pacer = _Pacer()
    warmup = []
    window = max(1, n_warmup // N_WINDOWS)
    interrupted = False
    ran = 0
    for k in range(N_WINDOWS if n_warmup else 0):
        n_iter = window if k < N_WINDOWS - 1 else n_warmup - window * (N_WINDOWS - 1)
        if n_iter <= 0:
            continue
        if k == 0:
            parts, interrupted = _run_transient(sampler, state, rng, n_iter, tuners, progress,
                                                stop, pacer)
        else:
            parts, interrupted = _run_in_chunks(sampler, state, rng, n_iter, 1, n_iter,
                                                progress, stop, "warm-up", pacer)
        if interrupted:
            break
        info = _concatenate(parts)
        ran += n_iter
        if callable(thin):  # the thinning rule reads the warm-up draws (kept till then only)
            warmup.append(info["draws"])
        for tuner in tuners:
            tuner.update(sampler, info, k, N_WINDOWS)
        if warmup_until is not None and warmup_until(sampler, info, k, N_WINDOWS):
            break
    if interrupted:
        return ChainResult(np.empty((0, d)), {}, state, sampler, 1, True, rng,
                           warmup_complete=False, seed=int(seed))
    chosen = callable(thin)
    if chosen:
        thin = int(thin(np.concatenate(warmup) if warmup else np.empty((0, d)), sampler))
        del warmup
    if hasattr(progress, "set_total") and (chosen or ran < n_warmup):
        # counted the whole warm-up and one iteration a draw till now
        progress.set_total(ran + n_draws * int(thin))
    result = ChainResult(np.empty((0, d)), {}, state, sampler, int(thin), False, rng,
                         seed=int(seed), n_warmup=ran)
    return continue_chain(result, n_draws, progress, stop, out)


def continue_chain(result, n_draws, progress=None, stop=None, out=None):
    """Run ``result``'s chain on, from its state and generator, until it holds ``n_draws``
    draws (none when it already does): the draws equal, one for one, those of a single
    chain asked for ``n_draws`` from the start.

    Parameters
    ----------
    result : ChainResult
        A chain whose warm-up is complete.
    n_draws : int
        Draws the chain should hold in the end.
    progress, stop : as in :func:`run_chain`.
    out : ndarray of shape (n_draws, d) or None
        For a chain without draws yet: where its kept draws are written (as in
        :func:`run_chain`).

    Returns
    -------
    ChainResult
        A new result with the draws and stats appended (``result`` is not changed, but its
        state and generator are advanced).
    """
    if not result.warmup_complete:
        raise ValueError("A chain interrupted during its warm-up cannot be continued.")
    n_more = n_draws - result.n_draws
    if n_more <= 0:
        return replace(result, interrupted=False)
    thin, sampler, state, rng = result.thin, result.sampler, result.state, result.rng
    largest_chunk = max(1, -(-n_more // MIN_CHUNKS)) * thin
    filled = 0

    def keep_draws(info):  # a chunk's kept draws straight into ``out`` (whole thins a chunk)
        nonlocal filled
        kept = info.pop("draws")[thin - 1::thin]
        out[filled:filled + kept.shape[0]] = kept
        filled += kept.shape[0]

    into_out = out is not None and result.n_draws == 0
    parts, interrupted = _run_in_chunks(sampler, state, rng, n_more * thin, thin, largest_chunk,
                                        progress, stop, "sampling", _Pacer(),
                                        keep_draws if into_out else None)
    if not parts:
        return replace(result, interrupted=interrupted)
    outputs = _concatenate(parts)
    n_kept = outputs["lp"].shape[0] // thin
    keep = slice(thin - 1, n_kept * thin, thin)
    per_draw = (n_kept, thin)
    offset = result.stats["seconds"][-1] if result.n_draws else 0.0
    stats = {"lp": outputs["lp"][keep], "seconds": offset + outputs["seconds"][keep],
             "acceptance_rate": outputs["accepted"][:n_kept * thin].reshape(per_draw).mean(axis=1),
             "n_data_read": outputs["n_data_read"][:n_kept * thin].reshape(per_draw).sum(axis=1)}
    stats["rows_per_iteration"] = stats["n_data_read"] / thin
    for name in ("n_bright",):
        if name in outputs:
            stats[name] = outputs[name][keep]
    if into_out:
        draws = out[:n_kept]
    elif result.n_draws:
        stats = {name: np.concatenate([result.stats[name], values])
                 for name, values in stats.items()}
        draws = np.concatenate([result.draws, outputs["draws"][keep]])
    else:
        draws = outputs["draws"][keep]
    return replace(result, draws=draws, stats=stats, interrupted=interrupted)


def _concatenate(parts):
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


class _Pacer:
    """Chunk sizes for one chain: as many iterations as take about
    :data:`MAX_CHUNK_SECONDS` at the last chunk's pace (one iteration to begin with)."""

    def __init__(self):
        self.per_iteration = None

    def next_chunk(self, step, cap):
        """Iterations for the next chunk: a whole multiple of ``step``, at most ``cap``
        unless chunks of ``cap`` would take less than :data:`MIN_CHUNK_SECONDS`."""
        if self.per_iteration is None:
            return min(step, cap)
        per_iteration = max(self.per_iteration, 1e-9)
        fits = int(MAX_CHUNK_SECONDS / per_iteration) // step * step
        shortest = int(MIN_CHUNK_SECONDS / per_iteration) // step * step
        return min(max(cap, shortest), max(step, fits))

    def record(self, n_iter, seconds):
        self.per_iteration = seconds / n_iter


def _run_transient(sampler, state, rng, total, tuners, progress, stop, pacer):
    """The first warm-up window: :func:`_run_in_chunks` in pieces of
    :data:`TRANSIENT_CHUNK` iterations, each followed by the ``update_transient`` of the
    tuners that have one (all of it at once when none has)."""
    fast = [tuner for tuner in tuners if hasattr(tuner, "update_transient")]
    piece = TRANSIENT_CHUNK if fast else total
    parts = []
    done = 0
    while done < total:
        n_iter = min(piece, total - done)
        new, interrupted = _run_in_chunks(sampler, state, rng, n_iter, 1, n_iter, progress,
                                          stop, "warm-up", pacer)
        parts += new
        done += n_iter
        if interrupted:
            return parts, True
        info = _concatenate(new)
        for tuner in fast:
            tuner.update_transient(sampler, info)
    return parts, False


def _run_in_chunks(sampler, state, rng, total, step, largest_chunk, progress, stop, where,
                   pacer, sink=None):
    """Run ``total`` iterations in chunks of whole multiples of ``step``, at most
    ``largest_chunk`` (or :data:`MIN_CHUNK_SECONDS`' worth where that is more) and about
    :data:`MAX_CHUNK_SECONDS` each (``pacer``); checks ``stop`` after each, and hands each
    chunk's outputs to ``sink`` first (which may take some).

    Returns
    -------
    parts : list of dict
        Each chunk's per-iteration outputs, with ``seconds`` (cumulative wall time, the
        chunk's interpolated over its iterations by the data each read).
    interrupted : bool
        ``stop`` cut the run short (every part still holds whole multiples of ``step``).
    """
    parts = []
    done = 0
    cap = max(step, largest_chunk // step * step)
    start = time.perf_counter()
    begin = 0.0
    while done < total:
        n_iter = min(pacer.next_chunk(step, cap), total - done)
        info = sampler.run(state, n_iter, rng, where=where)
        end = time.perf_counter() - start
        cost = np.cumsum(1.0 + info["n_data_read"])
        info["seconds"] = begin + (end - begin) * cost / cost[-1]
        if sink is not None:
            sink(info)
        parts.append(info)
        done += n_iter
        pacer.record(n_iter, end - begin)
        if progress is not None:
            progress(n_iter)
        begin = end
        if stop is not None and stop.is_set():
            return parts, done < total
    return parts, False

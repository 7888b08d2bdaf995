"""Convergence diagnostics of chain-major draws ``(chain, draw, *shape)``: rank-normalised
split R-hat, bulk and tail effective sample sizes and Monte Carlo standard errors (Vehtari,
Gelman, Simpson, Carpenter and Buerkner 2021).

R-hat and the bulk and tail ESS, which every fit computes for every parameter, are computed
for all parameters at once (:func:`_batched`): arviz-stats' array functions, which give the
same numbers (``tests/estimators/test_diagnostics.py`` checks them against arviz-stats),
loop over the parameters in Python, and on an autocorrelated chain their Geyer sequence runs
over most lags, about 14 ms a parameter: 70 s of a 94 s fit with 5,001 parameters. The
Monte Carlo standard errors come from arviz-stats itself.
"""
import numpy as np
from scipy.fft import irfft, next_fast_len, rfft
from scipy.special import ndtri

from ._docstrings import with_sections as _with_sections
from ._passes import map_on_cores

#: The numpydoc sections of every statistic computed parameter by parameter.
_DRAWS_PARAMETER = """Parameters
----------
draws : array-like of shape (n_chains, n_draws, ...)
    Chain-major draws; the trailing dimensions are the parameters'.
"""
_PER_PARAMETER_SECTIONS = _DRAWS_PARAMETER + """
Returns
-------
ndarray of shape ``draws.shape[2:]``"""


def _stats():
    from arviz_stats.base import array_stats

    return array_stats


def _flat(draws):
    """``(chain, draw, p)``: the draws with every parameter dimension merged."""
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim < 2:
        raise ValueError(f"draws must be (chain, draw, ...); got shape {draws.shape}.")
    return draws.reshape(draws.shape[0], draws.shape[1], -1)


def _per_parameter(function, draws, **kwargs):
    flat = _flat(draws)
    values = function(np.moveaxis(flat, 2, 0), chain_axis=1, draw_axis=2, **kwargs)
    return np.asarray(values).reshape(np.shape(draws)[2:])


#: Draws (all chains' of all its parameters) per block of the batched diagnostics: 32
#: parameters at 4 chains of 1,000 draws. It bounds their temporaries (the FFT's above
#: all): about 14 MB a thread, against about 100 MB with 8 times as many (which were no
#: faster), so that the diagnostics of a wide fit add little to its draws. Shorter chains
#: take more parameters a block, whose fixed cost (some forty NumPy calls) otherwise ruled:
#: 50,000 parameters of 5 draws took 1.7 s in blocks of 32.
DIAGNOSTICS_BLOCK_DRAWS = 128_000
#: The fewest parameters a block holds, however long the chains.
DIAGNOSTICS_BLOCK = 32


def _block_size(n_chains, n_draws):
    """Parameters per block for chains of ``n_draws``: :data:`DIAGNOSTICS_BLOCK_DRAWS` draws
    in all, at least :data:`DIAGNOSTICS_BLOCK` parameters."""
    return max(DIAGNOSTICS_BLOCK, DIAGNOSTICS_BLOCK_DRAWS // max(1, n_chains * n_draws))


def _batched(statistic, draws, n_values=1):
    """``statistic(x)`` (``n_values`` numbers a parameter) for blocks ``x`` of shape ``(p,
    chain, draw)`` of every parameter: ``(n_params, n_values)``, NaN for a parameter with a
    NaN draw, and for every parameter with fewer than 4 draws (as arviz-stats). The blocks
    run in threads, as many as a full-data pass would use (numpy's sorts and scipy's FFTs
    release the GIL); each writes its own rows, so the result does not depend on them."""
    flat = _flat(draws)
    result = np.full((flat.shape[2], n_values), np.nan)
    if flat.shape[1] < 4:
        return result

    size = _block_size(flat.shape[0], flat.shape[1])

    def block_statistics(start):
        block = np.ascontiguousarray(np.moveaxis(flat[:, :, start:start + size], 2, 0))
        valid = ~np.isnan(block).any(axis=(1, 2))
        if valid.any():
            values = statistic(block[valid])
            result[start:start + block.shape[0]][valid] = values.reshape(len(values), n_values)

    map_on_cores(block_statistics, range(0, flat.shape[2], size))
    return result


def _split_chains(x):
    """Each chain's first and last halves as chains of their own: ``(p, 2 chain, draw // 2)``."""
    half = x.shape[2] // 2
    return np.concatenate([x[:, :, :half], x[:, :, x.shape[2] - half:]], axis=1)


def _average_ranks(values):
    """The ranks (1 to n) of each row's values within the row, tied values sharing the average
    of their ranks (as ``scipy.stats.rankdata(values, method="average", axis=1)``): NumPy's
    sort, then one pass over each sorted row (``_kernels.ranks``). Tied values are common:
    a rejected move repeats its draw."""
    from ._kernels.ranks import average_ranks_in_order

    values = np.require(values, dtype=np.float64, requirements=["C", "W"])  # the kernel's type
    order = np.ascontiguousarray(np.argsort(values, axis=1), dtype=np.int64)
    ranks = np.empty(values.shape)
    average_ranks_in_order(values, order, ranks)
    return ranks


def _z_scale(x):
    """Each parameter's draws replaced by the normal scores of their ranks among all its draws
    (average ranks for ties; Blom's offset 3/8). Ranks are whole or half numbers from 1 to
    ``m n``: the scores of all of them are computed once, and each draw's looked up."""
    p, m, n = x.shape
    ranks = _average_ranks(x.reshape(p, m * n))
    if p <= 2:  # as many ranks as scores to compute: no table
        return ndtri((ranks - 0.375) / (m * n + 0.25)).reshape(p, m, n)
    scores = ndtri((np.arange(2, 2 * m * n + 1) / 2.0 - 0.375) / (m * n + 0.25))
    return scores[(2.0 * ranks).astype(np.intp) - 2].reshape(p, m, n)


def _rhat_of(x):
    """Split-chain-free R-hat of ``(p, chain, draw)``: from the between- and within-chain
    variances."""
    n = x.shape[2]
    between = n * np.var(x.mean(axis=2), axis=1, ddof=1)
    within = np.mean(np.var(x, axis=2, ddof=1), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):  # a constant parameter: NaN
        return np.sqrt((between / within + n - 1) / n)


def _rank_rhat(x, scores=None):
    """Rank-normalised split R-hat: the larger of the bulk's (the normal scores of the split
    chains, ``scores`` when already computed) and the tails' (the scores of the distances
    from the median)."""
    split = _split_chains(x)
    bulk = _rhat_of(_z_scale(split) if scores is None else scores)
    folded = np.abs(split - np.median(split.reshape(split.shape[0], -1), axis=1)[:, None, None])
    return np.maximum(bulk, _rhat_of(_z_scale(folded)))


#: Lags of the autocovariances :func:`_ess_of` first sums directly (a product a lag) before
#: it takes every lag through FFTs: enough where Geyer's sequence stops early, as it does
#: for draws thinned to near independence (most fits' kept draws), at a fifth of the FFTs'
#: time for 4 chains of 450 draws.
DIRECT_LAGS = 16


def _autocovariances(centred, lags):
    """``(p, chain, lags)`` autocovariances of each chain at lags ``0 .. lags - 1`` (divided
    by the draws), summed directly."""
    n = centred.shape[2]
    autocov = np.empty(centred.shape[:2] + (lags,))
    for lag in range(lags):
        autocov[:, :, lag] = np.einsum("pcd,pcd->pc", centred[:, :, :n - lag],
                                       centred[:, :, lag:])
    autocov /= n
    return autocov


def _ess_of(x):
    """Effective sample size of ``(p, chain, draw)``: the autocorrelations combined over the
    chains, summed by Geyer's initial positive and initial monotone sequences (as
    arviz-stats' ``_ess``), all parameters at once: from the first :data:`DIRECT_LAGS`
    lags summed directly where every parameter's sequence stops within them, from every
    lag through FFTs otherwise (and always with ``DIRECT_LAGS = 0``)."""
    p, m, n = x.shape
    centred = x - x.mean(axis=2, keepdims=True)
    if 0 < DIRECT_LAGS < n:
        ess = _geyer_ess(x, _autocovariances(centred, DIRECT_LAGS), complete=False)
        if ess is not None:
            return ess
    length = next_fast_len(2 * n)
    spectrum = rfft(centred, n=length, axis=2)
    autocov = irfft(spectrum * np.conjugate(spectrum), n=length, axis=2)[:, :, :n] / n
    return _geyer_ess(x, autocov, complete=True)


def _geyer_ess(x, autocov, complete):
    """:func:`_ess_of` from the chains' autocovariances ``(p, chain, lags)`` at the first
    lags (every lag with ``complete``); None where some parameter's sequence may run past
    them (never with ``complete``)."""
    p, m, n = x.shape
    size = m * n
    mean_var = autocov[:, :, 0].mean(axis=1) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if m > 1:
        var_plus = var_plus + np.var(x.mean(axis=2), axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (mean_var[:, None] - autocov.mean(axis=1)) / var_plus[:, None]
    rho[:, 0] = 1.0
    # Pairs of consecutive lags (0, 1), (2, 3), ...: the positive sequence stops at the
    # first pair whose sum is not positive, or where the lags run out.
    n_pairs = min(n, rho.shape[1]) // 2
    pairs = rho[:, 0:2 * n_pairs:2] + rho[:, 1:2 * n_pairs:2]
    last_pair = (n - 3) // 2
    ended = pairs[:, :last_pair + 1] <= 0.0
    if not complete and last_pair >= n_pairs and not np.all(
            ended.any(axis=1) | np.isnan(rho).any(axis=1)):
        return None  # a sequence still positive at the last lag summed
    stops = np.where(ended, np.arange(ended.shape[1]), last_pair)
    stop = stops.min(axis=1) if last_pair >= 0 else np.zeros(p, dtype=int)
    # The pairs before the stop, made non-increasing (Geyer's initial monotone sequence).
    monotone = np.minimum.accumulate(pairs, axis=1)
    before = np.arange(pairs.shape[1])[None, :] < stop[:, None]
    total = np.sum(np.where(before, monotone, 0.0), axis=1)
    rows = np.arange(p)
    even = rho[rows, np.minimum(2 * stop, rho.shape[1] - 1)]
    stop_pair = pairs[rows, np.minimum(stop, pairs.shape[1] - 1)]
    last = np.where(stop_pair >= 0.0, even, np.maximum(even, 0.0))
    last = np.where(stop == 0, 1.0, last)
    tau = np.maximum(-1.0 + 2.0 * total + last, 1.0 / np.log10(size))
    ess = size / tau
    ess[np.isnan(rho).any(axis=1)] = np.nan
    constant = (x.max(axis=(1, 2)) - x.min(axis=(1, 2))) < np.finfo(float).resolution
    ess[constant] = size
    return ess


def _bulk_ess(x):
    return _ess_of(_z_scale(_split_chains(x)))


def _tail_ess(x, probabilities=(0.05, 0.95)):
    """The smaller ESS of the indicators ``x <= q`` at the 5% and 95% quantiles ``q``."""
    quantiles = np.quantile(x.reshape(x.shape[0], -1), probabilities, axis=1)  # one sort
    values = []
    for quantile in quantiles:
        below = (x <= quantile[:, None, None]).astype(np.float64)
        values.append(_ess_of(_split_chains(below)))
    return np.minimum(*values)


def _all_three(x):
    """R-hat, bulk ESS and tail ESS, the normal scores shared: ``(p, 3)``."""
    scores = _z_scale(_split_chains(x))
    return np.stack([_rank_rhat(x, scores), _ess_of(scores), _tail_ess(x)], axis=1)


@_with_sections(_DRAWS_PARAMETER + """
Returns
-------
r_hat, ess_bulk, ess_tail : ndarray of shape ``draws.shape[2:]``
    NaN for a parameter with a NaN draw and for all with fewer than 4 draws; ``r_hat``
    NaN with fewer than 2 chains.
""")
def convergence_statistics(draws):
    """``(r_hat, ess_bulk, ess_tail)`` of each parameter (as :func:`rhat`, :func:`ess_bulk`
    and :func:`ess_tail`, in one pass that ranks the draws once less)."""
    values = _batched(_all_three, draws, n_values=3)
    if np.shape(draws)[0] < 2:  # R-hat needs two chains
        values[:, 0] = np.nan
    return tuple(values[:, k].reshape(np.shape(draws)[2:]) for k in range(3))


@_with_sections(_PER_PARAMETER_SECTIONS)
def rhat(draws):
    """Rank-normalised split R-hat of each parameter (NaN with fewer than 2 chains or 4
    draws)."""
    if np.shape(draws)[0] < 2:
        return np.full(np.shape(draws)[2:], np.nan)
    return _batched(_rank_rhat, draws).reshape(np.shape(draws)[2:])


@_with_sections(_PER_PARAMETER_SECTIONS)
def ess_bulk(draws):
    """Bulk effective sample size of each parameter (NaN with fewer than 4 draws)."""
    return _batched(_bulk_ess, draws).reshape(np.shape(draws)[2:])


@_with_sections(_PER_PARAMETER_SECTIONS)
def ess_tail(draws):
    """Tail effective sample size of each parameter: the smaller of the indicators' at its
    5% and 95% quantiles (NaN with fewer than 4 draws)."""
    return _batched(_tail_ess, draws).reshape(np.shape(draws)[2:])


@_with_sections(_PER_PARAMETER_SECTIONS)
def mcse_mean(draws):
    """Monte Carlo standard error of each parameter's posterior mean."""
    return _per_parameter(_stats().mcse, draws, method="mean")


@_with_sections(_PER_PARAMETER_SECTIONS)
def mcse_sd(draws):
    """Monte Carlo standard error of each parameter's posterior standard deviation."""
    return _per_parameter(_stats().mcse, draws, method="sd")


@_with_sections(_DRAWS_PARAMETER + """
Returns
-------
dict
    ``mean``, ``sd``, ``mcse_mean``, ``mcse_sd``, ``ess_bulk``, ``ess_tail``, ``r_hat``,
    each an ndarray of shape ``draws.shape[2:]``.
""")
def summarize(draws):
    """Posterior mean and sd and the convergence diagnostics of each parameter."""
    draws = np.asarray(draws, dtype=np.float64)
    r_hat, bulk, tail = convergence_statistics(draws)
    return {"mean": draws.mean(axis=(0, 1)), "sd": draws.std(axis=(0, 1)),
            "mcse_mean": mcse_mean(draws), "mcse_sd": mcse_sd(draws), "ess_bulk": bulk,
            "ess_tail": tail, "r_hat": r_hat}

"""What a fit checks of its chains once they have run: R-hat and effective sample sizes of
every posterior variable (with a warning naming the worst), whether the chains sit at one
log posterior level (several modes), and whether Firefly's bounds paid for themselves."""
import warnings

import numpy as np
from scipy import stats
from sklearn.exceptions import ConvergenceWarning, EfficiencyWarning
from sklearn.utils import Bunch

from .. import diagnostics
from ..posterior import Posterior, _parameter_label

#: A fit warns when some parameter's rank-normalised split R-hat exceeds this ...
MAX_RHAT = 1.01
#: ... or its bulk effective sample size is below this many per chain (Vehtari et al. 2021).
MIN_ESS_PER_CHAIN = 100
#: The modes the MAP search found from its several starts within this many nats of the
#: highest's log posterior are worth sampling: a handful of rows can make a gap that size (20
#: rows far out in X make 29 nats between a Student-t regression's two modes), so the other
#: mode may hold the answer a user expects: the chains start in turn in each such mode
#: (a warning names those left without a chain). Farther modes hold no mass worth sampling.
MODE_REACH_NATS = 100.0
#: A fit warns when a chain's mean log posterior lies below the highest chain's by more
#: than the Student-t quantile of this upper tail probability (its degrees of freedom those
#: of the pooled within-chain sd) times the Monte Carlo standard error of the difference: the
#: chains sit in different modes (each may look stationary alone, and R-hat on the parameters
#: may not see it when the modes are close). About 6 standard errors with 20 draws a chain,
#: 16 with 4; four chains in one mode then warn in fewer than 1 fit in a million (simulated
#: chi-square levels, skewed as at a posterior with few parameters).
LP_GAP_TAIL = 1e-9
#: The check evaluates the exact log posterior at this many evenly spaced draws of each
#: chain ...
LP_CHECK_DRAWS = 20
#: ... fewer where that would read more than this many rows in all (tall data: the check
#: costs about a tenth of a second at most), but never fewer than :data:`LP_CHECK_MIN_DRAWS`.
LP_CHECK_ROWS = 2e7
LP_CHECK_MIN_DRAWS = 4
#: A fit of an approximate test warns when its estimated per-test error in acceptance
#: probability (:func:`check_test_error`) exceeds this: one decision in twenty may differ
#: from the exact test's.
TEST_ERROR_WARNING = 0.05
#: The largest of ``|x^2 - 1| phi(x) / 6`` over ``x``, at ``x = 0``: the first Edgeworth
#: term's largest gap between the distribution of a standardised mean and the normal, per
#: unit of skewness over ``sqrt(b)``.
EDGEWORTH_GAP = 1.0 / (6.0 * np.sqrt(2.0 * np.pi))
#: Firefly warns when its chains kept more than this fraction of the rows bright on average
#: (each bright row is a likelihood query per iteration: the bounds are too loose to pay).
FIREFLY_MAX_BRIGHT_FRACTION = 0.5


#: ``n_draws="auto"``: the chains' first round keeps this many draws each ...
AUTO_FIRST_DRAWS = 150
#: ... and the rounds end at this many a chain at most (four times the fixed default: a
#: fit that has not converged by then warns, as a fixed fit does).
AUTO_MAX_DRAWS = 4000
#: The next round aims this much beyond the draws the ESS so far says are needed (ESS
#: estimates from a few hundred draws err by a tenth or so) ...
AUTO_DRAWS_MARGIN = 1.2
#: ... and grows the chains by at least and at most these factors.
AUTO_DRAWS_GROWTH = (1.25, 3.0)


def draws_needed(draws, n_chains):
    """``n_draws="auto"``'s rule: the draws each chain should hold, from what ``draws``
    (``(n_chains, n, d)``, every sampled coordinate) show, or None when they meet the
    targets: every coordinate's rank-normalised split R-hat at most :data:`MAX_RHAT` and
    its bulk and tail ESS at least :data:`MIN_ESS_PER_CHAIN` a chain (Vehtari et al.
    2021), the checks a fit warns by.

    Short of them, the chains grow as far as the smallest ESS so far needs to reach its
    target (with :data:`AUTO_DRAWS_MARGIN`; by :data:`AUTO_DRAWS_GROWTH`'s factors at least
    and at most), or by half again when only R-hat is short."""
    return convergence_check(draws, n_chains)[0]


def convergence_check(draws, n_chains):
    """:func:`draws_needed` and the statistics it judged: ``(wanted, statistics)`` with
    ``statistics`` the ``(r_hat, ess_bulk, ess_tail)`` of each of ``draws``' coordinates
    (:func:`~skbayes_mh.diagnostics.convergence_statistics`), which :func:`diagnose`
    reuses for the same draws (a fit's last round)."""
    statistics = _statistics(draws)
    return _wanted(draws.shape[1], n_chains, *statistics), statistics


def _statistics(draws):
    """``(r_hat, ess_bulk, ess_tail)`` of ``draws``, quietly (a constant coordinate's
    NaN)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return diagnostics.convergence_statistics(draws)


def _wanted(n, n_chains, r_hat, bulk, tail):
    """:func:`draws_needed` from the statistics of chains of ``n`` draws."""
    wanted = MIN_ESS_PER_CHAIN * n_chains
    ess = float(np.nanmin(np.minimum(bulk, tail), initial=np.inf))
    worst_rhat = float(np.nanmax(r_hat, initial=1.0))
    if worst_rhat <= MAX_RHAT and ess >= wanted:
        return None
    factor = AUTO_DRAWS_MARGIN * wanted / ess if 0 < ess < wanted else 1.5
    factor = float(np.clip(factor, *AUTO_DRAWS_GROWTH))
    return int(np.ceil(n * factor))


def modes_within_reach(modes):
    """The modes the MAP search found (``(negative log posterior, point)``, lowest first)
    within :data:`MODE_REACH_NATS` of the highest: the ones chains start in."""
    return [mode for mode in modes if mode[0] - modes[0][0] <= MODE_REACH_NATS]


def warn_unvisited_modes(modes, n_chains, name, stacklevel=5):
    """A :class:`ConvergenceWarning` when the MAP search found more modes within reach
    (:func:`modes_within_reach` of ``modes``, ``(negative log posterior, point)`` lowest
    first) than there are chains to start in them. Modes that each get a chain need no
    warning here: :func:`check_chain_levels` says afterwards whether the chains stayed apart
    (a "mode" whose chain climbs into another was none)."""
    gaps = [value - modes[0][0] for value, _ in modes_within_reach(modes)[n_chains:]]
    if not gaps:
        return
    warnings.warn(
        f"{name}: the MAP search found {n_chains + len(gaps)} separated modes of the "
        f"posterior and the chains start in the highest {n_chains}; the "
        f"other{'s are' if len(gaps) > 1 else ' is'} "
        + ", ".join(f"{gap:.1f}" for gap in gaps)
        + " nats lower in log posterior than the highest, and no chain starts there. A mode "
        "that close can hold the answer you expect: rows far out in X (high leverage) often "
        f"make one. Fit with n_chains={n_chains + len(gaps)} or more to see every mode.",
        ConvergenceWarning, stacklevel=stacklevel)


def diagnose(posterior, name, stacklevel, levels=None, test_error=None, coords=None,
             stopped=None, max_time=None, checked=None, known=None):
    """R-hat, bulk and tail ESS of every variable of ``posterior`` (a
    :class:`~skbayes_mh.posterior.Posterior`), with a :class:`ConvergenceWarning` naming
    the worst parameter (and any chain that never moved) when the chains do not meet
    :data:`MAX_RHAT` and :data:`MIN_ESS_PER_CHAIN`; with ``levels`` (the log posterior at
    evenly spaced draws of each chain, ``(n_chains, n_evaluated)``) also
    :func:`check_chain_levels`, and with ``test_error`` (an approximate test's estimated
    error, a Bunch) :func:`check_test_error`. ``coords`` labels the parameters in the
    warning as :meth:`~skbayes_mh.posterior.Posterior.summary` does (``coef[mean radius]``);
    without, they are numbered. ``checked`` ``(n_chains, n_draws, k)``: the draws the
    warning judges instead of the posterior's (a span fit's sampled coordinates, named
    ``span coordinate[j]``), whose statistics are returned too, as ``sampled``.
    ``known`` ``(draws, statistics)``: statistics already computed (:func:`convergence_check`
    on a fit's last round), used for ``checked`` or for the posterior's variables side by
    side where those are these very draws, instead of computing them again.

    Returns
    -------
    Bunch
        ``r_hat``, ``ess_bulk``, ``ess_tail``: a Bunch per statistic, by variable; with
        ``checked``, ``sampled``: a Bunch of the same three statistics of its coordinates
        (arrays of shape (k,)), the ones the warning judged; with ``levels``,
        ``log_posterior`` (:func:`check_chain_levels`); with ``test_error``,
        ``test_error``.
    """
    found = {"r_hat": {}, "ess_bulk": {}, "ess_tail": {}}
    by_variable = _known_by_variable(posterior, known)
    for variable, draws in posterior.draws.items():
        (found["r_hat"][variable], found["ess_bulk"][variable],
         found["ess_tail"][variable]) = (by_variable[variable] if by_variable is not None
                                         else _statistics(draws))
    judged, statistics = posterior, found
    if checked is not None:
        reused = known is not None and np.array_equal(checked, known[0])
        sampled = Bunch(**dict(zip(("r_hat", "ess_bulk", "ess_tail"), (
            np.asarray(value, dtype=float)
            for value in (known[1] if reused else _statistics(checked))))))
        judged, coords = Posterior({"span coordinate": checked}, {}), None
        statistics = {key: {"span coordinate": value} for key, value in sampled.items()}
    rhat, rhat_name = _worst(judged, statistics["r_hat"], largest=True, coords=coords)
    ess, ess_name = _worst(judged, statistics["ess_bulk"], largest=False, coords=coords)
    wanted_ess = MIN_ESS_PER_CHAIN * posterior.n_chains
    # A chain that never moved (of a span fit: in the sampled coordinates; the others are
    # fresh prior draws at every draw, so they always move).
    stuck = [chain for chain in range(judged.n_chains) if judged.n_draws > 1
             and all(np.ptp(draws[chain], axis=0).max(initial=0.0) == 0
                     for draws in judged.draws.values())]
    if rhat > MAX_RHAT or ess < wanted_ess or stuck:
        warnings.warn(
            f"{name}: the chains may not have converged: "
            + (f"chain{'s' if len(stuck) > 1 else ''} {', '.join(map(str, stuck))} never "
               f"moved; " if stuck else "")
            + "largest R-hat "
            + (f"{rhat:.3g} ({rhat_name})" if np.isfinite(rhat) else "not available")
            + f", smallest bulk ESS {ess:.0f} ({ess_name}) of "
            f"{posterior.n_chains * posterior.n_draws} draws; wanted R-hat <= {MAX_RHAT} "
            f"and bulk ESS >= {wanted_ess} ({MIN_ESS_PER_CHAIN} per chain)"
            + (f"; n_draws='auto' stopped at its time budget (max_time={max_time!r} s)"
               if stopped == "max_time" else "")
            + (f"; n_draws='auto' stopped at its most draws ({AUTO_MAX_DRAWS} a chain)"
               if stopped == "max_draws" else "")
            + ". Run longer chains (n_draws, n_warmup, thin, max_time) or another proposal; "
            "per-parameter values are in diagnostics_.", ConvergenceWarning,
            stacklevel=stacklevel)
    result = Bunch(**{key: Bunch(**value) for key, value in found.items()})
    if checked is not None:
        result.sampled = sampled
    if levels is not None:
        result.log_posterior = check_chain_levels(levels, name, stacklevel + 1)
    if test_error is not None:
        result.test_error = check_test_error(test_error, name, stacklevel + 1)
    return result


def _known_by_variable(posterior, known):
    """``known``'s statistics ``(draws, (r_hat, ess_bulk, ess_tail))`` split by the
    posterior's variables, each in its draws' shape, where its draws side by side
    (``(n_chains, n_draws, -1)`` each, in the posterior's order) are ``known``'s; else
    None."""
    if known is None or not posterior.draws:
        return None
    draws, statistics = known
    shapes = [np.shape(value) for value in posterior.draws.values()]
    if any(len(shape) < 2 or shape[:2] != draws.shape[:2] for shape in shapes):
        return None
    sizes = [int(np.prod(shape[2:], dtype=int)) for shape in shapes]
    if sum(sizes) != draws.shape[2]:
        return None
    side_by_side = np.concatenate([np.reshape(value, draws.shape[:2] + (-1,))
                                   for value in posterior.draws.values()], axis=2)
    if not np.array_equal(side_by_side, draws):
        return None
    bounds = np.cumsum([0] + sizes)
    return {variable: tuple(np.asarray(values[bounds[k]:bounds[k + 1]], dtype=float)
                            .reshape(shape[2:]) for values in statistics)
            for k, (variable, shape) in enumerate(zip(posterior.draws, shapes))}


def check_chain_levels(levels, name, stacklevel):
    """The chains' log posterior levels, with a :class:`ConvergenceWarning` naming every
    chain whose mean lies below the highest chain's by more than Monte Carlo noise
    (:data:`LP_GAP_TAIL`): the chains sit in different modes.

    Parameters
    ----------
    levels : ndarray of shape (n_chains, n_evaluated)
        The exact log posterior at evenly spaced draws of each chain.

    Returns
    -------
    Bunch
        ``values`` (``levels``), each chain's ``mean`` and ``sd``, and ``gap_se``: the
        standard error of a difference of two chains' means (from the within-chain sd,
        pooled).
    """
    levels = np.asarray(levels, dtype=np.float64)
    n_chains, n_evaluated = levels.shape
    mean = levels.mean(axis=1)
    sd = levels.std(axis=1, ddof=1) if n_evaluated > 1 else np.full(n_chains, np.nan)
    gap_se = float(np.sqrt(2.0 * np.mean(sd**2) / n_evaluated))
    found = Bunch(values=levels, mean=mean, sd=sd, gap_se=gap_se)
    if n_chains < 2 or not np.isfinite(gap_se):
        return found
    best = int(np.argmax(mean))
    gaps = mean[best] - mean
    sigmas = float(stats.t.isf(LP_GAP_TAIL, n_chains * (n_evaluated - 1)))
    below = np.flatnonzero(gaps > sigmas * gap_se)
    if below.size:
        plural = below.size > 1
        warnings.warn(
            f"{name}: the chains sit in different modes: chain{'s' if plural else ''} "
            + ", ".join(f"{c} ({gaps[c]:.1f} nats)" for c in below)
            + f" {'sit' if plural else 'sits'} below chain {best} in mean log posterior, "
            f"more than {sigmas:.1f} Monte Carlo standard errors ({gap_se:.2g} nats) "
            f"apart, although each chain may look stationary alone. posterior_ mixes the "
            f"modes; a mode that many nats lower holds about exp(-gap) of the mass. "
            f"diagnostics_.log_posterior has each chain's values: keep the chains you trust "
            f"(posterior_ per chain), or look for the rows that make the other mode (e.g. "
            f"high leverage).", ConvergenceWarning, stacklevel=stacklevel)
    return found


def normality_error(skewness, batch, n_data):
    """The first Edgeworth term's estimate of the largest gap between the distribution of
    the mean of ``batch`` rows drawn without replacement from ``n_data`` (per-row terms of
    skewness ``skewness``), standardised, and the normal: the error in acceptance
    probability that a test assuming the mean normal makes (the minibatch test's correction,
    Austerity's t-test). 0 when the batch is every row; an estimate, not a bound (the
    Berry-Esseen bound, ``6.4 E|X|^3 / sqrt(b)`` by Seita et al.'s Corollary 1, exceeds 1 at
    the hundred rows a test reads)."""
    batch = np.minimum(np.asarray(batch, dtype=float), n_data)
    if n_data <= 2:
        return np.zeros_like(batch)
    # The skewness of a mean without replacement: gamma (N - 2b) / (N - 2) sqrt((N - 1) /
    # (N - b)) / sqrt(b).
    with np.errstate(divide="ignore", invalid="ignore"):
        finite = np.abs(n_data - 2 * batch) / (n_data - 2) * np.sqrt(
            (n_data - 1) / (n_data - batch))
        gap = EDGEWORTH_GAP * np.abs(skewness) * finite / np.sqrt(batch)
    return np.where(batch >= n_data, 0.0, gap)


def check_test_error(found, name, stacklevel):
    """A :class:`ConvergenceWarning` when an approximate test's per-test error
    ``found.per_test`` (measured where the estimate passed the threshold) exceeds
    :data:`TEST_ERROR_WARNING`; returns ``found``."""
    if found.per_test > TEST_ERROR_WARNING:
        how = (f"measured: the test run again at {found.n_moves} moves of the chains; "
               if found.measured is not None else "")
        warnings.warn(
            f"{name}: the {found.test} test's decisions may differ from the exact test's in "
            f"about {found.per_test:.0%} of its tests ({how}estimated: {found.design:.3g} "
            f"from its own analysis, {found.normality:.3g} from the skewness of the rows' log "
            f"ratios, {found.skewness:.2g}, over the {found.rows_per_test:.0f} rows a test "
            f"reads), above {TEST_ERROR_WARNING:g}. acceptance='metropolis' is exact; a larger "
            f"batch_size (or a smaller epsilon or delta) errs less. diagnostics_.test_error "
            f"has the figures.", ConvergenceWarning, stacklevel=stacklevel)
    return found


def _worst(posterior, statistic, largest, coords=None):
    """(value, "name[label]") of the largest (or smallest) value of ``statistic`` (by
    variable) over every parameter, labelled by ``coords`` as in
    :meth:`~skbayes_mh.posterior.Posterior.summary` (numbered without). NaN for a quantity
    constant over all draws (e.g. the intercept without one) is never the worst; NaN for one
    that differs between chains (each stuck at its own value) is the worst there is."""
    neutral, failed = (-np.inf, np.inf) if largest else (np.inf, 0.0)
    candidates = []
    for variable, values in statistic.items():
        values = np.asarray(values, dtype=float)
        draws = posterior.draws[variable]
        varies = np.ptp(draws.reshape(-1, *draws.shape[2:]), axis=0) > 0
        values = np.where(np.isnan(values) & varies, failed, values)
        values = np.nan_to_num(values, nan=neutral, posinf=np.inf)
        if values.size:
            flat = int(np.argmax(values) if largest else np.argmin(values))
            label = _parameter_label(variable, values.shape, (coords or {}).get(variable),
                                     flat)
            candidates.append((float(values.flat[flat]), label))
    return (max if largest else min)(candidates, default=(neutral, ""))


def check_bright_fraction(fraction, name, stacklevel):
    """Warn (``EfficiencyWarning``) when Firefly's chains kept more than
    :data:`FIREFLY_MAX_BRIGHT_FRACTION` of the rows bright on average: each iteration then
    queried that share of the data anyway."""
    if fraction > FIREFLY_MAX_BRIGHT_FRACTION:
        warnings.warn(
            f"{name}: Firefly kept {fraction:.0%} of the rows bright on average, so each "
            f"iteration queried that share of the data: its bounds are too loose for these "
            f"data to save anything. acceptance='metropolis' (every row, exact) or "
            f"'minibatch' costs less here.", EfficiencyWarning, stacklevel=stacklevel)

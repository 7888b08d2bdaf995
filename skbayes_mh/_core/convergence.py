"""What a fit checks of its chains once they have run: R-hat and effective sample sizes of
every posterior variable (with a warning naming the worst), and whether Firefly's bounds
paid for themselves."""
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning, EfficiencyWarning
from sklearn.utils import Bunch

from .. import diagnostics

#: A fit warns when some parameter's rank-normalised split R-hat exceeds this ...
MAX_RHAT = 1.01
#: ... or its bulk effective sample size is below this many per chain (Vehtari et al. 2021).
MIN_ESS_PER_CHAIN = 100
#: A fit warns when its MAP search found, from its several starts, another mode within this
#: many nats of the highest's log posterior: a handful of rows can make a gap that size (20
#: rows far out in X make 29 nats between a Student-t regression's two modes), so the other
#: mode may hold the answer a user expects. Farther modes hold no mass worth sampling.
MODE_WARNING_NATS = 100.0
#: Firefly warns when its chains kept more than this fraction of the rows bright on average
#: (each bright row is a likelihood query per iteration: the bounds are too loose to pay).
FIREFLY_MAX_BRIGHT_FRACTION = 0.5


def warn_separated_modes(modes, name, stacklevel=5):
    """A :class:`ConvergenceWarning` when the MAP search found distinct modes (their negative
    log posteriors ``modes``, lowest first) within :data:`MODE_WARNING_NATS` of each other."""
    gaps = [value - modes[0] for value in modes[1:] if value - modes[0] <= MODE_WARNING_NATS]
    if not gaps:
        return
    warnings.warn(
        f"{name}: the MAP search found {len(gaps) + 1} separated modes of the posterior; the "
        f"chains start in the highest, and the other{'s are' if len(gaps) > 1 else ' is'} "
        + ", ".join(f"{gap:.1f}" for gap in gaps)
        + " nats lower in log posterior, so the chains may not visit "
        + ("them" if len(gaps) > 1 else "it")
        + ". A mode that close can hold the answer you expect: rows far out in X (high "
        "leverage) often make one. Check such rows, or refit without them and compare.",
        ConvergenceWarning, stacklevel=stacklevel)


def diagnose(posterior, name, stacklevel):
    """R-hat, bulk and tail ESS of every variable of ``posterior`` (a
    :class:`~skbayes_mh.posterior.Posterior`), with a :class:`ConvergenceWarning` naming
    the worst parameter (and any chain that never moved) when the chains do not meet
    :data:`MAX_RHAT` and :data:`MIN_ESS_PER_CHAIN`.

    Returns
    -------
    Bunch
        ``r_hat``, ``ess_bulk``, ``ess_tail``: a Bunch per statistic, by variable.
    """
    found = {"r_hat": {}, "ess_bulk": {}, "ess_tail": {}}
    for variable, draws in posterior.draws.items():
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            (found["r_hat"][variable], found["ess_bulk"][variable],
             found["ess_tail"][variable]) = diagnostics.convergence_statistics(draws)
    rhat, rhat_name = _worst(posterior, found["r_hat"], largest=True)
    ess, ess_name = _worst(posterior, found["ess_bulk"], largest=False)
    wanted_ess = MIN_ESS_PER_CHAIN * posterior.n_chains
    stuck = [chain for chain in range(posterior.n_chains) if posterior.n_draws > 1
             and all(np.ptp(draws[chain], axis=0).max(initial=0.0) == 0
                     for draws in posterior.draws.values())]
    if rhat > MAX_RHAT or ess < wanted_ess or stuck:
        warnings.warn(
            f"{name}: the chains may not have converged: "
            + (f"chain{'s' if len(stuck) > 1 else ''} {', '.join(map(str, stuck))} never "
               f"moved; " if stuck else "")
            + "largest R-hat "
            + (f"{rhat:.3g} ({rhat_name})" if np.isfinite(rhat) else "not available")
            + f", smallest bulk ESS {ess:.0f} ({ess_name}) of "
            f"{posterior.n_chains * posterior.n_draws} draws; wanted R-hat <= {MAX_RHAT} "
            f"and bulk ESS >= {wanted_ess} ({MIN_ESS_PER_CHAIN} per chain). Run longer "
            f"chains (n_draws, n_warmup, thin) or another proposal; per-parameter "
            f"values are in diagnostics_.", ConvergenceWarning, stacklevel=stacklevel)
    return Bunch(**{key: Bunch(**value) for key, value in found.items()})


def _worst(posterior, statistic, largest):
    """(value, "name[index]") of the largest (or smallest) value of ``statistic`` (by
    variable) over every parameter. NaN for a quantity constant over all draws (e.g. the
    intercept without one) is never the worst; NaN for one that differs between chains
    (each stuck at its own value) is the worst there is."""
    neutral, failed = (-np.inf, np.inf) if largest else (np.inf, 0.0)
    candidates = []
    for variable, values in statistic.items():
        values = np.asarray(values, dtype=float)
        draws = posterior.draws[variable]
        varies = np.ptp(draws.reshape(-1, *draws.shape[2:]), axis=0) > 0
        values = np.where(np.isnan(values) & varies, failed, values)
        values = np.nan_to_num(values, nan=neutral, posinf=np.inf)
        if values.size:
            index = np.unravel_index(np.argmax(values) if largest else np.argmin(values),
                                     values.shape)
            label = variable + (f"[{', '.join(map(str, index))}]" if index else "")
            candidates.append((float(values[index]), label))
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

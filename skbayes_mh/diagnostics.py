"""Convergence diagnostics of chain-major draws ``(chain, draw, *shape)``, from arviz-stats'
array functions (rank-normalised split R-hat, bulk and tail effective sample sizes, Monte
Carlo standard errors; Vehtari, Gelman, Simpson, Carpenter and Buerkner 2021)."""
import numpy as np


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


def rhat(draws):
    """Rank-normalised split R-hat of each parameter: ndarray of shape ``draws.shape[2:]``."""
    return _per_parameter(_stats().rhat, draws, method="rank")


def ess_bulk(draws):
    """Bulk effective sample size of each parameter."""
    return _per_parameter(_stats().ess, draws, method="bulk")


def ess_tail(draws):
    """Tail effective sample size (5% and 95% quantiles) of each parameter."""
    return _per_parameter(_stats().ess, draws, method="tail", prob=(0.05, 0.95))


def mcse_mean(draws):
    """Monte Carlo standard error of each parameter's posterior mean."""
    return _per_parameter(_stats().mcse, draws, method="mean")


def mcse_sd(draws):
    """Monte Carlo standard error of each parameter's posterior standard deviation."""
    return _per_parameter(_stats().mcse, draws, method="sd")


def summarize(draws):
    """``dict`` of ``mean``, ``sd``, ``mcse_mean``, ``mcse_sd``, ``ess_bulk``, ``ess_tail``,
    ``r_hat``, each of shape ``draws.shape[2:]``."""
    draws = np.asarray(draws, dtype=np.float64)
    return {"mean": draws.mean(axis=(0, 1)), "sd": draws.std(axis=(0, 1)),
            "mcse_mean": mcse_mean(draws), "mcse_sd": mcse_sd(draws), "ess_bulk": ess_bulk(draws),
            "ess_tail": ess_tail(draws), "r_hat": rhat(draws)}

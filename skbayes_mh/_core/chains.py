"""Where a fit's chains start, and the levels of the log posterior they reach: the inputs of
the convergence checks (``convergence.py``) that R-hat alone does not see."""
import numpy as np

from ..sampling import Shape
from .convergence import LP_CHECK_DRAWS, LP_CHECK_MIN_DRAWS, LP_CHECK_ROWS, modes_within_reach

#: Each chain starts at a draw of the Laplace approximation around its mode with every sd
#: multiplied by this: over-dispersed (Gelman and Rubin 1992), so that chains that do not
#: meet show in R-hat, yet within reach of the proposal the Laplace shape tunes.
START_DISPERSION = 2.0


def chain_starts(target, seeds):
    """Where each chain starts: chain ``c`` at a draw of the Laplace approximation around
    the ``c``-th mode (in turn) of those the MAP search found within reach
    (:func:`~skbayes_mh._core.convergence.modes_within_reach`, the highest first; usually
    the MAP alone), with the sds times :data:`START_DISPERSION`.

    The draw is the Laplace covariance's factor times a standard normal from the chain's
    own seed. Jitter by each coordinate's marginal sd instead lands hundreds of posterior
    sds off along strongly correlated directions (the over-parameterised softmax's class
    contrasts, as Firefly samples them), where no chain driven by the control variates'
    proxy accepts a move.

    Returns
    -------
    list of ndarray of shape (d,)
    """
    centres = [target.mean] + [point for _, point in
                               modes_within_reach(target.extra.get("modes", []))[1:]]
    shape = Shape.from_covariance(target.laplace_covariance)
    starts = []
    for c, seed in enumerate(seeds):
        z = np.random.default_rng([int(seed), 1]).standard_normal(target.n_params)
        starts.append(centres[c % len(centres)] + START_DISPERSION * shape.times(z))
    return starts


def chain_levels(target, draws, cv=None, recorded=None):
    """The tempered log posterior at evenly spaced draws of each chain,
    :data:`~skbayes_mh._core.convergence.LP_CHECK_DRAWS` a chain: read from ``recorded``
    when the chains recorded it at every draw (the exact tests do: no pass); otherwise
    with control variates ``cv`` (the chains' own) estimated from them
    (:meth:`~skbayes_mh.sampling.Target.log_posterior_estimates`: no full-data pass), or
    exact, one full-data pass a draw, with fewer draws on tall data (about
    :data:`~skbayes_mh._core.convergence.LP_CHECK_ROWS` rows read in all, at least
    :data:`~skbayes_mh._core.convergence.LP_CHECK_MIN_DRAWS` a chain).

    Parameters
    ----------
    target : Target
    draws : ndarray of shape (n_chains, n_draws, d)
    cv : tuple or None
    recorded : ndarray of shape (n_chains, n_draws) or None
        The tempered log posterior the chains recorded at their draws, NaN where unknown.

    Returns
    -------
    ndarray of shape (n_chains, n_evaluated)
    """
    n_chains, n_draws, d = draws.shape
    if recorded is not None and np.isfinite(recorded).all():  # no pass to afford
        index = np.linspace(0, n_draws - 1, min(n_draws, LP_CHECK_DRAWS)).round().astype(int)
        return recorded[:, index]
    with_cv = cv is not None and cv[0]
    affordable = (LP_CHECK_DRAWS if with_cv
                  else int(LP_CHECK_ROWS // max(target.n_data * n_chains, 1)))
    n_evaluated = min(n_draws, max(LP_CHECK_MIN_DRAWS, min(LP_CHECK_DRAWS, affordable)))
    index = np.linspace(0, n_draws - 1, n_evaluated).round().astype(int)
    thetas = draws[:, index].reshape(-1, d)
    return np.reshape(target.log_posteriors(thetas, cv), (n_chains, n_evaluated))

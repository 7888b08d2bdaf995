"""Quantiles of the posterior-predictive mixture of a count distribution over draws."""
import numpy as np

#: Draws (evenly thinned) whose own quantiles start a count mixture's bracket: SciPy's
#: discrete ``ppf`` is a search, so on every draw it cost most of ``predict_quantiles``.
BRACKET_DRAWS = 250


def discrete_mixture_quantiles(component_ppf, component_cdf, n_draws, quantiles):
    """Quantiles of the equal mixture over draws of a count distribution: for each row and
    ``q``, the smallest count ``k`` whose mixture CDF is at least ``q``, by bisection.

    The bracket starts between the quantiles of :data:`BRACKET_DRAWS` evenly thinned draws
    (which bound the thinned mixture's) and widens, by the whole mixture's CDF, until it
    bounds the whole mixture's. Each row's search stops on its own.

    Parameters
    ----------
    component_ppf : callable
        ``component_ppf(q, draws)``: the quantile ``q`` of the draws selected by the slice
        ``draws``, at each row, ``(n_selected, n_rows)``.
    component_cdf : callable
        ``component_cdf(k, rows)`` with ``k`` of shape ``(1, n_selected)``: each draw's CDF
        there at the rows indexed by ``rows``, ``(n_draws, n_selected)``.
    n_draws : int
    quantiles : ndarray of shape (n_quantiles,), each in (0, 1)

    Returns
    -------
    ndarray of shape (n_rows, n_quantiles), float (whole numbers)
    """
    def mixture_cdf(k, rows):  # every k it is given is at least 0
        return component_cdf(k[None, :], rows).mean(axis=0)

    thinned = slice(None, None, max(1, n_draws // BRACKET_DRAWS))
    columns = []
    for q in quantiles:
        component = component_ppf(q, thinned)
        low = component.min(axis=0) - 1  # wanted: CDF(low) < q (always so at -1) ...
        high = component.max(axis=0)     # ... and CDF(high) >= q
        rows = np.flatnonzero(low >= 0)
        while rows.size:
            rows = rows[mixture_cdf(low[rows], rows) >= q]
            width = high[rows] - low[rows]
            high[rows] = low[rows]
            low[rows] = np.maximum(low[rows] - 2 * width - 1, -1)
            rows = rows[low[rows] >= 0]
        rows = np.arange(high.size)
        while rows.size:
            rows = rows[mixture_cdf(high[rows], rows) < q]
            width = high[rows] - low[rows]
            low[rows] = high[rows]
            high[rows] = high[rows] + 2 * width + 1
        rows = np.flatnonzero(high - low > 1)
        while rows.size:
            middle = np.floor((low[rows] + high[rows]) / 2)  # >= 0
            below = mixture_cdf(middle, rows) < q
            low[rows] = np.where(below, middle, low[rows])
            high[rows] = np.where(below, high[rows], middle)
            rows = rows[high[rows] - low[rows] > 1]
        columns.append(high)
    return np.stack(columns, axis=1)

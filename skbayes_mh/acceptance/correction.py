"""The correction distribution ``C_sigma`` of the minibatch Barker test."""
import functools
import numbers

import numpy as np
from sklearn.utils import check_random_state

from ._build_correction import TABLE_PATH, build_correction, sup_error

#: The range of sigma the correction distribution is offered for. Above 1.5 no proper
#: distribution comes within 2e-3 of the logistic CDF (see ``_build_correction``).
SIGMA_RANGE = (0.5, 1.5)


@functools.lru_cache(maxsize=1)
def _table():
    with np.load(TABLE_PATH) as table:
        return {key: table[key] for key in table.files}


@functools.lru_cache(maxsize=32)
def _correction(sigma):
    """(support, weights, sup_error) for ``sigma``: from the shipped table when tabulated,
    else solved once per process."""
    table = _table()
    match = np.flatnonzero(np.abs(table["sigmas"] - sigma) < 1e-12)
    if match.size:
        k = match[0]
        lo, hi = table["offsets"][k], table["offsets"][k + 1]
        return table["support"][lo:hi], table["weights"][lo:hi], float(table["sup_error"][k])
    support, weights = build_correction(sigma)
    return support, weights, sup_error(support, weights, sigma)


class CorrectionDistribution:
    """The additive correction variable of the minibatch Barker test.

    A discrete distribution ``C_sigma`` such that ``N(0, sigma^2) + C_sigma`` is (to within
    :attr:`sup_error` in CDF) the standard logistic distribution, so that adding it to a
    Gaussian test statistic with variance ``sigma^2`` turns "``> 0``" into Barker's
    acceptance function ``S(Delta) = 1 / (1 + exp(-Delta))``.

    Found by a non-negative least-squares solve on a symmetric grid (no weight is clipped;
    the weights are exactly normalised). Tabulated for sigma = 0.50, 0.51, ..., 1.50 and
    shipped with the package; any other sigma in ``[0.5, 1.5]`` is solved once per process.
    The sup-error is about 1e-6 for sigma <= 1.1, 2e-5 at 1.2 and grows quickly beyond.

    Parameters
    ----------
    sigma : float, default=1.0
        Standard deviation of the Gaussian part, in ``[0.5, 1.5]``.

    Attributes
    ----------
    support : ndarray of shape (m,)
        The points of ``C_sigma``, sorted and symmetric about 0.
    weights : ndarray of shape (m,)
        Their probabilities: non-negative, summing to 1.
    sup_error : float
        ``sup_y |P(N(0, sigma^2) + C_sigma <= y) - 1 / (1 + exp(-y))|`` on a fine grid.

    References
    ----------
    D. Seita, X. Pan, H. Chen, J. Canny. "An Efficient Minibatch Acceptance Test for
    Metropolis-Hastings". UAI 2017, Section 4.

    Examples
    --------
    >>> from skbayes_mh.acceptance import CorrectionDistribution
    >>> c = CorrectionDistribution(sigma=1.0)
    >>> bool(c.sup_error < 1e-5), bool(abs(c.weights.sum() - 1) < 1e-12)
    (True, True)
    """

    def __init__(self, sigma=1.0):
        if (not isinstance(sigma, numbers.Real) or isinstance(sigma, bool)
                or not SIGMA_RANGE[0] <= sigma <= SIGMA_RANGE[1]):
            raise ValueError(f"sigma must be a real number in [{SIGMA_RANGE[0]}, "
                             f"{SIGMA_RANGE[1]}] for the correction distribution; got {sigma!r}.")
        self.sigma = float(sigma)
        support, weights, error = _correction(self.sigma)
        self.support = support.copy()
        self.weights = weights.copy()
        self.sup_error = error

    @property
    def cumulative_weights(self):
        """ndarray of shape (m,): ``cumsum(weights)`` with the last entry exactly 1."""
        cdf = np.cumsum(self.weights)
        cdf[-1] = 1.0
        return cdf

    def sample(self, n, random_state=None):
        """Draw ``n`` values of ``C_sigma``.

        Parameters
        ----------
        n : int
            Number of values.
        random_state : int, RandomState instance or None, default=None
            Seed or generator of the draws.

        Returns
        -------
        ndarray of shape (n,)
            Independent draws from ``support`` with probabilities ``weights``.
        """
        rng = check_random_state(random_state)
        return rng.choice(self.support, size=n, p=self.weights)

    def __repr__(self):
        return f"CorrectionDistribution(sigma={self.sigma!r})"

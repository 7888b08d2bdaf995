"""The exact Barker test."""
from .._kernels.barker import barker_op
from ._base import AcceptanceTest


class Barker(AcceptanceTest):
    """The exact Barker test on the full data.

    Accepts a proposal with probability ``S(Delta) = 1 / (1 + exp(-Delta))``, the logistic
    acceptance function. It satisfies detailed balance like Metropolis-Hastings, with a
    lower acceptance rate, and is the exact limit of :class:`MinibatchBarker`.

    References
    ----------
    A. A. Barker. "Monte Carlo calculations of the radial distribution functions for a
    proton-electron plasma". Aust. J. Phys. 18, 1965.

    Examples
    --------
    >>> from skbayes_mh.acceptance import Barker
    >>> Barker().exact
    True
    """

    name = "barker"
    exact = True
    barker = True
    _decision = barker_op
    _parameter_constraints = {}

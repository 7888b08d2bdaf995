"""The exact Metropolis-Hastings test."""
from .._kernels.metropolis import metropolis_op
from ._base import AcceptanceTest


class Metropolis(AcceptanceTest):
    """The exact Metropolis-Hastings test on the full data.

    Accepts a proposal with probability ``min(1, exp(Delta))``, where ``Delta`` is the log
    of the tempered posterior ratio times the proposal ratio. Reads every row once per
    test (the current state's full-data log-likelihood is cached).

    References
    ----------
    N. Metropolis et al. "Equation of State Calculations by Fast Computing Machines".
    J. Chem. Phys. 21, 1953. W. K. Hastings. "Monte Carlo sampling methods using Markov
    chains and their applications". Biometrika 57, 1970.

    Examples
    --------
    >>> from skbayes_mh.acceptance import Metropolis
    >>> Metropolis().name
    'metropolis'
    """

    name = "metropolis"
    exact = True
    _decision = metropolis_op
    _parameter_constraints = {}

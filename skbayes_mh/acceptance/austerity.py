"""The sequential t-test of Korattikara, Chen and Welling."""
import numbers

import numpy as np
from sklearn.utils._param_validation import Interval

from .._kernels.chain import AUSTERITY
from ._base import AcceptanceTest


class Austerity(AcceptanceTest):
    """The approximate Metropolis-Hastings test of "Austerity in MCMC Land" (Algorithm 1).

    Per test: draw ``u ~ U(0, 1)`` and set ``mu0 = (log u - log_psi) / N`` (``log_psi`` the
    log prior and proposal ratios); the exact test accepts iff the mean over all N rows of
    ``lambda_i = (l_i(theta') - l_i(theta)) / K`` exceeds ``mu0``. Grow a random minibatch
    (without replacement) by ``batch_size`` rows until a t-test of ``mean - mu0`` (standard
    error with the finite-population correction) has a Student-t tail probability below
    ``epsilon``; decide exactly when all N rows are used. With ``epsilon -> 0`` it is the
    exact Metropolis-Hastings test.

    The conservative design of their Section 5 (choosing ``batch_size`` and ``epsilon`` from
    a grid for a target worst-case error) is not offered.

    Parameters
    ----------
    epsilon : float, default=0.05
        Tail probability at which a sequential stage decides, in (0, 1).
    batch_size : int, default=500
        Rows in the first minibatch and added at each stage (>= 2).

    References
    ----------
    A. Korattikara, Y. Chen, M. Welling. "Austerity in MCMC Land: Cutting the
    Metropolis-Hastings Budget". ICML 2014.

    Examples
    --------
    >>> from skbayes_mh.acceptance import Austerity
    >>> Austerity(epsilon=0.01).validate()
    Austerity(epsilon=0.01)
    """

    name = "austerity"
    exact = False
    #: Acceptance rate the "auto" step size aims for in burn-in: Metropolis-Hastings' optimal
    #: rate, which this test approximates.
    target_acceptance_rate = 0.234
    _kernel_id = AUSTERITY
    _parameter_constraints = {
        "epsilon": [Interval(numbers.Real, 0, 1, closed="neither")],
        "batch_size": [Interval(numbers.Integral, 2, None, closed="left")],
    }

    def __init__(self, epsilon=0.05, batch_size=500):
        self.epsilon = epsilon
        self.batch_size = batch_size

    def _kernel_params(self):
        return np.array([float(self.batch_size), float(self.epsilon)])

    def stated_error(self):
        """``epsilon``: the tail probability each decision is made at."""
        return float(self.epsilon)

"""Hamiltonian Monte Carlo as a proposal."""
import math
import numbers

from sklearn.utils._param_validation import Interval, StrOptions

from .._kernels.proposals import HMC as HMC_KERNEL
from .._docstrings import with_sections
from ._base import Proposal


class HMC(Proposal):
    """Hamiltonian Monte Carlo with the mass matrix ``C^-1`` (``C = L L'`` the proposal
    shape: the Laplace covariance, refined from the warm-up draws).

    Each iteration draws a momentum, follows the leapfrog integrator for a path of
    ``path_length`` (in the coordinates the shape whitens) times a uniform draw in
    ``[1/2, 3/2]`` (so that the number of steps varies and cannot resonate with the
    posterior's periods), and proposes the end point; the change of kinetic energy enters
    the test exactly. The step ``s`` is tuned in warm-up toward an acceptance rate of 0.7.

    The gradient along the path is the full-data one with the exact tests (one pass per
    step), and the control variates' proxy with the subsampling tests (no data read until
    the test). A path of ``t`` moves a Gaussian target of the shape's covariance by the
    angle ``t``: its draws' autocorrelation is ``cos t``. Lengths uniform around ``pi / 2``
    average it to zero (lengths in ``[1/2, 1]`` of ``pi / 2`` would leave it at 0.37).

    Parameters
    ----------
    path_length : float or "auto", default="auto"
        The mean path, in whitened coordinates (each path's length is uniform in
        ``[path_length / 2, 3 path_length / 2]``). ``"auto"``: ``pi / 2`` under a test with
        Metropolis' acceptance; ``3 pi / 8`` under Barker's (``"barker"``, ``"minibatch"``),
        whose acceptance of at most one half, not the path, sets how fast the chain
        forgets, so that longer paths cost more for no more effective samples (tall data,
        10^5 rows: 45% more time, 9% fewer effective samples).

    References
    ----------
    R. M. Neal. "MCMC using Hamiltonian dynamics". Handbook of Markov Chain Monte Carlo,
    2011.

    Examples
    --------
    >>> from skbayes_mh.proposals import HMC
    >>> HMC().needs_gradient
    True
    """

    name = "hmc"
    needs_gradient = True
    path = True
    _kernel_id = HMC_KERNEL
    _parameter_constraints = {"path_length": [Interval(numbers.Real, 0, None, closed="neither"),
                                              StrOptions({"auto"})]}

    def __init__(self, path_length="auto"):
        self.path_length = path_length

    @with_sections(Proposal.target_acceptance_rate)
    def target_acceptance_rate(self, barker):
        """0.7 under Metropolis acceptance (0.65 is optimal for long paths on Gaussian
        targets, Beskos et al. 2013; a little above it is more robust), 0.35 under
        Barker's, whose acceptance is at most one half near ``Delta = 0``."""
        return 0.35 if barker else 0.7

    @with_sections(Proposal.initial_scale)
    def initial_scale(self, n_params):
        """A leapfrog step of ``d^(-1/4)`` (the optimal step shrinks as ``d^(-1/4)``)."""
        return n_params ** (-0.25)

    @with_sections(Proposal.kernel_parameter)
    def kernel_parameter(self, barker=False):
        """The mean path length: ``path_length``, or for ``"auto"`` ``pi / 2`` under
        Metropolis' acceptance and ``3 pi / 8`` under Barker's."""
        if self.path_length == "auto":
            return 3 * math.pi / 8 if barker else math.pi / 2
        return float(self.path_length)

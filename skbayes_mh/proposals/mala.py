"""The Metropolis-adjusted Langevin algorithm."""
from .._kernels.proposals import MALA as MALA_KERNEL
from .._docstrings import with_sections
from ._base import Proposal


class MALA(Proposal):
    """Preconditioned Langevin proposal ``theta' = theta + s^2 C g / 2 + s L z`` with ``g`` the
    gradient of the log target and ``C = L L'`` the proposal shape (the Laplace covariance).

    The gradient is the full-data one with the exact tests, the control variates' proxy with
    the subsampling tests, and the pseudo-posterior's with Firefly. Its ratio enters the test
    exactly.

    References
    ----------
    G. O. Roberts, R. L. Tweedie. "Exponential convergence of Langevin distributions and
    their discrete approximations". Bernoulli 2, 1996.

    Examples
    --------
    >>> from skbayes_mh.proposals import MALA
    >>> MALA().needs_gradient
    True
    """

    name = "mala"
    needs_gradient = True
    _kernel_id = MALA_KERNEL
    _parameter_constraints = {}

    @with_sections(Proposal.target_acceptance_rate)
    def target_acceptance_rate(self, barker):
        """0.574, optimal for a Gaussian target (Roberts and Rosenthal 1998); scaled as the
        random walk's is under Barker's acceptance."""
        return 0.574 * (0.158 / 0.234) if barker else 0.574

    @with_sections(Proposal.initial_scale)
    def initial_scale(self, n_params):
        """``1.65 d^(-1/6)``, optimal for a Gaussian target of the proposal's shape."""
        return 1.65 * n_params ** (-1.0 / 6.0)

"""The Gaussian random walk."""
import numpy as np

from .._kernels.proposals import RANDOM_WALK
from .._docstrings import with_sections
from ._base import Proposal


class RandomWalk(Proposal):
    """Gaussian random-walk proposal ``theta' = theta + s L z``, ``z ~ N(0, I)``.

    ``L L'`` is the proposal shape: the Laplace covariance when the model has one (refined
    from the warm-up draws, as adaptive Metropolis does), the identity otherwise. With
    ``step_size="auto"`` the scale ``s`` is tuned in warm-up toward the optimal acceptance
    rate of a high-dimensional random walk.

    References
    ----------
    G. O. Roberts, A. Gelman, W. R. Gilks. "Weak convergence and optimal scaling of random
    walk Metropolis algorithms". Annals of Applied Probability 7, 1997.
    H. Haario, E. Saksman, J. Tamminen. "An adaptive Metropolis algorithm". Bernoulli 7,
    2001.

    Examples
    --------
    >>> from skbayes_mh.proposals import RandomWalk
    >>> RandomWalk().target_acceptance_rate(barker=False)
    0.234
    """

    name = "random_walk"
    _kernel_id = RANDOM_WALK
    _parameter_constraints = {}

    @with_sections(Proposal.target_acceptance_rate)
    def target_acceptance_rate(self, barker):
        """0.234 under Metropolis acceptance (Roberts, Gelman and Gilks 1997); 0.158 under
        Barker's (Agrawal, Vats, Latuszynski and Roberts 2023)."""
        return 0.158 if barker else 0.234

    @with_sections(Proposal.initial_scale)
    def initial_scale(self, n_params):
        """``2.38 / sqrt(d)``, optimal for a Gaussian target of the proposal's shape."""
        return 2.38 / np.sqrt(n_params)

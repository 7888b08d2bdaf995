"""Slice sampling along random directions."""
from .._kernels.proposals import SLICE
from .._docstrings import with_sections
from ._base import Proposal


class Slice(Proposal):
    """Slice sampling (stepping out, then shrinkage) along a random direction ``L e / |e|``
    of the proposal shape, with initial bracket width ``s`` in units of that direction.

    It needs the target's exact value at each point, so it runs with the exact tests (every
    evaluation reads all rows) and with Firefly (only the bright rows); the subsampling tests
    refuse it.

    References
    ----------
    R. M. Neal. "Slice sampling". Annals of Statistics 31, 2003.

    Examples
    --------
    >>> from skbayes_mh.proposals import Slice
    >>> Slice().exact_only
    True
    """

    name = "slice"
    exact_only = True
    tunes_shape = False
    _kernel_id = SLICE
    _parameter_constraints = {}

    @with_sections(Proposal.initial_scale)
    def initial_scale(self, n_params):
        """A bracket of two shape units along the direction, whatever the dimension."""
        return 2.0

"""The autoregressive proposal around the Laplace approximation."""
import numbers

from sklearn.utils._param_validation import Interval

from .._kernels.proposals import PCN as PCN_KERNEL
from .._docstrings import with_sections
from ._base import Proposal


class PCN(Proposal):
    """Autoregressive Gaussian proposal around the Laplace approximation ``N(m, C)``
    (preconditioned Crank-Nicolson): ``theta' = m + rho (theta - m) + s L z`` with
    ``rho = sqrt(1 - s^2)`` and ``L L' = C``.

    It is reversible with respect to ``N(m, C)``, so its log ratio is the reference density
    ratio ``log N(theta; m, C) - log N(theta'; m, C)``, and it enters the test exactly. When
    the posterior is close to its Laplace approximation, as for tall data, ``s`` near 1
    proposes nearly independent draws that are nearly always accepted. ``s`` (the innovation
    share, at most 1) is tuned in warm-up.

    With ``df`` the reference is the multivariate Student t with ``df`` degrees of freedom
    (a scale is drawn from its conditional first, which keeps the move reversible with
    respect to the t): tails heavier than the posterior's keep the chain geometrically
    ergodic when the posterior is not Gaussian.

    Parameters
    ----------
    df : float or None, default=None
        None: the Gaussian reference; a positive number: the Student-t reference.

    References
    ----------
    S. L. Cotter, G. O. Roberts, A. M. Stuart, D. White. "MCMC methods for functions:
    modifying old algorithms to make them faster". Statistical Science 28, 2013.

    Examples
    --------
    >>> from skbayes_mh.proposals import PCN
    >>> PCN(df=5.0).validate()
    PCN(df=5.0)
    """

    name = "pcn"
    around_reference = True
    _kernel_id = PCN_KERNEL
    _parameter_constraints = {"df": [Interval(numbers.Real, 0, None, closed="neither"), None]}

    def __init__(self, df=None):
        self.df = df

    @with_sections(Proposal.target_acceptance_rate)
    def target_acceptance_rate(self, barker):
        """0.5 under Metropolis acceptance, 0.35 under Barker's: the share ``s`` is lowered
        only when bolder proposals are rejected too often (and it never exceeds 1)."""
        return 0.35 if barker else 0.5

    @with_sections(Proposal.initial_scale)
    def initial_scale(self, n_params):
        """An innovation share of one half, whatever the dimension."""
        return 0.5

    @with_sections(Proposal.kernel_parameter)
    def kernel_parameter(self, barker=False):
        """The reference's degrees of freedom: ``df``, or 0 for the Gaussian reference
        (whatever ``barker``)."""
        return 0.0 if self.df is None else float(self.df)

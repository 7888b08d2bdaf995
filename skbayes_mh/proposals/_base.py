"""What every proposal object is: small, validated parameters and the kernel that uses
them (``_kernels/proposals.py``). No numba here."""
from sklearn.base import BaseEstimator


class Proposal(BaseEstimator):
    """Base class of the proposals (parameter updates).

    Subclasses store their parameters unmodified in ``__init__`` (``get_params``,
    ``clone`` and ``GridSearchCV`` work on them), declare ``_parameter_constraints`` and
    name their kernel.

    Attributes
    ----------
    name : str
        The registry name (``proposal="name"``).
    needs_gradient : bool
        Whether the proposal uses the gradient of the log target.
    exact_only : bool
        Whether it evaluates the target exactly (a slice update): then it works with the
        exact tests and Firefly, not with the subsampling tests.

    The samplers and tuners ask a proposal what it does through the capabilities below,
    never by its name.
    """

    name = None
    needs_gradient = False
    exact_only = False
    #: Whether it moves autoregressively around a reference Gaussian (pCN): its scale is
    #: a share of at most 1, it needs the Laplace approximation (each row's Hessian), and
    #: warm-up moves the reference's mean toward the draws'.
    around_reference = False
    #: Whether one move is a path of many gradient steps through a target that must stay
    #: fixed along it (HMC: not with Firefly, whose brightness variables change it).
    path = False
    #: Whether warm-up refines the proposal shape from the draws (not for a slice update,
    #: whose width adapts by itself).
    tunes_shape = True
    _kernel_id = None

    @property
    def max_scale(self):
        """The largest scale the proposal allows."""
        return 1.0 if self.around_reference else float("inf")

    def validate(self):
        """Check the parameters; raise ``ValueError``/``TypeError`` naming the bad one."""
        self._validate_params()
        return self

    def target_acceptance_rate(self, barker):
        """The acceptance rate the step is tuned toward in warm-up (NaN: not tuned by
        rate).

        Parameters
        ----------
        barker : bool
            Whether the test accepts with Barker's function rather than Metropolis'.

        Returns
        -------
        float
        """
        return float("nan")

    def initial_scale(self, n_params):
        """The scale relative to the proposal shape before any tuning: 1 by default.

        Parameters
        ----------
        n_params : int
            Dimension of the parameter vector, d.

        Returns
        -------
        float
        """
        return 1.0

    def kernel_parameter(self, barker=False):
        """The kernel's one extra number (``specs.Proposal.parameter``) under a test with
        Barker's acceptance or Metropolis': pCN's reference degrees of freedom (0:
        Gaussian), HMC's mean path length; 0 otherwise.

        Parameters
        ----------
        barker : bool, default=False
            Whether the test accepts with Barker's function rather than Metropolis'.

        Returns
        -------
        float
        """
        return 0.0

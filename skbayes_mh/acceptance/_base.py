"""What every acceptance test object is: a small, validated set of parameters and the op of
the numba decision kernel that uses them (``_kernels/decisions.py``). No numba here."""
import numpy as np
from sklearn.base import BaseEstimator

from .._params import StoredParameters

_NO_CORRECTION = (np.zeros(1), np.ones(1))


class AcceptanceTest(StoredParameters, BaseEstimator):
    """Base class of the acceptance tests.

    Subclasses store their parameters in ``__init__`` unmodified (``_store_parameters``, as
    the estimators do: ``get_params``, ``set_params``, ``clone`` and ``GridSearchCV`` work
    on them), declare ``_parameter_constraints``, and say which decision kernel runs them:
    ``_decision``, the op its kernel module registers (``_kernels.decisions.decision_op``;
    None for a test that is its own sampler, Firefly), and ``_kernel_params``, the
    parameters in that module's named tuple.

    Attributes
    ----------
    name : str
        The registry name (``acceptance="name"``).
    exact : bool
        Whether the test targets the exact posterior (reads all the data or uses an
        exact auxiliary-variable scheme).
    barker : bool
        Whether it accepts with Barker's function rather than Metropolis'.

    The fitting code asks a test what it needs and does through the capabilities below,
    never by its name.
    """

    name = None
    exact = False
    #: Whether the test estimates the log-likelihood ratio from a subsample (and so can
    #: read it as residuals against control variates).
    subsampling = False
    #: Whether the test accepts with Barker's function (its optimal acceptance rates are
    #: lower than under Metropolis').
    barker = False
    #: Whether the test runs on the model's collapsible lower bounds, each row's likelihood
    #: split into a bound and a bright/dark auxiliary variable (Firefly): it is then its
    #: own sampler (:class:`~skbayes_mh.sampling.FireflySampler`) carrying the gradient of
    #: the bright rows.
    needs_bounds = False
    #: Whether the test bounds the log-likelihood ratios' range with the model's per-row
    #: Lipschitz constant (filled in from the model when its ``lipschitz`` is None).
    needs_lipschitz = False
    #: Whether its control variates' range bound is measured in the Laplace-whitened
    #: distance from the proxies' centre.
    whitened_control_variates = False
    _decision = None

    @property
    def reads_all_rows(self):
        """Whether every iteration reads every row (the exact full-data tests): thinning
        then multiplies the fit's cost, where a subsampling test or Firefly thins cheaply."""
        return not (self.subsampling or self.needs_bounds)

    def validate(self):
        """Check the parameters; raise ``ValueError``/``TypeError`` naming the bad one."""
        self._validate_params()
        return self

    def _kernel_params(self, lipschitz=None, max_weight=1.0, cv_bounds_range=False):
        """The parameters as the decision kernel reads them: an instance of its module's
        named tuple (none here).

        The context is what a test may need from the model: a per-row Lipschitz constant,
        the largest sample weight, and whether control variates bound the ratios' range.
        """
        return ()

    def uses_control_variates(self, target):
        """Whether this test reads residuals against Taylor proxies (control variates) on
        ``target``.

        A subsampling test's ``control_variates`` parameter decides: ``"auto"`` uses them
        when :meth:`_control_variates_missing` finds nothing missing, True requires them
        (a ValueError says what is missing), False never uses them. Full-data tests never
        do.

        Parameters
        ----------
        target : skbayes_mh.sampling.Target
            The posterior the test runs on: its ``has_gradient`` and ``has_hessian`` (and
            for :class:`~skbayes_mh.acceptance.ConfidenceSampler` its
            ``bounds_residual_range``) say whether it supports control variates.

        Returns
        -------
        bool
            Whether control variates are used.

        Raises
        ------
        ValueError
            If ``control_variates=True`` and ``target`` lacks what they need.
        """
        setting = getattr(self, "control_variates", False) if self.subsampling else False
        missing = self._control_variates_missing(target) if setting else None
        if isinstance(setting, str):  # "auto"
            return missing is None
        if setting and missing is not None:
            raise ValueError(f"{type(self).__name__}(control_variates=True) {missing}, or use "
                             f"control_variates='auto' or False.")
        return bool(setting)

    def _control_variates_missing(self, target):
        """None when ``target`` supports control variates for this test, else what is
        missing (a sentence fragment)."""
        if target.has_gradient and target.has_hessian:
            return None
        return ("reads each row's log-likelihood ratio against its second-order Taylor proxy, "
                "which needs each row's gradient and Hessian: give sample() the 'gradient' and "
                "'hessian' functions")

    def _correction_arrays(self):
        """(support, cumulative weights) of an additive correction variable, if any."""
        return _NO_CORRECTION

    def stated_error(self):
        """float: the bound on the per-test error in acceptance probability that the test
        guarantees or states (0 for exact tests, NaN when it states none)."""
        return 0.0 if self.exact else float("nan")

    #: Whether the test takes the mean of a minibatch's log ratios as normal, so that its
    #: error includes that approximation's (``_core.convergence.normality_error``).
    normal_mean = False

    def design_error(self, moves):
        """The per-test error in acceptance probability that the test's own analysis gives
        at a fit's ``moves``: by default :meth:`stated_error`, 0 where it states none.

        Parameters
        ----------
        moves : Moves or empty sequence
            Pairs of consecutive states of a fit's chains
            (``skbayes_mh._core.approximation_error.Moves``), with ``deltas`` and
            ``spreads`` (their full-data log acceptance ratios and the sds of their per-row
            log ratios) and ``n_data``; an empty sequence when the fit measured none. Unused
            here.

        Returns
        -------
        float
        """
        error = self.stated_error()
        return float(error) if np.isfinite(error) else 0.0

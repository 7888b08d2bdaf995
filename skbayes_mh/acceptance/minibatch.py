"""The minibatch Barker test with an additive correction variable."""
import numbers

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._kernels.minibatch import MinibatchParams, minibatch_barker_op
from ._base import AcceptanceTest
from .correction import SIGMA_RANGE, CorrectionDistribution


class MinibatchBarker(AcceptanceTest):
    """The minibatch acceptance test of Seita, Pan, Chen and Canny (their Algorithm 1).

    Per test: draw a random minibatch without replacement, estimate
    ``Delta* = N mean(lambda_i) + log_psi`` (``lambda_i`` the tempered per-datum log
    likelihood ratio, ``log_psi`` the log prior and proposal ratios) and its variance ``s^2``
    with the finite-population correction; while ``s^2 >= sigma^2`` (or, when ``delta`` is
    given, while the Berry-Esseen bound of their Corollary 1 exceeds ``delta``) add
    ``batch_size`` more rows; then accept iff ``Delta* + X_nc + X_corr > 0`` with
    ``X_nc ~ N(0, sigma^2 - s^2)`` and ``X_corr ~`` :class:`CorrectionDistribution`. At
    ``b = N``, ``s^2 = 0`` and this is exactly the Barker test.

    The test is approximate: its acceptance probability is ``S(Delta)`` up to the error of
    the normal approximation of ``Delta*`` (bounded by ``delta`` when given) and the
    correction distribution's sup-error.

    Parameters
    ----------
    batch_size : int, default=100
        Rows in the first minibatch and added at each growth step (>= 2).
    sigma : float, default=1.0
        Standard deviation of the Gaussian part of the logistic noise, in ``[0.5, 1.5]``.
        A larger sigma lets smaller batches pass the variance condition; the correction is
        accurate to ~1e-6 up to 1.1 and 2e-5 at 1.2 (see :class:`CorrectionDistribution`).
    delta : float or None, default=None
        When given, in (0, 1): also grow the batch until the Berry-Esseen bound
        ``(6.4 E|X|^3 + 2 E|X|) / sqrt(b)`` on the normal approximation (moments of the
        standardised ``lambda_i`` estimated on the batch) is at most ``delta``.
    control_variates : "auto" or bool, default="auto"
        Read each row's log-likelihood ratio as a residual against its second-order Taylor
        proxy around the MAP (the proxies' full-data sum is exact and costs O(d^2)): the
        residuals are small near the MAP, so far fewer rows decide. ``"auto"``: whenever
        the model gives each row's gradient and Hessian (every estimator's model does;
        :func:`skbayes_mh.sample` when given ``gradient`` and ``hessian``).

    References
    ----------
    D. Seita, X. Pan, H. Chen, J. Canny. "An Efficient Minibatch Acceptance Test for
    Metropolis-Hastings". UAI 2017.

    Examples
    --------
    >>> from skbayes_mh.acceptance import MinibatchBarker
    >>> MinibatchBarker(batch_size=50).validate()
    MinibatchBarker(batch_size=50)
    """

    name = "minibatch"
    subsampling = True
    barker = True
    _decision = minibatch_barker_op
    _parameter_constraints = {
        "batch_size": [Interval(numbers.Integral, 2, None, closed="left")],
        "sigma": [Interval(numbers.Real, SIGMA_RANGE[0], SIGMA_RANGE[1], closed="both")],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "control_variates": [StrOptions({"auto"}), "boolean"],
    }

    def __init__(self, batch_size=100, sigma=1.0, delta=None, control_variates="auto"):
        self._store_parameters(locals())

    def _kernel_params(self, lipschitz=None, max_weight=1.0, cv_bounds_range=False):
        return MinibatchParams(batch_size=self.batch_size, sigma=self.sigma,
                               delta=np.nan if self.delta is None else self.delta)

    def _correction_arrays(self):
        correction = self.correction
        return correction.support, correction.cumulative_weights

    @property
    def correction(self):
        """The :class:`CorrectionDistribution` for ``sigma``."""
        return CorrectionDistribution(self.sigma)

    def stated_error(self):
        """``delta`` plus the correction's sup-error (NaN when ``delta`` is None)."""
        if self.delta is None:
            return float("nan")
        return float(self.delta) + self.correction.sup_error

    normal_mean = True

    def design_error(self, moves):
        """:meth:`stated_error`, or without ``delta`` the correction's sup-error.

        Parameters
        ----------
        moves : Moves or empty sequence
            Pairs of states of a fit's chains; unused.

        Returns
        -------
        float
        """
        error = self.stated_error()
        return float(error) if np.isfinite(error) else float(self.correction.sup_error)

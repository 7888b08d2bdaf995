"""The confidence sampler of Bardenet, Doucet and Holmes."""
import numbers

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._kernels.confidence import ConfidenceParams, confidence_op
from ._base import AcceptanceTest


class ConfidenceSampler(AcceptanceTest):
    """The adaptive subsampling Metropolis-Hastings test of Bardenet, Doucet and Holmes.

    Per test: draw ``u ~ U(0, 1)``, set ``psi = (log u - log_psi) / N``; grow a random
    minibatch geometrically (``batch_size`` rows, then ``ceil(gamma n)``) until the empirical
    Bernstein-Serfling bound at level ``delta_k = delta (p - 1) / (p k^p)`` (round ``k``)
    separates the minibatch mean of ``lambda_i = (l_i(theta') - l_i(theta)) / K`` from
    ``psi``, or all N rows are read; accept iff the mean exceeds ``psi``. The decision
    differs from the exact Metropolis-Hastings decision with probability at most ``delta``
    (the bound is non-asymptotic).

    The bound needs the range of the ``lambda_i``. It is taken from a per-datum Lipschitz
    constant ``lipschitz`` of the log-likelihood in theta, ``|l_i(a) - l_i(b)| <= L ||a - b||``
    for every row, so the range is ``2 L ||theta' - theta|| / K`` without reading the data.
    The estimators fill it in from their model (logistic regression:
    ``L = max_i ||x_i||``, since the log-sigmoid is 1-Lipschitz); with
    :func:`skbayes_mh.sample` it must be given. A model with no such bound cannot use this
    test: scanning the data for the range every iteration would remove its point.

    Parameters
    ----------
    delta : float, default=0.01
        Probability of a decision different from the exact test, in (0, 1).
    gamma : float, default=2.0
        Geometric growth factor of the batch, > 1.
    p : float, default=2.0
        Exponent of the error schedule, > 1.
    batch_size : int, default=100
        First batch size (>= 2).
    lipschitz : float or None, default=None
        The model's per-datum Lipschitz constant (see above); None lets an estimator fill it.
    control_variates : "auto" or bool, default="auto"
        Read each row's log-likelihood ratio as a residual against its second-order Taylor
        proxy around the MAP (the proxies' full-data sum is exact and costs O(d^2)): the
        residuals are small near the MAP, so far fewer rows decide. ``"auto"``: whenever
        the model gives each row's gradient and Hessian and bounds the residuals' range
        through its third derivative (logistic and Poisson regression; not a user's
        function in :func:`skbayes_mh.sample`). The range bound is then
        ``M3 R^3 (|theta - c|_*^3 + |theta' - c|_*^3) / 3`` in the Laplace-whitened
        distance from the centre ``c`` (Bardenet, Doucet and Holmes 2017, Section 7).

    References
    ----------
    R. Bardenet, A. Doucet, C. Holmes. "Towards scaling up Markov chain Monte Carlo: an
    adaptive subsampling approach". ICML 2014.
    R. Bardenet, O.-A. Maillard. "Concentration inequalities for sampling without
    replacement". Bernoulli 21(3), 2015.

    Examples
    --------
    >>> from skbayes_mh.acceptance import ConfidenceSampler
    >>> ConfidenceSampler(delta=0.05, lipschitz=3.0).validate()
    ConfidenceSampler(delta=0.05, lipschitz=3.0)
    """

    name = "confidence"
    subsampling = True
    needs_lipschitz = True
    whitened_control_variates = True
    _decision = confidence_op
    _parameter_constraints = {
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "gamma": [Interval(numbers.Real, 1, None, closed="neither")],
        "p": [Interval(numbers.Real, 1, None, closed="neither")],
        "batch_size": [Interval(numbers.Integral, 2, None, closed="left")],
        "lipschitz": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "control_variates": [StrOptions({"auto"}), "boolean"],
    }

    def __init__(self, delta=0.01, gamma=2.0, p=2.0, batch_size=100, lipschitz=None,
                 control_variates="auto"):
        self._store_parameters(locals())

    def _kernel_params(self, lipschitz=None, max_weight=1.0, cv_bounds_range=False):
        lipschitz = self.lipschitz if self.lipschitz is not None else lipschitz
        if lipschitz is None and not cv_bounds_range:
            raise ValueError(
                "ConfidenceSampler needs lipschitz, a per-row Lipschitz constant L of the "
                "log-likelihood (|l_i(a) - l_i(b)| <= L ||a - b|| for every row), to bound the "
                "range of the log-likelihood ratios without scanning the data, or control "
                "variates with a model that bounds its third derivative. Give "
                "ConfidenceSampler(lipschitz=...), or use a model that provides one.")
        return ConfidenceParams(batch_size=self.batch_size, delta=self.delta, gamma=self.gamma,
                                p=self.p, lipschitz=np.nan if lipschitz is None else lipschitz,
                                max_weight=max_weight)

    def _control_variates_missing(self, target):
        """Control variates also need a bound on the residuals' range: the model's
        third-derivative bound (single-output linear models: logistic, Poisson)."""
        missing = super()._control_variates_missing(target)
        if missing is None and not target.bounds_residual_range:
            missing = ("bounds the residuals' range with the model's third derivative, which "
                       "only single-output linear models with such a bound give (logistic and "
                       "Poisson regression)")
        return missing

    def stated_error(self):
        """``delta``: the probability of a decision different from the exact test."""
        return float(self.delta)

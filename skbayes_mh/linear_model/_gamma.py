"""Bayesian Gamma regression for positive real outcomes (log link), sampled with pluggable
acceptance tests."""
import numbers

from sklearn.base import RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions

from ..models._prior import GAUSSIAN, LAPLACE, LOG_SCALE
from ..models.gamma import GammaModel
from ._docs import shared_docstring
from ._base import LinearMHEstimator
from ._posterior import GammaDevianceScoreMixin, PredictiveRegressorMixin

_PRIORS = {"gaussian": GAUSSIAN, "laplace": LAPLACE}


@shared_docstring
class GammaRegression(GammaDevianceScoreMixin, RegressorMixin, PredictiveRegressorMixin,
                      LinearMHEstimator):
    """Bayesian Gamma regression with a log link, for positive outcomes whose spread grows
    with their mean (amounts, durations, costs): ``y ~ Gamma(mean mu = exp(x @ w + b),
    dispersion phi)``, ``Var y = phi mu^2`` (shape ``1 / phi``), with posterior samples of
    ``w``, ``b`` and ``phi`` from Metropolis-Hastings chains whose acceptance test may read
    only minibatches.

    Priors: ``w_j`` Gaussian (standard deviation ``prior_scale / spread(x_j)`` with
    ``autoscale``, ``spread`` as described there; ``prior_scale`` without) or Laplace (the
    same scale), ``b`` the same family with ``intercept_prior_scale`` (on the intercept at
    the features' means with ``autoscale``), and ``phi ~
    Exponential(mean=dispersion_prior_scale)``, sampled as ``log phi``. In SciPy's terms
    each outcome is ``gamma(a=1/phi, scale=phi mu)``; statsmodels' ``GLM`` with the
    ``Gamma`` family and log link is the maximum-likelihood fit of the same model (its
    ``scale`` is ``phi``). Firefly is not available (the log-likelihood has no global
    quadratic lower bound in the linear predictor), so ``acceptance="firefly"`` is refused
    with an error.

    Parameters
    ----------
    {count_acceptance}
    {proposal_parameters}
    {count_prior_parameters}
    dispersion_prior_scale : float, default=1.0
        Mean of the exponential prior on the dispersion ``phi``.
    {sampling_parameters}

    Attributes
    ----------
    {regression_attributes}
    dispersion_ : float
        Posterior mean of the dispersion ``phi``.
    posterior_ : Posterior
        ``coef`` (n_chains, n_draws, n_features), ``intercept`` and ``dispersion``
        (n_chains, n_draws), and the per-draw ``lp``, ``acceptance_rate``,
        ``n_data_read``, ``rows_per_iteration``, ``seconds``
        (:class:`~skbayes_mh.posterior.Posterior`).
    {fitted_attributes}

    See Also
    --------
    sklearn.linear_model.GammaRegressor : the penalised maximum-likelihood fit of the mean,
        scored the same way (:math:`D^2` of the Gamma deviance).

    Examples
    --------
    >>> import numpy as np
    >>> from skbayes_mh import GammaRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> mu = np.exp(X @ [0.3, -0.2] + 1.0)
    >>> y = rng.gamma(2.0, mu / 2.0)   # dispersion 1 / 2
    >>> reg = GammaRegression(n_draws=300, n_warmup=300, n_chains=2, random_state=0).fit(X, y)
    >>> np.round(reg.coef_, 1), round(reg.dispersion_, 1)
    (array([ 0.3, -0.2]), 0.5)
    """

    _firefly_proposal = None  # the family has no Firefly bounds
    _fit_doc = dict(what="the weights and the dispersion", y="positive outcomes ``y``",
                    y_description="Positive real outcomes.")

    _parameter_constraints = {
        **LinearMHEstimator._parameter_constraints,
        "prior": [StrOptions(set(_PRIORS))],
        "dispersion_prior_scale": [Interval(numbers.Real, 0, None, closed="neither")],
    }

    def __init__(self, *, acceptance="auto", proposal="auto", step_size="auto",
                 prior="gaussian", prior_scale=1.0, autoscale=True, fit_intercept=True,
                 intercept_prior_scale=10.0, dispersion_prior_scale=1.0, temperature=1.0,
                 n_draws="auto", max_time=None, n_warmup="auto", thin="auto", n_chains=4,
                 n_jobs=None, random_state=None, verbose=0, warm_start=False,
                 predict_tol=1e-4):
        self._store_parameters(locals())

    def _problem(self, X, y, weights, summary, acceptance):
        if not summary["min"] > 0:
            raise ValueError(f"GammaRegression needs positive outcomes y; the smallest is "
                             f"{summary['min']!r}.")
        data = self._linear_data(X, y, weights)
        prior = self._prior(_PRIORS[self.prior] | LOG_SCALE, data, summary, 1,
                            self.prior_scale, self.intercept_prior_scale,
                            extra_scales=[self.dispersion_prior_scale])
        return self._family(), data, prior

    def _family(self, acceptance=None):
        return GammaModel()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        return tags

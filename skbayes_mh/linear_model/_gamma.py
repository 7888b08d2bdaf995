"""Bayesian Gamma regression for positive real outcomes (log link), sampled with pluggable
acceptance tests."""
from sklearn.base import RegressorMixin

from ..models._prior import LOG_SCALE
from ..models.gamma import GammaModel
from ._dispersion import PRIORS, _DispersionRegression
from ._docs import shared_docstring
from ._posterior import GammaDevianceScoreMixin, PredictiveRegressorMixin


@shared_docstring
class GammaRegression(GammaDevianceScoreMixin, RegressorMixin, PredictiveRegressorMixin,
                      _DispersionRegression):
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
    with an error. ``fit`` needs more samples than coefficients, and refuses fewer with a
    ``ValueError``: the weights could then fit every ``log y`` exactly, and the posterior
    would be a funnel toward dispersion 0, with no mode, that the chains do not cross.

    {dispersion_regression_sections}

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

    _fit_doc = dict(what="the weights and the dispersion", y="positive outcomes ``y``",
                    y_description="Positive real outcomes.")

    def _problem(self, X, y, weights, summary, acceptance):
        if not summary["min"] > 0:
            raise ValueError(f"GammaRegression needs positive outcomes y; the smallest is "
                             f"{summary['min']!r}.")
        n_coefficients = X.shape[1] + int(self.fit_intercept)
        if X.shape[0] <= n_coefficients:
            raise ValueError(
                f"GammaRegression needs more samples than coefficients, got n_samples = "
                f"{X.shape[0]} for {n_coefficients} coefficients: the weights can then fit "
                f"every log y exactly, and the posterior is a funnel toward dispersion 0 "
                f"(no mode) that the chains cannot cross. Add data or reduce the features "
                f"first (e.g. PCA or SelectKBest in a Pipeline).")
        data = self._linear_data(X, y, weights)
        prior = self._prior(PRIORS[self.prior] | LOG_SCALE, data, summary, 1,
                            self.prior_scale, self.intercept_prior_scale,
                            extra_scales=[self.dispersion_prior_scale])
        return self._family(), data, prior

    def _family(self, acceptance=None):
        return GammaModel()

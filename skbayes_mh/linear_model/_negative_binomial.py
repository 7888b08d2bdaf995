"""Bayesian negative-binomial regression for over-dispersed counts (log link), sampled with
pluggable acceptance tests."""
from sklearn.base import RegressorMixin

from ..models._prior import LOG_SCALE
from ..models.negative_binomial import NegativeBinomialModel
from ._dispersion import PRIORS, _DispersionRegression
from ._docs import shared_docstring
from ._posterior import PoissonDevianceScoreMixin, PredictiveRegressorMixin


@shared_docstring
class NegativeBinomialRegression(PoissonDevianceScoreMixin, RegressorMixin,
                                 PredictiveRegressorMixin, _DispersionRegression):
    """Bayesian negative-binomial regression with a log link, for counts more spread out than
    Poisson's: ``y ~ NB(mean mu = exp(x @ w + b), dispersion alpha)``, ``Var y = mu + alpha
    mu^2`` (Poisson as ``alpha -> 0``), with posterior samples of ``w``, ``b`` and ``alpha``
    from Metropolis-Hastings chains whose acceptance test may read only minibatches.

    Priors: ``w_j`` Gaussian (standard deviation ``prior_scale / spread(x_j)`` with
    ``autoscale``, ``spread`` as described there; ``prior_scale`` without) or Laplace (the
    same scale), ``b`` the same family with ``intercept_prior_scale``
    (on the intercept at the features' means with ``autoscale``), and ``alpha ~
    Exponential(mean=dispersion_prior_scale)``, sampled as ``log alpha``. In SciPy's terms
    each count is ``nbinom(n=1/alpha, p=1/(1 + alpha mu))``. Counts over an exposure (time
    at risk, area): ``fit(X, y, exposure=exposure)``, mean ``exposure * mu`` (statsmodels'
    ``NegativeBinomial`` with ``exposure`` is the maximum-likelihood fit of that model);
    ``predict`` is then ``mu``, the mean per unit of exposure. Firefly is not available (the
    log-likelihood has no global quadratic lower bound in the linear predictor), so
    ``acceptance="firefly"`` is refused with an error.

    {dispersion_regression_sections}

    See Also
    --------
    MinibatchMHPoissonRegression : counts whose variance equals their mean.

    Examples
    --------
    >>> import numpy as np
    >>> from skbayes_mh import NegativeBinomialRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> mu = np.exp(X @ [0.3, -0.2] + 1.0)
    >>> y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu))   # dispersion 1 / 2
    >>> reg = NegativeBinomialRegression(n_draws=300, n_warmup=300, n_chains=2,
    ...                                  random_state=0).fit(X, y)
    >>> np.round(reg.coef_, 1), round(reg.dispersion_, 1)
    (array([ 0.3, -0.2]), 0.5)
    """

    _takes_exposure = True
    _fit_doc = dict(what="the weights and the dispersion", y="counts ``y``",
                    y_description="Non-negative counts (non-integer values act as in the "
                                  "likelihood's extension through the gamma function, as "
                                  "in statsmodels' negative binomial).")

    def _problem(self, X, y, weights, summary, acceptance):
        return self._count_problem(X, y, weights, summary, PRIORS[self.prior] | LOG_SCALE,
                                   extra_scales=[self.dispersion_prior_scale])

    def _family(self, acceptance=None):
        return NegativeBinomialModel()

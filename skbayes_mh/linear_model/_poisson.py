"""Bayesian Poisson regression for counts (log link), sampled with pluggable acceptance
tests."""

from sklearn.base import RegressorMixin
from sklearn.utils._param_validation import StrOptions

from ..models import PoissonModel
from ..models._prior import GAUSSIAN, LAPLACE
from ._docs import shared_docstring
from ._base import LinearMHEstimator
from ._posterior import PoissonDevianceScoreMixin, PredictiveRegressorMixin

_PRIORS = {"gaussian": GAUSSIAN, "laplace": LAPLACE}


@shared_docstring
class MinibatchMHPoissonRegression(PoissonDevianceScoreMixin, RegressorMixin,
                                   PredictiveRegressorMixin, LinearMHEstimator):
    """Bayesian Poisson regression with a log link, with posterior samples from
    Metropolis-Hastings chains whose acceptance test may read only minibatches:
    ``y ~ Poisson(exp(x @ w + b))``.

    Priors: ``w_j`` Gaussian (standard deviation ``prior_scale / spread(x_j)``;
    ``spread``: see ``autoscale``) or Laplace (the same scale), and the intercept at the
    features' means, ``b + mean(x) . w``, the same family with ``intercept_prior_scale``
    (with ``autoscale=False``: scale ``prior_scale`` on ``w_j`` and
    ``intercept_prior_scale`` on ``b``). Counts over an exposure (time at risk, area):
    ``fit(X, y, exposure=exposure)``, rate ``exposure * exp(x @ w + b)``, or, the same
    posterior, ``fit(X, y / exposure, sample_weight=exposure)`` as for scikit-learn's
    ``PoissonRegressor``; ``predict`` is then the rate per unit of exposure. Firefly is not
    available: the Poisson log-likelihood has no global quadratic lower bound (the
    exponential outgrows every quadratic), so ``acceptance="firefly"`` is refused with an
    error.

    Parameters
    ----------
    {count_acceptance}
    {proposal_parameters}
    {count_prior_parameters}
    {sampling_parameters}
    {group_effects_parameter}

    Attributes
    ----------
    {regression_attributes}
    posterior_ : Posterior
        ``coef`` (n_chains, n_draws, n_features), ``intercept`` (n_chains, n_draws)
        and the per-draw ``lp``, ``acceptance_rate``, ``n_data_read``,
        ``rows_per_iteration``, ``seconds`` (:class:`~skbayes_mh.posterior.Posterior`).
    {fitted_attributes}

    See Also
    --------
    sklearn.linear_model.PoissonRegressor : the penalised maximum-likelihood fit, which
        the posterior mean approaches as the data grow (at penalty ``1 / (N prior_scale^2)``
        per coefficient with ``alpha`` in scikit-learn's per-sample scaling).

    Examples
    --------
    >>> import numpy as np
    >>> from skbayes_mh import MinibatchMHPoissonRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = rng.poisson(np.exp(X @ [0.3, -0.2] + 1.0))
    >>> reg = MinibatchMHPoissonRegression(n_draws=300, n_warmup=300, n_chains=2,
    ...                                    random_state=0).fit(X, y)
    >>> np.round(reg.coef_, 1), reg.predict(X[:2]).shape
    (array([ 0.3, -0.2]), (2,))
    """

    _firefly_proposal = None  # the family has no Firefly bounds
    _takes_exposure = True
    _fit_doc = dict(what="the weights", y="counts ``y``",
                    y_description="Non-negative counts (non-integer values act as in a "
                                  "quasi-Poisson likelihood).")

    _parameter_constraints = {
        **LinearMHEstimator._parameter_constraints,
        "prior": [StrOptions(set(_PRIORS))],
    }

    def __init__(self, *, acceptance="auto", proposal="auto", step_size="auto",
                 prior="gaussian", prior_scale="auto", autoscale=True, fit_intercept=True,
                 intercept_prior_scale=10.0, temperature=1.0, n_draws="auto", max_time=None,
                 n_warmup="auto", thin="auto", n_chains=4, n_jobs=None, random_state=None,
                 verbose=0, warm_start=False,
                 predict_tol=1e-4, group_effects=None,
                 group_correlation=True):
        self._store_parameters(locals())

    def _problem(self, X, y, weights, summary, acceptance):
        return self._count_problem(X, y, weights, summary, _PRIORS[self.prior])

    def _family(self, acceptance=None):
        return PoissonModel()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        return tags

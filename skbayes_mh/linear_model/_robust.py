"""Bayesian Student-t linear regression, sampled with pluggable acceptance tests, Firefly Monte
Carlo among them."""
import numbers

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..models import StudentTModel
from ..models._prior import GAUSSIAN, LAPLACE, LOG_SCALE
from ._docs import shared_docstring
from ._base import LinearMHEstimator
from ._posterior import PredictiveRegressorMixin

_PRIORS = {"gaussian": GAUSSIAN, "laplace": LAPLACE}


@shared_docstring
class RobustTRegression(RegressorMixin, PredictiveRegressorMixin, LinearMHEstimator):
    """Bayesian linear regression with Student-t noise: heavy tails, so that outliers do not
    drag the fit. It samples with the test ``acceptance="auto"`` picks (exact on small
    data, the minibatch test with control variates on tall data) or with Firefly Monte
    Carlo (``acceptance="firefly"``: exact, and each iteration queries only the "bright"
    data points).

    Model: ``y = x . w + b + s * t_nu``, with ``w_j ~ Laplace(0, prior_scale sd(y) /
    spread(x_j))`` (``spread``: see ``autoscale``; or Gaussian; ``Laplace(0, prior_scale)``
    with ``autoscale=False``),
    ``b + mean(x) . w - mean(y) ~`` the same family with ``intercept_prior_scale`` (``b -
    mean(y)`` with ``autoscale=False``), and, when
    ``scale=None``, ``s ~ Exponential(mean=std(y))``, a weakly informative prior on the
    data's scale, sampled as ``log s``. Firefly bounds each likelihood by a Gaussian in the
    residual that touches it at the MAP residual (``Firefly(bound="map")``), so that
    ``sum_n log B_n`` collapses into ``O(D^2)`` sufficient statistics.

    Parameters
    ----------
    nu : float, default=4.0
        Degrees of freedom of the noise (fixed). ``nu -> inf`` is Gaussian noise.
    scale : float or None, default=None
        ``None``: the noise scale is sampled jointly with the weights. A float fixes it.
    prior : {"laplace", "gaussian"}, default="laplace"
        Prior family of the weights and the intercept.
    prior_scale : float or "auto", default=1.0
        Scale of the weights' prior (Laplace ``b``, Gaussian standard deviation): in
        outcome sds per feature sd with ``autoscale``, else on the scale of ``X`` and ``y``.
        {learned_prior_scale}
    {autoscale_parameters}
    intercept_prior_scale : float or None, default=None
        Scale of the intercept's prior around ``mean(y)``. ``None``: ``10 * std(y)``.
    acceptance : str or AcceptanceTest, default="auto"
        {acceptance_auto}
        Or ``"firefly"`` (or a :class:`~skbayes_mh.acceptance.Firefly` object),
        ``"barker"``, ``"austerity"``, ``"confidence"`` (the last needs a fixed ``scale``:
        with a sampled scale the log-likelihood has no Lipschitz constant, unless given to
        the test).
    {proposal_parameters}
    {sampling_parameters}
    {group_effects_parameter}

    Attributes
    ----------
    {regression_attributes}
    scale_ : float
        Posterior mean of the noise scale (``scale`` when fixed).
    posterior_ : Posterior
        ``coef`` (n_chains, n_draws, n_features), ``intercept`` and ``scale``
        (n_chains, n_draws), the per-draw ``lp``, ``acceptance_rate``, ``n_data_read``,
        ``rows_per_iteration``, ``seconds`` and, with Firefly, ``n_bright``
        (:class:`~skbayes_mh.posterior.Posterior`).
    {fitted_attributes}

    References
    ----------
    D. Maclaurin, R. P. Adams. "Firefly Monte Carlo: Exact MCMC with Subsets of Data".
    UAI 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from skbayes_mh import RobustTRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2))
    >>> y = X @ [1.0, -2.0] + 0.5 + 0.3 * rng.standard_t(4, size=500)
    >>> reg = RobustTRegression(n_draws=300, n_warmup=300, n_chains=2,
    ...                         random_state=0).fit(X, y)
    >>> np.round(reg.coef_, 1), reg.predict(X[:2], return_std=True)[1].shape
    (array([ 1., -2.]), (2,))
    """

    _fit_doc = dict(what="the weights (and the scale)", y="``y``",
                    y_description="Real outcomes.")

    _parameter_constraints = {
        **LinearMHEstimator._parameter_constraints,
        "nu": [Interval(numbers.Real, 0, None, closed="neither")],
        "scale": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "prior": [StrOptions(set(_PRIORS))],
        # None: a scale derived from y's spread.
        "intercept_prior_scale": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }
    _firefly_proposal = "slice"

    def __init__(self, *, nu=4.0, scale=None, prior="laplace", prior_scale=1.0, autoscale=True,
                 intercept_prior_scale=None, fit_intercept=True, acceptance="auto",
                 proposal="auto", step_size="auto", temperature=1.0, n_draws="auto",
                 max_time=None, n_warmup="auto", thin="auto", n_chains=4, n_jobs=None,
                 random_state=None, verbose=0, warm_start=False,
                 predict_tol=1e-4, group_effects=None,
                 group_correlation=True):
        self._store_parameters(locals())

    def _problem(self, X, y, weights, summary, acceptance):
        n_features = X.shape[1]
        n_coefficients = n_features + int(self.fit_intercept)
        if self.scale is None and X.shape[0] <= n_coefficients:
            raise ValueError(
                f"RobustTRegression with scale=None needs more samples than coefficients, got "
                f"n_samples = {X.shape[0]} for {n_coefficients} coefficients: the weights can "
                f"then fit every y exactly, and the posterior is a funnel toward scale 0 (its "
                f"density grows without bound there: no mode) that the chains cannot cross. "
                f"Fix `scale` (with prior='gaussian' more features than rows are then "
                f"sampled exactly in the rows' span, and prior_scale='auto' lets the data "
                f"choose the weights' prior scale), add data, or reduce the features first "
                f"(e.g. PCA or SelectKBest in a Pipeline).")
        spread = summary["std"] or 1.0
        center = summary["mean"] if self.fit_intercept else 0.0
        data = self._linear_data(X, y, weights)
        model = self._family()
        intercept_scale = (10.0 * spread if self.intercept_prior_scale is None
                           else float(self.intercept_prior_scale))
        kind = _PRIORS[self.prior] | (LOG_SCALE if self.scale is None else 0)
        locations = np.zeros(model.n_params(data))
        if self.fit_intercept:
            locations[n_features] = center  # the intercept's prior is centred at mean(y)
        prior = self._prior(kind, data, summary, 1, self.prior_scale, intercept_scale,
                            locations, [spread] if self.scale is None else [],
                            outcome_scale=spread)
        return model, data, prior

    def _family(self, acceptance=None):
        return StudentTModel(self.nu, self.scale)

    def _draws(self):
        return (self._coef_draws(),
                self.posterior_.get("intercept", flat=True),
                self.posterior_.get("scale", flat=True))

    def sample_y(self, X, n_samples=1, random_state=None):
        """Draws from the posterior predictive: a random stored draw of ``(w, b, s)`` per
        sample, then ``x . w + b + s t_nu``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples_X, n_features)
            The rows.
        n_samples : int, default=1
            Draws per row (the same stored draw of ``(w, b, s)`` for every row).
        random_state : int, RandomState instance or None, default=None
            Seeds the choice of stored draws and the noise.

        Returns
        -------
        ndarray of shape (n_samples_X, n_samples)
        """
        check_is_fitted(self)
        if not isinstance(n_samples, numbers.Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}.")
        X = self._checked_X(X)
        rng = check_random_state(random_state)
        coef, intercept, scale = self._draws()
        pick = rng.randint(0, coef.shape[0], size=n_samples)
        location = X @ coef[pick].T + intercept[pick]
        noise = rng.standard_t(float(self.nu), size=location.shape) * scale[pick]
        return location + noise

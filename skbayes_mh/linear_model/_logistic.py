"""Bayesian binary logistic regression sampled with pluggable acceptance tests."""

import numpy as np
from scipy.special import logit
from sklearn.base import ClassifierMixin
from sklearn.utils import Bunch
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from ..models.logistic import LogisticModel
from ..models.probit import ProbitModel
from .._validation import checked_reference_proba
from ..models._prior import GAUSSIAN
from ._docs import shared_docstring
from ._base import LinearMHEstimator
from ._posterior import PredictiveClassifierMixin


@shared_docstring
class MinibatchMHLogisticRegression(ClassifierMixin, PredictiveClassifierMixin,
                                    LinearMHEstimator):
    """Bayesian logistic (or probit) regression: posterior samples from Metropolis-Hastings
    chains whose acceptance test may read only minibatches of the data.

    Model: ``p(y = 1 | x) = 1 / (1 + exp(-(x . w + b)))`` (``link="probit"``: ``Phi(x . w +
    b)``, the standard normal CDF), ``w_k ~ N(0, (prior_scale / spread(x_k))^2)``
    (``spread``: see ``autoscale``) and ``b + mean(x) . w ~ N(0, intercept_prior_scale^2)``
    (with ``autoscale=False``: ``w_k ~ N(0, prior_scale^2)``, ``b ~ N(0,
    intercept_prior_scale^2)``); the target is the tempered posterior
    ``p(w, b) prod_i p(y_i | x_i, w, b)^(1 / temperature)``. Chains start at draws of the
    Laplace approximation at the MAP and run in parallel through joblib.

    Parameters
    ----------
    link : {"logit", "probit"}, default="logit"
        The inverse link from the linear predictor to ``p(y = classes_[1])``: the logistic
        function or the standard normal CDF.
    acceptance : str or AcceptanceTest, default="auto"
        {acceptance_auto}
        Or ``"barker"``, ``"minibatch"``, ``"austerity"``, ``"confidence"``, ``"firefly"``
        (exact, with Jaakkola-Jordan bounds; for the probit link the tangent quadratic of
        ``log Phi`` with curvature 1) or an object from :mod:`skbayes_mh.acceptance`
        (cloned in ``fit``).
    {proposal_parameters}
    {classifier_prior_parameters}
    {sampling_parameters}
    {group_effects_parameter}

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (1, n_features)
        Posterior mean of the weights.
    intercept_ : ndarray of shape (1,)
        Posterior mean of the intercept (0 without one).
    posterior_ : Posterior
        ``coef`` (n_chains, n_draws, n_features), ``intercept`` (n_chains,
        n_draws), and the per-draw ``lp``, ``acceptance_rate``, ``n_data_read``,
        ``rows_per_iteration``, ``seconds`` (:class:`~skbayes_mh.posterior.Posterior`;
        with Firefly: ``lp`` is the log pseudo-posterior, rows read are likelihood
        queries, and ``n_bright`` counts the bright points).
    {fitted_attributes}

    References
    ----------
    D. Seita, X. Pan, H. Chen, J. Canny. "An Efficient Minibatch Acceptance Test for
    Metropolis-Hastings". UAI 2017.
    A. Korattikara, Y. Chen, M. Welling. "Austerity in MCMC Land: Cutting the
    Metropolis-Hastings Budget". ICML 2014.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skbayes_mh import MinibatchMHLogisticRegression
    >>> X, y = make_classification(n_samples=500, n_features=4, random_state=0)
    >>> clf = MinibatchMHLogisticRegression(n_draws=200, n_warmup=200, n_chains=2,
    ...                                     random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape, clf.posterior_["coef"].shape
    ((2, 2), (2, 200, 4))
    """

    _fit_doc = dict(what="the weights", y="binary ``y``",
                    y_description="Exactly two classes.")

    _parameter_constraints = {
        **LinearMHEstimator._parameter_constraints,
        "link": [StrOptions({"logit", "probit"})],
    }

    def __init__(self, *, link="logit", acceptance="auto", proposal="auto", step_size="auto",
                 prior_scale=1.0, autoscale=True, fit_intercept=True,
                 intercept_prior_scale=10.0, temperature=1.0, n_draws="auto", max_time=None,
                 n_warmup="auto", thin="auto", n_chains=4, n_jobs=None, random_state=None,
                 verbose=0, warm_start=False,
                 predict_tol=1e-4, group_effects=None,
                 group_correlation=True):
        self._store_parameters(locals())

    def _problem(self, X, y, weights, summary, acceptance):
        if self.classes_.size > 2:
            raise ValueError(
                f"Only binary classification is supported. The type of the target is "
                f"{type_of_target(self.classes_)} ({self.classes_.size} classes); "
                "use skbayes_mh.FireflySoftmaxClassifier for multiclass problems.")
        data = self._linear_data(X, self._class_indices(y, X), weights)
        prior = self._prior(GAUSSIAN, data, summary, 1, self.prior_scale,
                            self.intercept_prior_scale)
        return self._family(), data, prior

    def _family(self, acceptance=None):
        return ProbitModel() if self.link == "probit" else LogisticModel()

    def _positive(self, eta):
        """``p(y = classes_[1])`` under each draw's linear predictors ``eta`` (..., 1)."""
        return self._family().class_probabilities(eta, {})[..., 1]

    def decision_function(self, X):
        """Log-odds of the posterior-predictive probability of ``classes_[1]``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows to score.

        Returns
        -------
        ndarray of shape (n_samples,)
            Positive where ``classes_[1]`` is predicted (the probability is clipped to
            ``[1e-300, 1 - 1e-16]`` first, so the values are finite).
        """
        positive = np.clip(self.predict_proba(X)[:, 1], 1e-300, 1 - 1e-16)
        return logit(positive)

    def predictive_mean_risk(self, X, reference_proba):
        """Risk of each chain's running predictive mean against a reference, per draw.

        The risk of Korattikara, Chen and Welling: after ``t`` draws, the mean over the rows
        of ``X`` of ``(mean_{s <= t} p(y = 1 | x, theta_s) - reference(x))^2``, with the
        data rows read and seconds spent to get there, for risk-versus-cost plots.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_rows, n_features)
            The rows on which the risk is measured.
        reference_proba : array-like of shape (n_rows,) or (n_rows, 2)
            Reference probabilities of ``classes_[1]`` (e.g. from a long exact run).

        Returns
        -------
        Bunch with ``risk``, ``n_data_read`` (cumulative rows read by the tests) and
        ``seconds`` (cumulative wall time), each of shape (n_chains, n_draws), and
        ``n_draws`` of shape (n_draws,) (1, 2, ...).
        """
        check_is_fitted(self)
        X = self._checked_X(X)
        reference = checked_reference_proba(reference_proba, X.shape[0])
        coef, intercept = self._coef_draws(flat=False), self.posterior_["intercept"]
        counts = np.arange(1, self.posterior_.n_draws + 1)
        risk = np.empty((self.posterior_.n_chains, self.posterior_.n_draws))
        for chain in range(self.posterior_.n_chains):
            eta = (X @ coef[chain].T + intercept[chain])[..., None]
            running = np.cumsum(self._positive(eta), axis=1) / counts
            risk[chain] = np.mean((running - reference[:, None]) ** 2, axis=0)
        return Bunch(risk=risk, n_draws=counts,
                     n_data_read=np.cumsum(self.posterior_["n_data_read"], axis=1),
                     seconds=self.posterior_["seconds"].copy())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

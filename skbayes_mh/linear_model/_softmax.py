"""Bayesian multiclass softmax regression: exact or minibatch tests on the centred (identifiable)
parameters, or Firefly Monte Carlo on the class blocks (``acceptance="firefly"``)."""

from sklearn.base import ClassifierMixin

from ..models import CentredSoftmaxModel, SoftmaxModel
from ..models._prior import GAUSSIAN
from ._docs import shared_docstring
from ._base import LinearMHEstimator
from ._posterior import PredictiveClassifierMixin


@shared_docstring
class FireflySoftmaxClassifier(ClassifierMixin, PredictiveClassifierMixin,
                               LinearMHEstimator):
    """Bayesian multiclass softmax regression, sampled with the test ``acceptance="auto"``
    picks (exact on small data, the minibatch test with control variates on tall data) or
    with Firefly Monte Carlo (``acceptance="firefly"``: exact, and each iteration queries
    only the "bright" data points).

    Model: ``p(y = k | x) = exp(x . w_k + b_k) / sum_j exp(x . w_j + b_j)`` for the ``K``
    classes, ``w_kj ~ N(0, (prior_scale / spread(x_j))^2)`` (``spread``: see
    ``autoscale``) and ``b_k + mean(x) . w_k ~ N(0, intercept_prior_scale^2)`` (with
    ``autoscale=False``: ``w_kj ~ N(0, prior_scale^2)``, ``b_k ~ N(0,
    intercept_prior_scale^2)``). The target is the tempered posterior. With
    ``acceptance="firefly"``, Firefly bounds the log-sum-exp with a quadratic of
    per-point curvature (Jebara-Choromanska; ``Firefly(softmax_bound="bohning")`` for
    Bohning's fixed one), tight at the MAP by default. Chains start at draws of the Laplace
    approximation at the MAP and run in parallel through joblib. Two classes are handled
    as ``K = 2`` softmax.

    Adding one vector to every class's weights (and intercepts) leaves the likelihood
    unchanged, so only the prior pins that direction down. The fit samples the rest: the
    ``K - 1`` blocks of the weights in an orthonormal basis of the vectors that sum to zero
    over the classes, under the prior the ``K`` i.i.d. class blocks imply there, which is
    exact (:mod:`skbayes_mh.models.softmax`); Firefly, whose bounds are on the class
    blocks, samples all ``K`` blocks. Every fit reports the weights centred over the
    classes (they sum to zero, as scikit-learn's multinomial ``LogisticRegression``'s do);
    the predictions are the same as those of the over-parameterised model.

    Parameters
    ----------
    acceptance : str or AcceptanceTest, default="auto"
        {acceptance_auto}
        Or ``"firefly"`` (or a :class:`~skbayes_mh.acceptance.Firefly` object: bound,
        brightness resampling, softmax bound), ``"barker"``, ``"austerity"``, ...
    {proposal_parameters}
    {classifier_prior_parameters}
    {sampling_parameters}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_features)
        Posterior mean of the weights, centred over the classes.
    intercept_ : ndarray of shape (n_classes,)
        Posterior mean of the intercepts, centred over the classes.
    posterior_ : Posterior
        ``coef`` (n_chains, n_draws, n_classes, n_features), ``intercept`` (n_chains,
        n_draws, n_classes), the per-draw ``lp``, ``acceptance_rate``, ``n_data_read``,
        ``rows_per_iteration`` (likelihood queries with Firefly), ``seconds`` and, with
        Firefly, ``n_bright`` (:class:`~skbayes_mh.posterior.Posterior`).
    {fitted_attributes}

    References
    ----------
    D. Maclaurin, R. P. Adams. "Firefly Monte Carlo: Exact MCMC with Subsets of Data".
    UAI 2014. T. Jebara, A. Choromanska. "Majorization for CRFs and Latent Likelihoods".
    NIPS 2012. D. Bohning. "Multinomial logistic regression algorithm". Annals of the
    Institute of Statistical Mathematics 44, 1992.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skbayes_mh import FireflySoftmaxClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = FireflySoftmaxClassifier(n_draws=300, n_warmup=300, n_chains=2,
    ...                                random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape, clf.posterior_["coef"].shape
    ((2, 3), (2, 300, 3, 4))
    """

    _fit_doc = dict(what="the weights", y="class labels ``y``",
                    y_description="At least two classes.")

    def __init__(self, *, acceptance="auto", proposal="auto", step_size="auto",
                 prior_scale=1.0, autoscale=True, fit_intercept=True,
                 intercept_prior_scale=10.0, temperature=1.0, n_draws="auto", max_time=None,
                 n_warmup="auto", thin="auto", n_chains=4, n_jobs=None, random_state=None,
                 verbose=0, warm_start=False,
                 predict_tol=1e-4):
        self._store_parameters(locals())

    def _problem(self, X, y, weights, summary, acceptance):
        data = self._linear_data(X, self._class_indices(y, X), weights)
        family = self._family(acceptance)
        # Every block gets the same zero-mean Gaussian prior: the class blocks are then
        # independent and identically distributed, which makes the centred family's prior
        # (the same on each of its K - 1 blocks) exact (models/softmax.py).
        prior = self._prior(GAUSSIAN, data, summary, family.n_outputs, self.prior_scale,
                            self.intercept_prior_scale)
        return family, data, prior

    def _family(self, acceptance=None):
        """The centred family (K - 1 blocks in a sum-to-zero basis), except for a sampler on
        the model's bounds (Firefly), which samples the K class blocks."""
        if acceptance is not None and acceptance.needs_bounds:
            return SoftmaxModel(self.classes_.size, acceptance.softmax_bound)
        return CentredSoftmaxModel(self.classes_.size)


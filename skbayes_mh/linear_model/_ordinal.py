"""Bayesian ordinal regression (cumulative logit or probit) sampled with pluggable
acceptance tests."""
import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import StrOptions

from .._core.auto import is_auto
from ..models._prior import GAUSSIAN
from ..models.ordinal import CumulativeModel
from ._base import LinearMHEstimator
from ._docs import shared_docstring
from ._posterior import PredictiveClassifierMixin

#: Standard deviation of the Gaussian prior on each log-gap between consecutive cut-points
#: (``log(c_j - c_{j-1})``, on the link's scale): gaps from about 0.02 to 50 (two sds),
#: weakly informative on both the logit and the probit scale.
GAP_PRIOR_SCALE = 2.0


def ordered_categories(categories, labels):
    """``categories`` as ``classes_``: the ordered classes, which must be distinct, at
    least two, and include every label of the data (``labels``, sorted)."""
    order = np.asarray(categories)
    if order.ndim != 1 or order.size < 2:
        raise ValueError(f"categories must list at least two classes, lowest first; got "
                         f"{categories!r}.")
    if np.unique(order).size != order.size:
        raise ValueError(f"categories must list each class once; got {categories!r}.")
    missing = labels[~np.isin(labels, order)]
    if missing.size:
        raise ValueError(f"y has labels not among the categories: {missing[:5]!r}; "
                         f"categories is {categories!r}.")
    return order


def labels_order(y):
    """The categories of an ordered pandas ``Categorical`` ``y`` (a ``Series`` or the
    array itself), lowest first; None for any other ``y``."""
    dtype = getattr(y, "dtype", None)
    if getattr(dtype, "name", None) == "category" and getattr(dtype, "ordered", False):
        return list(dtype.categories)
    return None


@shared_docstring
class OrdinalRegression(ClassifierMixin, PredictiveClassifierMixin, LinearMHEstimator):
    """Bayesian ordinal regression for ordered classes (ratings, grades, severity levels):
    the cumulative logit (proportional-odds) or cumulative probit model, with posterior
    samples from Metropolis-Hastings chains whose acceptance test may read only
    minibatches.

    Model: for the ordered classes ``classes_[0] < ... < classes_[K-1]``, ``P(y <=
    classes_[k] | x) = F(cutpoints[k] - x . w)`` with ``F`` the logistic function
    (``link="logit"``) or the standard normal CDF (``link="probit"``) and ``K - 1``
    increasing cut-points. Priors: ``w_j ~ N(0, (prior_scale / spread(x_j))^2)``
    (``spread``: see ``autoscale``), the first cut-point at the features' means ``~ N(0,
    intercept_prior_scale^2)``, and each log-gap ``log(cutpoints[k] - cutpoints[k-1]) ~
    N(0, 2^2)``. The classes are ordered as ``categories`` lists them; by default, for an
    ordered pandas ``Categorical`` ``y``, as its categories are (as statsmodels'
    ``OrderedModel`` reads them), and otherwise as the labels sort (as scikit-learn's
    ``OrdinalEncoder`` orders categories): integers as numbers, strings alphabetically
    (``"high" < "low" < "medium"``: give such levels' order with ``categories=["low",
    "medium", "high"]``, or as an ordered ``Categorical``).
    statsmodels' ``OrderedModel`` is the maximum-likelihood fit of the same model (its
    thresholds are ``cutpoints``). Firefly is not available (no bound is derived), so
    ``acceptance="firefly"`` is refused with an error.

    Parameters
    ----------
    link : {"logit", "probit"}, default="logit"
        ``F``: the logistic function (proportional odds) or the standard normal CDF.
    categories : "auto" or array-like of shape (n_classes,), default="auto"
        The classes from lowest to highest: every label ``y`` holds, and possibly levels
        it does not (their cut-points then follow from the prior). ``"auto"``: an
        ordered pandas ``Categorical`` ``y``'s categories, otherwise the labels in
        ``y``, sorted.
    acceptance : str or AcceptanceTest, default="auto"
        {acceptance_auto}
        Or ``"barker"``, ``"minibatch"``, ``"austerity"``, ``"confidence"`` (with control
        variates) or an object from :mod:`skbayes_mh.acceptance`; not ``"firefly"``.
    {proposal_parameters}
    {ordinal_prior_parameters}
    {sampling_parameters}
    {group_effects_parameter}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The ordered classes.
    coef_ : ndarray of shape (1, n_features)
        Posterior mean of the weights (a larger ``x . w`` moves the mass to higher classes).
    intercept_ : ndarray of shape (1,)
        0: the cut-points carry the location.
    cutpoints_ : ndarray of shape (n_classes - 1,)
        Posterior mean of the cut-points.
    posterior_ : Posterior
        ``coef`` (n_chains, n_draws, n_features), ``cutpoints`` (n_chains, n_draws,
        n_classes - 1), and the per-draw ``lp``, ``acceptance_rate``, ``n_data_read``,
        ``rows_per_iteration``, ``seconds`` (:class:`~skbayes_mh.posterior.Posterior`).
    {fitted_attributes}

    See Also
    --------
    MinibatchMHLogisticRegression : two classes (the same model with ``K = 2``).

    Examples
    --------
    >>> import numpy as np
    >>> from skbayes_mh import OrdinalRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> latent = X @ [1.0, -0.5] + rng.logistic(size=2000)
    >>> y = np.digitize(latent, [-1.0, 0.5, 2.0])  # four ordered classes
    >>> clf = OrdinalRegression(n_draws=300, n_warmup=300, n_chains=2, random_state=0)
    >>> clf = clf.fit(X, y)
    >>> np.round(clf.coef_, 1), clf.predict_proba(X[:2]).shape
    (array([[ 1. , -0.5]]), (2, 4))
    >>> bool(np.all(np.abs(clf.cutpoints_ - [-1.0, 0.5, 2.0]) < 0.2))
    True
    """

    _fit_doc = dict(what="the weights and cut-points", y="ordered class labels ``y``",
                    y_description="At least two classes, ordered as ``categories`` "
                                  "lists them (by default as their labels sort).")
    _firefly_proposal = None  # the family has no Firefly bounds
    #: The cut-points carry the location: the linear predictor's intercept is always
    #: sampled (it is the first cut-point's negative), and reported as 0.
    fit_intercept = True

    _parameter_constraints = {
        **{name: constraint
           for name, constraint in LinearMHEstimator._parameter_constraints.items()
           if name != "fit_intercept"},
        "link": [StrOptions({"logit", "probit"})],
        "categories": [StrOptions({"auto"}), "array-like"],
    }

    def __init__(self, *, link="logit", categories="auto", acceptance="auto", proposal="auto",
                 step_size="auto", prior_scale=1.0, autoscale=True,
                 intercept_prior_scale=10.0, temperature=1.0, n_draws="auto", max_time=None,
                 n_warmup="auto", thin="auto", n_chains=4, n_jobs=None, random_state=None,
                 verbose=0, warm_start=False, predict_tol=1e-4, group_effects=None,
                 group_correlation=True):
        self._store_parameters(locals())

    def _fit(self, X, y, *args, **kwargs):
        # An ordered categorical y (pandas) carries its levels' order: with categories=
        # "auto" it orders the classes as categories= listing them would (the statsmodels
        # OrderedModel, Bambi and brms convention).
        self._label_order = labels_order(y)
        return super()._fit(X, y, *args, **kwargs)

    def _class_order(self):
        """The classes' order as given (``categories``, or an ordered categorical ``y``'s
        categories), None where the labels' sort order gives it."""
        if not is_auto(self.categories):
            return self.categories
        return getattr(self, "_label_order", None)

    def _problem(self, X, y, weights, summary, acceptance):
        if self._class_order() is not None:
            self.classes_ = ordered_categories(self._class_order(), self.classes_)
        data = self._linear_data(X, self._class_indices(y, X), weights)
        family = self._family()
        prior = self._prior(GAUSSIAN, data, summary, 1, self.prior_scale,
                            self.intercept_prior_scale,
                            extra_scales=[GAP_PRIOR_SCALE] * family.n_extra)
        return family, data, prior

    def _family(self, acceptance=None):
        classes = getattr(self, "classes_", None)
        return CumulativeModel(2 if classes is None else len(classes), self.link)

    def _class_indices(self, y, X):
        if self._class_order() is None:
            return super()._class_indices(y, X)
        return self._class_observed(y).astype(np.float64)

    def _class_observed(self, y):
        """Labels ``y`` as indices into ``classes_``, in the order ``categories`` (or an
        ordered categorical ``y``) gives (an error naming labels that are not among
        them)."""
        if self._class_order() is None:
            return super()._class_observed(y)
        y = np.asarray(y)
        by_value = np.argsort(self.classes_, kind="stable")
        sorted_classes = self.classes_[by_value]
        index = np.clip(np.searchsorted(sorted_classes, y), 0, sorted_classes.size - 1)
        unseen = sorted_classes[index] != y
        if np.any(unseen):
            raise ValueError(f"y has labels not among the categories: "
                             f"{np.unique(y[unseen])[:5]!r}; categories is "
                             f"{self.classes_!r}.")
        return by_value[index]

    def _parameter_coords(self):
        """Each cut-point is named by the classes it separates (``"0|1"``)."""
        coords = super()._parameter_coords()
        classes = [str(c) for c in self.classes_]
        coords["cutpoints"] = [[f"{low}|{high}" for low, high in zip(classes, classes[1:])]]
        return coords

"""Bayesian multiclass softmax regression, sampled exactly by Firefly Monte Carlo by default."""
import numbers

import numpy as np
from scipy.special import softmax
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._base import BaseMHEstimator
from .._firefly import softmax_problem
from .._kernels.priors import GAUSSIAN
from .._validation import read_only
from ..models.softmax import softmax_loglik, softmax_map
from ..posterior import Posterior
from ._logistic import _PREDICT_BLOCK

#: Up to this many parameters (K x D) the Laplace covariance is full (the proposals'
#: preconditioner); above it, diagonal.
_FULL_LAPLACE_MAX_DIM = 400


class FireflySoftmaxClassifier(ClassifierMixin, BaseMHEstimator):
    """Bayesian multiclass softmax regression: exact posterior samples from Firefly Monte
    Carlo, which queries only the "bright" data points at each iteration.

    Model: ``p(y = k | x) = exp(x . w_k + b_k) / sum_j exp(x . w_j + b_j)`` for the ``K``
    classes, ``w_kj ~ N(0, prior_scale^2)``, ``b_k ~ N(0, intercept_prior_scale^2)``. The
    target is the tempered posterior. Firefly bounds the log-sum-exp with a quadratic of
    per-point curvature (Jebara-Choromanska; ``Firefly(softmax_bound="bohning")`` for
    Bohning's fixed one), tight at the MAP by default. Chains start near the MAP (one Laplace standard
    deviation of jitter each) and run in parallel through joblib. Two classes are handled
    as ``K = 2`` softmax.

    Parameters
    ----------
    acceptance : str or AcceptanceTest, default="firefly"
        ``"firefly"`` (or a :class:`~skbayes_mh.acceptance.Firefly` object: bound, brightness
        resampling, ``update="mala"``, ``"mh"`` or ``"slice"``), or any other test:
        ``"metropolis"``, ``"barker"``, ``"minibatch"``, ...
    step_size : "auto" or float, default="auto"
        ``"auto"``: tuned in burn-in toward the update's target acceptance rate. A float:
        the step in units of the Laplace preconditioner (Firefly), or an isotropic random
        walk standard deviation (other tests).
    prior_scale : float, default=1.0
    fit_intercept : bool, default=True
    intercept_prior_scale : float, default=10.0
    temperature : float, default=1.0
    n_samples : int, default=1000
    n_burnin : int, default=1000
    thin : int, default=1
    n_chains : int, default=4
    n_jobs : int or None, default=None
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    coef_ : ndarray of shape (n_classes, n_features_in_)
        Posterior mean of the weights.
    intercept_ : ndarray of shape (n_classes,)
    posterior_ : Posterior
        ``coef`` (n_chains, n_samples, n_classes, n_features_in_), ``intercept`` (n_chains,
        n_samples, n_classes), per-draw ``lp``, ``acceptance_rate``, ``n_data_read``
        (likelihood queries with Firefly), ``seconds`` and, with Firefly, ``n_bright``.
    acceptance_ : AcceptanceTest
    acceptance_rate_ : float
    step_size_ : ndarray of shape (n_chains, n_params)
    n_iter_ : int

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
    >>> clf = FireflySoftmaxClassifier(n_samples=300, n_burnin=300, n_chains=2,
    ...                                random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape, clf.posterior_["coef"].shape
    ((2, 3), (2, 300, 3, 4))
    """

    _parameter_constraints = {
        **BaseMHEstimator._parameter_constraints,
        "prior_scale": [Interval(numbers.Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "intercept_prior_scale": [Interval(numbers.Real, 0, None, closed="neither")],
    }

    def __init__(self, *, acceptance="firefly", step_size="auto", prior_scale=1.0,
                 fit_intercept=True, intercept_prior_scale=10.0, temperature=1.0,
                 n_samples=1000, n_burnin=1000, thin=1, n_chains=4, n_jobs=None,
                 random_state=None, verbose=0):
        self.acceptance = acceptance
        self.step_size = step_size
        self.prior_scale = prior_scale
        self.fit_intercept = fit_intercept
        self.intercept_prior_scale = intercept_prior_scale
        self.temperature = temperature
        self.n_samples = n_samples
        self.n_burnin = n_burnin
        self.thin = thin
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y):
        """Sample the posterior of the weights given ``X`` and class labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            At least two classes.

        Returns
        -------
        self
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        check_classification_targets(y)
        self.classes_, y_encoded = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(f"This solver needs samples of at least 2 classes in the data, but "
                             f"the data contain only one class: {self.classes_[0]!r}.")
        n_classes = self.classes_.size
        n_features = X.shape[1]
        design = np.ascontiguousarray(
            np.column_stack([X, np.ones(X.shape[0])]) if self.fit_intercept else X)
        width = design.shape[1]
        scales = np.full((n_classes, width), float(self.prior_scale))
        if self.fit_intercept:
            scales[:, -1] = self.intercept_prior_scale
        prior_scales = scales.ravel()
        y_float = y_encoded.astype(np.float64)
        inv_temperature = 1.0 / float(self.temperature)
        full = n_classes * width <= _FULL_LAPLACE_MAX_DIM
        theta_map, laplace = softmax_map(design, y_float, n_classes, prior_scales,
                                         inv_temperature, full=full)
        data = read_only(np.ascontiguousarray(np.column_stack([design, y_float])))

        def firefly_problem(firefly):
            covariance = laplace if laplace.ndim == 2 else np.diag(laplace)
            return softmax_problem(design, y_float, n_classes, GAUSSIAN, prior_scales,
                                   inv_temperature, theta_map, covariance, firefly.bound,
                                   firefly.softmax_bound)

        draws, stats, _ = self._sample_posterior(softmax_loglik, data, GAUSSIAN, prior_scales,
                                                 theta_map, laplace,
                                                 firefly_problem=firefly_problem)
        weights = draws.reshape(*draws.shape[:2], n_classes, width)
        coef = weights[..., :n_features]
        intercept = (weights[..., n_features] if self.fit_intercept
                     else np.zeros(weights.shape[:3]))
        self.posterior_ = Posterior({"coef": coef, "intercept": intercept}, stats)
        self.coef_ = coef.mean(axis=(0, 1))
        self.intercept_ = intercept.mean(axis=(0, 1))
        return self

    def predict_proba(self, X):
        """Posterior-predictive probabilities: the mean over all stored draws of
        ``p(y | x, W, b)`` (deterministic).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes), columns in ``classes_`` order.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        coef = self.posterior_.get("coef", flat=True)  # (S, K, F)
        intercept = self.posterior_.get("intercept", flat=True)  # (S, K)
        out = np.empty((X.shape[0], self.classes_.size))
        for start in range(0, X.shape[0], _PREDICT_BLOCK):
            block = X[start:start + _PREDICT_BLOCK]
            scores = np.einsum("nf,skf->snk", block, coef) + intercept[:, None, :]
            out[start:start + _PREDICT_BLOCK] = softmax(scores, axis=2).mean(axis=0)
        return out

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """The class with the largest posterior-predictive probability."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

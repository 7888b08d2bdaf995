"""Bayesian Student-t linear regression, sampled exactly by Firefly Monte Carlo by default."""
import numbers

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._base import BaseMHEstimator
from .._firefly import student_t_problem
from .._kernels.priors import GAUSSIAN, LAPLACE, LOG_SCALE
from .._validation import read_only
from ..acceptance import Firefly
from ..acceptance.firefly import UPDATES
from ..models.robust import student_t_lipschitz, student_t_loglik, student_t_map
from ..posterior import Posterior

#: Up to this many parameters the covariance preconditioner is full; above it, diagonal.
_FULL_COVARIANCE_MAX_DIM = 400
#: Rows per block in prediction (bounds the (draws, rows) temporaries).
_PREDICT_BLOCK = 2048
_PRIORS = {"gaussian": GAUSSIAN, "laplace": LAPLACE}


class RobustTRegression(RegressorMixin, BaseMHEstimator):
    """Bayesian linear regression with Student-t noise: heavy tails, so that outliers do not
    drag the fit, and posterior samples from Firefly Monte Carlo, which queries only the
    "bright" data points at each iteration.

    Model: ``y = x . w + b + s * t_nu``, with ``w_j ~ Laplace(0, prior_scale)`` (or
    Gaussian), ``b - mean(y) ~`` the same family with ``intercept_prior_scale``, and, when
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
    prior_scale : float, default=1.0
        Scale of the weights' prior (Laplace ``b``, Gaussian standard deviation), on the
        scale of ``X`` and ``y``.
    intercept_prior_scale : float or None, default=None
        Scale of the intercept's prior around ``mean(y)``. ``None``: ``10 * std(y)``.
    fit_intercept : bool, default=True
    acceptance : str or AcceptanceTest, default="firefly"
        ``"firefly"``, or a :class:`~skbayes_mh.acceptance.Firefly` object, or any other
        test: ``"metropolis"``, ``"barker"``, ``"minibatch"``, ``"austerity"``,
        ``"confidence"`` (the last needs a fixed ``scale``: with a sampled scale the
        log-likelihood has no Lipschitz constant, unless given to the test).
    update : {"slice", "mala", "mh"}, default="slice"
        The parameter update of ``acceptance="firefly"`` given by name (a ``Firefly``
        object carries its own). The other tests use random-walk proposals.
    step_size : "auto" or float, default="auto"
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
    coef_ : ndarray of shape (n_features_in_,)
        Posterior mean of the weights.
    intercept_ : float
    scale_ : float
        Posterior mean of the noise scale (``scale`` when fixed).
    posterior_ : Posterior
        ``coef`` (n_chains, n_samples, n_features_in_), ``intercept`` and ``scale``
        (n_chains, n_samples), per-draw ``lp``, ``acceptance_rate``, ``n_data_read``,
        ``seconds`` and, with Firefly, ``n_bright``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    acceptance_ : AcceptanceTest
    acceptance_rate_ : float
    step_size_ : ndarray of shape (n_chains, n_params)
    n_iter_ : int

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
    >>> reg = RobustTRegression(n_samples=300, n_burnin=300, n_chains=2,
    ...                         random_state=0).fit(X, y)
    >>> np.round(reg.coef_, 1), reg.predict(X[:2], return_std=True)[1].shape
    (array([ 1., -2.]), (2,))
    """

    _parameter_constraints = {
        **BaseMHEstimator._parameter_constraints,
        "nu": [Interval(numbers.Real, 0, None, closed="neither")],
        "scale": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "prior": [StrOptions(set(_PRIORS))],
        "prior_scale": [Interval(numbers.Real, 0, None, closed="neither")],
        "intercept_prior_scale": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "fit_intercept": ["boolean"],
        "update": [StrOptions(set(UPDATES))],
    }

    def __init__(self, *, nu=4.0, scale=None, prior="laplace", prior_scale=1.0,
                 intercept_prior_scale=None, fit_intercept=True, acceptance="firefly",
                 update="slice", step_size="auto", temperature=1.0, n_samples=1000,
                 n_burnin=1000, thin=1, n_chains=4, n_jobs=None, random_state=None,
                 verbose=0):
        self.nu = nu
        self.scale = scale
        self.prior = prior
        self.prior_scale = prior_scale
        self.intercept_prior_scale = intercept_prior_scale
        self.fit_intercept = fit_intercept
        self.acceptance = acceptance
        self.update = update
        self.step_size = step_size
        self.temperature = temperature
        self.n_samples = n_samples
        self.n_burnin = n_burnin
        self.thin = thin
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y):
        """Sample the posterior of the weights (and the scale) given ``X`` and ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        nu = float(self.nu)
        n_features = X.shape[1]
        spread = float(np.std(y)) or 1.0
        # A fixed scale is divided out: y / s = x . (w / s) + t_nu, priors scaled alike.
        unit = float(self.scale) if self.scale is not None else 1.0
        offset = float(np.mean(y)) if self.fit_intercept else 0.0
        y_model = np.ascontiguousarray((y - offset) / unit)
        design = np.ascontiguousarray(
            np.column_stack([X, np.ones(X.shape[0])]) if self.fit_intercept else X)
        prior_scales = np.full(design.shape[1], float(self.prior_scale) / unit)
        if self.fit_intercept:
            intercept_scale = (10.0 * spread if self.intercept_prior_scale is None
                               else float(self.intercept_prior_scale))
            prior_scales[-1] = intercept_scale / unit
        prior_kind = _PRIORS[self.prior]
        if self.scale is None and X.shape[0] <= design.shape[1]:
            raise ValueError(
                f"RobustTRegression with scale=None needs more samples than coefficients, got "
                f"n_samples = {X.shape[0]} for {design.shape[1]} coefficients: the data can "
                f"be fitted exactly and the posterior of the scale is then improper. Fix "
                f"`scale` or add data.")
        if self.scale is None:
            prior_kind |= LOG_SCALE
            prior_scales = np.append(prior_scales, spread)
        inv_temperature = 1.0 / float(self.temperature)
        theta_map, laplace = student_t_map(
            design, y_model, nu, prior_kind, prior_scales, inv_temperature,
            full=prior_scales.size <= _FULL_COVARIANCE_MAX_DIM)
        data = read_only(np.ascontiguousarray(
            np.column_stack([design, y_model, np.full(y_model.shape, nu)])))

        def firefly_problem(firefly):
            covariance = laplace if laplace.ndim == 2 else np.diag(laplace)
            return student_t_problem(design, y_model, nu, prior_kind, prior_scales,
                                     inv_temperature, theta_map, covariance, firefly.bound)

        acceptance = self.acceptance
        if isinstance(acceptance, str) and acceptance == "firefly":
            acceptance = Firefly(update=self.update)
        lipschitz = student_t_lipschitz(design, nu) if self.scale is not None else None
        draws, stats, _ = self._sample_posterior(
            student_t_loglik, data, prior_kind, prior_scales, theta_map, laplace,
            lipschitz=lipschitz, firefly_problem=firefly_problem, acceptance=acceptance)
        coef = draws[..., :n_features] * unit
        intercept = (draws[..., n_features] * unit + offset if self.fit_intercept
                     else np.zeros(draws.shape[:2]))
        if self.scale is None:
            scale = np.exp(draws[..., -1])
        else:
            scale = np.full(draws.shape[:2], unit)
        self.posterior_ = Posterior({"coef": coef, "intercept": intercept, "scale": scale},
                                    stats)
        self.coef_ = coef.mean(axis=(0, 1))
        self.intercept_ = float(intercept.mean())
        self.scale_ = float(scale.mean())
        return self

    def _draws(self):
        return (self.posterior_.get("coef", flat=True),
                self.posterior_.get("intercept", flat=True),
                self.posterior_.get("scale", flat=True))

    def predict(self, X, return_std=False):
        """Posterior-predictive mean (deterministic: the mean over all stored draws).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return the posterior-predictive standard deviation: the spread of
            ``x . w + b`` over the draws and the Student-t noise, ``s^2 nu / (nu - 2)``.
            For ``nu <= 2`` the noise has no finite variance and the std is ``inf``.

        Returns
        -------
        y_mean : ndarray of shape (n_samples,)
        y_std : ndarray of shape (n_samples,), only with ``return_std``
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        coef, intercept, scale = self._draws()
        mean = np.empty(X.shape[0])
        spread = np.empty(X.shape[0])
        for start in range(0, X.shape[0], _PREDICT_BLOCK):
            block = slice(start, start + _PREDICT_BLOCK)
            location = X[block] @ coef.T + intercept  # (rows, draws)
            mean[block] = location.mean(axis=1)
            spread[block] = location.var(axis=1)
        if not return_std:
            return mean
        nu = float(self.nu)
        if nu <= 2.0:
            return mean, np.full(X.shape[0], np.inf)
        return mean, np.sqrt(spread + np.mean(scale**2) * nu / (nu - 2.0))

    def sample_y(self, X, n_samples=1, random_state=None):
        """Draws from the posterior predictive: a random stored draw of ``(w, b, s)`` per
        sample, then ``x . w + b + s t_nu``.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
        n_samples : int, default=1
        random_state : int, RandomState instance or None, default=None

        Returns
        -------
        ndarray of shape (n_samples_X, n_samples)
        """
        check_is_fitted(self)
        if not isinstance(n_samples, numbers.Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}.")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        rng = check_random_state(random_state)
        coef, intercept, scale = self._draws()
        pick = rng.randint(0, coef.shape[0], size=n_samples)
        location = X @ coef[pick].T + intercept[pick]
        noise = rng.standard_t(float(self.nu), size=location.shape) * scale[pick]
        return location + noise

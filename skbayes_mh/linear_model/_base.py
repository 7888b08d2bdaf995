"""The shell every linear-model estimator shares: its common parameters, ``fit`` as
validate (``_fit_data``) -> the estimator's problem (``_problem``: y encoded, family, data,
prior) -> the functional core (:func:`skbayes_mh._core.fit_posterior`) -> the fitted
attributes, and the predictions' plumbing over the stored draws. Each estimator file keeps
its own parameters, documentation, problem and predictions."""
import dataclasses
import numbers
import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, is_classifier
from sklearn.metrics import d2_tweedie_score
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .._core import SamplerSettings, continue_posterior, fit_posterior
from .._core.auto import AUTO_WARMUP, choose_acceptance, draws_bound, is_auto, warmup_bound
from .._core.continuation import chains_to_continue, continuation_key
from .._core.convergence import check_bright_fraction, diagnose
from .._dask import check_dask_data, encode_dask_labels, is_dask_array, scan_dask_data
from .._data import LinearData, kernel_csr
from .._params import StoredParameters
from .._passes import encode_labels, first_bad_row, map_on_cores, scan_data
from .._validation import (MIN_TEMPERATURE, check_draws_memory, check_file_unchanged,
                           check_magnitudes, file_state, read_only)
from ..acceptance import ACCEPTANCE_TESTS, AcceptanceTest
from ..models._prior import GAUSSIAN, BuiltinPrior
from ..posterior import Posterior, check_quantiles
from ..proposals import PROPOSALS, Proposal
from ..sampling import chain_seeds
from ..sampling._schedule import check_temperature
from ._docs import FIT_DOCSTRING
from ._predictive import (OutputMajorDraws, linear_predictors, predictive_mean,
                          row_blocks)

#: float32 ``X`` of at least this many bytes is read in place; smaller float32 data are
#: converted to float64 (a copy that costs nothing at that size, and its full-data passes
#: go through BLAS).
FLOAT32_IN_PLACE_MIN_BYTES = 1 << 26
#: A dense float64 ``X`` in memory is read as a CSR matrix (the same products without the
#: zeros: the same posterior) when at most this share of its values is non-zero, whatever
#: the model's outputs. ``benchmarks/perf/sparse_layout.py`` measured where a full-data pass
#: costs the same both ways (20,000 x 400): about 19% non-zero for one output (logistic,
#: Poisson, ...: BLAS is memory-bound there), 15% for five classes (four outputs in the
#: centred basis) and 21% for ten (nine), since a CSR row's stored values meet each
#: feature's ``K`` coefficients side by side (``_kernels/rows._matrix_pass``). Before, when
#: each output read the row again, ten classes crossed near 7% and the rule was
#: ``0.25 / sqrt(n_outputs)``.
AUTO_SPARSE_DENSITY = 0.2


def sparse_layout(data):
    """``data`` (:class:`~skbayes_mh._data.LinearData`, in memory: a memory map's rows stay
    where they are) with ``X`` as a CSR matrix (:func:`~skbayes_mh._data.kernel_csr`) when
    it is a dense float64 array with at most ``AUTO_SPARSE_DENSITY`` of its values
    non-zero; otherwise ``data``."""
    X = data.X
    if type(X) is not np.ndarray or X.dtype != np.float64 or X.size == 0:
        return data
    if np.count_nonzero(X) > AUTO_SPARSE_DENSITY * X.size:
        return data
    return dataclasses.replace(data, X=kernel_csr(sp.csr_array(X)))


#: Frames between a warning raised in ``fit``'s helpers and the user's call of ``fit``:
#: helper -> ``_fit`` -> the estimator's ``fit`` -> the caller.
_USER_FRAME = 4

#: Every public estimator, by class name: a class defined in a file of ``linear_model/``
#: registers itself (``linear_model/__init__.py`` imports every such file), and the package's
#: names, the persistence whitelist and the tests read this.
ESTIMATORS = {}


#: Autoscaling standardises no feature beyond this many spreads from its mean. A feature's
#: spread is its sd, or its largest distance from its mean over this when that is larger: a
#: rare feature (a pixel that a few rows light, a rare word, a far outlier) would otherwise
#: get a prior sd of order sqrt(N) on its standardised scale's few large values, and a
#: posterior that a few rows cut like a wall (digits: standardised values up to 37; MNIST:
#: prior sds up to 4,250 on the raw pixels). 5 leaves a Gaussian feature's sd alone up to
#: about 10^6 rows and caps a rare binary feature's prior sd at 5 on the log-odds scale.
AUTOSCALE_REACH = 5.0
#: ... and treats a feature of a smaller spread than this as constant (see
#: :func:`autoscale_spread`).
AUTOSCALE_MIN_SPREAD = 1e-100


def autoscale_spread(summary):
    """The features' spreads for the autoscaled priors, shape (n_features,): ``max(sd,
    max |x - mean| / AUTOSCALE_REACH)``, 1 for a constant feature (``summary`` as from
    :func:`~skbayes_mh._passes.scan_data`). A column of one value is constant although
    its computed sd is rounding (2.8e-14 for 35 rows of -236.1): dividing by that gave
    its weight a prior sd of 10^20 and draws whose predictions overflowed. So is a column
    whose spread is below :data:`AUTOSCALE_MIN_SPREAD` (subnormal values): a prior sd of
    10^160 and more overflowed the prior's and the Hessian's arithmetic; its weight keeps
    the raw-scale prior, and the column, a product of under 10^-100 with it, stays
    without effect, as at that size it is in double precision."""
    mean = np.asarray(summary["x_mean"], dtype=np.float64)
    low, high = np.asarray(summary["x_min"]), np.asarray(summary["x_max"])
    reach = np.maximum(high - mean, mean - low)
    spread = np.maximum(np.asarray(summary["x_std"], dtype=np.float64), reach / AUTOSCALE_REACH)
    constant = ((high == low) | ~(spread > 1e-12 * np.abs(mean))
                | ~(spread >= AUTOSCALE_MIN_SPREAD))
    return np.where(constant, 1.0, spread)


def _labels_dtype(X, dtype=np.float32):
    """The dtype the kernels read a model's ``y`` in beside ``X``: ``dtype`` (float32 when
    ``y`` is exactly that: class indices, or a float32 ``y``) where ``X`` is a float32
    array, so that a tall memory map's labels take 4 bytes a row (half of float64, a fifth
    of ten float32 features); float64 otherwise."""
    if not is_dask_array(X) and not sp.issparse(X) and X.dtype == np.float32:
        return dtype
    return np.float64


class LinearMHEstimator(StoredParameters, BaseEstimator):
    """Parameters and ``fit`` common to the linear-model estimators.

    Subclasses define ``_family(acceptance=None)`` (the likelihood family of their
    settings, which lays out the parameters and gives the NumPy side of the predictions),
    ``_problem(X, y, weights, summary, acceptance)`` (their data and prior: see
    :meth:`_problem`) and ``_fit_doc`` (what ``fit``'s docstring says is sampled and what
    ``y`` is: its ``fit`` is then :meth:`_fit`).
    """

    _parameter_constraints = {
        "acceptance": [StrOptions({"auto"} | set(ACCEPTANCE_TESTS)), AcceptanceTest],
        "proposal": [StrOptions({"auto"} | set(PROPOSALS)), Proposal],
        "step_size": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "prior_scale": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "autoscale": ["boolean"],
        "fit_intercept": ["boolean"],
        "intercept_prior_scale": [Interval(numbers.Real, 0, None, closed="neither")],
        "temperature": [Interval(numbers.Real, MIN_TEMPERATURE, None, closed="left"),
                        "array-like"],
        "n_draws": [StrOptions({"auto"}), Interval(numbers.Integral, 1, None, closed="left")],
        "max_time": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_warmup": [StrOptions({"auto"}), Interval(numbers.Integral, 0, None, closed="left")],
        "thin": [StrOptions({"auto"}), Interval(numbers.Integral, 1, None, closed="left")],
        "n_chains": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_jobs": [numbers.Integral, None],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "predict_tol": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }

    #: The proposal ``proposal="auto"`` gives Firefly (which has the model's gradient).
    _firefly_proposal = "mala"

    def __init_subclass__(cls, **kwargs):
        # fit is the shell's, documented for this estimator; set before scikit-learn's
        # __init_subclass__ reads its signature (set_fit_request for sample_weight).
        if "_fit_doc" in cls.__dict__:
            def fit(self, X, y, sample_weight=None):
                return self._fit(X, y, sample_weight)
            fit.__doc__ = FIT_DOCSTRING.format(**cls._fit_doc)
            fit.__qualname__ = f"{cls.__name__}.fit"
            fit.__module__ = cls.__module__
            cls.fit = fit
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_"):
            ESTIMATORS[cls.__name__] = cls

    def _fit(self, X, y, sample_weight=None, summary=None, prior_power=1.0):
        """``fit``: validate, build the estimator's problem, sample (or continue a
        ``warm_start`` fit's chains) and store the fitted attributes.

        ``summary`` and ``prior_power`` are for one shard of a consensus fit
        (:class:`~skbayes_mh.ConsensusMonteCarlo`): the whole data set's summary (the same
        classes and data-scaled prior on every shard) and the prior raised to
        ``1 / n_shards``.
        """
        self._validate_params()
        started = time.perf_counter()
        source = file_state(X)  # a memory-mapped X's file must not change during the fit
        classes = is_classifier(self)
        X, y, weights, own_summary = self._fit_data(X, y, sample_weight, classes)
        summary = own_summary if summary is None else summary
        if classes:
            check_classification_targets(summary["classes"])
            self.classes_ = summary["classes"]
            if self.classes_.size < 2:
                raise ValueError(f"This solver needs samples of at least 2 classes in the "
                                 f"data, but the data contain only one class: "
                                 f"{self.classes_[0]!r}.")
        check_draws_memory(self.n_chains, draws_bound(self.n_draws),
                           warmup_bound(self.n_warmup), self.n_features_in_)
        temperature, schedule = check_temperature(self.temperature, MIN_TEMPERATURE)
        if schedule is not None and schedule[-1][0] > warmup_bound(self.n_warmup):
            raise ValueError(f"The temperature schedule's last change (iteration "
                             f"{schedule[-1][0]}) must come within the warm-up "
                             f"(n_warmup={self.n_warmup!r}"
                             + (f": {AUTO_WARMUP} iterations with a schedule"
                                if is_auto(self.n_warmup) else "")
                             + "): the kept draws sample one posterior, the final "
                             "temperature's.")
        acceptance = choose_acceptance(self.acceptance, X.shape[0])
        family, data, prior = self._problem(X, y, weights, summary, acceptance)
        if source is None:  # not memory-mapped: the rows are in memory already
            data = sparse_layout(data)
        if is_auto(self.acceptance):  # the parameters counted (the family is the same)
            acceptance = choose_acceptance("auto", data.n_rows, family.n_params(data))
        prior.power = float(prior_power)
        name = type(self).__name__
        settings = SamplerSettings(
            proposal=self.proposal, step_size=self.step_size, temperature=temperature,
            temperature_schedule=schedule,
            n_draws=self.n_draws, max_time=self.max_time, n_warmup=self.n_warmup,
            thin=self.thin,
            n_chains=self.n_chains, n_jobs=self.n_jobs, random_state=self.random_state,
            verbose=self.verbose, warm_start=self.warm_start,
            bounds_proposal=self._firefly_proposal, name=name)
        key = continuation_key(self.get_params(deep=False), data, summary)
        previous = ((self._chains, self._chains_key)
                    if self.warm_start and getattr(self, "_chains", None) else None)
        chains = chains_to_continue(previous, key, self.n_draws, name, _USER_FRAME)
        if chains is not None:
            result = continue_posterior(
                chains, data, dataclasses.replace(settings, n_warmup=self.n_warmup_),
                self._span)
        else:
            result = fit_posterior(family, data, prior, acceptance, settings,
                                   passes={"validation": 1.0}, started=started)
        check_file_unchanged(source, name)
        if chains is None:
            self.acceptance_, self.proposal_ = result.acceptance, result.proposal
            if result.prior_scale is not None:
                self.prior_scale_ = result.prior_scale
            self.span_rank_ = None if result.span is None else result.span.rank
            self.control_variates_ = result.control_variates
            self.data_passes_, self.setup_time_ = result.data_passes, result.setup_time
            self.n_warmup_ = result.n_warmup
        if self.warm_start:
            self._chains, self._chains_key, self._span = result.chains, key, result.span
        else:
            self.__dict__.pop("_chains", None)
            self.__dict__.pop("_span", None)
        self.interrupted_ = result.interrupted
        self.thin_, self.n_iter_ = result.thin, result.n_iter
        self.acceptance_rate_, self.step_size_ = result.acceptance_rate, result.step_size
        if result.bright_fraction is not None:
            self.bright_fraction_ = result.bright_fraction
            check_bright_fraction(result.bright_fraction, name, _USER_FRAME)
        self._set_posterior(result.draws, result.stats, family, result.levels,
                            result.test_error, result.stopped, result.checked)
        return self

    def _problem(self, X, y, weights, summary, acceptance):
        """The estimator's own part of ``fit``: its checks of ``y`` (a classifier's
        ``classes_`` is set, with at least two) and its likelihood family, data and prior.

        Parameters
        ----------
        X, y, weights, summary :
            From :meth:`_fit_data` (``summary`` the whole data set's for a consensus
            shard).
        acceptance : AcceptanceTest
            The resolved test (a family's bounds may depend on it).

        Returns
        -------
        family : LinearModel
        data : LinearData
            From :meth:`_linear_data`.
        prior : BuiltinPrior
            From :meth:`_prior`.
        """
        raise NotImplementedError

    def _prior(self, kind, data, summary, n_outputs, prior_scale, intercept_scale,
               locations=None, extra_scales=(), outcome_scale=1.0):
        """A built-in prior (``kind``) with ``prior_scale`` on every weight, ``intercept_scale``
        on each output's intercept, then the extra parameters' ``extra_scales``.

        With ``autoscale`` (as rstanarm's autoscaled priors): weight ``j``'s scale is
        ``prior_scale * outcome_scale / spread_j`` (``prior_scale`` on the standardised
        feature; a constant feature keeps ``prior_scale``), and the intercept's prior is on
        the intercept at the features' means (that of centred features), from ``summary``'s
        ``x_mean``, ``x_std``, ``x_min`` and ``x_max`` (the whole data set's, see
        :meth:`_fit_data`). ``spread_j`` is the feature's sd, or its largest distance from
        its mean divided by :data:`AUTOSCALE_REACH` when that is larger (see there).
        """
        width = data.block
        learned = is_auto(prior_scale)
        if learned:
            if kind & 3 != GAUSSIAN:
                raise ValueError(f"{type(self).__name__}: prior_scale='auto' (a scale the data "
                                 f"choose) needs Gaussian priors on the weights; use "
                                 f"prior='gaussian', or a number.")
            prior_scale = 1.0  # the data's choice multiplies it (_core.fit)
        scales = np.full((n_outputs, width), float(prior_scale))
        means = None
        if self.autoscale:
            spread = autoscale_spread(summary)
            scales[:, :data.n_features] = prior_scale * float(outcome_scale) / spread
            means = summary["x_mean"] if self.fit_intercept else None
        if self.fit_intercept:
            scales[:, -1] = float(intercept_scale)
        scales = np.append(scales.ravel(), extra_scales)
        return BuiltinPrior(kind, scales, locations, means, n_outputs=n_outputs, block=width,
                            intercept=self.fit_intercept, learn_scale=learned)

    def _fit_data(self, X, y, sample_weight=None, classes=False):
        """``X`` and ``y`` for ``fit``, validated without copying them: float64 or float32
        ``X`` (a C-contiguous ``np.memmap`` included) is read where it is (float32 from
        :data:`FLOAT32_IN_PLACE_MIN_BYTES` up; below, a float64 copy), and one parallel
        pass finds the first row with NaN or infinity (an error naming it) and what ``fit``
        needs of ``y`` (see :func:`~skbayes_mh._passes.scan_data`).

        A ``dask.array`` ``X`` (with ``y`` a Dask or NumPy array) stays one: the pass runs
        as Dask tasks, one per row block (see ``skbayes_mh/_dask.py``).

        Returns
        -------
        X, y : the validated arrays (views of the input when it needs no conversion)
        weights : ndarray of shape (n_samples,) or (0,), float64, read-only
            ``sample_weight`` checked (finite, non-negative, not all zero); empty for None.
        summary : dict
            The columns' weighted means and sds (``x_mean``, ``x_std``), and ``classes``
            (with ``classes``) or the weighted ``mean`` and ``std`` of ``y`` and its
            ``min``.
        """
        distributed = is_dask_array(X)
        weights = np.zeros(0)
        if distributed:
            if sample_weight is not None:
                raise ValueError("sample_weight is not supported with a dask.array X yet; "
                                 "fit without it, or on in-memory or memory-mapped arrays.")
            X, y = check_dask_data(X, y, classes)
            self.n_features_in_ = X.shape[1]
        else:
            try:
                X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], order="C",
                                     accept_sparse=("csr", "csc"), ensure_all_finite=False,
                                     y_numeric=not classes)
            except ValueError as error:  # scikit-learn checks y itself: add the row
                values = np.asarray(y)
                if not (str(error).startswith("Input y contains") and values.ndim == 1
                        and values.dtype.kind == "f"):
                    raise
                row = first_bad_row(values, 0, values.shape[0])
                raise ValueError(f"{str(error).rstrip('.')} (first in row {row}).") from None
            if not classes and y.dtype.kind not in "biuf":
                try:
                    y = y.astype(np.float64)
                except (TypeError, ValueError):
                    raise ValueError(f"y must be numeric for a regressor; got values of dtype "
                                     f"{y.dtype} such as {y[0]!r}.") from None
            if sample_weight is not None:
                weights = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                               ensure_non_negative=True)
                if not np.any(weights):  # scikit-learn < 1.9 lets all-zero weights through
                    raise ValueError("Sample weights must contain at least one non-zero "
                                     "number.")
        if sp.issparse(X):
            X = kernel_csr(X)
        elif X.dtype == np.float32 and X.nbytes < FLOAT32_IN_PLACE_MIN_BYTES:
            X = X.astype(np.float64)
        if distributed:
            summary = scan_dask_data(X, y, classes)
        else:
            summary = scan_data(X, y, classes, weights if weights.size else None)
        check_magnitudes(summary, classes)
        return X, y, read_only(weights), summary

    def _count_problem(self, X, y, weights, summary, prior_kind, extra_scales=()):
        """:meth:`_problem` of a count regression: refuse negative counts, and the prior
        ``prior_kind`` on the weights and intercept, then ``extra_scales`` for the family's
        extra parameters."""
        if summary["min"] < 0:
            raise ValueError(f"{type(self).__name__} needs non-negative counts y; the "
                             f"smallest is {summary['min']!r}.")
        data = self._linear_data(X, y, weights)
        prior = self._prior(prior_kind, data, summary, 1, self.prior_scale,
                            self.intercept_prior_scale, extra_scales=extra_scales)
        return self._family(), data, prior

    def _class_indices(self, y, X):
        """``y`` as indices into ``classes_`` (``y`` itself when it already is), in the
        labels' dtype for ``X`` (:func:`_labels_dtype`)."""
        if is_dask_array(y):
            return encode_dask_labels(y, self.classes_, np.float64)
        return encode_labels(y, self.classes_, _labels_dtype(X))

    def _linear_data(self, X, y_model, weights):
        """The data as the kernels read them: ``X`` where it is, ``y`` encoded (float32
        where ``X`` is a float32 array and ``y`` already float32, else float64), the
        sample weights (empty: none)."""
        if is_dask_array(X):
            return LinearData(X, y_model.astype(np.float64), weights,
                              bool(self.fit_intercept))
        if not sp.issparse(X):  # a sparse X is already as the kernels read it (_fit_data)
            X = read_only(np.ascontiguousarray(X))
        dtype = np.float32 if y_model.dtype == np.float32 else np.float64
        y_model = read_only(np.ascontiguousarray(y_model, dtype=_labels_dtype(X, dtype)))
        return LinearData(X, y_model, weights, bool(self.fit_intercept))

    def __getstate__(self):
        """Pickle (and skops) without the chains kept for ``warm_start``: they reference the
        training data. A reloaded estimator's next ``warm_start`` fit starts afresh."""
        state = dict(super().__getstate__())
        state.pop("_chains", None)
        state.pop("_chains_key", None)
        state.pop("_span", None)
        return state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # CSR and CSC X are read as they are (other formats: CSR)
        return tags

    def __sklearn_is_fitted__(self):
        return hasattr(self, "posterior_")

    def _predictive_mean(self, X, transform, relative=False):
        """The posterior-predictive mean of ``transform(eta, draws)`` at each row of ``X``,
        within ``predict_tol`` of the mean over every stored draw (that mean where it is
        None): :func:`~skbayes_mh.linear_model._predictive.predictive_mean`.

        Returns
        -------
        mean : ndarray of shape (n_rows, ...)
        """
        tol = getattr(self, "predict_tol", None)
        if tol is not None and (not isinstance(tol, numbers.Real) or isinstance(tol, bool)
                                or not tol > 0):
            raise ValueError(f"predict_tol must be a positive float or None; got {tol!r}.")
        X, coef, intercept = self._linear_draws(X)
        return predictive_mean(X, coef, intercept, transform, tol, relative=relative,
                               third_derivative=self._family().third_derivative_bound)

    def _predictive(self, X, transform, variance=False):
        """The mean over every stored draw (and with ``variance`` the variance) of
        ``transform(eta)`` for each row of ``X``, in blocks of rows on every core: ``eta``
        is the draws' linear predictors, ``(n_draws, rows, n_outputs)``, with the draws
        contiguous (:func:`linear_predictors`).

        Returns
        -------
        mean : ndarray of shape (n_rows, ...)
        variance : ndarray of shape (n_rows, ...), only with ``variance``
        """
        def moments(eta):
            values = transform(eta)
            return values.mean(axis=0), (values.var(axis=0) if variance else None)

        means, spreads = zip(*self._map_row_blocks(X, moments))
        if not variance:
            return np.concatenate(means)
        return np.concatenate(means), np.concatenate(spreads)

    def _map_row_blocks(self, X, function):
        """``function(eta)`` for each block of rows of ``X`` (:func:`row_blocks`), in order,
        on every core: ``eta`` is the block's linear predictors under every stored draw
        (:func:`linear_predictors`)."""
        X, coef, intercept = self._linear_draws(X)
        draws = OutputMajorDraws(coef, intercept)
        return map_on_cores(lambda X_block: function(draws.linear_predictors(X_block)),
                            row_blocks(X, draws.n_draws, draws.n_outputs))

    def _checked_X(self, X):
        """``X`` for prediction: float64, finite, the fitted number of features; a sparse
        matrix stays sparse (CSR)."""
        return validate_data(self, X, dtype=np.float64, accept_sparse="csr", reset=False)

    def _linear_draws(self, X):
        """``X`` validated, and every stored draw's weights ``(n_chains * n_draws,
        n_outputs, n_features)`` and intercepts ``(n_chains * n_draws, n_outputs)``."""
        check_is_fitted(self)
        X = self._checked_X(X)
        coef = self.posterior_.get("coef", flat=True)
        intercept = self.posterior_.get("intercept", flat=True)
        if coef.ndim == 2:  # a single output
            coef, intercept = coef[:, None, :], intercept[:, None]
        return X, coef, intercept

    def _eta_draws(self, X):
        """``X`` validated and the linear predictors of every stored draw, chain-major:
        ``(n_chains * n_draws, n_rows, n_outputs)``."""
        X, coef, intercept = self._linear_draws(X)
        return X, linear_predictors(X, coef, intercept)

    def _per_draw(self, values):
        """``(n_chains * n_draws, ...)`` as ``(n_chains, n_draws, ...)``."""
        return values.reshape(self.posterior_.n_chains, self.posterior_.n_draws,
                              *values.shape[1:])

    def pointwise_log_likelihood(self, X, y):
        """Each row's log-likelihood under every stored draw (the model's, untempered and
        unweighted), e.g. for PSIS-LOO (:meth:`to_arviz` with ``log_likelihood=True``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_rows, n_features)
            The rows.
        y : array-like of shape (n_rows,)
            Their outcomes: class labels seen in ``fit`` for a classifier, values for a
            regressor.

        Returns
        -------
        ndarray of shape (n_chains, n_draws, n_rows)
        """
        X, eta = self._eta_draws(X)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y should have shape ({X.shape[0]},) to match X; got "
                             f"{y.shape}.")
        return self._per_draw(self._log_likelihood(eta, self._observed(y)))

    def sample_posterior_predictive(self, X, random_state=None):
        """One simulated outcome per stored draw and row of ``X``: the posterior
        predictive distribution as draws.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_rows, n_features)
            The rows.
        random_state : int, RandomState instance or None, default=None
            Seeds the simulation.

        Returns
        -------
        ndarray of shape (n_chains, n_draws, n_rows)
            Class labels for classifiers, values for regressors.
        """
        _, eta = self._eta_draws(X)
        rng = np.random.default_rng(chain_seeds(random_state, 1)[0])
        return self._per_draw(self._simulate(eta, rng))

    def to_arviz(self, X=None, y=None, *, log_likelihood=False, posterior_predictive=False,
                 random_state=None):
        """The posterior as ArviZ data (needs the optional dependency ArviZ).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features) or None, default=None
            Stored in ``constant_data``; needed for ``log_likelihood`` and
            ``posterior_predictive``.
        y : array-like of shape (n_rows,) or None, default=None
            Stored in ``observed_data``; needed for ``log_likelihood``.
        log_likelihood : bool, default=False
            Add each row's log-likelihood per draw (:meth:`pointwise_log_likelihood`), so
            that ``arviz.loo`` works. It holds ``n_chains * n_draws * n_rows`` floats: for
            tall data pass a random subset of rows, or use ``arviz_stats.loo_subsample``
            (docs/estimators.md shows both).
        posterior_predictive : bool, default=False
            Add one simulated outcome per draw and row (:meth:`sample_posterior_predictive`).
        random_state : int, RandomState instance or None, default=None
            Seeds the posterior-predictive simulation.

        Returns
        -------
        arviz.InferenceData
            Groups ``posterior``, ``sample_stats`` and, as requested, ``observed_data``,
            ``constant_data``, ``log_likelihood``, ``posterior_predictive`` (variable ``y``,
            dimension ``row``).
        """
        check_is_fitted(self)
        if (log_likelihood and (X is None or y is None)) or (posterior_predictive
                                                            and X is None):
            raise ValueError("to_arviz needs X and y for log_likelihood=True, and X for "
                             "posterior_predictive=True.")
        groups = {}
        if X is not None:
            X_checked = self._checked_X(X)
            if sp.issparse(X_checked):
                raise TypeError("to_arviz stores X as constant data, which ArviZ keeps dense: "
                                "pass X=None with a sparse X (or X.toarray() if it fits in "
                                "memory).")
            groups["constant_data"] = {"X": X_checked}
        if y is not None:
            groups["observed_data"] = {"y": np.asarray(y)}
        if log_likelihood:
            groups["log_likelihood"] = {"y": self.pointwise_log_likelihood(X, y)}
        if posterior_predictive:
            groups["posterior_predictive"] = {"y": self.sample_posterior_predictive(
                X, random_state)}
        return self.posterior_.to_arviz(**groups)

    # --- the fitted posterior, through the likelihood family ---------------------------------

    def _family(self, acceptance=None):
        """The likelihood family (:mod:`skbayes_mh.models`) of this estimator's settings (and
        fitted classes); ``acceptance`` where the family's bounds depend on it."""
        raise NotImplementedError

    def _set_posterior(self, draws, stats, family=None, levels=None, test_error=None,
                       stopped=None, checked=None):
        """``posterior_``, ``diagnostics_`` and the posterior means ``coef_``, ``intercept_``
        and ``<name>_`` of every other parameter, from draws of theta ``(n_chains, n_draws,
        d)`` laid out as ``family`` (the one that was sampled; None: :meth:`_family`'s)
        declares; ``levels``: the chains' log posterior at evenly spaced draws (the check
        that they sit in one mode); ``test_error``: an approximate test's estimated error;
        ``checked``: the draws the convergence warning judges (a span fit's sampled
        coordinates: :attr:`~skbayes_mh._core.fit.FitResult.checked`)."""
        family = self._family() if family is None else family
        variables = family.posterior_variables(draws, self.n_features_in_, self.fit_intercept)
        self.posterior_ = Posterior(variables, stats)
        self.diagnostics_ = diagnose(self.posterior_, type(self).__name__, _USER_FRAME + 1,
                                     levels, test_error, coords=self._parameter_coords(),
                                     stopped=stopped, max_time=getattr(self, "max_time", None),
                                     checked=checked)
        coef = variables["coef"].mean(axis=(0, 1))
        if family.n_blocks > 1:
            intercept = variables["intercept"].mean(axis=(0, 1))
        elif is_classifier(self):  # scikit-learn's binary layout: one row of weights
            coef, intercept = coef[None, :], np.array([variables["intercept"].mean()])
        else:
            intercept = float(variables["intercept"].mean())
        self.coef_, self.intercept_ = coef, intercept
        for name in self._other_parameters():
            setattr(self, f"{name}_", float(variables[name].mean()))

    def summary(self, *, quantiles=(0.05, 0.5, 0.95), as_frame="auto"):
        """The posterior of every parameter at a glance, labelled by feature (and class).

        Parameters
        ----------
        quantiles : sequence of float, default=(0.05, 0.5, 0.95)
            Posterior quantiles to report (a column each, named in percent): the default's
            outer two bound a 90% central credible interval.
        as_frame : "auto" or bool, default="auto"
            ``True``: a ``pandas.DataFrame`` (pandas is needed); ``False``: a
            :class:`~skbayes_mh.posterior.PosteriorSummary`, a plain table that prints
            itself; ``"auto"``: a DataFrame when pandas can be imported.

        Returns
        -------
        PosteriorSummary or pandas.DataFrame
            One row per parameter: ``coef[feature]`` (``coef[class, feature]`` for several
            classes), ``intercept`` (``intercept[class]``) and the family's own (``scale``,
            ``dispersion``), without those the fit holds fixed (the intercept with
            ``fit_intercept=False``, a given ``scale``), named by ``feature_names_in_``
            where ``X`` had names and ``x0``, ``x1``, ... otherwise. Columns: ``mean``,
            ``sd``, the quantiles, ``mcse_mean`` and ``mcse_sd`` (Monte Carlo standard
            errors of the mean and sd), ``ess_bulk``, ``ess_tail`` and ``r_hat`` (those of
            ``diagnostics_``).
        """
        check_is_fitted(self)
        # A parameter the fit holds fixed (the intercept without one, a given ``scale``)
        # is the same in every draw: no row.
        fixed = [name for name, draws in self.posterior_.draws.items()
                 if draws.size and np.ptp(draws) == 0]
        return self.posterior_.summary(
            quantiles=quantiles, as_frame=as_frame, coords=self._parameter_coords(),
            exclude=fixed, convergence=self.diagnostics_)

    def _parameter_coords(self):
        """The labels of ``coef``'s and ``intercept``'s axes (:meth:`Posterior.summary`'s
        ``coords``): the features (``feature_names_in_``, or ``x0``, ``x1``, ...) and, with
        several outputs, the classes."""
        features = getattr(self, "feature_names_in_", None)
        if features is None:
            features = [f"x{j}" for j in range(self.n_features_in_)]
        several = self.posterior_["coef"].ndim == 4  # (chain, draw, class, feature)
        classes = list(self.classes_) if several and hasattr(self, "classes_") else None
        return {"coef": [classes, features] if several else [features],
                "intercept": [classes]}

    def _other_parameters(self):
        """Names of the posterior variables beyond ``coef`` and ``intercept``."""
        return [name for name in self.posterior_.draws if name not in ("coef", "intercept")]

    def _theta_draws(self):
        """Draws of theta ``(n_chains, n_draws, d)``: the inverse of :meth:`_set_posterior`."""
        return self._family().theta_draws(self.posterior_.draws, self.fit_intercept)

    def _parameter_draws(self, draws=None):
        """Every draw (chains merged) of each parameter beyond ``coef`` and ``intercept``;
        with ``draws`` (flat indices) those draws only."""
        every = {name: self.posterior_.get(name, flat=True) for name in self._other_parameters()}
        return every if draws is None else {name: value[draws] for name, value in every.items()}

    def _observed(self, y):
        """``y`` as the family reads it: indices into ``classes_``, or real values."""
        if self._family().outcome == "classes":
            return self._class_observed(y)
        return np.asarray(y, dtype=np.float64)

    def _log_likelihood(self, eta, y):
        return self._family().log_likelihood(eta, self._parameter_draws(), y)

    def _simulate(self, eta, rng):
        family = self._family()
        values = family.simulate(eta, self._parameter_draws(), rng)
        return self.classes_[values] if family.outcome == "classes" else values

    def _probabilities(self, eta, draws=None):
        """Each draw's class probabilities under its linear predictors ``eta``: every draw's,
        or with ``draws`` (flat indices) those draws'."""
        return self._family().class_probabilities(eta, self._parameter_draws(draws))

    def _mixture_quantiles(self, eta, quantiles):
        return self._family().mixture_quantiles(eta, self._parameter_draws(), quantiles)

    def _class_observed(self, y):
        """Labels ``y`` as indices into ``classes_`` (an error naming labels not seen in
        ``fit``)."""
        y = np.asarray(y)
        index = np.clip(np.searchsorted(self.classes_, y), 0, self.classes_.size - 1)
        unseen = self.classes_[index] != y
        if np.any(unseen):
            raise ValueError(f"y has labels not seen in fit: {np.unique(y[unseen])[:5]!r}; "
                             f"classes_ is {self.classes_!r}.")
        return index


class PredictiveClassifierMixin:
    """``predict_proba`` (and its log, its draws) and ``predict`` for a classifier, from its
    family's ``class_probabilities``."""

    def predict_proba(self, X):
        """Posterior-predictive probabilities: the mean over the stored draws of each
        draw's class probabilities (deterministic), within ``predict_tol`` (every draw with
        ``predict_tol=None``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order.
        """
        return self._predictive_mean(X, self._probabilities)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba` (``-inf`` where a probability is 0).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """The class with the largest posterior-predictive probability.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def predict_proba_draws(self, X):
        """Each stored draw's class probabilities (their mean over draws is
        :meth:`predict_proba`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        ndarray of shape (n_chains, n_draws, n_samples, n_classes)
            Columns in ``classes_`` order.
        """
        _, eta = self._eta_draws(X)
        return self._per_draw(self._probabilities(eta))


class PoissonDevianceScoreMixin:
    """``score`` for a count regressor: :math:`D^2`, the fraction of Poisson deviance that
    the posterior-predictive mean explains, as scikit-learn's ``PoissonRegressor`` scores
    (its mixin's :math:`R^2` would make ``cross_val_score`` and ``GridSearchCV`` rank the
    two on different scales). Put it before ``RegressorMixin`` among the bases."""

    def score(self, X, y, sample_weight=None):
        """:math:`D^2`: one minus the ratio of the Poisson deviance of ``predict(X)`` to that
        of the (weighted) mean count, 1 at best and 0 for the mean (``sklearn.metrics.
        d2_tweedie_score`` with ``power=1``; the Poisson deviance scores any prediction of
        a count's mean, so the negative binomial's too).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows.
        y : array-like of shape (n_samples,)
            Their counts, non-negative.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows.

        Returns
        -------
        score : float
        """
        return d2_tweedie_score(y, self.predict(X), sample_weight=sample_weight, power=1)


class PredictiveRegressorMixin:
    """``predict`` (mean and sd) and ``predict_quantiles`` for a regressor, from its
    family's ``mean``, ``noise_variance`` and ``mixture_quantiles``."""

    def predict(self, X, return_std=False):
        """Posterior-predictive mean: the mean over the stored draws of each draw's mean
        outcome (deterministic), within ``predict_tol`` (relative above 1; every draw with
        ``predict_tol=None`` or ``return_std``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows to predict.
        return_std : bool, default=False
            Also return the posterior-predictive standard deviation of a new outcome:
            ``sqrt(E[noise variance] + Var[mean])`` over every stored draw (the family's
            noise plus the spread of the mean; the class description gives the noise).
            Infinite where the noise has no variance.

        Returns
        -------
        y_mean : ndarray of shape (n_samples,)
        y_std : ndarray of shape (n_samples,), only with ``return_std``
        """
        check_is_fitted(self)
        family = self._family()
        if not return_std:
            return self._predictive_mean(
                X, lambda eta, draws: family.mean(eta, self._parameter_draws(draws)),
                relative=True)
        variables = self._parameter_draws()
        mean, spread = self._predictive(X, lambda eta: family.mean(eta, variables),
                                        variance=True)
        noise = self._predictive(X, lambda eta: family.noise_variance(eta, variables))
        return mean, np.sqrt(spread + noise)

    def predict_quantiles(self, X, quantiles=(0.05, 0.5, 0.95)):
        """Quantiles of the posterior predictive distribution of a new outcome at each row
        (noise included): of the equal mixture over the stored draws of each draw's noise
        distribution. Deterministic; e.g. ``quantiles=(0.05, 0.95)`` is a 90% predictive
        interval.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows to predict.
        quantiles : array-like of shape (n_quantiles,), default=(0.05, 0.5, 0.95)
            Each in (0, 1).

        Returns
        -------
        ndarray of shape (n_samples, n_quantiles)
        """
        quantiles = check_quantiles(quantiles)
        return np.concatenate(self._map_row_blocks(
            X, lambda eta: self._mixture_quantiles(eta, quantiles)))

"""The shell every linear-model estimator shares: its common parameters and ``fit`` as
validate (``_fit_data``, ``_inputs.py``) -> the estimator's problem (``_problem``: y
encoded, family, data, prior) -> the functional core
(:func:`skbayes_mh._core.fit_posterior`, which makes the ``"auto"`` choices) -> the fitted
attributes. What is computed from the stored draws (predictions, summary, ArviZ) is
``_posterior.py``'s. Each estimator file keeps its own parameters, documentation, problem
and predictions."""
import dataclasses
import numbers
import time

import numpy as np

from sklearn.base import BaseEstimator, is_classifier
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets

from .._core import SamplerSettings, continue_posterior, fit_posterior
from .._core.auto import AUTO_WARMUP, draws_bound, is_auto, warmup_bound
from .._core.continuation import chains_to_continue, continuation_key
from .._core.convergence import check_bright_fraction
from .._params import StoredParameters
from .._validation import (MIN_TEMPERATURE, check_draws_memory, check_file_unchanged,
                           file_state)
from ..acceptance import ACCEPTANCE_TESTS, AcceptanceTest, resolve_acceptance
from ..proposals import PROPOSALS, Proposal
from ..sampling._schedule import check_temperature
from .._dask import is_dask_array
from ._docs import EXPOSURE_PARAMETER, FIT_DOCSTRING
from ._groups import GroupTerms, check_group_effects
from ._inputs import class_indices, exposure_offset, fit_data, linear_data, sparse_layout
from ._posterior import _USER_FRAME, FittedPosterior
from ._priors import estimator_prior

#: Every public estimator, by class name: a class defined in a file of ``linear_model/``
#: registers itself (``linear_model/__init__.py`` imports every such file), and the package's
#: names, the persistence whitelist and the tests read this.
ESTIMATORS = {}


class LinearMHEstimator(StoredParameters, FittedPosterior, BaseEstimator):
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
        "group_effects": [list, tuple, dict, str, Interval(numbers.Integral, None, None,
                                                           closed="neither"), None],
        "group_correlation": ["boolean"],
    }

    #: The proposal ``proposal="auto"`` gives Firefly (which has the model's gradient).
    _firefly_proposal = "mala"

    #: Whether ``fit`` takes each row's ``exposure`` (an offset ``log(exposure)`` in the
    #: linear predictor): the log-link count regressions.
    _takes_exposure = False

    def __init_subclass__(cls, **kwargs):
        # fit is the shell's, documented for this estimator; set before scikit-learn's
        # __init_subclass__ reads its signature (set_fit_request for sample_weight and
        # exposure).
        if "_fit_doc" in cls.__dict__:
            if cls._takes_exposure:
                def fit(self, X, y, sample_weight=None, exposure=None):
                    return self._fit(X, y, sample_weight, exposure=exposure)
            else:
                def fit(self, X, y, sample_weight=None):
                    return self._fit(X, y, sample_weight)
            exposure = EXPOSURE_PARAMETER if cls._takes_exposure else ""
            fit.__doc__ = FIT_DOCSTRING.format(exposure=exposure, **cls._fit_doc)
            fit.__qualname__ = f"{cls.__name__}.fit"
            fit.__module__ = cls.__module__
            cls.fit = fit
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_"):
            ESTIMATORS[cls.__name__] = cls

    def _fit(self, X, y, sample_weight=None, summary=None, prior_power=1.0, exposure=None):
        """``fit``: validate, build the estimator's problem, sample (or continue a
        ``warm_start`` fit's chains) and store the fitted attributes. ``exposure``: each
        row's, for the estimators that take one (``_takes_exposure``).

        ``summary`` and ``prior_power`` are for one shard of a consensus fit
        (:class:`~skbayes_mh.ConsensusMonteCarlo`): the whole data set's summary (the same
        classes and data-scaled prior on every shard) and the prior raised to
        ``1 / n_shards``.
        """
        self._validate_params()
        started = time.perf_counter()
        source = file_state(X)  # a memory-mapped X's file must not change during the fit
        classes = is_classifier(self)
        terms, X, labels = self._group_split(X, summary)
        X, y, weights, own_summary = self._fit_data(X, y, sample_weight, classes)
        offset = exposure_offset(exposure, X)
        summary = own_summary if summary is None else summary
        if terms is not None:
            X, summary = self._group_design(terms, X, labels, summary)
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
        # A test the user chose; "auto" is chosen in the core from the rows and parameters
        # (never a test on the model's bounds: the family does not depend on it).
        acceptance = None if is_auto(self.acceptance) else resolve_acceptance(self.acceptance)
        family, data, prior = self._problem(X, y, weights, summary, acceptance)
        if terms is not None:
            prior = terms.grouped_prior(prior, self._n_numeric)
        if offset is not None:
            data = dataclasses.replace(data, offset=offset)
        if source is None:  # not memory-mapped: the rows are in memory already
            data = sparse_layout(data)
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
                chains, data, settings, self._span)
        else:
            result = fit_posterior(family, data, prior, acceptance or "auto", settings,
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
                            result.test_error, result.stopped, result.checked, result.known)
        return self

    def _group_split(self, X, summary):
        """With ``group_effects`` (the estimators of one linear predictor have it): the
        grouping (:class:`~skbayes_mh.linear_model._groups.GroupTerms`), the columns the
        model reads as features and each grouping column's labels; else ``(None, X,
        None)``, and a previous fit's grouping is forgotten."""
        group_effects = check_group_effects(getattr(self, "group_effects", None))
        if group_effects is None:
            for name in ("_group_terms", "_n_numeric", "group_levels_"):
                self.__dict__.pop(name, None)
            return None, X, None
        if summary is not None:
            raise ValueError("group_effects is not supported in a consensus fit (each shard "
                             "would see other groups).")
        if is_dask_array(X):
            raise TypeError("group_effects needs X in memory (an array or a DataFrame); got "
                            "a dask.array.")
        terms = GroupTerms(group_effects, X,
                           correlated=getattr(self, "group_correlation", True))
        return (terms, *terms.split(X))

    def _group_design(self, terms, X, labels, summary):
        """The model's ``X`` with the effects' columns beside the numeric ``X`` and the
        summary extended to them; sets the fitted grouping and ``n_features_in_`` (every
        column of ``fit``'s ``X``, the grouping columns included)."""
        terms.fit_levels(labels)
        self._n_numeric = X.shape[1]
        self.n_features_in_ = terms.n_columns
        if terms.column_names is not None:
            self.feature_names_in_ = np.asarray(terms.column_names, dtype=object)
        else:
            self.__dict__.pop("feature_names_in_", None)
        self._group_terms = terms
        self.group_levels_ = {name: levels for name, levels in zip(terms.labels,
                                                                   terms.levels)}
        return terms.augmented(X, labels), terms.extended_summary(summary)

    def _problem(self, X, y, weights, summary, acceptance):
        """The estimator's own part of ``fit``: its checks of ``y`` (a classifier's
        ``classes_`` is set, with at least two) and its likelihood family, data and prior.

        Parameters
        ----------
        X, y, weights, summary :
            From :meth:`_fit_data` (``summary`` the whole data set's for a consensus
            shard).
        acceptance : AcceptanceTest or None
            The test the user chose (a family's bounds may depend on it); None for
            ``"auto"``, which never chooses a test on the model's bounds.

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
        """:func:`~skbayes_mh.linear_model._priors.estimator_prior` of this estimator."""
        return estimator_prior(self, kind, data, summary, n_outputs, prior_scale,
                               intercept_scale, locations, extra_scales, outcome_scale)

    def _fit_data(self, X, y, sample_weight=None, classes=False):
        """:func:`~skbayes_mh.linear_model._inputs.fit_data` of this estimator (it sets
        ``n_features_in_`` and ``feature_names_in_``)."""
        return fit_data(self, X, y, sample_weight, classes)

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
        """:func:`~skbayes_mh.linear_model._inputs.class_indices` into ``classes_``."""
        return class_indices(self, y, X)

    def _linear_data(self, X, y_model, weights):
        """:func:`~skbayes_mh.linear_model._inputs.linear_data` with ``fit_intercept``."""
        return linear_data(X, y_model, weights, self.fit_intercept)

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

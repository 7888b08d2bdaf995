"""The fitted side every estimator shares, and ``ConsensusMonteCarlo``'s combined estimator
with it: the posterior and its diagnostics from a fit's draws (``_set_posterior``), the
posterior-predictive mean within ``predict_tol``, each row's log-likelihood and simulated
outcomes per draw, ArviZ data, the summary table, and the prediction mixins of
classifiers and regressors."""
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.metrics import d2_tweedie_score
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from .._core.convergence import diagnose
from .._docstrings import with_sections
from .._passes import map_on_cores
from ..posterior import Posterior, check_quantiles
from ..sampling import chain_seeds
from ._predictive import (SINGLE_PRECISION_MIN_TOL, OutputMajorDraws, by_row_blocks,
                          linear_predictors, predictive_mean, row_blocks)

#: Frames between a warning raised in ``fit``'s helpers and the user's call of ``fit``:
#: helper -> ``_fit`` -> the estimator's ``fit`` -> the caller.
_USER_FRAME = 4


class FittedPosterior:
    """The stored posterior's side of an estimator: ``posterior_`` and the fitted means set
    from draws, and everything computed from the stored draws. The estimator provides
    ``_family()`` (its likelihood family), ``n_features_in_``, ``fit_intercept`` and, for
    a classifier, ``classes_``."""

    def __sklearn_is_fitted__(self):
        return hasattr(self, "posterior_")

    def _predictive_mean(self, X, transform, relative=False, curvature=None):
        """The posterior-predictive mean of ``transform(eta, draws)`` at each row of ``X``,
        within ``predict_tol`` of the mean over every stored draw (that mean where it is
        None): :func:`~skbayes_mh.linear_model._predictive.predictive_mean`, given the
        family's method named ``curvature`` (``"mean_curvature"`` or
        ``"inverse_link_curvature"``) where it has one, and its third derivatives (the
        same name with ``third_derivative``) and fourth derivative's bound where it has
        them.

        Returns
        -------
        mean : ndarray of shape (n_rows, ...)
        """
        tol = getattr(self, "predict_tol", None)
        if tol is not None and (not isinstance(tol, numbers.Real) or isinstance(tol, bool)
                                or not tol > 0):
            raise ValueError(f"predict_tol must be a positive float or None; got {tol!r}.")
        X, coef, intercept = self._linear_draws(X)
        family = self._family()
        third = curvature.replace("curvature", "third_derivative") if curvature else None
        single = (tol is not None and tol >= SINGLE_PRECISION_MIN_TOL
                  and curvature == "inverse_link_curvature"
                  and getattr(family, "single_precision_probabilities", False))
        return predictive_mean(X, coef, intercept, transform, tol, relative=relative,
                               third_derivative=family.third_derivative_bound,
                               curvature=getattr(family, curvature) if curvature else None,
                               third=getattr(family, third) if third else None,
                               fourth_derivative=family.fourth_derivative_bound,
                               single=single)

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
        matrix stays sparse (CSR). With group-level effects, the model's ``X``: the numeric
        columns, the effects' columns and each term's unseen-level column (what
        :meth:`_coef_draws` multiplies)."""
        terms = getattr(self, "_group_terms", None)
        if terms is None:
            return validate_data(self, X, dtype=np.float64, accept_sparse="csr", reset=False)
        numeric, labels = terms.split(X)
        numeric = check_array(numeric, dtype=np.float64, accept_sparse="csr")
        return terms.augmented(numeric, labels, new_columns=True)

    def _coef_draws(self, flat=True):
        """Every stored draw's weights as :meth:`_checked_X`'s columns multiply them:
        ``(n_chains * n_draws, ...)`` with ``flat``, else ``(n_chains, n_draws, ...)``.
        With group-level effects: the population-level weights, the effects, zeros for
        the sds' and correlations' columns and one new group's effect per term
        (``_groups.py``)."""
        get = ((lambda name: self.posterior_.get(name, flat=True)) if flat
               else (lambda name: self.posterior_[name]))
        terms = getattr(self, "_group_terms", None)
        if terms is None:
            return get("coef")
        sd = get("group_sd")
        correlations = (get("group_correlation") if terms.n_correlations
                        else np.zeros(sd.shape[:-1] + (0,)))
        n_draws = int(np.prod(sd.shape[:-1]))
        new = terms.new_group_effects(sd.reshape(n_draws, -1), correlations.reshape(
            n_draws, -1)).reshape(sd.shape)
        return np.concatenate([get("coef"), get("group_effects"), np.zeros(sd.shape),
                               np.zeros(correlations.shape), new], axis=-1)

    def _n_model_features(self):
        """The columns of the model's ``X`` in ``fit`` (with group-level effects, theirs
        and the sds' included)."""
        terms = getattr(self, "_group_terms", None)
        if terms is None:
            return self.n_features_in_
        return self._n_numeric + terms.n_effects + terms.n_terms + terms.n_correlations

    def _linear_draws(self, X):
        """``X`` validated, and every stored draw's weights ``(n_chains * n_draws,
        n_outputs, n_features)`` and intercepts ``(n_chains * n_draws, n_outputs)``."""
        check_is_fitted(self)
        X = self._checked_X(X)
        coef = self._coef_draws()
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
        groups, axes = {}, self._arviz_axes()
        if X is not None:
            groups["constant_data"] = self._constant_data(X, axes)
        if y is not None:
            groups["observed_data"] = {"y": np.asarray(y)}
        if log_likelihood:
            groups["log_likelihood"] = {"y": self.pointwise_log_likelihood(X, y)}
        if posterior_predictive:
            groups["posterior_predictive"] = {"y": self.sample_posterior_predictive(
                X, random_state)}
        return self.posterior_.to_arviz(**axes, **groups)

    def _constant_data(self, X, axes):
        """:meth:`to_arviz`'s ``constant_data``: ``X`` checked (dimensions ``row`` and
        ``feature``); with group-level effects its numeric columns (``row`` and
        ``numeric_feature``, added to ``axes``) and each grouping column's labels as
        strings, named by the column (dimension ``row``)."""
        terms = getattr(self, "_group_terms", None)
        if terms is None:
            X_checked = self._checked_X(X)
            if sp.issparse(X_checked):
                raise TypeError("to_arviz stores X as constant data, which ArviZ keeps "
                                "dense: pass X=None with a sparse X (or X.toarray() if it "
                                "fits in memory).")
            return {"X": X_checked}
        numeric, labels = terms.split(X)
        data = {"X": check_array(numeric, dtype=np.float64)}
        axes["dims"]["X"] = ["row", "numeric_feature"]
        for name, column in zip(terms.labels, labels):
            name = name if name != "X" else "group X"  # a grouping column named X
            data[name] = np.asarray(column).astype(str)
            axes["dims"][name] = ["row"]
        return data

    # --- the fitted posterior, through the likelihood family ---------------------------------

    def _family(self, acceptance=None):
        """The likelihood family (:mod:`skbayes_mh.models`) of this estimator's settings (and
        fitted classes); ``acceptance`` where the family's bounds depend on it."""
        raise NotImplementedError

    def _set_posterior(self, draws, stats, family=None, levels=None, test_error=None,
                       stopped=None, checked=None, known=None):
        """``posterior_``, ``diagnostics_`` and the posterior means ``coef_``, ``intercept_``
        and ``<name>_`` of every other parameter, from draws of theta ``(n_chains, n_draws,
        d)`` laid out as ``family`` (the one that was sampled; None: :meth:`_family`'s)
        declares; ``levels``: the chains' log posterior at evenly spaced draws (the check
        that they sit in one mode); ``test_error``: an approximate test's estimated error;
        ``checked``: the draws the convergence warning judges (a span fit's sampled
        coordinates: :attr:`~skbayes_mh._core.fit.FitResult.checked`); ``known``: the
        statistics the fit's last round computed (:attr:`~skbayes_mh._core.fit.FitResult.
        known`), reused where they are of the same draws."""
        family = self._family() if family is None else family
        variables = family.posterior_variables(draws, self._n_model_features(),
                                               self.fit_intercept)
        variables = self._grouped_variables(variables)
        self.posterior_ = Posterior(variables, stats)
        self.diagnostics_ = diagnose(self.posterior_, type(self).__name__, _USER_FRAME + 1,
                                     levels, test_error, coords=self._parameter_coords(),
                                     stopped=stopped, max_time=getattr(self, "max_time", None),
                                     checked=checked, known=known)
        coef = variables["coef"].mean(axis=(0, 1))
        if family.n_blocks > 1:
            intercept = variables["intercept"].mean(axis=(0, 1))
        elif is_classifier(self):  # scikit-learn's binary layout: one row of weights
            coef, intercept = coef[None, :], np.array([variables["intercept"].mean()])
        else:
            intercept = float(variables["intercept"].mean())
        self.coef_, self.intercept_ = coef, intercept
        for name in ("group_effects", "group_sd", "group_correlation"):
            if name not in self.posterior_.draws:  # a previous fit's, with other settings
                self.__dict__.pop(f"{name}_", None)
        for name in self._other_parameters():  # a float, or an array for a vector
            mean = variables[name].mean(axis=(0, 1))
            setattr(self, f"{name}_", float(mean) if mean.ndim == 0 else mean)

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
        coords = {"coef": [classes, features] if several else [features],
                  "intercept": [classes]}
        terms = getattr(self, "_group_terms", None)
        if terms is not None:
            numeric = [features[j] for j in terms.numeric]
            coords["coef"] = [numeric]
            coords["group_effects"] = [terms.effect_names(numeric)]
            coords["group_sd"] = [terms.term_names(numeric)]
            if terms.n_correlations:
                coords["group_correlation"] = [terms.correlation_names(numeric)]
        return coords

    def _arviz_axes(self):
        """:meth:`to_arviz`'s ``dims`` and ``coords``: each labelled axis of
        :meth:`_parameter_coords` named (``feature``, ``class``, ``group_effect``,
        ``group_term``; with group-level effects ``coef``'s axis is ``numeric_feature``,
        since ``X``'s ``feature`` holds the grouping columns too)."""
        labels = self._parameter_coords()
        grouped = getattr(self, "_group_terms", None) is not None
        feature = "numeric_feature" if grouped else "feature"
        names = {"coef": ["class", feature] if len(labels["coef"]) == 2 else [feature],
                 "intercept": ["class"], "group_effects": ["group_effect"],
                 "group_sd": ["group_term"], "group_correlation": ["group_term_pair"]}
        dims, coords = {}, {}
        for variable, axes in labels.items():
            if variable not in self.posterior_.draws:
                continue
            shape = self.posterior_[variable].shape[2:]
            named = [(dim, axis) for dim, axis, _ in zip(names[variable], axes, shape)
                     if axis is not None]
            if len(named) != len(shape):
                continue  # an axis without labels (one output's intercept): ArviZ's names
            dims[variable] = [dim for dim, _ in named]
            coords.update({dim: list(axis) for dim, axis in named})
        return {"dims": dims, "coords": coords}

    def _grouped_variables(self, variables):
        """``variables`` with group-level effects' columns taken out of ``coef``: the
        effects as ``group_effects``, their sds as ``group_sd`` (from the sampled logs) and
        a correlated grouping's correlations as ``group_correlation``."""
        terms = getattr(self, "_group_terms", None)
        if terms is None:
            return variables
        n, E, T = self._n_numeric, terms.n_effects, terms.n_terms
        coef = variables.pop("coef")
        grouped = {"coef": coef[..., :n], "intercept": variables.pop("intercept"),
                   "group_effects": coef[..., n:n + E],
                   "group_sd": np.exp(coef[..., n + E:n + E + T])}
        if terms.n_correlations:
            grouped["group_correlation"] = terms.correlations_from(
                coef[..., n + E + T:n + E + T + terms.n_correlations])
        grouped.update(variables)
        return grouped

    def _other_parameters(self):
        """Names of the posterior variables beyond ``coef`` and ``intercept``."""
        return [name for name in self.posterior_.draws if name not in ("coef", "intercept")]

    def _theta_draws(self):
        """Draws of theta ``(n_chains, n_draws, d)``: the inverse of :meth:`_set_posterior`."""
        variables = dict(self.posterior_.draws)
        if getattr(self, "_group_terms", None) is not None:
            terms = self._group_terms
            correlations = variables.pop("group_correlation", None)
            variables["coef"] = np.concatenate(
                [variables["coef"], variables.pop("group_effects"),
                 np.log(variables.pop("group_sd"))]
                + ([terms.unconstrained_from(correlations)] if correlations is not None
                   else []), axis=-1)
        return self._family().theta_draws(variables, self.fit_intercept)

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


#: The ``Parameters`` section of a prediction from the rows alone.
_ROWS_TO_PREDICT = """\
Parameters
----------
X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
    The rows to predict. A ``dask.array`` is read one row block at a time, and an
    ``np.memmap`` above 16 MiB in slices of that size: the result is a NumPy array.
"""
#: The sections of a classifier's per-row class probabilities (and their logs).
_CLASS_COLUMNS = _ROWS_TO_PREDICT + """
Returns
-------
ndarray of shape (n_samples, n_classes)
    Columns in ``classes_`` order.
"""


class PredictiveClassifierMixin:
    """``predict_proba`` (and its log, its draws) and ``predict`` for a classifier, from its
    family's ``class_probabilities``."""

    @with_sections(_CLASS_COLUMNS)
    @by_row_blocks
    def predict_proba(self, X):
        """Posterior-predictive probabilities: the mean over the stored draws of each
        draw's class probabilities (deterministic), within ``predict_tol`` (every draw with
        ``predict_tol=None``)."""
        check_is_fitted(self)
        family = self._family()
        if getattr(family, "inverse_link_curvature", None) is not None:
            # Two classes: the mean of F(eta), the second class's probability, alone (one
            # contiguous array a draw), the first's its complement.
            positive = self._predictive_mean(
                X, lambda eta, draws: family.inverse_link(eta[..., 0]),
                curvature="inverse_link_curvature")
            return np.column_stack([1.0 - positive, positive])
        return self._predictive_mean(X, self._probabilities)

    @with_sections(_CLASS_COLUMNS)
    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba` (``-inf`` where a probability is 0)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @with_sections(_ROWS_TO_PREDICT + """
Returns
-------
ndarray of shape (n_samples,)
    Labels from ``classes_``.
""")
    def predict(self, X):
        """The class with the largest posterior-predictive probability."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    @with_sections(_ROWS_TO_PREDICT + """
Returns
-------
ndarray of shape (n_chains, n_draws, n_samples, n_classes)
    Columns in ``classes_`` order.
""")
    def predict_proba_draws(self, X):
        """Each stored draw's class probabilities (their mean over draws is
        :meth:`predict_proba`)."""
        _, eta = self._eta_draws(X)
        return self._per_draw(self._probabilities(eta))


class PoissonDevianceScoreMixin:
    """``score`` for a count regressor: :math:`D^2`, the fraction of Poisson deviance that
    the posterior-predictive mean explains, as scikit-learn's ``PoissonRegressor`` scores
    (its mixin's :math:`R^2` would make ``cross_val_score`` and ``GridSearchCV`` rank the
    two on different scales). Put it before ``RegressorMixin`` among the bases."""

    #: The Tweedie power of the deviance: 1, Poisson's.
    _deviance_power = 1

    def score(self, X, y, sample_weight=None):
        """:math:`D^2`: one minus the ratio of the deviance of ``predict(X)`` to that of the
        (weighted) mean outcome, 1 at best and 0 for the mean (``sklearn.metrics.
        d2_tweedie_score``): the Poisson deviance (``power=1``) for counts, which scores any
        prediction of a count's mean, so the negative binomial's too; the Gamma deviance
        (``power=2``) for positive values.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows.
        y : array-like of shape (n_samples,)
            Their outcomes: counts, non-negative, or positive values.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows.

        Returns
        -------
        score : float
        """
        return d2_tweedie_score(y, self.predict(X), sample_weight=sample_weight,
                                power=self._deviance_power)


class GammaDevianceScoreMixin(PoissonDevianceScoreMixin):
    """``score`` for a regressor of positive values: :math:`D^2` of the Gamma deviance, as
    scikit-learn's ``GammaRegressor`` scores. Put it before ``RegressorMixin``."""

    #: The Tweedie power of the deviance: 2, the Gamma's.
    _deviance_power = 2


class PredictiveRegressorMixin:
    """``predict`` (mean and sd) and ``predict_quantiles`` for a regressor, from its
    family's ``mean``, ``noise_variance`` and ``mixture_quantiles``."""

    @by_row_blocks
    def predict(self, X, return_std=False):
        """Posterior-predictive mean: the mean over the stored draws of each draw's mean
        outcome (deterministic), within ``predict_tol`` (relative above 1; every draw with
        ``predict_tol=None`` or ``return_std``).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            The rows to predict (a ``dask.array`` one row block at a time, an
            ``np.memmap`` above 16 MiB in slices of that size).
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
                relative=True, curvature="mean_curvature")
        variables = self._parameter_draws()
        mean, spread = self._predictive(X, lambda eta: family.mean(eta, variables),
                                        variance=True)
        noise = self._predictive(X, lambda eta: family.noise_variance(eta, variables))
        return mean, np.sqrt(spread + noise)

    @by_row_blocks
    def predict_quantiles(self, X, quantiles=(0.05, 0.5, 0.95)):
        """Quantiles of the posterior predictive distribution of a new outcome at each row
        (noise included): of the equal mixture over the stored draws of each draw's noise
        distribution. Deterministic; e.g. ``quantiles=(0.05, 0.95)`` is a 90% predictive
        interval.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            The rows to predict (a ``dask.array`` one row block at a time, an
            ``np.memmap`` above 16 MiB in slices of that size).
        quantiles : array-like of shape (n_quantiles,), default=(0.05, 0.5, 0.95)
            Each in (0, 1).

        Returns
        -------
        ndarray of shape (n_samples, n_quantiles)
        """
        quantiles = check_quantiles(quantiles)
        return np.concatenate(self._map_row_blocks(
            X, lambda eta: self._mixture_quantiles(eta, quantiles)))

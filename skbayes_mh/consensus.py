"""Consensus Monte Carlo: one posterior from shards of the data sampled apart.

Data too large to gather on one machine are split into ``S`` shards (a ``dask.array``'s row
blocks, each sampled on the Dask worker that holds it). Each shard's sub-posterior
``p(theta)^(1/S) prod_{i in shard} p(x_i | theta)`` is sampled by the same estimator, and the
draws are combined by the weighted average of Scott et al. (2016), "Bayes and big data: the
consensus Monte Carlo algorithm"::

    theta_t = (sum_s W_s)^-1 sum_s W_s theta_{s,t},    W_s = Cov_s(theta)^-1

The product of the sub-posteriors is the posterior; the combination is exact when they are
Gaussian and otherwise carries an error that shrinks as the shards grow
(``docs/scaling.md`` has measurements against single-machine fits).
"""
import copy

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.utils import Bunch, check_random_state, get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted

from ._dask import is_dask_array
from ._docstrings import with_sections
from .linear_model import MinibatchMHLogisticRegression
from .linear_model._posterior import FittedPosterior, PredictiveClassifierMixin

__all__ = ["ConsensusMonteCarlo", "consensus_combine", "consensus_mean_error"]


def consensus_combine(shard_draws):
    """Scott et al.'s consensus draws from the shards' sub-posterior draws.

    Parameters
    ----------
    shard_draws : sequence of ndarray of shape (n_chains, n_draws, d)
        Each shard's draws of the same ``d`` parameters (the same ``n_chains`` and
        ``n_draws``); draw ``(c, t)`` of every shard is combined into draw ``(c, t)``.

    Returns
    -------
    draws : ndarray of shape (n_chains, n_draws, d)
    weights : ndarray of shape (n_shards, d, d)
        Each shard's weight: the inverse of its draws' covariance.

    Raises
    ------
    ValueError
        When the shapes differ or a shard's draws have a singular covariance (a chain that
        never moved).
    """
    shard_draws = [np.asarray(draws, dtype=np.float64) for draws in shard_draws]
    shapes = {draws.shape for draws in shard_draws}
    if len(shapes) != 1 or len(next(iter(shapes))) != 3:
        raise ValueError(f"every shard needs draws of the same shape (n_chains, n_draws, d); "
                         f"got {sorted(shapes)}.")
    d = shard_draws[0].shape[-1]
    weights = np.empty((len(shard_draws), d, d))
    for s, draws in enumerate(shard_draws):
        covariance = np.atleast_2d(np.cov(draws.reshape(-1, d), rowvar=False))
        try:
            inverse_factor = np.linalg.inv(np.linalg.cholesky(covariance))
        except np.linalg.LinAlgError:
            raise ValueError(f"shard {s}'s draws have a singular covariance (some parameter "
                             f"never moved): its chains did not mix, so it cannot be "
                             f"weighted. Run it longer or with fewer shards.") from None
        weights[s] = inverse_factor.T @ inverse_factor
    total = weights.sum(axis=0)
    weighted = sum(draws @ weight for draws, weight in zip(shard_draws, weights))
    combined = np.ascontiguousarray(np.linalg.solve(total, weighted.reshape(-1, d).T).T)
    return combined.reshape(shard_draws[0].shape), weights


def consensus_mean_error(shard_means, weights, shard_ess, ess):
    """Monte Carlo standard error of a consensus posterior mean ``A sum_s W_s m_s``
    (``A = (sum_s W_s)^-1``).

    Two sources add up: the combined draws' own error, ``A / ess``, and the weights'
    (each the inverse of a covariance estimated from about ``shard_ess`` draws): to first
    order a weight's error ``D_s`` moves the mean by ``A D_s v_s`` (``v_s`` the shard's
    mean less the consensus mean), and an inverse sample covariance has
    ``Cov(D_s v) ~ ((v' W v) W + W v v' W) / n``. The second term dominates when the
    shards' means lie many of their sds apart.

    Parameters
    ----------
    shard_means : sequence of ndarray of shape (d,)
    weights : ndarray of shape (n_shards, d, d)
    shard_ess : sequence of float
        Each shard's effective sample size.
    ess : float
        The combined draws' effective sample size.

    Returns
    -------
    ndarray of shape (d,)
    """
    A = np.linalg.inv(np.sum(weights, axis=0))
    centre = A @ np.sum([W @ m for W, m in zip(weights, shard_means)], axis=0)
    variance = A / ess
    for W, m, n in zip(weights, shard_means, shard_ess):
        v = m - centre
        variance = variance + A @ ((v @ W @ v) * W + np.outer(W @ v, W @ v)) @ A / n
    return np.sqrt(np.diag(variance))


def _fit_shard(estimator, n_shards, summary, seed, X_blocks, y_blocks):
    """One shard's sub-posterior: ``estimator`` fitted on the rows of ``X_blocks`` (and
    ``y_blocks``), its prior raised to ``1 / n_shards``."""
    X = X_blocks[0] if len(X_blocks) == 1 else np.concatenate(X_blocks)
    y = y_blocks[0] if len(y_blocks) == 1 else np.concatenate(y_blocks)
    shard = clone(estimator).set_params(random_state=seed)
    shard._fit(X, y, summary=summary, prior_power=1.0 / n_shards)
    shard.shard_rows_ = X.shape[0]
    return shard


def _combined_stats(shards):
    """Per-draw statistics of the consensus draws: rows read (and rows per iteration)
    summed over the shards, wall
    time the slowest shard's (they run side by side), the others averaged; the log
    posterior is not known."""
    combined = {}
    for name in shards[0].posterior_.sample_stats:
        values = np.stack([shard.posterior_[name] for shard in shards])
        if name == "lp":
            combined[name] = np.full(values.shape[1:], np.nan)
        elif name in ("n_data_read", "rows_per_iteration"):
            combined[name] = values.sum(axis=0)
        elif name == "seconds":
            combined[name] = values.max(axis=0)
        else:
            combined[name] = values.mean(axis=0)
    return combined


def _estimator_has(method):
    return lambda self: hasattr(self.estimator, method)


class ConsensusMonteCarlo(MetaEstimatorMixin, BaseEstimator):
    """Fit ``estimator`` shard by shard and combine the sub-posteriors (consensus Monte
    Carlo, Scott et al. 2016), for data that cannot be gathered on one machine.

    Parameters
    ----------
    estimator : estimator of this library
        Fitted once per shard (clones), with its prior raised to ``1 / n_shards`` and its
        data-scaled settings (classes, the outcome's scale) taken from the whole data set.
        Every shard keeps its ``n_chains`` and ``n_draws``.
    n_shards : int or None, default=None
        ``None``: one shard per row block of a ``dask.array`` ``X``. An int: a Dask array is
        re-blocked into that many row blocks; in-memory data are split at random into that
        many shards of nearly equal size. In-memory data need an int.
    n_jobs : int or None, default=None
        Shards fitted side by side for in-memory data (joblib threads). Dask data are
        fitted by the active Dask scheduler (a ``distributed.Client``'s workers, each shard
        where its rows are).
    random_state : int, RandomState instance or None, default=None
        The in-memory split and every shard's seed.

    Attributes
    ----------
    estimator_ : estimator
        An estimator of ``estimator``'s class holding the consensus draws (``posterior_``,
        ``coef_`` ...); predictions go through it.
    shards_ : list of estimators
        Each shard's fitted estimator (its sub-posterior, diagnostics and ``shard_rows_``).
    weights_ : ndarray of shape (n_shards, d, d)
        Each shard's weight (the inverse covariance of its draws).
    n_shards_ : int
    posterior_, coef_, intercept_, classes_, scale_, diagnostics_ :
        ``estimator_``'s, where it has them.

    Notes
    -----
    Rows are assigned to Dask shards as they are stored: sort or group them in the order
    of ``y`` and the shards' sub-posteriors differ more (the combination is then less
    accurate); shuffle the rows first.
    """

    def __init__(self, estimator, n_shards=None, n_jobs=None, random_state=None):
        self.estimator = estimator
        self.n_shards = n_shards
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X, y):
        """Fit every shard and combine their draws.

        Parameters
        ----------
        X : dask.array of shape (n_samples, n_features), or array-like
            The training rows: a Dask array is sharded by its row blocks, in-memory data
            at random.
        y : dask.array or array-like of shape (n_samples,)
            Their outcomes, as ``estimator.fit`` takes them.

        Returns
        -------
        self
        """
        if self.n_shards is not None and (isinstance(self.n_shards, bool) or not isinstance(
                self.n_shards, (int, np.integer)) or self.n_shards < 1):
            raise ValueError(f"n_shards must be a positive int or None; got {self.n_shards!r}.")
        base = clone(self.estimator)
        if not hasattr(base, "_theta_draws"):
            raise TypeError(f"ConsensusMonteCarlo needs an estimator of skbayes_mh (it combines "
                            f"their draws of the parameters); got {type(base).__name__}.")
        # One validation pass over the whole data: its classes or outcome scale, shared by
        # every shard (so that the shards' priors multiply into the whole data's prior).
        X, y, _, summary = base._fit_data(X, y, classes=is_classifier(base))
        rng = check_random_state(self.random_state)
        if is_dask_array(X):
            shards = self._fit_dask_shards(X, y, summary, rng)
        else:
            shards = self._fit_array_shards(X, y, summary, rng)
        draws, self.weights_ = consensus_combine([shard._theta_draws() for shard in shards])
        self.shards_, self.n_shards_ = shards, len(shards)
        estimator = copy.deepcopy(shards[0])
        del estimator.shard_rows_
        estimator.random_state = self.estimator.get_params()["random_state"]
        estimator._set_posterior(draws, _combined_stats(shards))
        n_rows = sum(shard.shard_rows_ for shard in shards)
        # Each shard's passes read its own rows: counted as fractions of the whole data.
        passes = {name: sum(shard.data_passes_[name] * shard.shard_rows_ for shard in shards)
                  / n_rows for name in shards[0].data_passes_}
        estimator.data_passes_ = Bunch(**passes)
        estimator.setup_time_ = max(shard.setup_time_ for shard in shards)
        self.estimator_ = estimator
        for name, value in vars(estimator).items():
            if name.endswith("_") and not name.startswith("_"):
                setattr(self, name, value)
        return self

    def _fit_dask_shards(self, X, y, summary, rng):
        import dask
        if self.n_shards is not None and self.n_shards != len(X.chunks[0]):
            rows = -(-X.shape[0] // self.n_shards)
            X, y = X.rechunk({0: rows}), y.rechunk(rows)
        blocks_X, blocks_y = X.to_delayed().ravel(), y.to_delayed().ravel()
        n_shards = len(blocks_X)
        seeds = rng.randint(0, 2**31 - 1, size=n_shards)
        tasks = [dask.delayed(_fit_shard)(self.estimator, n_shards, summary, int(seed),
                                          [xb], [yb])
                 for xb, yb, seed in zip(blocks_X, blocks_y, seeds)]
        return list(dask.compute(*tasks))

    def _fit_array_shards(self, X, y, summary, rng):
        if self.n_shards is None:
            raise ValueError("ConsensusMonteCarlo needs n_shards for in-memory data (for a "
                             "dask.array, None takes one shard per row block).")
        if self.n_shards > X.shape[0]:
            raise ValueError(f"n_shards={self.n_shards} is more than the {X.shape[0]} rows.")
        order = rng.permutation(X.shape[0])
        seeds = rng.randint(0, 2**31 - 1, size=self.n_shards)
        y = np.asarray(y)
        tasks = []
        for rows, seed in zip(np.array_split(order, self.n_shards), seeds):
            rows = np.sort(rows)
            tasks.append(delayed(_fit_shard)(self.estimator, self.n_shards, summary,
                                             int(seed), [X[rows]], [y[rows]]))
        return Parallel(n_jobs=self.n_jobs, prefer="threads")(tasks)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        return tags

    @available_if(_estimator_has("predict"))
    def predict(self, X, **kwargs):
        """``estimator_.predict`` (the consensus draws' posterior-predictive).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows to predict.
        **kwargs
            Passed to ``estimator_.predict`` (e.g. ``return_std=True`` for a regressor).

        Returns
        -------
        ndarray or tuple of ndarray
            What ``estimator_.predict`` returns.
        """
        check_is_fitted(self)
        return self.estimator_.predict(X, **kwargs)

    @available_if(_estimator_has("predict_proba"))
    @with_sections(PredictiveClassifierMixin.predict_proba)
    def predict_proba(self, X):
        """``estimator_.predict_proba``."""
        check_is_fitted(self)
        return self.estimator_.predict_proba(X)

    @available_if(_estimator_has("predict_log_proba"))
    @with_sections(PredictiveClassifierMixin.predict_log_proba)
    def predict_log_proba(self, X):
        """``estimator_.predict_log_proba``."""
        check_is_fitted(self)
        return self.estimator_.predict_log_proba(X)

    @available_if(_estimator_has("decision_function"))
    @with_sections(MinibatchMHLogisticRegression.decision_function)
    def decision_function(self, X):
        """``estimator_.decision_function``."""
        check_is_fitted(self)
        return self.estimator_.decision_function(X)

    @available_if(_estimator_has("summary"))
    @with_sections(FittedPosterior.summary)
    def summary(self, *, quantiles=(0.05, 0.5, 0.95), as_frame="auto"):
        """``estimator_.summary``: the consensus draws' table, per named parameter (their
        R-hat and ESS compare chains of combined draws, not of one sampler)."""
        check_is_fitted(self)
        return self.estimator_.summary(quantiles=quantiles, as_frame=as_frame)

    @available_if(_estimator_has("score"))
    def score(self, X, y, sample_weight=None):
        """``estimator_.score``: accuracy for classifiers, R^2 for regressors.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Test rows.
        y : array-like of shape (n_samples,)
            Their true outcomes.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the score.

        Returns
        -------
        float
        """
        check_is_fitted(self)
        return self.estimator_.score(X, y, sample_weight=sample_weight)

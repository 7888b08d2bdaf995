"""The shell every linear-model estimator shares: its common parameters, and ``fit`` as
validate -> data (read where they are) -> model and prior -> MAP and Laplace -> resolve the
acceptance test and proposal -> seed the chains -> run them in parallel -> split the draws.
Each estimator file keeps its own parameters, documentation, model and predictions."""
import numbers
import os
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, is_classifier
from sklearn.exceptions import ConvergenceWarning, EfficiencyWarning
from sklearn.utils import Bunch
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .. import diagnostics
from .._dask import check_dask_data, encode_dask_labels, is_dask_array, scan_dask_data
from .._passes import encode_labels, first_bad_row, scan_data
from .._validation import MIN_TEMPERATURE, read_only
from ..acceptance import ACCEPTANCE_TESTS, AcceptanceTest, resolve_acceptance
from ..models import LinearData
from ..models._prior import BuiltinPrior
from ..posterior import Posterior
from ..proposals import PROPOSALS, Proposal, resolve_proposal
from ..sampling import (AutoThin, FireflySampler, MetropolisHastings, Progress, QdbTuner,
                        ScaleTuner, Shape, ShapeTuner, Target, chain_seeds, continue_chain,
                        control_variates, interruptible, run_chain, run_in_parallel)

#: Test rows per block when averaging predictions over draws (bounds memory at rows x draws).
PREDICT_BLOCK = 1024
#: ``acceptance="auto"``: the exact Metropolis test on all rows up to this many rows, the
#: minibatch test with control variates above (docs/choosing.md has the measurements).
AUTO_EXACT_MAX_ROWS = 5000
#: ``thin="auto"``: at most this many iterations per kept draw for the tests that read a
#: minibatch per iteration (and Firefly).
AUTO_MAX_THIN = 10
#: ``thin="auto"`` with a full-data test: each iteration reads every row, so thinning
#: multiplies the fit's cost. It thins (up to ``AUTO_MAX_THIN``) only while a kept draw
#: reads at most this many row-parameter products (rows x parameters x iterations): small
#: data, whose whole fit then takes seconds (scikit-learn's breast cancer data, 426 x 31,
#: thin at most 10), not 5,000 rows x 30 parameters (thin 1).
AUTO_FULL_DATA_WORK = 200_000
#: float32 ``X`` of at least this many bytes is read in place by float32 kernels; smaller
#: float32 data are converted to float64 (a copy that costs nothing at that size, and no
#: second set of kernels to compile).
FLOAT32_IN_PLACE_MIN_BYTES = 1 << 26
#: Firefly warns when its chains kept more than this fraction of the rows bright on average
#: (each bright row is a likelihood query per iteration: the bounds are too loose to pay).
FIREFLY_MAX_BRIGHT_FRACTION = 0.5
#: A fit warns when some parameter's rank-normalised split R-hat exceeds this ...
MAX_RHAT = 1.01
#: ... or its bulk effective sample size is below this many per chain (Vehtari et al. 2021).
MIN_ESS_PER_CHAIN = 100


#: Every public estimator, by class name: a class defined in a file of ``linear_model/``
#: registers itself (``linear_model/__init__.py`` imports every such file), and the package's
#: names, the persistence whitelist and the tests read this.
ESTIMATORS = {}


class LinearMHEstimator(BaseEstimator):
    """Parameters and the sampling part of ``fit`` common to the linear-model estimators.

    Subclasses define ``_family()`` (the likelihood family of their settings, which lays out
    the parameters and gives the NumPy side of the predictions) and their own ``fit``, which
    encodes ``y``, builds the prior and calls :meth:`_sample_posterior`.
    """

    _parameter_constraints = {
        "acceptance": [StrOptions({"auto"} | set(ACCEPTANCE_TESTS)), AcceptanceTest],
        "proposal": [StrOptions({"auto"} | set(PROPOSALS)), Proposal],
        "step_size": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "prior_scale": [Interval(numbers.Real, 0, None, closed="neither")],
        "autoscale": ["boolean"],
        "fit_intercept": ["boolean"],
        "intercept_prior_scale": [Interval(numbers.Real, 0, None, closed="neither")],
        "temperature": [Interval(numbers.Real, MIN_TEMPERATURE, None, closed="left")],
        "n_draws": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_warmup": [Interval(numbers.Integral, 0, None, closed="left")],
        "thin": [StrOptions({"auto"}), Interval(numbers.Integral, 1, None, closed="left")],
        "n_chains": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_jobs": [numbers.Integral, None],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    #: The proposal ``proposal="auto"`` gives Firefly (which has the model's gradient).
    _firefly_proposal = "mala"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_"):
            ESTIMATORS[cls.__name__] = cls

    def _store_parameters(self, arguments):
        """Keep every ``__init__`` argument as the attribute of its name, unchanged.

        Each estimator lists its parameters with their defaults in its own signature (which
        :meth:`get_params` reads) and calls ``self._store_parameters(locals())``.
        """
        for name, value in arguments.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

    def _acceptance(self, n_rows):
        """The acceptance test object: ``"auto"`` resolved from the number of rows (see
        :data:`AUTO_EXACT_MAX_ROWS`), a name or an object resolved and cloned."""
        if isinstance(self.acceptance, str) and self.acceptance == "auto":
            return resolve_acceptance("metropolis" if n_rows <= AUTO_EXACT_MAX_ROWS
                                      else "minibatch")
        return resolve_acceptance(self.acceptance)

    def _proposal(self, acceptance, uses_control_variates, full_covariance):
        """``proposal="auto"``: Hamiltonian paths where a gradient is at hand (every row's for
        the exact tests, the control variates' proxy for the subsampling tests) and the
        proposal shape is a full covariance, the estimator's choice for Firefly, the random
        walk otherwise (above the full-covariance cut-off a path of diagonally preconditioned
        leapfrog steps costs ~10x a random-walk step for no better mixing: docs/choosing.md).
        """
        if not (isinstance(self.proposal, str) and self.proposal == "auto"):
            return resolve_proposal(self.proposal)
        if acceptance.name == "firefly":
            return resolve_proposal(self._firefly_proposal)
        if full_covariance and (not acceptance.subsampling or uses_control_variates):
            return resolve_proposal("hmc")
        return resolve_proposal("random_walk")

    def _thin(self, acceptance, n_rows, n_params):
        """``thin`` as :func:`~skbayes_mh.sampling.run_chain` takes it."""
        if not isinstance(self.thin, str):
            return int(self.thin)
        if acceptance.subsampling or acceptance.name == "firefly":
            return AutoThin(AUTO_MAX_THIN)
        affordable = AUTO_FULL_DATA_WORK // max(1, n_rows * n_params)
        return AutoThin(int(np.clip(affordable, 1, AUTO_MAX_THIN)))

    def _prior(self, kind, data, summary, n_outputs, prior_scale, intercept_scale,
               locations=None, extra_scales=(), outcome_scale=1.0):
        """A built-in prior (``kind``) with ``prior_scale`` on every weight, ``intercept_scale``
        on each output's intercept, then the extra parameters' ``extra_scales``.

        With ``autoscale`` (as rstanarm's autoscaled priors): weight ``j``'s scale is
        ``prior_scale * outcome_scale / sd(x_j)`` (``prior_scale`` on the standardised
        feature; a constant feature keeps ``prior_scale``), and the intercept's prior is on
        the intercept at the features' means (that of centred features), from ``summary``'s
        ``x_mean`` and ``x_std`` (the whole data set's, see :meth:`_fit_data`).
        """
        width = data.block
        scales = np.full((n_outputs, width), float(prior_scale))
        means = None
        if self.autoscale:
            spread = np.asarray(summary["x_std"], dtype=np.float64)
            spread = np.where(spread > 0, spread, 1.0)
            scales[:, :data.n_features] = prior_scale * float(outcome_scale) / spread
            means = summary["x_mean"] if self.fit_intercept else None
        if self.fit_intercept:
            scales[:, -1] = float(intercept_scale)
        scales = np.append(scales.ravel(), extra_scales)
        shard = getattr(self, "_consensus_shard", None)
        return BuiltinPrior(kind, scales, locations, means, n_outputs=n_outputs, block=width,
                            intercept=self.fit_intercept,
                            power=1.0 if shard is None else shard["prior_power"])

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
            (with ``classes``) or the weighted ``mean`` and ``std`` of ``y`` and its ``min``;
            for
            one shard of a consensus fit, the whole data set's (so that every shard has the
            same classes and the same data-scaled prior).
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
                                     ensure_all_finite=False, y_numeric=not classes)
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
        if X.dtype == np.float32 and X.nbytes < FLOAT32_IN_PLACE_MIN_BYTES:
            X = X.astype(np.float64)
        self._setup = (time.perf_counter(), {"validation": 1.0})
        if distributed:
            summary = scan_dask_data(X, y, classes)
        else:
            summary = scan_data(X, y, classes, weights if weights.size else None)
        _check_magnitudes(summary, classes)
        self._check_memory()
        return X, y, read_only(weights), self._shard_summary(summary, classes)

    def _fit_counts(self, X, y, sample_weight, prior_kind, extra_scales=()):
        """``fit`` of a count regression: validate, refuse negative counts, build the prior
        (``prior_kind`` on the weights and intercept, then ``extra_scales`` for the family's
        extra parameters), sample and store the posterior."""
        self._validate_params()
        X, y, weights, summary = self._fit_data(X, y, sample_weight)
        if summary["min"] < 0:
            raise ValueError(f"{type(self).__name__} needs non-negative counts y; the "
                             f"smallest is {summary['min']!r}.")
        data = self._linear_data(X, y, weights)
        prior = self._prior(prior_kind, data, summary, 1, self.prior_scale,
                            self.intercept_prior_scale, extra_scales=extra_scales)
        draws, stats = self._sample_posterior(data, self._family(), prior,
                                              self._acceptance(X.shape[0]))
        self._set_posterior(draws, stats)
        return self

    def _check_memory(self):
        """A ``ValueError`` naming ``n_draws`` or ``n_warmup`` when the draws they ask for
        cannot fit in this machine's memory (instead of an allocation that fails late, or
        a run of hours). The parameters are counted from below (one output and an
        intercept), so no fit that fits is refused."""
        n_params = self.n_features_in_ + 1
        kept = self.n_chains * self.n_draws * 8 * (n_params + STATS_PER_DRAW)
        warmup = self.n_chains * self.n_warmup * 8 * n_params
        available = _physical_memory()
        if kept + warmup > available:
            culprit = "n_draws" if kept >= warmup else "n_warmup"
            raise ValueError(
                f"{culprit}={getattr(self, culprit):,} with n_chains={self.n_chains} asks for "
                f"about {(kept + warmup) / 2**30:,.1f} GiB of draws, more than this machine's "
                f"{available / 2**30:,.1f} GiB of memory. Keep fewer draws (a larger thin "
                f"keeps fewer of the iterations).")

    def _shard_summary(self, summary, classes):
        """``summary``, or the whole data set's for one shard of a consensus fit."""
        shard = getattr(self, "_consensus_shard", None)
        if shard is not None:
            summary = shard["summary"]
        self._fit_summary = summary
        if classes:
            check_classification_targets(summary["classes"])
        return summary

    def _class_indices(self, y, dtype):
        """``y`` as indices into ``classes_`` in ``dtype`` (``y`` itself when it already is)."""
        if is_dask_array(y):
            return encode_dask_labels(y, self.classes_, dtype)
        return encode_labels(y, self.classes_, dtype)

    def _linear_data(self, X, y_model, weights):
        """The data as the kernels read them: ``X`` where it is, ``y`` encoded, the sample
        weights (empty: none)."""
        if is_dask_array(X):
            return LinearData(X, y_model.astype(X.dtype), weights,
                              bool(self.fit_intercept))
        X = read_only(np.ascontiguousarray(X))
        y_model = read_only(np.ascontiguousarray(y_model, dtype=X.dtype))
        return LinearData(X, y_model, weights, bool(self.fit_intercept))

    def _sample_posterior(self, data, model, prior, acceptance):
        """Run ``n_chains`` chains on the tempered posterior, or with ``warm_start`` continue
        the previous fit's chains (see :meth:`_chains_to_continue`).

        Ctrl-C stops every chain within about a second (worker threads included): the draws
        every chain has reached are kept, with a warning (see :meth:`_collect`).

        Returns
        -------
        draws : ndarray of shape (n_chains, n_draws, d)
        stats : dict of ndarray of shape (n_chains, n_draws)
        """
        previous = self._chains_to_continue(data)
        name = type(self).__name__
        if previous is not None:
            per_chain = max(self.n_draws - min(c.n_draws for c in previous), 0) * previous[0].thin
            progress = Progress(self.n_chains, per_chain, self.verbose, name)
            with interruptible(name) as stop:
                arguments = [(chain, self.n_draws, progress.chain(c), stop)
                             for c, chain in enumerate(previous)]
                try:
                    chains = run_in_parallel(continue_chain, arguments, self.n_jobs)
                finally:
                    progress.close()
            return self._collect(chains, data)
        target = Target.linear(model, data, prior, 1.0 / float(self.temperature),
                               lipschitz=acceptance.name == "confidence")
        if data.weights.size:  # the confidence sampler's range bound scales with it
            target.max_weight = float(data.weights.max())
        theta_map, covariance, full = target.mean, target.covariance, target.full_covariance
        d = target.n_params
        if "lipschitz" in acceptance.get_params() and acceptance.lipschitz is None:
            acceptance.set_params(lipschitz=target.lipschitz)  # the model's, shown in acceptance_
        self.control_variates_ = acceptance.uses_control_variates(target)
        proposal = self._proposal(acceptance, self.control_variates_, full)
        self.acceptance_, self.proposal_ = acceptance, proposal
        bound = cv = None
        if acceptance.name == "firefly":
            bound = model.firefly_bound(data, theta_map, acceptance.bound,
                                      target.inv_temperature)
        started, passes = getattr(self, "_setup", (time.perf_counter(), {}))
        passes["map_laplace"] = float(target.n_passes)
        if acceptance.name == "firefly":
            passes["firefly_bounds"] = 1.0
            passes["firefly_start"] = float(self.n_chains)  # each chain's brightness draw
        if self.control_variates_:
            # Taylor proxies at the MAP; the confidence sampler also bounds the residuals'
            # range in the Laplace-whitened distance from it.
            cv, passes["control_variates"] = control_variates(
                target, whitening_covariance=covariance if acceptance.name == "confidence"
                else None)
        if data.distributed:  # the chains read rows at random: bring them here
            gathered = data.gathered()
            target.data, target.spec = gathered, model.spec(gathered)
        self.data_passes_ = Bunch(**passes, total=float(sum(passes.values())))
        self.setup_time_ = time.perf_counter() - started
        seeds = chain_seeds(self.random_state, self.n_chains)
        # Each chain starts at a draw of the Laplace approximation (its Cholesky factor times
        # a standard normal from the chain's own seed). Jitter by each coordinate's marginal
        # sd instead lands hundreds of posterior sds off along strongly correlated
        # directions (the over-parameterised softmax's class contrasts), where no chain
        # driven by the control variates' proxy accepts a move.
        start_shape = Shape.from_covariance(covariance, covariance.ndim == 2)
        thin = self._thin(acceptance, data.n_rows, d)
        # With thin="auto" the bars count one iteration per draw (thin is chosen later).
        progress = Progress(self.n_chains, self.n_warmup + self.n_draws
                            * (thin if isinstance(thin, int) else 1), self.verbose, name)
        with interruptible(name) as stop:
            arguments = []
            for c, seed in enumerate(seeds):
                sampler, tuners = self._sampler(target, acceptance, proposal, bound, cv, full)
                z = np.random.default_rng([int(seed), 1]).standard_normal(d)
                start = theta_map + (start_shape.factor @ z if start_shape.factor.shape[0]
                                     else start_shape.diag * z)
                arguments.append((sampler, start, seed, self.n_warmup, self.n_draws, thin,
                                  tuners, progress.chain(c), stop))
            try:
                chains = run_in_parallel(run_chain, arguments, self.n_jobs)
            finally:
                progress.close()
        return self._collect(chains, data)

    def _continuation_key(self, data):
        """What must not change between a fit and its continuation: the parameters (but
        ``n_draws``, ``warm_start``, ``verbose``, ``n_jobs``) and the data's fingerprint (its
        shape and type, and the validation pass's column moments and summary of ``y``)."""
        params = {name: value for name, value in self.get_params(deep=False).items()
                  if name not in ("n_draws", "warm_start", "verbose", "n_jobs")}
        summary = getattr(self, "_fit_summary", {})
        fingerprint = [("shape", (data.n_rows, data.n_features)),
                       ("dtype", str(data.X.dtype)), ("weights", float(data.weights.sum()))]
        fingerprint += [(name, np.asarray(summary[name]).tolist()) for name in sorted(summary)]
        return params, fingerprint

    def _chains_to_continue(self, data):
        """With ``warm_start`` and the chains of a previous fit kept (that fit had
        ``warm_start=True`` too), those chains, checked to continue on the same data and
        settings; None: start afresh."""
        chains = getattr(self, "_chains", None)
        if not (self.warm_start and chains):
            return None
        if not all(chain.warmup_complete for chain in chains):
            warnings.warn(f"{type(self).__name__}: the previous fit was interrupted before "
                          f"every chain had finished its warm-up, so the chains start afresh.",
                          UserWarning, stacklevel=4)
            return None
        params, fingerprint = self._continuation_key(data)
        old_params, old_fingerprint = self._chains_key
        changed = [name for name in params if not _same_value(params[name], old_params[name])]
        if changed:
            raise ValueError(
                f"warm_start=True continues the previous fit's chains, so only n_draws (and "
                f"verbose, n_jobs) may change; {', '.join(changed)} changed. Set "
                f"warm_start=False to start afresh.")
        if fingerprint != old_fingerprint:
            raise ValueError("warm_start=True continues the previous fit's chains on the data "
                             "they were fitted on, and these data differ (their shape, type or "
                             "column moments). Set warm_start=False to fit these data afresh.")
        have = min(chain.n_draws for chain in chains)
        if self.n_draws < have:
            raise ValueError(f"n_draws={self.n_draws} is fewer than the {have} draws per chain "
                             f"already kept; with warm_start=True n_draws is the total to "
                             f"reach (set warm_start=False to start afresh).")
        if self.n_draws == have and all(not c.interrupted for c in chains):
            warnings.warn(f"{type(self).__name__}: warm_start=True with n_draws={self.n_draws}, "
                          f"the draws already kept: nothing new is drawn. Raise n_draws to "
                          f"continue the chains.", UserWarning, stacklevel=4)
        return chains

    def _collect(self, chains, data):
        """Draws and stats from the chains' results, and the fitted attributes about them.

        When the chains were interrupted, those past their warm-up are kept, each cut to the
        draws all of them reached (``interrupted_``, a warning); without any,
        KeyboardInterrupt is raised again. With
        ``warm_start`` the chains are kept (``_chains``) to be continued by the next fit.
        """
        name = type(self).__name__
        self.interrupted_ = any(c.interrupted for c in chains)
        if self.warm_start:
            self._chains = chains
            self._chains_key = self._continuation_key(data)
        else:
            self.__dict__.pop("_chains", None)
        # Interrupted: the chains that finished their warm-up (with n_chains above n_jobs,
        # some may not have started), each cut to the draws all of them reached.
        started = [c for c in chains if c.warmup_complete and c.n_draws > 0]
        if not started:
            raise KeyboardInterrupt(f"{name}.fit was interrupted before any chain had "
                                    f"finished its warm-up: nothing was kept.")
        n_kept = min(c.n_draws for c in started)
        if self.interrupted_:
            dropped = len(chains) - len(started)
            warnings.warn(
                f"{name}.fit was interrupted: it keeps the first {n_kept} of {self.n_draws} "
                f"draws of {len(started)} chain{'s' if len(started) > 1 else ''}"
                + (f" ({dropped} had not finished warming up)" if dropped else "")
                + "; posterior_, diagnostics_ and predictions use them."
                + (" Fit again to continue the chains (warm_start=True)." if self.warm_start
                   else " With warm_start=True, a fit can continue interrupted chains."),
                UserWarning, stacklevel=4)
        chains = started
        draws = np.stack([c.draws[:n_kept] for c in chains])
        stats = {key: np.stack([c.stats[key][:n_kept] for c in chains])
                 for key in chains[0].stats}
        self.thin_ = np.array([c.thin for c in chains])
        self.n_iter_ = self.n_warmup + n_kept * self.thin_
        self.acceptance_rate_ = float(stats["acceptance_rate"].mean())
        if "n_bright" in stats:
            self._warn_if_firefly_cannot_pay(float(stats["n_bright"].mean()) / data.n_rows)
        self.step_size_ = np.stack([c.sampler.scale * c.sampler.shape.scales() for c in chains])
        return draws, stats

    def __getstate__(self):
        """Pickle (and skops) without the chains kept for ``warm_start``: they reference the
        training data. A reloaded estimator's next ``warm_start`` fit starts afresh."""
        state = super().__getstate__()
        state = dict(state)
        state.pop("_chains", None)
        state.pop("_chains_key", None)
        state.pop("_fit_summary", None)
        return state

    def __sklearn_is_fitted__(self):
        return hasattr(self, "posterior_")

    def _warn_if_firefly_cannot_pay(self, fraction):
        """Store ``bright_fraction_`` and warn (``EfficiencyWarning``) when Firefly queried
        most rows at every iteration anyway."""
        self.bright_fraction_ = fraction
        if fraction > FIREFLY_MAX_BRIGHT_FRACTION:
            warnings.warn(
                f"{type(self).__name__}: Firefly kept {fraction:.0%} of the rows bright on "
                f"average, so each iteration queried that share of the data: its bounds are "
                f"too loose for these data to save anything. acceptance='metropolis' (every "
                f"row, exact) or 'minibatch' costs less here.", EfficiencyWarning,
                stacklevel=4)

    def _diagnose(self):
        """Store ``diagnostics_`` (R-hat, bulk and tail ESS of every sampled quantity) and
        warn with a :class:`~sklearn.exceptions.ConvergenceWarning` naming the worst
        parameter when the chains do not meet :data:`MAX_RHAT` and
        :data:`MIN_ESS_PER_CHAIN`."""
        posterior = self.posterior_
        found = {"r_hat": {}, "ess_bulk": {}, "ess_tail": {}}
        for name, draws in posterior.draws.items():
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)
                found["r_hat"][name] = diagnostics.rhat(draws)
                found["ess_bulk"][name] = diagnostics.ess_bulk(draws)
                found["ess_tail"][name] = diagnostics.ess_tail(draws)
        self.diagnostics_ = Bunch(**{key: Bunch(**value) for key, value in found.items()})

        def worst(statistic, largest):
            # NaN for a quantity constant over all draws (e.g. the intercept without one) is
            # never the worst; NaN for one that differs between chains (each stuck at its
            # own value) is the worst there is.
            neutral, failed = (-np.inf, np.inf) if largest else (np.inf, 0.0)
            candidates = []
            for name, values in found[statistic].items():
                values = np.asarray(values, dtype=float)
                draws = posterior.draws[name]
                varies = np.ptp(draws.reshape(-1, *draws.shape[2:]), axis=0) > 0
                values = np.where(np.isnan(values) & varies, failed, values)
                values = np.nan_to_num(values, nan=neutral, posinf=np.inf)
                if values.size:
                    index = np.unravel_index(np.argmax(values) if largest else np.argmin(values),
                                             values.shape)
                    label = name + (f"[{', '.join(map(str, index))}]" if index else "")
                    candidates.append((float(values[index]), label))
            return (max if largest else min)(candidates, default=(neutral, ""))

        rhat, rhat_name = worst("r_hat", largest=True)
        ess, ess_name = worst("ess_bulk", largest=False)
        wanted_ess = MIN_ESS_PER_CHAIN * posterior.n_chains
        stuck = [chain for chain in range(posterior.n_chains) if posterior.n_draws > 1
                 and all(np.ptp(draws[chain], axis=0).max(initial=0.0) == 0
                         for draws in posterior.draws.values())]
        if rhat > MAX_RHAT or ess < wanted_ess or stuck:
            warnings.warn(
                f"{type(self).__name__}: the chains may not have converged: "
                + (f"chain{'s' if len(stuck) > 1 else ''} {', '.join(map(str, stuck))} never "
                   f"moved; " if stuck else "")
                + "largest R-hat "
                + (f"{rhat:.3g} ({rhat_name})" if np.isfinite(rhat) else "not available")
                + f", smallest bulk ESS {ess:.0f} ({ess_name}) of "
                f"{posterior.n_chains * posterior.n_draws} draws; wanted R-hat <= {MAX_RHAT} "
                f"and bulk ESS >= {wanted_ess} ({MIN_ESS_PER_CHAIN} per chain). Run longer "
                f"chains (n_draws, n_warmup, thin) or another proposal; per-parameter "
                f"values are in diagnostics_.", ConvergenceWarning, stacklevel=3)

    def _sampler(self, target, acceptance, proposal, bound, cv, full):
        """One chain's sampler and its warm-up tuners."""
        d = target.n_params
        auto = isinstance(self.step_size, str)
        if auto:
            shape = Shape.from_covariance(target.covariance, full)
            scale = proposal.initial_scale(d)
        else:  # an isotropic step, as in the papers
            shape, scale = Shape.identity(d), float(self.step_size)
        tuners = [ScaleTuner()] if auto else []
        if acceptance.name == "firefly":
            sampler = FireflySampler(target, acceptance, proposal, shape, scale, bound)
            if acceptance.q_db is None:
                tuners.append(QdbTuner())
            return sampler, tuners
        sampler = MetropolisHastings(target, acceptance, proposal, shape, scale, cv)
        if auto and proposal.name != "slice":
            tuners.append(ShapeTuner(target.covariance, full, target.mean))
        return sampler, tuners

    def _predictive(self, X, transform, variance=False):
        """The mean over the stored draws (and with ``variance`` the variance) of
        ``transform(eta)`` for each row of ``X``, in blocks of rows: ``eta`` is the draws'
        linear predictors, ``(n_draws, rows, n_outputs)``.

        Returns
        -------
        mean : ndarray of shape (n_rows, ...)
        variance : ndarray of shape (n_rows, ...), only with ``variance``
        """
        X, coef, intercept = self._linear_draws(X)
        means, spreads = [], []
        for start in range(0, X.shape[0], PREDICT_BLOCK):
            block = X[start:start + PREDICT_BLOCK]
            values = transform(np.einsum("nf,skf->snk", block, coef) + intercept[:, None, :])
            means.append(values.mean(axis=0))
            spreads.append(values.var(axis=0) if variance else None)
        if not variance:
            return np.concatenate(means)
        return np.concatenate(means), np.concatenate(spreads)

    def _linear_draws(self, X):
        """``X`` validated, and every stored draw's weights ``(n_chains * n_draws,
        n_outputs, n_features)`` and intercepts ``(n_chains * n_draws, n_outputs)``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        coef = self.posterior_.get("coef", flat=True)
        intercept = self.posterior_.get("intercept", flat=True)
        if coef.ndim == 2:  # a single output
            coef, intercept = coef[:, None, :], intercept[:, None]
        return X, coef, intercept

    def _eta_draws(self, X):
        """``X`` validated and the linear predictors of every stored draw, chain-major:
        ``(n_chains * n_draws, n_rows, n_outputs)``."""
        X, coef, intercept = self._linear_draws(X)
        return X, np.einsum("nf,skf->snk", X, coef) + intercept[:, None, :]

    def _per_draw(self, values):
        """``(n_chains * n_draws, ...)`` as ``(n_chains, n_draws, ...)``."""
        return values.reshape(self.posterior_.n_chains, self.posterior_.n_draws,
                              *values.shape[1:])

    def pointwise_log_likelihood(self, X, y):
        """Each row's log-likelihood under every stored draw (the model's, untempered and
        unweighted), e.g. for PSIS-LOO (:meth:`to_arviz` with ``log_likelihood=True``).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
        y : array-like of shape (n_rows,)

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
        X : array-like of shape (n_rows, n_features)
        random_state : int, RandomState instance or None, default=None

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
            groups["constant_data"] = {"X": validate_data(self, X, dtype=np.float64,
                                                          reset=False)}
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

    def _set_posterior(self, draws, stats):
        """``posterior_``, ``diagnostics_`` and the posterior means ``coef_``, ``intercept_``
        and ``<name>_`` of every other parameter, from draws of theta ``(n_chains, n_draws,
        d)`` laid out as the family declares."""
        family = self._family()
        variables = family.posterior_variables(draws, self.n_features_in_, self.fit_intercept)
        self.posterior_ = Posterior(variables, stats)
        self._diagnose()
        coef = variables["coef"].mean(axis=(0, 1))
        if family.n_outputs > 1:
            intercept = variables["intercept"].mean(axis=(0, 1))
        elif is_classifier(self):  # scikit-learn's binary layout: one row of weights
            coef, intercept = coef[None, :], np.array([variables["intercept"].mean()])
        else:
            intercept = float(variables["intercept"].mean())
        self.coef_, self.intercept_ = coef, intercept
        for name in self._other_parameters():
            setattr(self, f"{name}_", float(variables[name].mean()))

    def _other_parameters(self):
        """Names of the posterior variables beyond ``coef`` and ``intercept``."""
        return [name for name in self.posterior_.draws if name not in ("coef", "intercept")]

    def _theta_draws(self):
        """Draws of theta ``(n_chains, n_draws, d)``: the inverse of :meth:`_set_posterior`."""
        return self._family().theta_draws(self.posterior_.draws, self.fit_intercept)

    def _parameter_draws(self):
        """Every draw (chains merged) of each parameter beyond ``coef`` and ``intercept``."""
        return {name: self.posterior_.get(name, flat=True) for name in self._other_parameters()}

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

    def _probabilities(self, eta):
        return self._family().class_probabilities(eta, self._parameter_draws())

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


def _same_value(a, b):
    """Whether two parameter values are the same setting: objects with ``get_params``
    (acceptance tests, proposals) by type and parameters, arrays by value, others by ``==``."""
    if a is b:
        return True
    if hasattr(a, "get_params") and hasattr(b, "get_params"):
        pa, pb = a.get_params(deep=False), b.get_params(deep=False)
        return type(a) is type(b) and pa.keys() == pb.keys() and all(
            _same_value(pa[k], pb[k]) for k in pa)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


#: Per-draw statistics kept beside each draw (lp, acceptance rate, rows read, seconds,
#: bright count), 8 bytes each.
STATS_PER_DRAW = 5
#: Values (of a feature or of y) above this in magnitude overflow the sums of squares
#: behind the Laplace approximation and the autoscaled priors: fit asks for rescaling.
MAX_MAGNITUDE = 1e100


def _check_magnitudes(summary, classes):
    """A ``ValueError`` naming the column (or y) whose mean or sd is beyond
    :data:`MAX_MAGNITUDE` or overflowed."""
    for name, values in (("mean", summary["x_mean"]), ("sd", summary["x_std"])):
        values = np.abs(np.asarray(values, dtype=float))
        bad = np.flatnonzero(~(values <= MAX_MAGNITUDE))
        if bad.size:
            raise ValueError(f"Feature {bad[0]} of X has a {name} of {values[bad[0]]:.3g}: "
                             f"values beyond {MAX_MAGNITUDE:.0e} overflow the sums the "
                             f"sampler needs. Rescale it (e.g. StandardScaler).")
    if not classes:
        for key in ("mean", "std"):
            value = abs(float(summary[key]))
            if not value <= MAX_MAGNITUDE:
                raise ValueError(f"y has a {'sd' if key == 'std' else key} of {value:.3g}: "
                                 f"values beyond {MAX_MAGNITUDE:.0e} overflow the sums the "
                                 f"sampler needs. Rescale y.")


def _physical_memory():
    """Bytes of physical memory (infinity where the platform does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return float("inf")


def check_quantiles(quantiles):
    """``quantiles`` as a 1-D float array, each in (0, 1) (a ValueError otherwise)."""
    values = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    if values.ndim != 1 or values.size == 0 or not np.all((values > 0) & (values < 1)):
        raise ValueError(f"quantiles must be numbers in (0, 1); got {quantiles!r}.")
    return values


class ProbabilityDrawsMixin:
    """``predict_proba_draws`` for a classifier with ``_probabilities(eta)``."""

    def predict_proba_draws(self, X):
        """Each stored draw's class probabilities (their mean over draws is
        :meth:`predict_proba`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_chains, n_draws, n_samples, n_classes), columns in
        ``classes_`` order.
        """
        _, eta = self._eta_draws(X)
        return self._per_draw(self._probabilities(eta))


class PredictiveQuantilesMixin:
    """``predict_quantiles`` for a regressor with ``_mixture_quantiles(eta, quantiles)``."""

    def predict_quantiles(self, X, quantiles=(0.05, 0.5, 0.95)):
        """Quantiles of the posterior predictive distribution of a new outcome at each row
        (noise included): of the equal mixture over the stored draws of each draw's noise
        distribution. Deterministic; e.g. ``quantiles=(0.05, 0.95)`` is a 90% predictive
        interval.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        quantiles : array-like of shape (n_quantiles,), default=(0.05, 0.5, 0.95)
            Each in (0, 1).

        Returns
        -------
        ndarray of shape (n_samples, n_quantiles)
        """
        quantiles = check_quantiles(quantiles)
        _, eta = self._eta_draws(X)
        return self._mixture_quantiles(eta, quantiles)

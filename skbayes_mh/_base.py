"""The fit skeleton every estimator shares: validate -> resolve the acceptance test ->
seed the chains -> run them (in parallel) -> store the posterior."""
import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions

from ._adaptation import run_chain_with_adaptation
from ._chains import Progress, Target, chain_seeds, run_in_parallel
from ._firefly import run_firefly_chain
from ._kernels._common import flat_log_prior
from .acceptance import ACCEPTANCE_TESTS, AcceptanceTest, resolve_acceptance


class BaseMHEstimator(BaseEstimator):
    """Parameters and the chain-running part of ``fit`` common to all estimators.

    Subclasses build the model (data layout, per-datum log-likelihood, prior, a starting
    point) and call :meth:`_sample_posterior`.
    """

    _parameter_constraints = {
        "acceptance": [StrOptions(set(ACCEPTANCE_TESTS)), AcceptanceTest],
        "step_size": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "temperature": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_burnin": [Interval(numbers.Integral, 0, None, closed="left")],
        "thin": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_chains": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_jobs": [numbers.Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def _sample_posterior(self, loglik, data, prior_kind, prior_scales, theta_start,
                          start_covariance, lipschitz=None, firefly_problem=None,
                          acceptance=None):
        """Run ``n_chains`` chains on the tempered posterior and return their draws.

        Parameters
        ----------
        loglik : numba function of type ``LOGLIK``
        data : (N, p) read-only float64 array
        prior_kind : int, prior_scales : (d,) array
            A built-in prior of ``_kernels/priors.py``.
        theta_start : (d,) array
            A central starting point (e.g. the MAP).
        start_covariance : (d, d) or (d,) array
            A covariance (or variances) of the posterior, e.g. the Laplace approximation:
            the scale of the per-chain jitter around ``theta_start`` (its diagonal) and the
            first proposal shape.
        lipschitz : float or None
            The model's per-datum Lipschitz constant in theta, given to acceptance tests that
            bound the range of log-likelihood ratios with it (when the user did not).
        firefly_problem : callable or None
            ``Firefly -> FireflyProblem`` (``_firefly.py``) for a model with collapsible
            bounds (built with the acceptance object's ``bound`` options); ``None`` when it
            has none (then ``acceptance="firefly"`` is refused).
        acceptance : str, AcceptanceTest or None
            The test to run, when the estimator builds it from its own parameters;
            ``None``: ``self.acceptance``.

        Returns
        -------
        draws : (n_chains, n_samples, d)
        sample_stats : dict of (n_chains, n_samples) arrays
        step : (n_chains, d): each chain's final per-coordinate proposal sd
        """
        acceptance = resolve_acceptance(self.acceptance if acceptance is None else acceptance)
        if "lipschitz" in acceptance.get_params() and acceptance.lipschitz is None:
            acceptance.set_params(lipschitz=lipschitz)
        self.acceptance_ = acceptance
        if acceptance.name == "firefly":
            if firefly_problem is None:
                raise ValueError(f"acceptance='firefly' needs a model with a collapsible lower "
                                 f"bound on each likelihood; {type(self).__name__}'s model has "
                                 f"none. Choose another acceptance test.")
            problem = firefly_problem(acceptance)
            chain_function = run_firefly_chain
            chain_args = (problem, acceptance)
        else:
            target = Target(loglik, flat_log_prior, prior_kind,
                            np.ascontiguousarray(prior_scales), data, acceptance,
                            1.0 / float(self.temperature))
            chain_function = run_chain_with_adaptation
        seeds = chain_seeds(self.random_state, self.n_chains)
        start_cov = np.asarray(start_covariance, dtype=np.float64)
        start_sd = np.sqrt(np.diag(start_cov) if start_cov.ndim == 2 else start_cov)
        # Starting points: the centre plus one Laplace sd of jitter, each from its chain's seed.
        starts = [theta_start + start_sd * np.random.default_rng([seed, 1]).standard_normal(
            theta_start.size) for seed in seeds]
        progress = Progress(self.n_chains * (self.n_burnin + self.n_samples * self.thin),
                            self.verbose, type(self).__name__)
        try:
            shown = progress if self.verbose > 0 else None
            if acceptance.name == "firefly":
                arguments = [(*chain_args, start, seed, self.n_burnin, self.n_samples,
                              self.thin, self.step_size, shown)
                             for start, seed in zip(starts, seeds)]
            else:
                arguments = [(target, start, seed, self.n_burnin, self.n_samples, self.thin,
                              self.step_size, start_cov, acceptance.target_acceptance_rate,
                              shown) for start, seed in zip(starts, seeds)]
            chains = run_in_parallel(chain_function, arguments, self.n_jobs)
        finally:
            progress.close()
        draws = np.stack([c["draws"] for c in chains])
        names = ["lp", "acceptance_rate", "n_data_read", "seconds"]
        if acceptance.name == "firefly":
            names.append("n_bright")
        stats = {name: np.stack([c[name] for c in chains]) for name in names}
        self.n_iter_ = self.n_burnin + self.n_samples * self.thin
        self.acceptance_rate_ = float(stats["acceptance_rate"].mean())
        self.step_size_ = np.stack([c["step"] for c in chains])
        return draws, stats, self.step_size_

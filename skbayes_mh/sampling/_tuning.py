"""Warm-up tuners: each looks at a window of warm-up iterations and adjusts a sampler's
parameters; everything is frozen before the first kept draw, so the kept chain is a valid,
time-homogeneous Markov chain."""
import numpy as np

from ..models._optimize import LowRankCovariance
from ._shape import Shape

#: The proposal shape is re-estimated after these fractions of the warm-up, each time from
#: the draws after the first tenth (the transient from the starting point).
SHAPE_UPDATES = (0.25, 0.5, 0.75)


#: The gain of the scale's updates after every few iterations of the first warm-up window
#: (:meth:`ScaleTuner.update_transient`).
TRANSIENT_GAIN = 1.5


class ScaleTuner:
    """Robbins-Monro on the log of the proposal scale toward the sampler's target acceptance
    rate: ``log s += (rate - target) * 2 / sqrt(k + 1)`` after window ``k``, capped at the
    proposal's largest scale. A sampler without a target rate (slice) is left alone.

    The first window also holds the transient from the over-dispersed start, where a scale
    right for the posterior can accept nothing (a Hamiltonian path's energy error grows with
    the distance from the mode): a whole window at that scale, then windows of slowly
    growing steps after the cut, cost a wide posterior (MNIST 1 vs 7, 785 parameters) half
    its warm-up. There the driver calls :meth:`update_transient` every few iterations
    instead, and :meth:`update` leaves window 0 alone."""

    def __init__(self):
        self.transient_updates = 0

    def update_transient(self, sampler, info):
        """``log s += (rate - target) * TRANSIENT_GAIN`` after a few iterations of the first
        window."""
        if self._step(sampler, info, TRANSIENT_GAIN):
            self.transient_updates += 1

    def update(self, sampler, info, window, n_windows):
        if window == 0 and self.transient_updates:
            return
        self._step(sampler, info, 2.0 / np.sqrt(window + 1.0))

    @staticmethod
    def _step(sampler, info, gain):
        target = sampler.target_acceptance_rate
        if not np.isfinite(target):
            return False
        log_scale = np.log(sampler.scale) + (info["accepted"].mean() - target) * gain
        sampler.scale = float(min(np.exp(log_scale), sampler.max_scale))
        return True


class ShapeTuner:
    """Adaptive Metropolis (Haario, Saksman and Tamminen 2001): the covariance of the warm-up
    draws, shrunk toward the initial covariance by how many accepted moves stand behind it
    (``n_moves / (n_moves + 20 d)``: early, correlated draws say little about the shape),
    becomes the proposal shape at the :data:`SHAPE_UPDATES` fractions of the warm-up
    (with a temperature schedule, from the draws at its final temperature only; an update
    before any keeps the shape).

    A low-rank-plus-diagonal initial covariance
    (:class:`~skbayes_mh.models._optimize.LowRankCovariance`) keeps its directions and
    gains: the draws' variances, shrunk in the same way, rescale its diagonal (a few hundred
    draws cannot estimate thousands of correlations)."""

    def __init__(self, initial_covariance, full, initial_mean=None, paths=None):
        self.center = None if initial_mean is None else np.asarray(initial_mean, dtype=float)
        # Hamiltonian paths in non-centred coordinates (_shape.NonCentredPaths): the shape
        # and the draws' moments in those.
        self.paths = paths
        if paths is not None:
            initial_covariance = paths.covariance(initial_covariance)
        self.low_rank = None
        if isinstance(initial_covariance, LowRankCovariance):
            self.low_rank, full = initial_covariance, False
            initial_covariance = initial_covariance.variances()
        covariance = np.asarray(initial_covariance, dtype=np.float64)
        if full and covariance.ndim == 1:
            covariance = np.diag(covariance)
        elif not full and covariance.ndim == 2:
            covariance = np.diag(covariance)
        # (d, d) when full, else the variances (d,): a wide posterior's shape stays O(d).
        self.initial = covariance
        self.full = full
        self.draws = []  # each window's draws (full), or its moments (pooled_moments)
        self.moves = []
        self.window_starts = []  # each kept window's first iteration
        self.n_iterations = 0

    def update(self, sampler, info, window, n_windows):
        updates = {int(f * n_windows) for f in SHAPE_UPDATES}
        if window + 1 > max(updates):  # the shape is final: keep no more draws
            self.draws, self.moves = [], []
            return
        window_draws = info["draws"]
        if self.paths is not None:
            window_draws = self.paths.draws(window_draws)
        if self.full:
            self.draws.append(window_draws)
        else:  # a window's moments: variances need no (n, d) draws kept (a wide model's)
            self.draws.append((window_draws.shape[0], window_draws.mean(axis=0),
                               window_draws.var(axis=0)))
        self.moves.append(int(info["accepted"].sum()))
        self.window_starts.append(self.n_iterations)
        self.n_iterations += window_draws.shape[0]
        if window + 1 not in updates:
            return
        first = max(1, n_windows // 10, self._first_window_at_final_temperature(sampler))
        if first >= len(self.draws):  # none yet (a temperature schedule): keep the shape
            return
        if self.full:
            draws = np.concatenate(self.draws[first:])
            mean, covariance = draws.mean(axis=0), np.atleast_2d(np.cov(draws.T))
        else:
            mean, covariance = pooled_moments(self.draws[first:])
        n_moves = sum(self.moves[first:])
        weight = n_moves / (n_moves + 20.0 * mean.size)
        covariance = weight * covariance + (1 - weight) * self.initial
        if self.low_rank is not None:
            low_rank = self.low_rank
            covariance = LowRankCovariance(low_rank.sd * np.sqrt(covariance / self.initial),
                                           low_rank.basis, low_rank.gain)
        sampler.shape = Shape.from_covariance(covariance, self.full)
        if sampler.proposal.around_reference:
            # pCN is reversible with respect to its reference N(m, L L'): the warm-up's mean
            # and shape make it closer to the posterior, as the Laplace approximation may
            # not be (small data, skewed posteriors).
            sampler.reference_mean = weight * mean + (1 - weight) * self.center


    def _first_window_at_final_temperature(self, sampler):
        """The first window whose draws all sample the final temperature's posterior: 0
        without a temperature schedule (the draws of a hotter one are wider)."""
        schedule = getattr(sampler, "schedule", None)
        if schedule is None:
            return 0
        return int(np.searchsorted(self.window_starts, schedule.last_change, "left"))


def pooled_moments(windows):
    """The mean and (population) variances of the draws of several windows, from each
    window's ``(n, mean, variances)`` (Chan, Golub and LeVeque's pooling): those of the
    windows' draws put together."""
    counts = np.array([n for n, _, _ in windows], dtype=float)
    means = np.array([m for _, m, _ in windows])
    variances = np.array([v for _, _, v in windows])
    total = counts.sum()
    mean = counts @ means / total
    spread = counts @ variances + counts @ (means - mean) ** 2
    return mean, spread / total


class QdbTuner:
    """Firefly's ``q_db`` (when not given): a quarter as many dark proposals as bright points
    per iteration, from the window's mean bright count (see ``auto_q_db``)."""

    def update(self, sampler, info, window, n_windows):
        sampler.q_db = auto_q_db(float(info["n_bright"].mean()), sampler.target.n_data)


class AutoThin:
    """``thin="auto"``: after warm-up, keep every ``thin``-th iteration so that the kept draws
    are nearly independent, when iterations are cheap enough for that to pay.

    The integrated autocorrelation time ``tau`` is estimated from the warm-up's last half
    (after the shape update at half the warm-up; the one at three quarters changes the
    sampler little; with a temperature schedule, of the iterations at its final
    temperature) as ``n / bulk ESS`` for each parameter: the largest, but at most
    :data:`TAU_MEDIAN_REACH` times the median parameter's. ``thin`` is its ceiling
    (``ess_goal``: that of ``tau * min(1, ess_goal / n_draws)``), clipped to
    ``[1, max_thin]``; with ``goal_max_thin`` (cheap iterations), the larger of ``tau``'s
    ceiling clipped to ``max_thin`` (nearly independent draws) and the goal's clipped to
    ``goal_max_thin`` (a slowly mixing chain still reaches the goal).

    The largest of ``d`` noisy estimates errs upward, and the slowest chain's thinning sets
    the fit's time: on scikit-learn's breast cancer data (31 parameters, largest ``tau``
    4.6 over 20,000 iterations), the largest over a warm-up's last quarter (250 draws)
    ranged from 4 to 14.5 (10th to 90th percentile) and thinned one chain in four by 3 to
    10 where 2 reaches the goal; over the last half with the cap, 97% of the estimates
    thin by 2. A single parameter mixing more than three times slower than the median may
    then fall short of ``ess_goal``; the convergence check names it.

    With ``typical``, ``thin`` is the ceiling of the median parameter's time, whatever
    the goal (:func:`~skbayes_mh._core.auto.choose_thin` asks it of the full-data tests
    under ``n_draws="auto"``, whose rounds reach the goal): thinning by ``k`` costs a
    parameter whose time is below ``k`` a share of its effective draws, and the rounds'
    R-hat over every parameter needs them all, so a full-data chain thinned by its
    slowest parameter paid for iterations it then threw away (synthetic 5,000 x 100
    logistic data: thin 4 or 5 where the median time is 1.5 to 2, bulk ESS 0.17 to 0.21
    an iteration against 0.39 to 0.51 without thinning). Up to the median's time it
    costs the median parameter nothing, and the stored draws (which a wide posterior's
    predictions average) stay near the effective ones.

    Parameters
    ----------
    max_thin : int
        Small for full-data tests (each iteration reads every row: thinning multiplies the
        cost of the fit); larger for subsampling tests and Firefly, whose iterations read a
        few hundred rows, so that extra iterations cost less than the setup.
    ess_goal : float or None
        Thin only as far as ``n_draws`` kept draws need for a bulk ESS of ``ess_goal``
        (None: to nearly independent draws).
    n_draws : int or None
        The kept draws per chain (with ``ess_goal``).
    goal_max_thin : int or None
        With ``ess_goal``: thin to independence up to ``max_thin``, and beyond it as far as
        the goal needs, up to ``goal_max_thin`` (None: the goal within ``max_thin`` only).
    typical : bool, default=False
        Thin by the median parameter's autocorrelation time (to its independence), with
        no goal.
    """

    #: Fewer warm-up draws than this give no reliable estimate: thin stays 1.
    MIN_DRAWS = 100
    #: ``tau`` is at most this many times the median parameter's.
    TAU_MEDIAN_REACH = 3.0

    def __init__(self, max_thin, ess_goal=None, n_draws=None, goal_max_thin=None,
                 typical=False):
        self.max_thin = int(max_thin)
        self.ess_goal = ess_goal
        self.n_draws = n_draws
        self.goal_max_thin = goal_max_thin
        self.typical = bool(typical)

    def __call__(self, warmup_draws, sampler):
        schedule = getattr(sampler, "schedule", None)
        if schedule is not None:  # the final temperature's draws only
            warmup_draws = warmup_draws[schedule.last_change:]
        draws = warmup_draws[-(warmup_draws.shape[0] // 2):]
        if self.max_thin <= 1 or draws.shape[0] < self.MIN_DRAWS:
            return 1
        from ..diagnostics import ess_bulk

        with np.errstate(all="ignore"):
            ess = np.atleast_1d(ess_bulk(draws[None]))
        ess = ess[np.isfinite(ess)]
        times = draws.shape[0] / np.maximum(ess, 1.0) if ess.size else [draws.shape[0]]
        if self.typical:  # to the median parameter's independence, whatever the goal
            return int(np.clip(np.ceil(np.median(times)), 1, self.max_thin))
        autocorrelation_time = min(np.max(times), self.TAU_MEDIAN_REACH * np.median(times))
        for_goal = autocorrelation_time
        if self.ess_goal is not None:
            # Never beyond independence: fewer draws than the goal cannot reach it anyway.
            for_goal *= min(1.0, self.ess_goal / max(self.n_draws, 1))
        if self.goal_max_thin is None:
            return int(np.clip(np.ceil(for_goal), 1, self.max_thin))
        independent = np.clip(np.ceil(autocorrelation_time), 1, self.max_thin)
        return int(max(independent, np.clip(np.ceil(for_goal), 1, self.goal_max_thin)))


class SettledWarmup:
    """``n_warmup="auto"``: a chain's warm-up ends after the first window, from
    :data:`MIN_WINDOWS` on, at which it is tuned and past its start, judged from its own
    iterations alone (so its draws depend on its seed only, whatever ``n_jobs``); at the
    latest after all of them (the warm-up's length is the cap).

    Tuned: the acceptance rate of the last two windows lies within :data:`RATE_BAND` of
    the sampler's target (the step size has stopped moving: the scale tuner moves it by
    the rate's distance from the target), when the sampler has a target. Past its start:
    the log posterior of the iterations after the first window (the transient from the
    start) has no trend, the mean of its first half within :data:`LEVEL_Z` Monte Carlo
    standard errors (from each half's effective sample size) of its second half's. From
    :data:`MIN_WINDOWS` windows on, the shape has been re-estimated once
    (:class:`ShapeTuner`, at a quarter of the warm-up) and the scale tuned to it for a
    window.

    Parameters
    ----------
    min_iterations : int, default=0
        Warm-up iterations run before it may end, whatever the windows: a thinning rule
        (:class:`AutoThin`) reads the warm-up's last half, and needs
        ``2 * AutoThin.MIN_DRAWS`` (a chain thinned by 1 for want of them stores every
        iteration: a short-wide fit's 100 x 2,000 took 3,038 draws a chain where it
        thins by 6 to 10)."""

    #: Windows (of the warm-up's ``n_windows``) run before the warm-up may end.
    MIN_WINDOWS = 6
    #: The last two windows' acceptance rate is at most this far from the target.
    RATE_BAND = 0.1
    #: The two halves' mean log posteriors are at most this many standard errors apart.
    LEVEL_Z = 2.0

    def __init__(self, min_iterations=0):
        self.min_iterations = int(min_iterations)
        self.windows = []  # each window's (log posteriors, acceptance indicators)
        self.iterations = 0

    def __call__(self, sampler, info, window, n_windows):
        """Whether the warm-up ends after ``window`` (its iterations' outputs ``info``)."""
        self.windows.append((np.asarray(info["lp"], dtype=float),
                             np.asarray(info["accepted"], dtype=float)))
        self.iterations += self.windows[-1][0].size
        if (window + 1 < self.MIN_WINDOWS or window + 1 >= n_windows
                or self.iterations < self.min_iterations):
            return False
        target = sampler.target_acceptance_rate
        if np.isfinite(target):
            rate = np.concatenate([accepted for _, accepted in self.windows[-2:]]).mean()
            if abs(rate - target) > self.RATE_BAND:
                return False
        return _no_trend(np.concatenate([lp for lp, _ in self.windows[1:]]), self.LEVEL_Z)


def _no_trend(values, z_limit):
    """Whether the first and second halves of ``values`` (one chain's, in order) have means
    within ``z_limit`` standard errors, each half's error from its bulk ESS."""
    from ..diagnostics import ess_bulk

    half = values.size // 2
    first, second = values[:half], values[half:2 * half]
    if half < 4 or not (np.all(np.isfinite(first)) and np.all(np.isfinite(second))):
        return False
    spread = [part.var() for part in (first, second)]
    if max(spread) == 0.0:  # a chain that never moved has no level to judge
        return False
    with np.errstate(all="ignore"):  # both halves in one call, each a parameter of its own
        ess = ess_bulk(np.stack([first, second], axis=-1)[None])
    error = np.sqrt(sum(v / max(e, 1.0) for v, e in zip(spread, ess) if np.isfinite(e)))
    if not np.isfinite(error) or error == 0.0:
        return False
    return abs(first.mean() - second.mean()) <= z_limit * error


#: With ``q_db=None``, dark points proposed bright per iteration, as a fraction of the bright
#: count (see :func:`auto_q_db`).
DARK_PROPOSALS_PER_BRIGHT = 0.25


def auto_q_db(n_bright, n_data):
    """``q_db`` giving ``DARK_PROPOSALS_PER_BRIGHT`` dark proposals per bright point per
    iteration, at least one.

    Each dark proposal is a likelihood query at a random row (a cache miss on large data),
    while the parameter update queries the same bright rows again and again. On the MNIST
    benchmarks (logistic MH, softmax MALA), a quarter gave more effective samples per
    second than one dark proposal per bright point, at nearly the same effective samples
    per iteration. Fewer still lets brightness relax too slowly from a poor start.
    """
    target = DARK_PROPOSALS_PER_BRIGHT * max(n_bright, 1.0)
    return float(np.clip(max(target, 1.0) / max(n_data - n_bright, 1.0), 1.0 / n_data, 1.0))

"""``fit_posterior``: the functional core every estimator's ``fit`` calls once its data,
likelihood family and prior are built. It approximates the posterior (MAP and Laplace),
resolves the ``"auto"`` proposal and thinning, prepares what the chains share (control
variates or Firefly's bounds), seeds and runs the chains in parallel and collects their
draws; ``continue_posterior`` runs a ``warm_start`` fit's chains on. Neither reads or sets
an estimator's attributes: they take their inputs as arguments and return a
:class:`FitResult`."""
import contextlib
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np
from sklearn.utils import Bunch

from .._passes import one_blas_thread, return_freed_memory
from ..models._evidence import evidence_scale
from ..proposals import resolve_proposal
from ..sampling import (AutoThin, Progress, ScaleTuner, Shape, Target, chain_kernel,
                        chain_seeds, continue_chain, interruptible, run_chain, run_in_parallel,
                        sampler_for)
from ..sampling._parallel import WorkerLost, runs_in_this_process
from ..sampling._shared import sharing_scope
from ..sampling._schedule import TemperatureSchedule
from ..sampling._tuning import SettledWarmup
from .auto import (choose_acceptance, choose_laplace, choose_proposal, choose_thin,
                   choose_warmup, is_auto, settles_warmup, shaped_for_paths, warmup_bound)
from .chains import chain_levels, chain_starts
from .convergence import (AUTO_DRAWS_MARGIN, AUTO_FIRST_DRAWS, AUTO_MAX_DRAWS,
                          MIN_ESS_PER_CHAIN, convergence_check, warn_unvisited_modes)
from .span import complete_draws, row_span
from .approximation_error import test_error

#: A model with at most this many parameters is fitted with BLAS on one thread throughout.
#: Its (d, d) factorisations then take milliseconds on one thread, and OpenBLAS's threads,
#: once woken by a product of its setup, spin for about a tenth of a second on a core the
#: chains need: scikit-learn's breast cancer data, 4 chains on 2 cores, 0.66 s -> 0.61 s
#: (the full-data passes and the chains hold BLAS to one thread whatever the size).
ONE_BLAS_THREAD_MAX_PARAMS = 1000


@dataclass(frozen=True)
class SamplerSettings:
    """The settings of a fit's chains (an estimator's parameters of the same names).

    ``acceptance`` is resolved already (the family may depend on it); ``proposal``,
    ``step_size``, ``n_warmup`` and ``thin`` may be ``"auto"``. ``bounds_proposal`` is the proposal
    ``proposal="auto"`` gives a sampler on the model's bounds (Firefly); ``name`` names
    the fit in messages; ``warm_start`` words the interruption warning; ``row_span``
    lets the chains sample the rows' span where that reduces the model
    (:mod:`~skbayes_mh._core.span`).
    """

    proposal: object = "auto"
    step_size: object = "auto"
    temperature: float = 1.0
    temperature_schedule: tuple = None
    n_draws: object = 1000
    n_warmup: object = "auto"
    thin: object = "auto"
    n_chains: int = 4
    n_jobs: object = None
    random_state: object = None
    verbose: int = 0
    warm_start: bool = False
    bounds_proposal: str = "mala"
    name: str = "fit"
    row_span: bool = True
    max_time: float = None


@dataclass
class FitResult:
    """What :func:`fit_posterior` returns.

    Attributes
    ----------
    draws : ndarray of shape (n_chains, n_draws, d)
        Theta as the family lays it out, cut to the draws every kept chain reached.
    stats : dict of ndarray of shape (n_chains, n_draws)
    chains : list of ChainResult
        Every chain's result (for a later ``warm_start`` continuation).
    levels : ndarray of shape (n_chains, n_evaluated)
        The exact tempered log posterior at evenly spaced draws of each chain (for
        :func:`~skbayes_mh._core.convergence.check_chain_levels`).
    test_error : Bunch or None
        An approximate test's estimated per-test error (:func:`test_error`).
    interrupted : bool
    thin, n_iter : ndarray of shape (n_chains,)
    acceptance_rate : float
    step_size : ndarray of shape (n_chains, d)
    bright_fraction : float or None
        Firefly's mean share of bright rows.
    span : RowSpan or None
        The reduction the chains sampled (:mod:`~skbayes_mh._core.span`): ``draws`` are in
        the original layout, the chains' own (and ``step_size``) in the reduced one.
    checked : ndarray of shape (n_chains, n_draws, k) or None
        With ``span``: the sampled coordinates as the convergence targets read them
        (:func:`_reported`), which the convergence check judges. The rest of ``draws`` are
        exact independent draws from the prior, whose R-hat is noise (over 2,000 such
        coefficients its largest exceeds 1.01 by chance at a few hundred draws).
    prior_scale : float or None
        The scale the data chose for the weights' prior (``prior.learn_scale``), which
        multiplied its scales; None when it was given.
    stopped : str or None
        With ``n_draws="auto"``: why the rounds stopped short of the convergence targets
        (``"max_draws"``, ``"max_time"``, ``"interrupted"``; :func:`draw_until_converged`),
        None when they met them (and always with a fixed ``n_draws``).
    known : tuple or None
        With ``n_draws="auto"`` met: the reported draws the last round judged and their
        ``(r_hat, ess_bulk, ess_tail)`` (:func:`~skbayes_mh._core.convergence.
        convergence_check`), which the fit's diagnostics reuse instead of computing them
        again; None otherwise.
    n_warmup : ndarray of shape (n_chains,)
        The warm-up iterations each kept chain ran.
    acceptance, proposal, control_variates, data_passes, setup_time :
        The fit's resolved test and proposal, whether it read control variates, its
        full-data passes and its seconds before the chains; None for a continuation (the
        continued fit's stand).
    """

    draws: np.ndarray
    stats: dict
    chains: list
    levels: np.ndarray
    test_error: object
    interrupted: bool
    thin: np.ndarray
    n_iter: np.ndarray
    n_warmup: np.ndarray
    acceptance_rate: float
    step_size: np.ndarray
    bright_fraction: object = None
    span: object = None
    checked: object = None
    prior_scale: object = None
    stopped: object = None
    known: object = None
    acceptance: object = None
    proposal: object = None
    control_variates: object = None
    data_passes: object = None
    setup_time: object = None


def fit_posterior(family, data, prior, acceptance, settings, passes=None, started=None):
    """Sample the tempered posterior of ``family`` on ``data`` under ``prior``.

    Parameters
    ----------
    family : LinearModel
        The likelihood family (:mod:`skbayes_mh.models`).
    data : LinearData
    prior : BuiltinPrior
    acceptance : AcceptanceTest or "auto"
        The test: an object is cloned (a confidence test's missing Lipschitz constant is
        then filled in from the model); ``"auto"`` is chosen here, once, from the numbers
        of rows and parameters (:func:`~skbayes_mh._core.auto.choose_acceptance`).
    settings : SamplerSettings
    passes : dict or None
        Full-data passes made before (the validation pass), added to.
    started : float or None
        ``time.perf_counter()`` when the fit started (for ``setup_time``); None: now.

    Returns
    -------
    FitResult
        Ctrl-C stops every chain within about a second: the draws every chain reached are
        kept, with a warning.

    Where the weights have more coordinates than the rows inform (:func:`~skbayes_mh.
    _core.span.row_span`), the chains sample the model reduced to the rows' span and each
    kept draw is completed by an exact draw of the rest from the prior. A prior whose
    weights' scale is to be learned (``prior.learn_scale``) gets the scale that maximises
    the model's evidence (:func:`~skbayes_mh.models._evidence.evidence_scale`) first.
    """
    started = time.perf_counter() if started is None else started
    passes = {} if passes is None else passes
    acceptance = choose_acceptance(acceptance, data.n_rows, family.n_params(data))
    span = row_span(data, prior) if settings.row_span else None
    if span is not None:
        passes["row_span"] = 1.0
        data, prior = span.data, span.prior
    scale = None
    if prior.learn_scale:  # the weights' scale the data choose, on the reduced model
        scale, passes["prior_scale"] = evidence_scale(family, data, prior,
                                                      1.0 / float(settings.temperature))
        prior = prior.with_weight_scale(scale)
        if span is not None:
            span.prior = prior
    small = family.n_params(data) <= ONE_BLAS_THREAD_MAX_PARAMS
    with one_blas_thread() if small else contextlib.nullcontext():
        with sharing_scope():  # Ray's workers get the data once for every round
            result = _fit_posterior(family, data, prior, acceptance, settings, passes,
                                    started)
    result.prior_scale = scale
    return _completed(result, span)


def _completed(result, span):
    """``result`` with its draws in the original layout when the chains sampled ``span``
    (:func:`~skbayes_mh._core.span.complete_draws`, each chain's complement from its own
    seed)."""
    if span is not None:
        kept = [chain for chain in result.chains if not isinstance(chain, WorkerLost)
                and chain.warmup_complete and chain.n_draws > 0]
        if kept:
            result.checked = _reported(result.draws, kept[0].sampler.target)
        result.draws = complete_draws(result.draws, [chain.seed for chain in kept], span)
    result.span = span
    return result


def _fit_posterior(family, data, prior, acceptance, settings, passes, started):
    if acceptance.needs_bounds:  # before any pass over the data
        family.check_bounds()
    if runs_in_this_process():  # a first fit: the chains' loop compiles beside the setup
        chain_kernel(acceptance, None if is_auto(settings.proposal)
                     else resolve_proposal(settings.proposal)).compile_elsewhere()
    full, low_rank = choose_laplace(acceptance, data.n_rows, family.n_params(data),
                                    data.n_rows * family.n_outputs * data.row_cost)
    target = Target.linear(family, data, prior, 1.0 / float(settings.temperature), full,
                           lipschitz=acceptance.needs_lipschitz, low_rank=low_rank)
    warn_unvisited_modes(target.extra.get("modes", []), settings.n_chains, settings.name)
    if data.weights.size:  # the confidence sampler's range bound scales with it
        target.max_weight = float(data.weights.max())
    d = target.n_params
    if acceptance.needs_lipschitz and acceptance.lipschitz is None:
        acceptance.set_params(lipschitz=target.lipschitz)  # the model's, shown in acceptance_
    uses_cv = acceptance.uses_control_variates(target)
    auto_draws = is_auto(settings.n_draws)
    n_draws = AUTO_FIRST_DRAWS if auto_draws else int(settings.n_draws)
    shaped = shaped_for_paths(target, settings.n_chains * (warmup_bound(settings.n_warmup)
                                                           + n_draws))
    proposal = choose_proposal(settings.proposal, acceptance, uses_cv, shaped,
                               settings.bounds_proposal)
    until_settled = settles_warmup(settings.n_warmup, acceptance,
                                   settings.temperature_schedule, auto_draws)
    settings = replace(settings, n_warmup=choose_warmup(
        settings.n_warmup, acceptance, proposal, shaped, d, settings.temperature_schedule,
        auto_draws))
    passes["map_laplace"] = float(target.n_passes)
    sampler_class = sampler_for(acceptance)
    shared = sampler_class.prepare(target, acceptance, uses_cv, passes, settings.n_chains)
    if data.distributed:  # the chains read rows at random: bring them here
        gathered = data.gathered()
        target.data, target.spec = gathered, family.spec(gathered)
    data_passes = Bunch(**passes, total=float(sum(passes.values())))
    return_freed_memory()  # the setup's blocks, before the draws are allocated
    setup_time = time.perf_counter() - started
    seeds = chain_seeds(settings.random_state, settings.n_chains)
    thin = choose_thin(settings.thin, acceptance, data.n_rows, d, n_draws,
                       AUTO_DRAWS_MARGIN * MIN_ESS_PER_CHAIN if auto_draws else None)
    # A thinning rule reads the warm-up's last half: a warm-up ended early leaves it that.
    thinning_draws = 2 * AutoThin.MIN_DRAWS if getattr(thin, "max_thin", 1) > 1 else 0
    # With thin="auto" the bars count one iteration per draw (thin is chosen later).
    progress = Progress(settings.n_chains, settings.n_warmup + n_draws
                        * (thin if isinstance(thin, int) else 1), settings.verbose,
                        settings.name)
    # Chains in this process write their kept draws into one array for all of them.
    out = np.empty((settings.n_chains, n_draws, d)) if runs_in_this_process() else None
    stopped = None
    with interruptible(settings.name) as stop:
        arguments = []
        for c, (seed, start) in enumerate(zip(seeds, chain_starts(target, seeds))):
            sampler, tuners = _chain_sampler(sampler_class, target, acceptance, proposal,
                                             shared, settings.step_size,
                                             settings.temperature_schedule)
            arguments.append((sampler, start, seed, settings.n_warmup, n_draws, thin,
                              tuners, progress.chain(c), stop,
                              None if out is None else out[c],
                              SettledWarmup(thinning_draws) if until_settled else None))
        try:
            round_started = time.perf_counter()
            chains = run_in_parallel(run_chain, arguments, settings.n_jobs)
            known = None
            if auto_draws:
                chains, stopped, known = draw_until_converged(
                    chains, settings, stop, progress, started,
                    time.perf_counter() - round_started)
        finally:
            progress.close()
    result = _collect(chains, data, _with_draws(settings, chains), out)
    result.stopped, result.known = stopped, known
    result.acceptance, result.proposal = acceptance, proposal
    result.control_variates, result.data_passes = uses_cv, data_passes
    result.setup_time = setup_time
    return result


def continue_posterior(chains, data, settings, span=None):
    """Run a ``warm_start`` fit's ``chains`` on until each holds ``settings.n_draws``
    draws (the draws equal those of one longer fit, draw for draw); ``span``: the
    reduction they sample (:attr:`FitResult.span`), whose draws are completed.

    Returns
    -------
    FitResult
        Its ``acceptance`` ... ``setup_time`` are None: the continued fit's stand.
    """
    started = time.perf_counter()
    auto_draws = is_auto(settings.n_draws)
    have = min(c.n_draws for c in chains)
    per_chain = max((have if auto_draws else settings.n_draws) - have, 0) * chains[0].thin
    progress = Progress(settings.n_chains, per_chain, settings.verbose, settings.name)
    stopped = known = None
    with interruptible(settings.name) as stop, sharing_scope():
        try:
            if auto_draws:  # on from where the chains are, as far as the rule says
                chains, stopped, known = draw_until_converged(chains, settings, stop,
                                                              progress, started)
            else:
                arguments = [(chain, settings.n_draws, progress.chain(c), stop)
                             for c, chain in enumerate(chains)]
                chains = run_in_parallel(continue_chain, arguments, settings.n_jobs)
        finally:
            progress.close()
    result = _collect(chains, data, _with_draws(settings, chains))
    result.stopped, result.known = stopped, known
    return _completed(result, span)


def draw_until_converged(chains, settings, stop, progress, started, last_round=None):
    """``n_draws="auto"``: run the chains on in rounds until their draws meet the
    convergence targets (:func:`~skbayes_mh._core.convergence.draws_needed`, on the
    quantities the fit reports: :func:`_reported`), each round
    sized by the ESS so far, up to :data:`~skbayes_mh._core.convergence.AUTO_MAX_DRAWS` a
    chain and within ``settings.max_time`` seconds from ``started``.

    The rounds depend on the draws alone, never on the time or ``n_jobs``, so a fit's draws
    are the same for a seed however it runs, and equal one longer fit's draw for draw: only
    the time budget, when it stops the rounds, depends on the machine.

    Parameters
    ----------
    chains : list of ChainResult
    settings : SamplerSettings
    stop : StopSignal
        Ctrl-C: the chains stop within a second and no round follows.
    progress : Progress
    started : float
        ``time.perf_counter()`` when the fit started (for the budget).
    last_round : float or None
        Seconds the round that made the chains' draws took (None: not known), for the
        budget's estimate of the next round's.

    Returns
    -------
    chains : list of ChainResult
    stopped : str or None
        None when the targets were met; ``"max_draws"`` or ``"max_time"`` otherwise (or
        ``"interrupted"``).
    known : tuple or None
        When the targets were met: the reported draws judged last and their statistics
        (:attr:`FitResult.known`).
    """
    while True:
        live = [k for k, c in enumerate(chains)
                if not isinstance(c, WorkerLost) and c.warmup_complete]
        if not live or stop.is_set() or any(chains[k].interrupted for k in live):
            return chains, "interrupted", None
        have = min(chains[k].n_draws for k in live)
        draws = _reported(np.stack([chains[k].draws[:have] for k in live]),
                          chains[live[0]].sampler.target)
        wanted, statistics = convergence_check(draws, len(live))
        if wanted is None:
            return chains, None, (draws, statistics)
        wanted = min(wanted, AUTO_MAX_DRAWS)
        if wanted <= have:
            return chains, "max_draws", None
        if settings.max_time is not None:
            left = settings.max_time - (time.perf_counter() - started)
            per_draw = last_round / have if last_round else 0.0
            if per_draw > 0:
                wanted = min(wanted, have + int(left / per_draw))
            if left <= 0 or wanted <= have:
                return chains, "max_time", None
        for k in live:
            tracker = progress.chain(k)
            if tracker is not None:
                tracker.extend((wanted - chains[k].n_draws) * chains[k].thin)
        arguments = [(chains[k], wanted, progress.chain(k), stop) for k in live]
        round_started = time.perf_counter()
        continued = run_in_parallel(continue_chain, arguments, settings.n_jobs)
        last_round = (time.perf_counter() - round_started) * have / (wanted - have)
        chains = list(chains)
        for k, chain in zip(live, continued):
            chains[k] = chain


def _reported(draws, target):
    """The chains' draws ``(n_chains, n, d)`` as the quantities the fit reports and checks
    (:meth:`~skbayes_mh.models.LinearModel.posterior_variables`, flattened side by side:
    a softmax's blocks centred over the classes, say), ``(n_chains, n, k)``; a user's
    model's as they are."""
    if target.kind != "linear":
        return draws
    data = target.data
    variables = target.model.posterior_variables(draws, data.n_features, data.intercept)
    return np.concatenate([np.reshape(value, draws.shape[:2] + (-1,))
                           for value in variables.values()], axis=2)


def _with_draws(settings, chains):
    """``settings`` with ``n_draws`` the draws the kept chains reached (the interruption
    warning's "of ... draws"), for ``n_draws="auto"``."""
    if not is_auto(settings.n_draws):
        return settings
    reached = [c.n_draws for c in chains if not isinstance(c, WorkerLost)]
    return replace(settings, n_draws=max(reached, default=0))


def _chain_sampler(sampler_class, target, acceptance, proposal, shared, step_size,
                   temperature_schedule=None):
    """One chain's sampler and its warm-up tuners: with ``step_size="auto"`` shaped by the
    Laplace covariance and tuned in warm-up (scale, then what the sampler tunes beyond it),
    else an isotropic step as in the papers (only the sampler's own tuners); with a
    temperature schedule, its own (the tuned step rescaled where the temperature
    changes)."""
    d = target.n_params
    auto = is_auto(step_size)
    if auto:
        shape = Shape.from_covariance(target.laplace_covariance, target.full_covariance)
        scale = proposal.initial_scale(d)
    else:
        shape, scale = Shape.identity(d), float(step_size)
    sampler = sampler_class(target, acceptance, proposal, shape, scale, shared)
    if auto and getattr(sampler, "paths", None) is not None:
        sampler.shape = sampler.paths.shape(shape)  # non-centred Hamiltonian paths
    if temperature_schedule is not None:
        sampler.schedule = TemperatureSchedule(temperature_schedule, rescale_step=auto)
    tuners = [ScaleTuner()] if auto else []
    return sampler, tuners + sampler.warmup_tuners(shaped=auto)


def _without_lost(chains, lost, name):
    """The chains whose worker did not die under them, with a warning naming the lost ones
    and how (a ``RuntimeError`` when every chain was lost)."""
    causes = "; ".join(f"chain {c}: {type(chains[c].error).__name__}: "
                       f"{str(chains[c].error).splitlines()[0][:200]}" for c in lost)
    kept = [chain for chain in chains if not isinstance(chain, WorkerLost)]
    if not kept:
        raise RuntimeError(f"{name}.fit: the worker of every chain died under it (after the "
                           f"backend's retries), so nothing was kept ({causes}).")
    warnings.warn(
        f"{name}.fit: the worker of chain{'s' if len(lost) > 1 else ''} "
        f"{', '.join(map(str, lost))} died under it (after the backend's retries), so "
        f"the fit keeps the other {len(kept)} chain{'s' if len(kept) > 1 else ''} "
        f"({causes}). Fit again to sample with every chain.", UserWarning, stacklevel=6)
    return kept


def _collect(chains, data, settings, out=None):
    """The draws and statistics of the chains' results.

    When the chains were interrupted, those past their warm-up are kept, each cut to the
    draws all of them reached (with a warning); without any, KeyboardInterrupt is raised
    again. ``out``: the array of shape (n_chains, n_draws, d) the chains wrote their draws
    into (:func:`run_chain`'s ``out``), used as it is when every chain filled its row.
    """
    name = settings.name
    lost = [c for c, chain in enumerate(chains) if isinstance(chain, WorkerLost)]
    if lost:
        chains = _without_lost(chains, lost, name)
    interrupted = any(c.interrupted for c in chains)
    # Interrupted: the chains that finished their warm-up (with n_chains above n_jobs,
    # some may not have started), each cut to the draws all of them reached.
    started = [c for c in chains if c.warmup_complete and c.n_draws > 0]
    if not started:
        raise KeyboardInterrupt(f"{name}.fit was interrupted before any chain had "
                                f"finished its warm-up: nothing was kept.")
    n_kept = min(c.n_draws for c in started)
    if interrupted:
        dropped = len(chains) - len(started)
        warnings.warn(
            f"{name}.fit was interrupted: it keeps the first {n_kept} of {settings.n_draws} "
            f"draws of {len(started)} chain{'s' if len(started) > 1 else ''}"
            + (f" ({dropped} had not finished warming up)" if dropped else "")
            + "; posterior_, diagnostics_ and predictions use them."
            + (" Fit again to continue the chains (warm_start=True)." if settings.warm_start
               else " With warm_start=True, a fit can continue interrupted chains."),
            UserWarning, stacklevel=5)
    # One array for all chains; each chain's result then views its row of it (warm_start
    # continues from there), so the draws are not held twice.
    in_place = (out is not None and len(started) == len(chains) == out.shape[0]
                and n_kept == out.shape[1]
                and all(np.may_share_memory(c.draws, out[k]) for k, c in enumerate(started)))
    if in_place:
        draws = out
    else:
        draws = np.empty((len(started), n_kept, started[0].draws.shape[1]))
        for k, chain in enumerate(started):
            draws[k] = chain.draws[:n_kept]
            if chain.n_draws == n_kept:
                chain.draws = draws[k]
    stats = {key: np.stack([c.stats[key][:n_kept] for c in started])
             for key in started[0].stats}
    thin = np.array([c.thin for c in started])
    n_warmup = np.array([c.n_warmup for c in started])
    return FitResult(
        draws=draws, stats=stats, chains=chains,
        levels=chain_levels(started[0].sampler.target, draws,
                            getattr(started[0].sampler, "cv", None),
                            stats["lp"] if started[0].sampler.records_log_posterior else None),
        test_error=test_error(started, draws), interrupted=interrupted,
        thin=thin,
        n_iter=n_warmup + n_kept * thin,
        n_warmup=n_warmup,
        acceptance_rate=float(stats["acceptance_rate"].mean()),
        step_size=np.stack([c.sampler.scale * c.sampler.shape.scales() for c in started]),
        bright_fraction=(float(stats["n_bright"].mean()) / data.n_rows
                         if "n_bright" in stats else None))

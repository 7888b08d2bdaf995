"""The ``"auto"`` rules of the sampler settings: which acceptance test, which proposal and
how much thinning a fit gets when the user leaves the choice to the library. Each rule
reads the data's size and what the test and proposal can do (their capabilities), never
their names; docs/choosing.md has the measurements behind the constants."""
import numpy as np

from ..acceptance import resolve_acceptance
from ..models._optimize import full_covariance_affordable, low_rank_directions
from ..proposals import resolve_proposal
from ..sampling import AutoThin

#: ``acceptance="auto"``: the exact Metropolis test on all rows up to this many rows, the
#: minibatch test with control variates above (docs/choosing.md has the measurements) ...
AUTO_EXACT_MAX_ROWS = 5000
#: ... when there are at least this many rows per parameter. With fewer the posterior is
#: too wide for the rows' Taylor proxies: MNIST 1 vs 7 on raw pixels (13,007 rows, 785
#: parameters, 17 a parameter) had the minibatch test read 12,306 rows per test with
#: Hamiltonian paths and the chains stall, where the exact test mixes; MNIST 7 vs 9 on 50
#: components (240 a parameter) reads 240 rows per test.
AUTO_MIN_ROWS_PER_PARAM = 100
#: ``thin="auto"``: at most this many iterations per kept draw for the tests that read a
#: minibatch per iteration (and Firefly), to nearly independent draws ...
AUTO_MAX_THIN = 10
#: ... and, for a chain that mixes more slowly, up to this many as far as its kept draws
#: need for :data:`AUTO_FULL_DATA_ESS_PER_CHAIN`: ``FireflySoftmaxClassifier(acceptance=
#: "firefly")`` on iris (autocorrelation time near 190 iterations) ended at R-hat 1.017
#: and bulk ESS 208 with thin 10, and converges with 50 (R-hat 1.004, ESS 934).
AUTO_SLOW_MAX_THIN = 50
#: ``thin="auto"`` with a full-data test: each iteration reads every row, so thinning
#: multiplies the fit's cost. It thins (up to ``AUTO_MAX_THIN``) only while a kept draw
#: reads at most this many row-parameter products (rows x parameters x iterations): small
#: data, whose whole fit then takes seconds (scikit-learn's breast cancer data, 569 x 31,
#: thin at most 10; digits, 1,347 x 650, at most 2), not MNIST's 1 vs 7 (13,007 x 785).
AUTO_FULL_DATA_WORK = 2_000_000
#: ... and only as far as each chain's kept draws need to reach this bulk ESS (2.5 times
#: the convergence check's 100 a chain), not to independence: breast cancer's default fit
#: then thins most chains by 1 and some by 2 (bulk ESS 1,648 to 2,155 of 4,000 over five
#: seeds; see :class:`~skbayes_mh.sampling.AutoThin` for the estimate) instead of 5 to 10;
#: its MALA chains by 5 or 6.
AUTO_FULL_DATA_ESS_PER_CHAIN = 250

#: ``n_warmup="auto"``: warm-up iterations per chain ...
AUTO_WARMUP = 1000
#: ... and this many (nutpie's default) for a full-data test with Hamiltonian paths in the
#: Laplace shape on at least :data:`AUTO_SHORT_WARMUP_MIN_PARAMS` parameters. The chains
#: start from the Laplace approximation, and the warm-up's draws cannot refine a shape that
#: wide (they move it by ``n_moves / (n_moves + 20 d)``: under 5% from 1,000 iterations at
#: 500 parameters), so the warm-up tunes the step and passes the start's transient, which a
#: few hundred iterations do: scikit-learn's digits (585 parameters) 12.7-13.5 s -> 8.6-9.2
#: s, MNIST 1 vs 7 on raw pixels 176-195 s -> 119-123 s, as converged. Small models keep
#: the long warm-up: their shape does learn from it (breast cancer, 31 parameters: a
#: 300-iteration warm-up left min bulk ESS 308-493 against 1,376-1,599). docs/choosing.md
#: has the measurements.
AUTO_SHORT_WARMUP = 300
AUTO_SHORT_WARMUP_MIN_PARAMS = 500


#: ``proposal="auto"`` with a low-rank-plus-diagonal shape (wide posteriors): Hamiltonian
#: paths while a fit's nominal cost, every chain's iterations times
#: ``AUTO_NOMINAL_LEAPFROG_STEPS`` full-data gradients, is at most this many row-parameter
#: products (about ten minutes on two cores); beyond, the random walk, so that a default
#: fit ends. The nominal steps are what a shape that fits the posterior needs; where it
#: does not (rare features under data-scaled priors, docs/choosing.md), paths take ten
#: times more and the fit as long.
AUTO_HAMILTONIAN_MAX_WORK = 1e13
AUTO_NOMINAL_LEAPFROG_STEPS = 10


#: A full Laplace covariance shapes the proposal of a test that reads every row only while
#: its factor costs at most this many full-data gradients a step: it holds ``d^2`` values,
#: read twice a Hamiltonian step (a move and a whitening), against the gradient's ``N c``
#: products (``c`` a row's cost times the outputs), also read twice; beyond, the
#: low-rank-plus-diagonal shape (``4 k d`` a step) where it affords some directions, whose
#: paths take more steps (1.5 to 1.8 times as many on the data below). Two cores, defaults,
#: the rows' span sampled (``docs/choosing.md``):
#:
#: - MNIST, 300 rows, ten classes (2,700 parameters, ``d^2`` 9 gradients): the full shape
#:   took 25 ms a step, 18 steps a path and 15 s of setup; the low-rank one (74 directions)
#:   0.6 ms a step, 27 steps, 1.2 s.
#: - A bag of words, 2,000 documents (2,000 parameters, ``d^2`` 1.0 gradient): 4 chains of
#:   300 + 300 iterations took 188 s (14 steps, min bulk ESS 219) with the full shape, 116
#:   s (25 steps, ESS 409) with 256 directions.
#: - scikit-learn's digits, 100 rows (495 parameters, 5 gradients): 6.7-8.2 s against
#:   4.5-4.6 s, the same ESS.
#:
#: scikit-learn's digits on all its 1,347 training rows (0.44 gradients), MNIST 1 vs 7,
#: breast cancer and tall data keep their full shape.
AUTO_FULL_SHAPE_MAX_GRADIENTS = 0.5
#: ... or where it is this small whatever the data (``d^2`` products, ``d`` up to 256: tens
#: of microseconds a step, less than a step's fixed costs): a few rows of many features,
#: sampled in their span (30 rows: 31 parameters), keep the full shape's Hamiltonian paths
#: instead of a diagonal random walk.
AUTO_FULL_SHAPE_FREE_PRODUCTS = 1 << 16


def is_auto(setting):
    """Whether a setting is the string ``"auto"``."""
    return isinstance(setting, str) and setting == "auto"


def choose_acceptance(setting, n_rows, n_params=1):
    """The acceptance test object: ``"auto"`` resolved from the numbers of rows and
    parameters (see :data:`AUTO_EXACT_MAX_ROWS` and :data:`AUTO_MIN_ROWS_PER_PARAM`), a
    name or an object resolved and cloned."""
    if is_auto(setting):
        exact = (n_rows <= AUTO_EXACT_MAX_ROWS
                 or n_rows < AUTO_MIN_ROWS_PER_PARAM * n_params)
        return resolve_acceptance("metropolis" if exact else "minibatch")
    return resolve_acceptance(setting)


def choose_proposal(setting, acceptance, uses_control_variates, shaped, bounds_proposal):
    """``proposal="auto"``: for a sampler on the model's bounds (Firefly, which carries the
    bright rows' gradient), ``bounds_proposal`` (the estimator's choice); Hamiltonian paths
    where a gradient is at hand (every row's for the exact tests, the control variates'
    proxy for the subsampling tests) and the proposal shape has correlations (a full or
    low-rank-plus-diagonal covariance: ``shaped``); the random walk otherwise (where the
    shape is per-coordinate scales a path of diagonally preconditioned leapfrog steps costs
    ~10x a random-walk step for no better mixing:
    docs/choosing.md)."""
    if not is_auto(setting):
        return resolve_proposal(setting)
    if acceptance.needs_bounds:
        return resolve_proposal(bounds_proposal)
    if shaped and (not acceptance.subsampling or uses_control_variates):
        return resolve_proposal("hmc")
    return resolve_proposal("random_walk")


def choose_laplace(acceptance, n_rows, n_params, gradient_cost):
    """The Laplace approximation's form for :meth:`~skbayes_mh.sampling.Target.linear`:
    ``(full, low_rank)``, None for the target's own rule. A full covariance where
    affordable
    (:func:`~skbayes_mh.models._optimize.full_covariance_affordable`) and, for a test that
    reads every row, where its products cost at most
    :data:`AUTO_FULL_SHAPE_MAX_GRADIENTS` gradients of ``gradient_cost`` products a step
    (or at most :data:`AUTO_FULL_SHAPE_FREE_PRODUCTS`);
    else low-rank-plus-diagonal with as many directions as
    :func:`~skbayes_mh.models._optimize.low_rank_directions` affords."""
    products = float(n_params) ** 2
    if (full_covariance_affordable(n_rows, n_params) and acceptance.reads_all_rows
            and products > AUTO_FULL_SHAPE_FREE_PRODUCTS
            and products > AUTO_FULL_SHAPE_MAX_GRADIENTS * gradient_cost):
        directions = low_rank_directions(n_rows, n_params, gradient_cost / max(n_rows, 1))
        if directions:  # else variances alone: a random walk, far slower than any shape
            return False, directions
    return None, None  # the target's own rule (full where affordable)


def shaped_for_paths(target, n_iterations):
    """Whether ``target``'s Laplace covariance gives Hamiltonian paths a shape worth their
    cost (``shaped`` of :func:`choose_proposal`): a full covariance; a low-rank-plus-diagonal
    one within :data:`AUTO_HAMILTONIAN_MAX_WORK` for ``n_iterations`` (all chains')."""
    if target.full_covariance:
        return True
    if target.low_rank is None:
        return False
    data = target.data
    gradient = float(data.n_rows) * target.model.n_outputs * data.row_cost
    return n_iterations * AUTO_NOMINAL_LEAPFROG_STEPS * gradient <= AUTO_HAMILTONIAN_MAX_WORK


def choose_thin(setting, acceptance, n_rows, n_params, n_draws, ess_goal=None):
    """``thin`` as :func:`~skbayes_mh.sampling.run_chain` takes it: an int as given;
    ``"auto"`` a rule measuring each chain's autocorrelation time at the end of warm-up,
    capped at :data:`AUTO_MAX_THIN` where iterations are cheap (beyond, up to
    :data:`AUTO_SLOW_MAX_THIN` as far as :data:`AUTO_FULL_DATA_ESS_PER_CHAIN` needs) and,
    for a test reading every
    row, at what :data:`AUTO_FULL_DATA_WORK` affords and what ``n_draws`` draws need to
    reach :data:`AUTO_FULL_DATA_ESS_PER_CHAIN` (``ess_goal`` in its place when given:
    ``n_draws="auto"``'s first round aims at the convergence check's ESS, not beyond;
    the full-data tests then thin to the median parameter's independence instead,
    ``AutoThin``'s ``typical``).
    """
    if not is_auto(setting):
        return int(setting)
    explicit_goal = ess_goal is not None
    ess_goal = AUTO_FULL_DATA_ESS_PER_CHAIN if ess_goal is None else ess_goal
    if not acceptance.reads_all_rows:
        return AutoThin(AUTO_MAX_THIN, ess_goal=ess_goal, n_draws=n_draws,
                        goal_max_thin=AUTO_SLOW_MAX_THIN)
    affordable = int(np.clip(AUTO_FULL_DATA_WORK // max(1, n_rows * n_params), 1,
                             AUTO_MAX_THIN))
    if affordable == 1:  # no rule to run: nor warm-up draws to keep for it (a wide model's)
        return 1
    if explicit_goal:
        # Under n_draws="auto" the rounds reach the targets: thinning only saves stored
        # draws, and to the median parameter's independence it costs the rounds' R-hat
        # next to nothing (by the slowest's it threw half the iterations away).
        return AutoThin(affordable, typical=True)
    return AutoThin(affordable, ess_goal=ess_goal, n_draws=n_draws)


def choose_warmup(setting, acceptance, proposal, shaped, n_params, schedule=None,
                  auto_draws=False):
    """``n_warmup``: an int as given; ``"auto"`` :data:`AUTO_SHORT_WARMUP` for a full-data
    test with Hamiltonian paths in the Laplace shape (``shaped``, as :func:`choose_proposal`
    takes it) on at least :data:`AUTO_SHORT_WARMUP_MIN_PARAMS` parameters, and with
    ``n_draws="auto"`` (``auto_draws``) for any test but Firefly's (whose brightness and
    step tune more slowly); otherwise, and always with a temperature schedule (its changes
    must come within the warm-up), :data:`AUTO_WARMUP`. With ``n_draws="auto"`` what a
    shorter warm-up leaves untuned costs more draws, which the rounds add until the
    chains converge, rather than a fit that falls short: on breast cancer 300 iterations
    and the rounds take half the time of 1,000 and 1,000 draws (``docs/choosing.md``)."""
    if not is_auto(setting):
        return int(setting)
    if schedule is not None:
        return AUTO_WARMUP
    short = ((acceptance.reads_all_rows and proposal.path and shaped
              and n_params >= AUTO_SHORT_WARMUP_MIN_PARAMS)
             or (auto_draws and not acceptance.needs_bounds))
    return AUTO_SHORT_WARMUP if short else AUTO_WARMUP


def settles_warmup(setting, acceptance, schedule=None, auto_draws=True):
    """Whether each chain's warm-up ends once it has settled
    (:class:`~skbayes_mh.sampling._tuning.SettledWarmup`, within :func:`choose_warmup`'s
    length): with ``n_warmup="auto"`` and ``n_draws="auto"`` (``auto_draws``: the rounds
    add the draws that a shape learnt from fewer warm-up draws costs; a fixed number of
    draws keeps the whole warm-up, whose shape gives small models their effective draws),
    under a test that reads every row (the subsampling tests' chains do not record their
    log posterior, whose level the rule judges; Firefly's bright set and ``q_db`` relax
    more slowly than the step), without a temperature schedule (whose changes come within
    the warm-up). A given ``n_warmup`` runs to its end."""
    return (is_auto(setting) and auto_draws and schedule is None
            and acceptance.reads_all_rows)


def draws_bound(setting):
    """The most draws a chain can keep under ``n_draws`` (for memory checks):
    :data:`~skbayes_mh._core.convergence.AUTO_MAX_DRAWS` for ``"auto"``."""
    from .convergence import AUTO_MAX_DRAWS

    return AUTO_MAX_DRAWS if is_auto(setting) else int(setting)


def warmup_bound(setting):
    """The most warm-up iterations ``n_warmup`` can mean (for memory checks before the fit
    resolves ``"auto"``)."""
    return AUTO_WARMUP if is_auto(setting) else int(setting)

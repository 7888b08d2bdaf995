"""The samplers, each a small object over one numba loop: ``init(theta) -> state`` and
``run(state, n_iter, rng) -> per-iteration info``, with explicit state and the tunable
parameters (scale, shape, ``q_db``) as attributes that warm-up tuners adjust."""
from dataclasses import dataclass, fields

import numpy as np

from .._kernels._jit import (STATUS_BAD_GRADIENT, STATUS_BAD_LOG_PRIOR, STATUS_BAD_LOGLIK,
                             STATUS_OK)
from .._kernels.firefly import EXPLICIT, IMPLICIT, firefly_initialise, firefly_linear
from .._kernels.layouts import BATCH_VALUES_ONLY, DATA_PASS_ONLY
from .._kernels.decisions import decision_addresses, pack_params
from .._kernels.mh import CHAIN_KERNELS, repeat_test
from .._kernels.specs import BrightnessUpdate, Trace
from .._kernels.pool import DENSE_POOL_MAX_ROWS, new_pool
from .._kernels.proposals import HMC as HMC_KERNEL, move_addresses
from ._shape import NonCentredPaths
from ._target import control_variates, no_control_variates
from ._tuning import QdbTuner, ShapeTuner, auto_q_db


def raise_for_status(status, where):
    """Turn a kernel's status code into a ValueError saying ``where`` it happened."""
    if status == STATUS_OK:
        return
    if status == STATUS_BAD_LOG_PRIOR:
        raise ValueError(f"log_prior returned NaN or +inf at {where}.")
    if status == STATUS_BAD_GRADIENT:
        raise ValueError(f"A gradient or Hessian was not finite at {where}.")
    if status == STATUS_BAD_LOGLIK:
        raise ValueError(f"loglik returned NaN or +inf at {where}; return -inf for a parameter "
                         f"with zero likelihood.")
    raise ValueError(f"The sampler failed with status {status} at {where}.")


def test_tuple(acceptance, target, cv_bounds_range):
    """The kernels' ``Test`` tuple for an acceptance object in the context of ``target``,
    without its decision's addresses (:func:`with_decision`)."""
    support, cdf = acceptance._correction_arrays()
    params = acceptance._kernel_params(lipschitz=target.lipschitz, max_weight=target.max_weight,
                                       cv_bounds_range=cv_bounds_range)
    return (pack_params(params), np.ascontiguousarray(support, dtype=np.float64),
            np.ascontiguousarray(cdf, dtype=np.float64))


def with_decision(test, acceptance):
    """A :func:`test_tuple` as the kernels take it: with ``Test.decide``, the addresses of
    ``acceptance``'s decision op in this process (``decisions.decision_addresses``), added
    at each call as the proposals' moves are: a sampler pickled to another process (Dask,
    Ray, loky) must not carry the addresses of the process that made it."""
    return (*test, decision_addresses(acceptance._decision))


def _writable(value):
    """``value`` with every read-only array in it (a tuple's too) replaced by a writable copy."""
    if isinstance(value, np.ndarray) and not value.flags.writeable:
        return value.copy()
    if isinstance(value, tuple):
        return tuple(_writable(item) for item in value)
    return value


class ChainState:
    """A chain's state: arrays the kernels update in place. A state that arrives from another
    process (a chain run on a Ray or Dask worker, for a ``warm_start`` fit to continue) may
    hold read-only zero-copy views; it takes writable copies of them, since the chain owns
    its state."""

    def __setstate__(self, state):
        self.__dict__.update({name: _writable(value) for name, value in state.items()})

    def as_tuple(self):
        """The fields in order, as the plain tuple the entry kernels take (no copies)."""
        return tuple(getattr(self, field.name) for field in fields(self))


def new_trace(n_iter, d, with_bright=False):
    """The per-iteration outputs of a chain loop (``specs.Trace``): draws, moved, rows read,
    log target, and the bright count (Firefly only; empty otherwise)."""
    return Trace(np.empty((n_iter, d)), np.empty(n_iter, dtype=np.bool_),
                 np.empty(n_iter, dtype=np.int64), np.empty(n_iter),
                 np.empty(n_iter if with_bright else 0, dtype=np.int64))


@dataclass
class MHState(ChainState):
    """A Metropolis-Hastings chain's state: ``theta``, the full-data log-likelihood there
    (``cache[0]``, NaN when unknown) and the log target's gradient (MALA)."""

    theta: np.ndarray
    cache: np.ndarray
    gradient: np.ndarray
    #: Where the subsampling tests draw random rows from (``_kernels/pool.py``): dense (a
    #: permutation of the row indices, 8 bytes a row) up to ``DENSE_POOL_MAX_ROWS`` rows,
    #: sparse above (memory for the largest minibatch only); empty for the exact tests.
    pool: tuple

    def __getstate__(self):
        # A sparse pool's arrays are reserved at 7 N entries (588 MB at 10^7 rows), which
        # the operating system commits only where written, but pickling copies them whole
        # (a chain sent to a process worker and back, every round). What they hold between
        # two tests is never read again: each test's batch starts by clearing the table of
        # the entries it lists. So a sparse pool travels as its size, and arrives new.
        state = dict(self.__dict__)
        rows, _, _, counters = self.pool
        if rows.size and counters[2] == 0:
            state["pool"] = ("sparse pool", rows.shape[0])
        return state

    def __setstate__(self, state):
        pool = state["pool"]
        if isinstance(pool[0], str):
            state = {**state, "pool": new_pool(pool[1], False)}
        super().__setstate__(state)


class _Sampler:
    """What every chain sampler shares: ``run``, under the target's temperature or a
    schedule's."""

    #: A :class:`~skbayes_mh.sampling._schedule.TemperatureSchedule`, or None: the
    #: temperature stays ``inv_temperature``'s.
    schedule = None
    #: Whether the ``lp`` a run records is the target's tempered log posterior (where
    #: finite; Firefly records its pseudo-posterior's).
    records_log_posterior = True

    def run(self, state, n_iter, rng, where="sampling"):
        """Run ``n_iter`` iterations from ``state`` (updated in place): those of
        ``run_iterations``, cut where a temperature schedule changes the temperature."""
        if self.schedule is None:
            return self.run_iterations(state, n_iter, rng, where)
        return self.schedule.run(self, state, n_iter, rng, where)


class MetropolisHastings(_Sampler):
    """Metropolis-Hastings on a :class:`Target` with a proposal and an acceptance test.

    Parameters
    ----------
    target : Target
    acceptance : AcceptanceTest
        Any test but Firefly (a sampler of its own).
    proposal : Proposal
    shape : Shape
    scale : float
    control_variates : tuple or None
        From :func:`control_variates`; None: none.
    """

    def __init__(self, target, acceptance, proposal, shape, scale, control_variates=None):
        exact = acceptance.exact
        if proposal.exact_only and not exact:
            raise ValueError(f"proposal={proposal.name!r} evaluates the posterior exactly, so "
                             f"it needs an exact test ('metropolis', 'barker') or Firefly; "
                             f"got acceptance={acceptance.name!r}.")
        if proposal.needs_gradient and not target.has_gradient:
            raise ValueError(f"proposal={proposal.name!r} needs the gradient of the "
                             f"log-likelihood: give sample() a 'gradient' function.")
        if proposal.needs_gradient and not exact and control_variates is None:
            raise ValueError(f"proposal={proposal.name!r} with the subsampling test "
                             f"{acceptance.name!r} uses the control variates' gradient: "
                             f"enable control variates.")
        self.target = target
        self.acceptance = acceptance
        self.proposal = proposal
        self.shape = shape
        self.scale = float(scale)
        self.reference_mean = (np.zeros(target.n_params) if target.mean is None
                               else np.ascontiguousarray(target.mean, dtype=np.float64))
        self.cv = (no_control_variates(target.n_params) if control_variates is None
                   else control_variates)
        self.test = test_tuple(acceptance, target, self.cv[0] and self.cv[4].shape[0] > 0)
        self.kernel = chain_kernel(acceptance, proposal)
        self.used_ops = DATA_PASS_ONLY if exact else BATCH_VALUES_ONLY
        self.inv_temperature = target.inv_temperature
        #: Hamiltonian paths' non-centred coordinates (``_shape.NonCentredPaths``), where
        #: the target rescales group-level sds; ``shape`` is then in those coordinates.
        self.paths = (NonCentredPaths.of(target) if proposal._kernel_id == HMC_KERNEL
                      else None)

    @staticmethod
    def prepare(target, acceptance, uses_control_variates, passes, n_chains):
        """What all ``n_chains`` chains of a fit share, computed once: the control variates (Taylor
        proxies at the MAP; whitened by the Laplace covariance where the test bounds their
        range in that distance) when the test reads them, else None. Their full-data
        passes are added to ``passes``."""
        if not uses_control_variates:
            return None
        whitening = target.covariance if acceptance.whitened_control_variates else None
        cv, passes["control_variates"] = control_variates(target,
                                                          whitening_covariance=whitening)
        return cv

    def warmup_tuners(self, shaped):
        """Warm-up tuners beyond the step's scale (``_tuning.py``): with ``shaped`` (a
        proposal shaped by the Laplace covariance), the shape's refinement from the draws
        where the proposal takes one."""
        target = self.target
        if not (shaped and self.proposal.tunes_shape):
            return []
        return [ShapeTuner(target.laplace_covariance, target.full_covariance, target.mean,
                           paths=self.paths)]

    @property
    def target_acceptance_rate(self):
        return self.proposal.target_acceptance_rate(barker=self.acceptance.barker)

    @property
    def max_scale(self):
        """The largest scale the proposal allows (an autoregressive share is at most 1)."""
        return self.proposal.max_scale

    def init(self, theta, rng):
        """Start at ``theta`` (nothing is computed until the first iteration)."""
        theta = np.array(theta, dtype=np.float64)
        n = 0 if self.acceptance.exact else self.target.n_data
        pool = new_pool(n, n <= DENSE_POOL_MAX_ROWS)
        return MHState(theta, np.full(1, np.nan), np.zeros(theta.size), pool)

    def invalidate(self, state):
        """Forget what was cached at ``state.theta`` (after a change of the target)."""
        state.cache[0] = np.nan

    def proposal_tuple(self):
        return (int(self.proposal._kernel_id), self.scale, self.shape.factor, self.shape.diag,
                self.shape.basis, self.shape.gain, self.reference_mean,
                self.proposal.kernel_parameter(barker=self.acceptance.barker),
                move_addresses(self.proposal._kernel_id))

    def run_iterations(self, state, n_iter, rng, where="sampling"):
        """Run ``n_iter`` iterations from ``state`` (updated in place).

        Returns
        -------
        dict of per-iteration arrays: ``draws`` (n_iter, d), ``accepted``, ``n_data_read``,
        ``lp`` (NaN where the full-data log-likelihood is not known).
        """
        trace = new_trace(n_iter, state.theta.size)
        target = self.target
        status, iteration = self.kernel(
            target.kernel_model(self.used_ops), target.prior.as_tuple(), self.proposal_tuple(),
            with_decision(self.test, self.acceptance), self.cv, float(self.inv_temperature),
            state.as_tuple(), rng, tuple(trace))
        raise_for_status(status, f"{where} iteration {iteration}")
        return {"draws": trace.draws, "accepted": trace.accepted, "n_data_read": trace.n_read,
                "lp": trace.lp}

    def acceptance_frequency(self, theta, theta_prop, log_psi, n_trials, rng):
        """The fraction of ``n_trials`` runs of this sampler's test (with its control
        variates, at its final temperature) on the move ``theta -> theta_prop`` that accept,
        each with fresh randomness; ``log_psi`` as in the chain loop without the proxies
        (the log prior ratio plus the log proposal ratio)."""
        n_accepted, _, status = repeat_test(
            self.target.kernel_model(self.used_ops), with_decision(self.test, self.acceptance),
            self.cv, bool(self.acceptance.exact), np.ascontiguousarray(theta, dtype=np.float64),
            np.ascontiguousarray(theta_prop, dtype=np.float64), float(log_psi),
            float(self.inv_temperature), rng, int(n_trials))
        raise_for_status(status, "a move of the test error's check")
        return n_accepted / n_trials


@dataclass
class FireflyState(ChainState):
    """A Firefly chain's state: ``theta``, the bright set (``bright_rows[:n_bright[0]]``
    and a bit per row, ``bright_bits``), the bright points' ``l - b`` and its gradient in
    ``u`` (by position in the list), the log pseudo-posterior's gradient and value
    (``current[0]``, NaN when unknown).

    Memory: N / 8 bytes for the bits; the per-point arrays are reserved at N entries but
    only the first ``n_bright`` (at most, the largest bright count so far) are written, so
    only those occupy memory. The fields are the kernels' ``specs.FireflyChain``, in order.
    """

    theta: np.ndarray
    bright_rows: np.ndarray
    bright_bits: np.ndarray
    n_bright: np.ndarray
    point_diff: np.ndarray
    point_slope: np.ndarray
    gradient: np.ndarray
    current: np.ndarray


class FireflySampler(_Sampler):
    """Firefly Monte Carlo on a linear-predictor :class:`Target` whose model has collapsible
    bounds: a parameter update (any proposal, or slice) on the pseudo-posterior, accepted
    exactly, then a brightness update.

    Parameters
    ----------
    target : Target
    firefly : acceptance.Firefly
        Its parameters (bound, resampling, ``q_db``).
    proposal : Proposal
    shape : Shape
    scale : float
    bound : tuple
        The collapsed bounds (``LinearModel.firefly_bound``).
    """

    records_log_posterior = False

    def __init__(self, target, firefly, proposal, shape, scale, bound):
        if target.kind != "linear":
            raise ValueError("acceptance='firefly' needs a model with a collapsible lower bound "
                             "on each likelihood, and a log-likelihood function has none. Use "
                             "it through an estimator (logistic, softmax or Student-t "
                             "regression), or choose another acceptance test.")
        if proposal.path:
            raise ValueError(f"proposal='{proposal.name}' is not available with Firefly (its "
                             "path would need the brightness variables held fixed along it); "
                             "use 'mala', 'slice', 'pcn' or 'random_walk'.")
        self.target = target
        self.acceptance = firefly
        self.proposal = proposal
        self.shape = shape
        self.scale = float(scale)
        self.bound = tuple(bound)  # the kernels take plain tuples
        self.reference_mean = np.ascontiguousarray(target.mean, dtype=np.float64)
        self.resample = {"implicit": IMPLICIT, "explicit": EXPLICIT}[firefly.resample]
        self.resample_count = max(1, int(round(firefly.resample_fraction * target.n_data)))
        self.q_db = firefly.q_db
        self.inv_temperature = target.inv_temperature

    @staticmethod
    def prepare(target, firefly, uses_control_variates, passes, n_chains):
        """What all ``n_chains`` chains share, computed once: the collapsed lower bounds at
        the MAP (one full-data pass, and each chain's brightness draw another, in
        ``passes``)."""
        passes["firefly_bounds"] = 1.0
        passes["firefly_start"] = float(n_chains)
        return target.model.firefly_bound(target.data, target.mean, firefly.bound,
                                          target.inv_temperature)

    def warmup_tuners(self, shaped):
        """Warm-up tuners beyond the step's scale: the dark-to-bright probability's when
        ``q_db`` is left to warm-up (whatever the shape)."""
        return [QdbTuner()] if self.q_db is None else []

    @property
    def target_acceptance_rate(self):
        return self.proposal.target_acceptance_rate(barker=False)

    @property
    def max_scale(self):
        return self.proposal.max_scale

    def proposal_tuple(self):
        return (int(self.proposal._kernel_id), self.scale, self.shape.factor, self.shape.diag,
                self.shape.basis, self.shape.gain, self.reference_mean,
                self.proposal.kernel_parameter(), move_addresses(self.proposal._kernel_id))

    def init(self, theta, rng):
        """Start at ``theta`` with every ``z_n`` drawn from ``p(z_n | theta)`` (N queries)."""
        target = self.target
        n = target.n_data
        theta = np.array(theta, dtype=np.float64)
        state = FireflyState(theta, np.empty(n, dtype=np.int64),
                             np.zeros((n + 7) // 8, dtype=np.uint8),
                             np.zeros(1, dtype=np.int64), np.empty(n),
                             np.empty((n, target.model.n_outputs + target.model.n_extra)),
                             np.zeros(theta.size), np.full(1, np.nan))
        status = firefly_initialise(target.firefly_model, self.bound,
                                    float(self.inv_temperature), state.as_tuple(), rng)
        raise_for_status(status, "the starting point")
        if self.q_db is None:
            self.q_db = auto_q_db(state.n_bright[0], n)
        return state

    def invalidate(self, state):
        state.current[0] = np.nan

    def run_iterations(self, state, n_iter, rng, where="sampling"):
        """Run ``n_iter`` Firefly iterations from ``state`` (updated in place).

        Returns
        -------
        dict of per-iteration arrays: ``draws``, ``accepted`` (the parameter update moved),
        ``n_data_read`` (likelihood queries), ``lp`` (log pseudo-posterior), ``n_bright``.
        """
        trace = new_trace(n_iter, state.theta.size, with_bright=True)
        target = self.target
        update = BrightnessUpdate(self.resample, float(self.q_db), self.resample_count)
        status, iteration = firefly_linear(
            target.firefly_model, target.prior.as_tuple(), self.bound, self.proposal_tuple(),
            float(self.inv_temperature), tuple(update), state.as_tuple(), rng, tuple(trace))
        raise_for_status(status, f"{where} iteration {iteration}")
        return {"draws": trace.draws, "accepted": trace.accepted, "n_data_read": trace.n_read,
                "lp": trace.lp, "n_bright": trace.n_bright}


def chain_kernel(acceptance, proposal=None):
    """The entry kernel the chains of ``acceptance`` run: Firefly's loop, the slice updates'
    for a proposal that evaluates the posterior exactly, else the loop of the exact or of
    the subsampling tests (``proposal`` None: not chosen yet, which a slice update never
    is)."""
    if acceptance.needs_bounds:
        return firefly_linear
    if proposal is not None and proposal.exact_only:
        return CHAIN_KERNELS["slice"]
    return CHAIN_KERNELS["exact" if acceptance.exact else "subsampled"]


def sampler_for(acceptance):
    """The sampler an acceptance test runs in: the auxiliary-variable sampler of its own for
    a test on the model's collapsible bounds (Firefly), Metropolis-Hastings otherwise."""
    return FireflySampler if acceptance.needs_bounds else MetropolisHastings

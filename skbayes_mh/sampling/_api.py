"""``skbayes_mh.sample``: Metropolis-Hastings for any per-row likelihood, with a pluggable
acceptance test and proposal, on the same engine as the estimators."""
import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._data import csr_arrays, kernel_csr
from .._kernels.rows import flat_log_prior, no_gradient, no_hessian
from .._kernels.mh import repeat_test
from .._kernels.specs import CSR
from .._passes import first_bad_sparse_row
from .._validation import (MIN_TEMPERATURE, check_array, check_jitted, check_jitted_writer,
                           check_draws_memory, check_scalar, check_step_size, read_only)
from ..acceptance import AcceptanceTest, resolve_acceptance
from ..models._optimize import find_map, laplace_covariance
from ..models._prior import BuiltinPrior
from ..proposals import resolve_proposal
from ._driver import run_chain
from ._parallel import chain_seeds, interruptible
from ._samplers import (MetropolisHastings, chain_kernel, raise_for_status, test_tuple,
                        with_decision)
from ._shape import Shape
from ._schedule import TemperatureSchedule, check_temperature
from ._target import Target, control_variates, no_control_variates

#: Relative step of the central differences that give a user log prior's derivatives.
PRIOR_DIFFERENCE_STEP = 1e-4


@dataclass
class SampleResult:
    """What :func:`sample` returns.

    The parameters are also its attributes, under the same names.

    Parameters
    ----------
    draws : ndarray of shape (n_draws, d)
        The chain after warm-up, one row per iteration.
    accepted : ndarray of shape (n_draws,), bool
        Whether each iteration accepted its proposal.
    n_data_read : ndarray of shape (n_draws,), int
        Data rows each iteration's test read.
    log_posterior : ndarray of shape (n_draws,)
        ``log p(theta) + loglik(theta) / K`` (up to a constant, ``K`` the iteration's
        temperature) where the test knows the full-data log-likelihood; NaN where it does
        not (minibatch tests).
    acceptance : AcceptanceTest
        The test that was used (a validated copy).
    step_size : ndarray of shape (d,)
        :func:`sample`'s ``step_size``, per coordinate: the proposal's standard deviation
        (the innovation share for ``"pcn"``, the initial bracket width for ``"slice"``).
    temperature : float or tuple of (int, float)
        The number given, or the schedule's ``(iteration, temperature)`` pairs.
    n_data : int
        Rows of ``data``.
    seconds : float, default=nan
        Wall time of the kept iterations (warm-up excluded).
    """

    draws: np.ndarray
    accepted: np.ndarray
    n_data_read: np.ndarray
    log_posterior: np.ndarray
    acceptance: AcceptanceTest
    step_size: np.ndarray
    temperature: object
    n_data: int
    seconds: float = field(default=float("nan"))

    @property
    def acceptance_rate(self):
        """float: fraction of kept iterations that accepted."""
        return float(np.mean(self.accepted))

    @property
    def mean_data_read(self):
        """float: average data rows read per test."""
        return float(np.mean(self.n_data_read))

    def __repr__(self):
        n, d = self.draws.shape
        return (f"SampleResult(n_draws={n}, d={d}, acceptance={self.acceptance!r}, "
                f"acceptance_rate={self.acceptance_rate:.3f}, "
                f"mean_data_read={self.mean_data_read:.1f} of {self.n_data})")


def _refuse_firefly(acceptance):
    """A log-likelihood function has no collapsible lower bound: refuse Firefly."""
    if acceptance.needs_bounds:
        raise ValueError(
            "acceptance='firefly' needs a model with a collapsible lower bound on each "
            "likelihood, and a log-likelihood function has none. Use it through "
            "MinibatchMHLogisticRegression, FireflySoftmaxClassifier or RobustTRegression, "
            "or choose another acceptance test.")
    return acceptance


def checked_data(data):
    """``data`` for the user's functions, validated: ``(as_passed, as_seen)``, the kernels'
    argument and what the user's functions see. A dense array (float64, finite) is both; a
    ``scipy.sparse`` matrix becomes a CSR matrix of float64 values with int32 indices, passed
    as its arrays and shape and seen as a :data:`~skbayes_mh._kernels.specs.CSR` named
    tuple (``data.data``, ``data.indices``, ``data.indptr``, ``data.shape``)."""
    if not sp.issparse(data):
        data = read_only(check_array(data, "data", ndim=2))
        return data, data
    if data.ndim != 2 or data.shape[0] == 0:
        raise ValueError(f"data must be a 2-D matrix with rows; got shape {data.shape}.")
    try:
        matrix = kernel_csr(data)
    except (TypeError, ValueError) as error:
        raise TypeError(f"data must be a sparse matrix of real numbers: {error}") from error
    row = first_bad_sparse_row(matrix)
    if row >= 0:
        raise ValueError(f"data contains NaN or infinity (first in row {row}).")
    arrays = csr_arrays(matrix)
    return arrays, CSR(*arrays)


def _row_target(loglik, data, theta, log_prior, temperature, gradient=None, hessian=None):
    """Validate the user's functions and data (see :func:`checked_data`) and build the
    :class:`Target`."""
    data, seen = checked_data(data)
    check_jitted(loglik, "loglik", (theta, seen, np.int64(0)))
    if log_prior is None:
        log_prior = flat_log_prior
    if not np.isfinite(check_jitted(log_prior, "log_prior", (theta,))):
        raise ValueError("theta0 must have a finite log_prior.")
    if hessian is not None and gradient is None:
        raise ValueError("hessian was given without gradient: give both, or neither.")
    if gradient is not None:
        check_jitted_writer(gradient, "gradient", (theta, seen, np.int64(0)), (theta.size,))
    if hessian is not None:
        check_jitted_writer(hessian, "hessian", (theta, seen, np.int64(0)),
                            (theta.size, theta.size))
    spec = (data, read_only(np.zeros(0)), loglik,
            no_gradient if gradient is None else gradient,
            no_hessian if hessian is None else hessian, log_prior)
    return Target("rows", spec, BuiltinPrior.flat(theta.size), 1.0 / float(temperature),
                  seen.shape[0], theta.size, has_gradient=gradient is not None,
                  has_hessian=hessian is not None)


def _log_prior_derivatives(log_prior, theta, order):
    """The log prior and, by central differences, its gradient and Hessian (the prior is a
    plain function of ``theta``, cheap next to a full-data pass)."""
    d = theta.size
    value = float(log_prior(theta))
    gradient = np.zeros(d)
    hessian = np.zeros((d, d))
    if log_prior is flat_log_prior or order == 0:
        return value, gradient, hessian
    step = PRIOR_DIFFERENCE_STEP * np.maximum(1.0, np.abs(theta))
    for a in range(d):
        shift = np.zeros(d)
        shift[a] = step[a]
        up, down = float(log_prior(theta + shift)), float(log_prior(theta - shift))
        gradient[a] = (up - down) / (2.0 * step[a])
        if order >= 2:
            hessian[a, a] = (up - 2.0 * value + down) / step[a] ** 2
            for b in range(a):
                other = np.zeros(d)
                other[b] = step[b]
                hessian[a, b] = hessian[b, a] = (
                    float(log_prior(theta + shift + other))
                    - float(log_prior(theta + shift - other))
                    - float(log_prior(theta - shift + other))
                    + float(log_prior(theta - shift - other))) / (4.0 * step[a] * step[b])
    return value, gradient, hessian


def _row_laplace(target, theta0):
    """The MAP of a per-row target from ``theta0`` (trust-region Newton on full-data passes
    of the user's gradient and Hessian) and the Laplace covariance there; stored in
    ``target``."""
    log_prior = target.spec[5]

    def objective(theta, order):
        loglik, gradient, hessian = target.loglik_derivatives(theta, order)
        prior, prior_gradient, prior_hessian = _log_prior_derivatives(log_prior, theta, order)
        value = -(target.inv_temperature * loglik + prior)
        if not np.isfinite(value):
            return np.inf, np.zeros_like(theta), np.eye(theta.size)
        return (value, -(target.inv_temperature * gradient + prior_gradient),
                -(target.inv_temperature * hessian + prior_hessian))

    theta, hessian, n_passes = find_map(objective, theta0, full=True, smooth=True)
    covariance, _ = laplace_covariance(hessian)
    target.mean, target.covariance, target.n_passes = theta, covariance, n_passes


def sample(loglik, data, theta0, *, step_size, log_prior=None, gradient=None, hessian=None,
           acceptance="minibatch", proposal="random_walk", n_draws=1000, n_warmup=0,
           temperature=1.0, random_state=None):
    """Sample a posterior by Metropolis-Hastings with a pluggable acceptance test.

    The target is ``p(theta) prod_i p(x_i | theta)^(1/K)`` with ``K = temperature``.

    Parameters
    ----------
    loglik : numba.njit function ``loglik(theta, data, i) -> float``
        ``log p(x_i | theta)`` for row ``i`` of ``data``; ``theta`` is a (d,) float64
        array, ``data`` the read-only (N, p) float64 array (or a sparse matrix's CSR
        arrays, see ``data``) and ``i`` an int64. Return
        ``-inf`` where the likelihood is zero; NaN is an error.
    data : array-like or sparse matrix of shape (N, p)
        The data, one datum per row (a 1-D array is not accepted: reshape it to (N, 1)). A
        ``scipy.sparse`` matrix is handed to the functions as a named tuple of its CSR
        arrays, ``data.data`` (float64), ``data.indices`` and ``data.indptr`` (int32) and
        ``data.shape``: row ``i``'s values are ``data.data[p]`` in columns
        ``data.indices[p]`` for ``p`` in ``range(data.indptr[i], data.indptr[i + 1])``.
    theta0 : array-like of shape (d,)
        Starting point; it must have finite log-prior and log-likelihood.
    step_size : float or array-like of shape (d,)
        The random walk's and MALA's standard deviation, for all or per coordinate (the
        proposal's scale and shape); for ``"pcn"`` the innovation share in (0, 1]; for
        ``"slice"`` the initial bracket width.
    log_prior : numba.njit function ``log_prior(theta) -> float`` or None, default=None
        Log prior density up to a constant (never tempered); None is the flat prior.
    gradient, hessian : numba.njit functions or None, default=None
        ``gradient(theta, data, i, out)`` writes the (d,) gradient of row ``i``'s
        log-likelihood into ``out``; ``hessian(theta, data, i, out)`` its (d, d) Hessian.
        With both, the subsampling tests use control variates (their
        ``control_variates="auto"``): the MAP is found from ``theta0`` by Newton's method on
        full-data passes, and each test reads only residuals against the rows' Taylor
        proxies there, so far fewer rows decide. They also give ``"pcn"`` its Laplace
        reference and ``"mala"`` and ``"hmc"`` their gradient (with a subsampling test, the
        proxies').
    acceptance : str or AcceptanceTest, default="minibatch"
        ``"metropolis"``, ``"barker"``, ``"minibatch"``, ``"austerity"``, ``"confidence"``
        or an object from :mod:`skbayes_mh.acceptance`.
    proposal : str or Proposal, default="random_walk"
        ``"random_walk"``, ``"mala"`` or ``"hmc"`` (need ``gradient``; with a subsampling
        test they follow the control variates' proxy, which also needs ``hessian``),
        ``"pcn"`` (needs ``gradient`` and ``hessian``), or ``"slice"`` with an exact test; see
        :mod:`skbayes_mh.proposals`.
    n_draws : int, default=1000
        Iterations kept.
    n_warmup : int, default=0
        Iterations run first and discarded.
    temperature : float or sequence of (int, float), default=1.0
        ``K >= 1e-100``: every log-likelihood ratio is scaled by ``1/K``. A schedule, e.g.
        ``[(0, 100.0), (400, 1.0)]``, gives temperature ``K`` from each iteration on
        (counting from the first, warm-up included): a tempered start that crosses the
        flatter posterior fast, then the exact one (the draws after the last change sample
        its temperature's posterior). The step stays ``step_size`` throughout; the control
        variates' expansion point and the Laplace reference are the last temperature's.
    random_state : int, RandomState instance or None, default=None
        Seeds the chain's own generator.

    Returns
    -------
    SampleResult
        ``draws`` (n_draws, d), ``accepted`` (n_draws,), ``n_data_read`` (n_draws,),
        ``acceptance_rate`` and more. Ctrl-C stops the chain within about a second and
        returns the draws so far, with a warning (during warm-up it raises
        KeyboardInterrupt).

    Examples
    --------
    >>> import numba, numpy as np
    >>> from skbayes_mh import sample
    >>> @numba.njit
    ... def gaussian_loglik(theta, data, i):
    ...     return -0.5 * (data[i, 0] - theta[0]) ** 2
    >>> x = np.random.default_rng(0).normal(0.5, 1.0, size=(10_000, 1))
    >>> result = sample(gaussian_loglik, x, [0.5], step_size=0.01, acceptance="metropolis",
    ...                 n_draws=2000, random_state=0)
    >>> result.draws.shape
    (2000, 1)
    """
    acceptance = _refuse_firefly(resolve_acceptance(acceptance))
    proposal = resolve_proposal(proposal)
    theta = check_array(theta0, "theta0", ndim=1).copy()
    step = check_step_size(step_size, theta.size)
    check_scalar(n_draws, "n_draws", numbers.Integral, 1)
    check_scalar(n_warmup, "n_warmup", numbers.Integral, 0)
    check_draws_memory(1, n_draws, 0, theta.size - 1)  # warm-up keeps no draws here
    final_temperature, schedule = check_temperature(temperature, MIN_TEMPERATURE)
    target = _row_target(loglik, data, theta, log_prior, final_temperature, gradient, hessian)
    chain_kernel(acceptance, proposal).compile_elsewhere()  # a first call: beside the passes
    # The starting point: a full pass that also flags a NaN or a zero likelihood now.
    total, _, _ = _checked_sum(target, theta)
    if total == np.inf:
        raise ValueError("The sum of loglik over the rows is +inf at theta0 (finite rows whose "
                         "sum overflows): rescale the log-likelihood or the data.")
    if not np.isfinite(total):
        raise ValueError("theta0 has zero likelihood: loglik is -inf for some row, or the "
                         "rows' log-likelihoods are so negative that their sum overflows to "
                         "-inf (then rescale the log-likelihood or the data).")
    use_cv = acceptance.uses_control_variates(target)
    if proposal.around_reference and not target.has_hessian:
        raise ValueError(f"proposal='{proposal.name}' moves around the Laplace approximation, "
                         "which needs each row's gradient and Hessian: give sample() "
                         "'gradient' and 'hessian'.")
    cv = None
    if use_cv or proposal.around_reference:
        _row_laplace(target, theta)
    if use_cv:
        cv, _ = control_variates(target, target.mean)
    if proposal.around_reference:
        if step.max() > 1.0 or np.ptp(step) > 0:
            raise ValueError(f"With proposal='{proposal.name}', step_size is the innovation "
                             f"share, one number in (0, 1]; got {step_size!r}.")
        shape, scale = Shape.from_covariance(target.covariance), float(step[0])
    else:
        shape, scale = Shape(np.zeros((0, 0)), step), 1.0
    sampler = MetropolisHastings(target, acceptance, proposal, shape, scale, cv)
    if schedule is not None:
        sampler.schedule = TemperatureSchedule(schedule)
    seed = chain_seeds(random_state, 1)[0]
    with interruptible("sample") as stop:
        chain = run_chain(sampler, theta, seed, n_warmup, n_draws, stop=stop)
    if chain.n_draws == 0:
        raise KeyboardInterrupt("sample was interrupted before its first kept draw (during "
                                "warm-up): nothing was kept.")
    if chain.interrupted:
        warnings.warn(f"sample was interrupted: it returns the first {chain.n_draws} of "
                      f"{n_draws} draws.", UserWarning, stacklevel=2)
    return SampleResult(draws=chain.draws, accepted=chain.stats["acceptance_rate"] > 0,
                        n_data_read=chain.stats["n_data_read"],
                        log_posterior=chain.stats["lp"], acceptance=acceptance,
                        step_size=step,
                        temperature=final_temperature if schedule is None else schedule,
                        n_data=target.n_data,
                        seconds=float(chain.stats["seconds"][-1]))


def _checked_sum(target, theta):
    try:
        return target.loglik_derivatives(theta, order=0)
    except ValueError:
        raise ValueError("loglik returned NaN or +inf at theta0; return -inf for a parameter "
                         "with zero likelihood.") from None


def acceptance_probability(loglik, data, theta, theta_prop, *, acceptance, log_psi=0.0,
                           gradient=None, hessian=None, center=None, temperature=1.0,
                           n_trials=10_000, random_state=None):
    """Estimate the probability that a test accepts a move from ``theta`` to ``theta_prop``.

    Runs the test ``n_trials`` times on the same pair, fresh randomness each time. For the
    exact tests the answer is known (``min(1, e^Delta)``, ``S(Delta)``); for approximate
    tests this measures how far they are from it.

    Parameters
    ----------
    loglik : numba.njit function ``loglik(theta, data, i) -> float``
        Row ``i``'s log-likelihood, as in :func:`sample`.
    data : array-like or sparse matrix of shape (N, p)
        The data, one datum per row, as in :func:`sample`.
    theta, theta_prop : array-like of shape (d,)
        Current state and proposal.
    acceptance : str or AcceptanceTest
        The test: a name of :mod:`skbayes_mh.acceptance` other than ``"firefly"``, or an
        object from it.
    log_psi : float, default=0.0
        Log prior ratio plus log proposal ratio, added to the tempered log-likelihood ratio.
    gradient, hessian : numba.njit functions or None, default=None
        As in :func:`sample`: with both, a subsampling test uses control variates, the rows'
        Taylor proxies around ``center``.
    center : array-like of shape (d,) or None, default=None
        The proxies' centre (in :func:`sample`, the MAP); None: ``theta``.
    temperature : float, default=1.0
        ``K >= 1e-100``: every log-likelihood ratio is scaled by ``1/K``.
    n_trials : int, default=10000
        Times the test is run.
    random_state : int, RandomState instance or None, default=None
        Seeds the trials' generator.

    Returns
    -------
    probability : float
        Fraction of trials that accepted.
    mean_data_read : float
        Rows read per trial (no cache between trials: an exact test reads ``2 N``).
    """
    acceptance = _refuse_firefly(resolve_acceptance(acceptance))
    theta = check_array(theta, "theta", ndim=1).copy()
    theta_prop = check_array(theta_prop, "theta_prop", ndim=1).copy()
    if theta.shape != theta_prop.shape:
        raise ValueError(f"theta and theta_prop differ in shape: {theta.shape} and "
                         f"{theta_prop.shape}.")
    check_scalar(n_trials, "n_trials", numbers.Integral, 1)
    check_scalar(temperature, "temperature", numbers.Real, MIN_TEMPERATURE)
    if not isinstance(log_psi, numbers.Real) or isinstance(log_psi, bool):
        raise TypeError(f"log_psi must be a real number or -inf; got {log_psi!r}.")
    if np.isnan(log_psi) or log_psi == np.inf:
        raise ValueError(f"log_psi must be a real number or -inf (a zero prior or proposal "
                         f"ratio); got {log_psi!r}.")
    target = _row_target(loglik, data, theta, None, temperature, gradient, hessian)
    rng = np.random.default_rng(int(chain_seeds(random_state, 1)[0]))
    cv = no_control_variates(theta.size)
    if acceptance.uses_control_variates(target):
        center = theta if center is None else check_array(center, "center", ndim=1)
        if center.shape != theta.shape:
            raise ValueError(f"center has shape {center.shape}; theta has {theta.shape}.")
        cv, _ = control_variates(target, center)
    test = with_decision(test_tuple(acceptance, target, False), acceptance)
    n_accepted, n_read, status = repeat_test(
        target.kernel_model(), test, cv, bool(acceptance.exact), theta, theta_prop, float(log_psi),
        target.inv_temperature, rng, int(n_trials))
    raise_for_status(status, "theta or theta_prop")
    return n_accepted / n_trials, n_read / n_trials

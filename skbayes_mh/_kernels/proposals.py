"""Proposals (:data:`.specs.Proposal`), shared by every sampler: a move ``theta -> theta'`` and
the log ratio ``log q(theta | theta') - log q(theta' | theta)`` that enters its test exactly.

The shape ``L`` is a lower-triangular factor (``proposal.factor``) or, when that is empty,
per-coordinate standard deviations ``D = diag(proposal.diag)``, corrected in ``k``
orthonormal directions (the rows ``u_i`` of ``proposal.basis``, ``(k, d)``) by gains ``g_i``
(``proposal.gain``): ``L = D (I + sum_i (g_i - 1) u_i u_i')``, so that
``C = L L' = D (I + sum_i (g_i^2 - 1) u_i u_i') D``, and applying ``L``, ``L'`` or ``L^-1``
costs ``O(k d)`` (a wide posterior's low-rank-plus-diagonal shape; ``k = 0`` is diagonal).

* ``RANDOM_WALK``: ``theta' = theta + s L z``; symmetric.
* ``MALA``: ``theta' = theta + s^2 C g / 2 + s L z`` with ``g`` the gradient of the log
  target at ``theta`` (preconditioned Langevin).
* ``PCN``: the autoregressive proposal ``theta' = m + rho (theta - m) + s L z`` with
  ``rho = sqrt(1 - s^2)``, reversible with respect to the reference ``N(m, C)``, so its log
  ratio is ``log N(theta; m, C) - log N(theta'; m, C)``. With ``df > 0`` the reference is
  the multivariate Student t with ``df`` degrees of freedom: a scale ``tau`` is first drawn
  from its conditional given ``theta`` (the t is a scale mixture of ``N(m, tau C)``), which
  keeps the move reversible with respect to the t, and the chain geometrically ergodic for
  targets with tails heavier than a Gaussian's.
* ``HMC``: Hamiltonian Monte Carlo with mass matrix ``C^-1`` (the leapfrog integrator
  in ``mh.py``, where the log target's gradient is at hand): in whitened coordinates
  ``theta = L w``, momentum ``p ~ N(0, I)``, step ``s``, and a path of ``parameter`` (its
  mean length in those coordinates) times a uniform draw in ``[1/2, 3/2]``, so that the
  number of steps varies independently of the state; the log ratio is the change of kinetic
  energy ``|p|^2 / 2 - |p'|^2 / 2``.
* ``SLICE`` (``slice.py``) is not a proposal but shares the shape: slice sampling along
  ``L e / |e|``.

The Metropolis-Hastings chain loops make a one-step move (random walk, MALA,
autoregressive) through the ops :func:`propose_op` and :func:`log_ratio_op`, called through
function pointers (``Proposal.moves``, :func:`move_addresses`), not by calling
:func:`propose` and :func:`proposal_log_ratio`: the one-step moves then compile once, into
their own library, instead of into both loops, and only when a fit makes one. Firefly's
loop calls them directly: its cheapest iterations (a dozen queries) ran about a tenth
slower through the pointers (9.9 against 8.8 us an iteration). A default fit, whose Hamiltonian paths are part of the loop, never compiles
them: the exact tests' loop (``mh.mh_exact``) compiled in 18.0 s instead of 20.8 s (means
of three runs on two cores, with an empty cache). A call through a pointer costs
nanoseconds, once per iteration, beside a move's ``O(d)`` arithmetic.
"""
import math

from ._common import flag, function_at, lower_solve
from ._entry import entry_kernel
from ._jit import function_addresses, jit
from .linear import row_dot
from .specs import MOVE_LOG_RATIO, NO_MOVES, PROPOSE

RANDOM_WALK = 0
MALA = 1
SLICE = 2
PCN = 3
HMC = 4
#: The most leapfrog steps of one Hamiltonian path (a step scale tuned very small must not
#: make an iteration unbounded).
HMC_MAX_STEPS = 256


@jit
def _low_rank_update(proposal, inverse, out):
    """``out <- (I + sum_i c_i u_i u_i') out`` in place, with ``c_i = g_i - 1`` (``1 / g_i - 1``
    when ``inverse``). In place is exact because the ``u_i`` are orthonormal: adding along
    ``u_i`` leaves ``u_j' out`` unchanged for ``j != i``."""
    basis, gain = proposal.basis, proposal.gain
    d = out.shape[0]
    for i in range(basis.shape[0]):
        c = 1.0 / gain[i] - 1.0 if inverse else gain[i] - 1.0
        along = c * row_dot(basis, i, out, 0)
        for a in range(d):
            out[a] += along * basis[i, a]


@jit
def shape_times(proposal, z, out):
    """``out = L z``."""
    factor = proposal.factor
    if factor.shape[0] == 0:
        for a in range(z.shape[0]):
            out[a] = z[a]
        _low_rank_update(proposal, flag(False), out)
        for a in range(z.shape[0]):
            out[a] *= proposal.diag[a]
        return
    # Whole rows (the zeros above the diagonal add nothing), so that the vectorised dot
    # product of linear.py applies: about three times faster at d = 585.
    for a in range(z.shape[0]):
        out[a] = row_dot(factor, a, z, 0)


@jit
def shape_solve(proposal, v, out):
    """``out = L^{-1} v``."""
    if proposal.factor.shape[0] == 0:
        for a in range(v.shape[0]):
            out[a] = v[a] / proposal.diag[a]
        _low_rank_update(proposal, flag(True), out)
        return
    lower_solve(proposal.factor, v, out)


@jit
def shape_transpose_times(proposal, v, out):
    """``out = L' v``."""
    factor = proposal.factor
    d = v.shape[0]
    if factor.shape[0] == 0:
        for a in range(d):
            out[a] = proposal.diag[a] * v[a]
        _low_rank_update(proposal, flag(False), out)
        return
    # Row by row (``out += v[b] L[b, :b + 1]``): contiguous reads, and a loop LLVM
    # vectorises without reassociating a sum.
    for a in range(d):
        out[a] = 0.0
    for b in range(d):
        scale = v[b]
        for a in range(b + 1):
            out[a] += factor[b, a] * scale


@jit
def _whitened_square(proposal, theta, work):
    """``|L^{-1}(theta - m)|^2``."""
    centred, whitened = work[0], work[1]
    for a in range(theta.shape[0]):
        centred[a] = theta[a] - proposal.mean[a]
    shape_solve(proposal, centred, whitened)
    total = 0.0
    for a in range(theta.shape[0]):
        total += whitened[a] * whitened[a]
    return total


@jit(inline="always")
def _log_reference(proposal, theta, work):
    """Log density (up to a constant) of the PCN reference at ``theta``."""
    square = _whitened_square(proposal, theta, work)
    if proposal.parameter > 0.0:
        return -0.5 * (proposal.parameter + theta.shape[0]) * math.log1p(square / proposal.parameter)
    return -0.5 * square


@jit
def propose(proposal, theta, gradient, rng, noise, work, out):
    """Draw ``theta'`` into ``out``; ``noise`` keeps the standard normal ``z`` used.

    ``work`` is a tuple of three length-d scratch vectors.
    """
    d = theta.shape[0]
    s = proposal.scale
    for a in range(d):
        noise[a] = rng.standard_normal()
    step = work[2]
    if proposal.kind == PCN:
        tau = 1.0
        if proposal.parameter > 0.0:
            # tau | theta ~ InvGamma((df + d) / 2, (df + |L^{-1}(theta - m)|^2) / 2).
            square = _whitened_square(proposal, theta, work)
            tau = (proposal.parameter + square) / (2.0 * rng.gamma(0.5 * (proposal.parameter + d), 1.0))
        shape_times(proposal, noise, step)
        rho = math.sqrt(max(1.0 - s * s, 0.0))
        spread = s * math.sqrt(tau)
        for a in range(d):
            out[a] = proposal.mean[a] + rho * (theta[a] - proposal.mean[a]) + spread * step[a]
        return
    if proposal.kind == MALA:
        # theta + s^2 L L' g / 2 + s L z = theta + L (s^2 L' g / 2 + s z).
        shape_transpose_times(proposal, gradient, work[0])
        for a in range(d):
            work[1][a] = 0.5 * s * s * work[0][a] + s * noise[a]
        shape_times(proposal, work[1], step)
    else:
        shape_times(proposal, noise, step)
        for a in range(d):
            step[a] *= s
    for a in range(d):
        out[a] = theta[a] + step[a]


@jit
def hmc_step_count(proposal, rng):
    """Leapfrog steps of one Hamiltonian path: its length, jittered uniformly in
    ``[1/2, 3/2]`` of ``parameter``, over the step ``s``, rounded up or down at random so
    that the mean path is that length (at least 1 step, at most ``HMC_MAX_STEPS``).

    Rounding always up would lengthen short paths of few large steps (a low-dimensional
    target's): two steps of 1.2 where 1.3 was drawn turn a Gaussian by about 0.8 of a half
    period, nearly mirroring each draw, so that its square hardly mixes."""
    length = proposal.parameter * (0.5 + rng.random())
    steps = int(math.floor(length / proposal.scale + rng.random()))
    return max(1, min(HMC_MAX_STEPS, steps))


@jit
def proposal_log_ratio(proposal, theta, theta_prop, gradient_prop, noise, work):
    """``log q(theta | theta') - log q(theta' | theta)`` for the move just drawn by
    :func:`propose` (``noise`` its ``z``; ``gradient_prop`` the log target's gradient at
    ``theta'``, used by MALA only)."""
    if proposal.kind == PCN:
        return _log_reference(proposal, theta, work) - _log_reference(proposal, theta_prop, work)
    if proposal.kind != MALA:
        return 0.0
    # Reverse move: theta = theta' + s^2 C g' / 2 + s L z_rev, so
    # z_rev = L^{-1}(theta - theta') / s - s L' g' / 2.
    d = theta.shape[0]
    s = proposal.scale
    difference, whitened, transposed = work[0], work[1], work[2]
    for a in range(d):
        difference[a] = theta[a] - theta_prop[a]
    shape_solve(proposal, difference, whitened)
    shape_transpose_times(proposal, gradient_prop, transposed)
    forward = 0.0
    reverse = 0.0
    for a in range(d):
        forward += noise[a] * noise[a]
        z_rev = whitened[a] / s - 0.5 * s * transposed[a]
        reverse += z_rev * z_rev
    return 0.5 * (forward - reverse)


@entry_kernel(PROPOSE.signature)
def propose_op(proposal, theta, gradient, rng, noise, work, out):
    """:func:`propose`, compiled on its own for the chain loops' function pointers."""
    propose(proposal, theta, gradient, rng, noise, work, out)


@entry_kernel(MOVE_LOG_RATIO.signature)
def log_ratio_op(proposal, theta, theta_prop, gradient_prop, noise, work):
    """:func:`proposal_log_ratio`, compiled on its own for the chain loops' function
    pointers."""
    return proposal_log_ratio(proposal, theta, theta_prop, gradient_prop, noise, work)


# Ops for every data layout (``python -m skbayes_mh compile --float64-only`` compiles them).
propose_op.other_layout = log_ratio_op.other_layout = False

#: The kinds whose moves the chain loops make through :func:`move_functions`.
ONE_STEP_KINDS = (RANDOM_WALK, MALA, PCN)


def move_addresses(kind):
    """``Proposal.moves`` for a proposal of ``kind``: the addresses of :func:`propose_op`
    and :func:`log_ratio_op` (compiled first if need be) for a one-step move, ``NO_MOVES``
    for the others (Hamiltonian paths, slice updates), which compiles nothing."""
    if kind not in ONE_STEP_KINDS:
        return NO_MOVES
    return (function_addresses(propose_op.prepare(), PROPOSE),
            function_addresses(log_ratio_op.prepare(), MOVE_LOG_RATIO))


_make_propose = function_at(PROPOSE)
_make_log_ratio = function_at(MOVE_LOG_RATIO)


@jit(inline="always")
def move_functions(proposal):
    """``(propose, log_ratio)``: the functions of ``proposal.moves`` (see
    :func:`move_addresses`), called only for the kinds of :data:`ONE_STEP_KINDS`."""
    (propose_c, propose_jit), (ratio_c, ratio_jit) = proposal.moves
    return _make_propose(propose_c, propose_jit), _make_log_ratio(ratio_c, ratio_jit)

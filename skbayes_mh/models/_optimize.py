"""The MAP of a posterior and the Laplace approximation at it, for any model that can
evaluate its negative log posterior with derivatives in full-data passes."""
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.optimize import minimize

from .. import _passes
from .._passes import column_slices

#: The Laplace approximation (and so the proposal shape and the control variates' Hessian)
#: is a full covariance while that is affordable: at most this many parameters (a d x d
#: matrix is 128 MB there, and a fit holds a few) ...
FULL_COVARIANCE_MAX_DIM = 4096
#: ... and at most this many row-parameter-parameter products ``N d^2`` per full-data
#: Hessian pass (BLAS Gram matrices: about 35 GFLOP/s on two cores, so about 3 s a pass).
#: A dense proposal costs ``d^2`` per step, next to the full-data gradient's ``N d``: it
#: pays wherever the parameters are correlated. Beyond either limit: variances.
FULL_COVARIANCE_MAX_WORK = 1e11
#: Beyond those limits the Laplace covariance is low-rank-plus-diagonal
#: (:func:`low_rank_laplace`): at most this many directions ...
LOW_RANK_MAX_RANK = 256
#: ... at most this many row-parameter-direction products ``N c m`` per pass (``c`` a
#: row's cost, ``m`` the directions plus ``LOW_RANK_OVERSAMPLE``; three passes build it),
#: no more than ``LOW_RANK_MAX_BYTES`` for its (d, m) blocks, and few enough that applying
#: the shape (``4 k d`` products a Hamiltonian step) costs at most one full-data gradient
#: (``N c``). Fewer than ``LOW_RANK_MIN_RANK`` directions affordable: variances only.
LOW_RANK_MAX_WORK = 3e11
LOW_RANK_MAX_BYTES = 2**29
LOW_RANK_MIN_RANK = 8
LOW_RANK_OVERSAMPLE = 10
#: Directions of a low-rank shape that may come from the bottom of the spectrum of the
#: precision whitened by its diagonal (see :func:`low_rank_laplace`) ...
LOW_RANK_MAX_BOTTOM = 8
#: ... from this many Lanczos steps (each a data pass with one vector).
LOW_RANK_LANCZOS_STEPS = 100
#: A bottom Ritz value counts when its residual is at most this fraction of it.
LOW_RANK_LANCZOS_TOLERANCE = 0.1
#: Relative floor on the Laplace precision's eigenvalues (see :func:`laplace_covariance`).
EIGENVALUE_FLOOR = 1e-10
#: Newton's method stops when ``g' H^-1 g`` (twice the predicted decrease of the negative
#: log posterior; the squared distance to the optimum in posterior sd) falls below this.
NEWTON_DECREMENT = 1e-4
NEWTON_MAX_ITER = 50
#: Step halvings before Newton's method gives up on a step that does not decrease.
NEWTON_BACKTRACKS = 30


def jacobi_scales(diagonal):
    """Jacobi's scaling: ``diag(H)^(-1/2)`` for a Hessian's diagonal, 1 where an entry is not
    positive and finite. ``D H D`` has a unit diagonal whatever the parameters' units: on
    California housing in dollars, a robust regression's Hessian has a condition number near
    1e14 (the raw intercept against the rooms' counts), ``D H D`` one near 4e5, so that its
    factors, Newton's steps and an eigenvalue floor relative to the largest stay accurate."""
    diagonal = np.asarray(diagonal, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(diagonal) & (diagonal > 0), 1.0 / np.sqrt(diagonal), 1.0)


def full_covariance_affordable(n_rows, n_params):
    """Whether a full Laplace covariance is affordable for ``n_rows`` rows and ``n_params``
    parameters (:data:`FULL_COVARIANCE_MAX_DIM`, :data:`FULL_COVARIANCE_MAX_WORK`)."""
    return (n_params <= FULL_COVARIANCE_MAX_DIM
            and float(n_rows) * n_params * n_params <= FULL_COVARIANCE_MAX_WORK)


@dataclass
class LowRankCovariance:
    """A covariance ``C = D (I + U' diag(g^2 - 1) U) D`` with ``D = diag(sd)`` and ``k``
    orthonormal directions ``U`` (``basis``, ``(k, d)``) along which the diagonal's
    whitened variance 1 becomes ``g^2`` (``gain``, ``(k,)``): a wide posterior's proposal
    shape in ``O(k d)`` memory, the Laplace covariance in those directions (see
    :func:`low_rank_laplace`)."""

    sd: np.ndarray
    basis: np.ndarray
    gain: np.ndarray

    def variances(self):
        """The diagonal of ``C``, shape (d,)."""
        return self.sd**2 * (1.0 + (self.gain**2 - 1) @ self.basis**2)


def low_rank_directions(n_rows, n_params, row_cost=None):
    """How many directions a low-rank-plus-diagonal Laplace covariance affords for
    ``n_rows`` rows and ``n_params`` parameters (0: none), where one row's product with one
    direction costs ``row_cost`` (default ``n_params``; the non-zeros for sparse rows)."""
    row_cost = n_params if row_cost is None else row_cost
    gradient = float(n_rows) * row_cost
    by_work = LOW_RANK_MAX_WORK / max(1.0, gradient)
    by_memory = LOW_RANK_MAX_BYTES / (4 * 8 * n_params)  # four (d, m) blocks
    by_step = gradient / (4.0 * n_params)
    rank = int(min(LOW_RANK_MAX_RANK, n_params - 1, by_work - LOW_RANK_OVERSAMPLE,
                   by_memory - LOW_RANK_OVERSAMPLE, by_step))
    return rank if rank >= LOW_RANK_MIN_RANK else 0


def low_rank_laplace(precision_times, sd, rank, power_iterations=1, random_state=0,
                     diagonal_sd=None):
    """A low-rank-plus-diagonal Laplace covariance from products with the precision.

    The covariance is ``C = D (I + U' diag(g^2 - 1) U) D``: a diagonal ``D`` and ``k =
    rank`` orthonormal directions ``U`` in which ``C`` is exact (``g = 1 / sqrt(lambda)``
    with ``lambda`` the eigenvalue of ``D H D`` for that direction). Two diagonals are
    tried, and the one whose remaining directions (those ``U`` leaves out, whitened by
    ``D``) have the smaller spread of curvatures is kept, the spread Hamiltonian paths pay
    for (their steps grow as its square root):

    - ``D`` the prior's standard deviations ``sd``: ``D H D >= I`` and its largest
      eigenvalues are the directions the data inform, so the ``rank`` largest (found by
      the randomized range finder with power iterations: Halko, Martinsson and Tropp 2011,
      algorithms 4.4 and 5.3) make ``C`` exact where the data say much and the prior's
      elsewhere: right when the data inform few directions.
    - ``D`` the diagonal Laplace's sds ``diagonal_sd`` (``diag(H)^(-1/2)``, Jacobi's
      scaling; given only when known): right for every coordinate alone, so that the
      spread left is that of the correlations. ``U`` then comes from both ends of the
      spectrum of ``D H D`` (at most :data:`LOW_RANK_MAX_BOTTOM` from the bottom, by
      Lanczos steps: directions wider than the diagonal says, such as the contrasts of
      collinear columns), split between the ends to leave the smallest spread; the
      diagonal is then scaled so that the widest remaining direction has whitened variance
      one, the unit in which a path's length is set. On a bag of words (20,000 documents,
      5,000 words) the prior's diagonal leaves a spread (condition number) of 475 with 52
      directions, Jacobi's with both ends 59 (docs/choosing.md).

    Parameters
    ----------
    precision_times : callable ``(vectors (d, m)) -> (d, m)``
        The negative log posterior's Hessian ``H`` times a block of vectors (one data pass).
    sd : ndarray of shape (d,)
        The prior's standard deviations.
    rank : int
        Directions ``k`` (at most ``d``).
    power_iterations : int, default=1
    random_state : int, default=0
    diagonal_sd : ndarray of shape (d,), optional
        ``diag(H)^(-1/2)``; without it only the prior's diagonal is tried.

    Returns
    -------
    covariance : LowRankCovariance
    n_passes : int
        Data passes spent: ``power_iterations + 2`` block products per diagonal tried (a
        pass for each group of columns of about
        :data:`~skbayes_mh._passes.PASS_BLOCK_BYTES`: one on narrow data), plus the
        Lanczos steps' single-vector products.
    """
    sd = np.asarray(sd, dtype=np.float64)
    rank = int(min(rank, sd.size))
    rng = np.random.default_rng(random_state)
    whitened = _WhitenedPrecision(precision_times, sd)
    values, vectors = _top_eigenpairs(whitened, sd.size, rank, power_iterations, rng)
    passes = whitened.passes
    # 1 is a lower bound of the prior-whitened spectrum (H >= the prior's precision); the
    # (rank + 1)-th value found estimates the largest left (a Ritz value from a randomized
    # basis: at most the true (rank + 1)-th eigenvalue, so an estimate, not a bound).
    spread = max(values[rank], 1.0) if values.size > rank else 1.0
    best = (spread, sd, vectors[:, :rank], values[:rank])
    if diagonal_sd is not None and rank < sd.size:  # (with every direction: exact as it is)
        diagonal_sd = np.asarray(diagonal_sd, dtype=np.float64)
        jacobi_whitened = _WhitenedPrecision(precision_times, diagonal_sd)
        found = _both_ends(jacobi_whitened, diagonal_sd.size, rank, power_iterations, rng)
        passes += jacobi_whitened.passes
        spread, kept_vectors, kept_values, widest = _best_split(*found, rank)
        if spread < best[0]:
            best = (spread, diagonal_sd / np.sqrt(widest), kept_vectors, kept_values / widest)
    _, scale, directions, curvature = best
    # The curvatures are eigenvalues of the positive definite D H D, floored as in
    # laplace_covariance should rounding make them tiny or negative.
    curvature = np.maximum(curvature, EIGENVALUE_FLOOR * max(1.0, np.max(curvature, initial=1.0)))
    # Orthonormal to machine precision: the kernels apply the correction in place.
    directions = np.ascontiguousarray(np.linalg.qr(directions)[0].T)
    return LowRankCovariance(scale, directions, 1.0 / np.sqrt(curvature)), passes


class _WhitenedPrecision:
    """``v -> D H D v`` with ``D = diag(sd)``, for blocks ``(d, m)``: the product in Fortran
    order (a QR factors it in place), a data pass for each group of columns of about
    :data:`~skbayes_mh._passes.PASS_BLOCK_BYTES` (no scaled copy or pass temporaries of the
    block's size); ``passes`` counts them."""

    def __init__(self, precision_times, sd):
        self.precision_times, self.sd, self.passes = precision_times, sd, 0

    def __call__(self, vectors):
        d, m = vectors.shape
        sd = self.sd[:, None]
        product = np.empty((d, m), order="F")
        for columns in column_slices(d, m, _passes.PASS_BLOCK_BYTES):
            # C order: a pass reads rows of it.
            part = self.precision_times(np.multiply(sd, vectors[:, columns], order="C"))
            part *= sd
            product[:, columns] = part
            self.passes += 1
        return product


def _range_basis(operator, d, m, power_iterations, rng, shift=0.0):
    """An orthonormal basis ``(d, m)`` of the eigenvectors of the symmetric ``operator``
    whose eigenvalues are farthest from ``shift``: the randomized range finder on ``operator
    - shift I`` with ``power_iterations`` (``power_iterations + 1`` block products). A
    prior-whitened precision is shifted by 1, its smallest eigenvalue: without the shift the
    identity's share of every direction would hide a low-rank departure's directions among
    the others."""
    def shifted(vectors):
        product = operator(vectors)
        if shift:
            for columns in column_slices(d, m):
                product[:, columns] -= shift * vectors[:, columns]
        return product

    basis = _orthonormal_basis(shifted(rng.standard_normal((d, m))))
    for _ in range(power_iterations):
        product = shifted(basis)
        del basis
        basis = _orthonormal_basis(product)
    return basis


def _orthonormal_basis(block):
    """The ``Q`` of the economic QR of ``block`` ``(d, m)``, factored in place when it is in
    Fortran order (numpy's ``qr`` holds two more copies of it)."""
    return scipy.linalg.qr(block, mode="economic", overwrite_a=True, check_finite=False)[0]


def _ritz_pairs(operator, basis):
    """The Ritz pairs of the symmetric ``operator`` on the span of the orthonormal
    ``basis`` ``(d, m)`` (one block product): values ascending, vectors ``(d, m)`` and each
    pair's residual norm ``|A u - value u|``. The vectors are written over ``basis``.

    On wide data each ``(d, m)`` block is tens of MB, so no third one is made: with ``B``
    orthonormal and ``c`` an eigenvector of ``B'AB``, ``|A B c - value B c|^2 =
    c' (AB)'(AB) c - value^2``, from the ``(m, m)`` Gram matrix of the product (accurate to
    about ``1e-8`` of the largest value, where the residuals are compared with a tenth of
    the values), and the basis is rotated into the vectors a few rows at a time.
    """
    product = operator(basis)
    projected = basis.T @ product
    gram = product.T @ product
    del product
    values, coordinates = np.linalg.eigh(0.5 * (projected + projected.T))
    squares = np.einsum("aj,ab,bj->j", coordinates, gram, coordinates) - values * values
    residuals = np.sqrt(np.maximum(squares, 0.0))
    for rows in column_slices(*basis.shape[::-1]):  # row groups of about the same bytes
        basis[rows] = basis[rows] @ coordinates
    return values, basis, residuals


def _top_eigenpairs(operator, d, rank, power_iterations, rng):
    """The largest eigenvalues (descending, ``min(d, rank + LOW_RANK_OVERSAMPLE)`` of them)
    and their eigenvectors ``(d, m)`` of the symmetric ``operator`` whose eigenvalues are at
    least 1 (a prior-whitened precision), by the randomized range finder with
    ``power_iterations`` (``power_iterations + 2`` block products)."""
    basis = _range_basis(operator, d, min(d, rank + LOW_RANK_OVERSAMPLE), power_iterations,
                         rng, shift=1.0)
    values, vectors, _ = _ritz_pairs(operator, basis)
    return values[::-1], vectors[:, ::-1]


def _both_ends(operator, d, rank, power_iterations, rng):
    """Eigenpairs of the symmetric ``operator`` at both ends of its spectrum: the Ritz pairs
    on the span of the randomized range finder's basis (the top) and of
    :data:`LOW_RANK_LANCZOS_STEPS` Lanczos steps (which find both ends' outliers first).
    The top values descending; the bottom ascending, each Ritz value less its residual (at
    most ``min(rank, LOW_RANK_MAX_BOTTOM) + 1`` of them, while the residual is within
    :data:`LOW_RANK_LANCZOS_TOLERANCE` of the value: a Ritz value lies above the eigenvalue
    of its rank). Returns ``(top values, top vectors, bottom values, bottom vectors)``."""
    m = min(d, rank + LOW_RANK_OVERSAMPLE)
    basis = _range_basis(operator, d, m, power_iterations, rng)
    if m < d:
        krylov = _lanczos_basis(operator, d, LOW_RANK_LANCZOS_STEPS, rng)
        # Stacked in Fortran order and factored in place (LAPACK's layout).
        stacked = np.empty((d, basis.shape[1] + krylov.shape[1]), order="F")
        stacked[:, :basis.shape[1]], stacked[:, basis.shape[1]:] = basis, krylov
        del basis, krylov
        basis = _orthonormal_basis(stacked)
        del stacked
    values, vectors, residuals = _ritz_pairs(operator, basis)
    n_bottom = min(LOW_RANK_MAX_BOTTOM, rank) + 1
    bottom = values[:n_bottom]
    if basis.shape[1] < d:
        converged = residuals[:n_bottom] <= LOW_RANK_LANCZOS_TOLERANCE * np.abs(bottom)
        n_bottom = n_bottom if converged.all() else int(np.argmin(converged))
        # An eigenvalue lies within a Ritz value's residual: the lower end of that interval
        # stands for it, so that the widest direction left is not taken narrower than it is.
        bottom = (values - residuals)[:n_bottom]
    return values[::-1], vectors[:, ::-1], bottom, vectors[:, :n_bottom]


def _lanczos_basis(operator, d, steps, rng):
    """The orthonormal Krylov basis ``(d, m)`` of at most ``steps`` Lanczos steps on the
    symmetric ``operator`` (one single-vector product each) from a random start, fully
    reorthogonalised."""
    steps = min(steps, d)
    basis = np.zeros((steps, d))
    start = rng.standard_normal(d)
    basis[0] = start / np.linalg.norm(start)
    m = steps
    for j in range(steps - 1):
        w = operator(basis[j][:, None])[:, 0]
        size = np.linalg.norm(w)
        for _ in range(2):  # twice is enough (Kahan, Parlett)
            w -= basis[:j + 1].T @ (basis[:j + 1] @ w)
        norm = np.linalg.norm(w)
        if norm <= 1e-12 * max(1.0, size):  # an invariant subspace
            m = j + 1
            break
        basis[j + 1] = w / norm
    return basis[:m].T


def _best_split(top, top_vectors, bottom, bottom_vectors, rank):
    """Of ``rank`` directions, how many to take from the bottom (``i``) and the top so that
    the eigenvalues left have the smallest ratio of largest to smallest, as far as the
    values found tell (the largest left is ``top[rank - i]``, the smallest ``bottom[i]``).
    Returns ``(ratio, vectors (d, rank), their eigenvalues, smallest left)``."""
    best = None
    for i in range(min(rank, bottom.size - 1) + 1):
        j = rank - i
        if j >= top.size:
            continue
        low = bottom[i]
        if low <= 0 or (best is not None and top[j] / low >= best[0]):
            continue
        best = (top[j] / low, i, j, low)
    if best is None:  # nothing left to compare: the top directions, unscaled
        return np.inf, top_vectors[:, :rank], top[:rank], 1.0
    ratio, i, j, low = best
    vectors = np.column_stack([bottom_vectors[:, :i], top_vectors[:, :j]])
    return ratio, vectors, np.concatenate([bottom[:i], top[:j]]), low


class _Cache:
    """Evaluate ``objective(theta, order)`` once per point for scipy's separate calls.

    After the first point, a point where the log-likelihood is not finite (the objective
    raises ``ValueError``) or its derivatives are not has the value ``+inf``: a trial step
    there is rejected and shortened, as a step that increases the value is. A Gamma
    model's trust region stepped its log dispersion to -2 x 10^6 on 16 weighted rows
    (scikit-learn's ``check_sample_weights_not_overwritten``, under a learned scale), where
    the shape ``1 / dispersion`` overflows, and the fit failed."""

    def __init__(self, objective, order):
        self.objective = objective
        self.order = order
        self.theta = None
        self.result = None
        self.n_passes = 0

    def __call__(self, theta):
        if self.theta is None or not np.array_equal(theta, self.theta):
            first = self.theta is None
            self.theta = np.array(theta)
            self.n_passes += 1
            try:
                self.result = self.objective(self.theta, self.order)
                finite = all(part is None or np.all(np.isfinite(part))
                             for part in self.result)
            except ValueError:
                if first:  # no finite start: the caller's error stands
                    raise
                finite = False
            if not finite and not first:
                self.result = (np.inf, np.zeros(self.theta.size),
                               None if self.order < 2 else np.eye(self.theta.size))
        return self.result

    def value(self, theta):
        return self(theta)[0]

    def gradient(self, theta):
        return self(theta)[1]

    def hessian(self, theta):
        return self(theta)[2]


def find_map(objective, theta0, full=True, smooth=True, max_iter=200, scale=None):
    """Minimise a negative log posterior.

    Parameters
    ----------
    objective : callable ``(theta, order) -> (value, gradient, hessian)``
        ``order`` 1: value and gradient (hessian None); 2: also the Hessian, ``(d, d)`` when
        ``full`` and its diagonal ``(d,)`` otherwise.
    theta0 : ndarray of shape (d,)
    full : bool
        Use (and return) the full Hessian.
    smooth : bool
        Whether the objective is twice differentiable (a Laplace prior is not at 0): then a
        trust-region Newton method with the exact Hessian (Steihaug's conjugate gradients,
        ``trust-ncg``, whose subproblem is bounded: SciPy's ``trust-exact`` before 1.17 can
        loop forever in its subproblem, as on a Poisson fit with a near-singular Hessian);
        otherwise L-BFGS.
    scale : ndarray of shape (d,), optional
        Typical scales of the parameters (the prior's sd): L-BFGS searches over
        ``theta / scale``, where a wide posterior's curvature is far better conditioned (a
        digits softmax with data-scaled priors: 1,084 passes and 0.5 posterior sd short of
        the MAP without, 227 passes and 0.002 sd with). None with ``full``: Jacobi's scales
        of the Hessian at ``theta0`` (:func:`jacobi_scales`; one more pass for L-BFGS), for
        both methods. A robust regression's Laplace prior on California housing in dollars
        stopped L-BFGS 18 posterior sd short of the MAP in raw coordinates (the chains then
        started there, with a Laplace shape 84 times too narrow in one direction; the
        minibatch test's control variates, centred there, moved its posterior mean by 0.3
        sd); with the scales every start ends within 0.02 sd.

    Returns
    -------
    theta : ndarray of shape (d,)
    hessian : ndarray of shape (d, d) or (d,)
        At ``theta`` (the diagonal when not ``full``).
    n_passes : int
        Full-data passes spent.
    """
    theta0 = np.asarray(theta0, dtype=np.float64)
    cache = _Cache(objective, 2 if full and smooth else 1)
    if scale is None and full:
        hessian = cache.hessian(theta0) if cache.order == 2 else objective(theta0, 2)[2]
        cache.n_passes += cache.order == 1
        scale = jacobi_scales(np.diag(hessian))
    scale = np.ones_like(theta0) if scale is None else np.asarray(scale, dtype=np.float64)
    if full and smooth:
        result = minimize(lambda phi: cache.value(scale * phi), theta0 / scale,
                          jac=lambda phi: scale * cache.gradient(scale * phi),
                          hess=lambda phi: cache.hessian(scale * phi) * np.outer(scale, scale),
                          method="trust-ncg", options={"maxiter": max_iter, "gtol": 1e-8})
    else:
        result = minimize(lambda phi: cache.value(scale * phi), theta0 / scale,
                          jac=lambda phi: scale * cache.gradient(scale * phi),
                          method="L-BFGS-B", options={"maxiter": 5 * max_iter})
    theta = scale * result.x
    hessian = objective(theta, 2)[2]
    return theta, hessian, cache.n_passes + 1


def newton_map(objective, theta0, max_iter=NEWTON_MAX_ITER):
    """Minimise a smooth, convex-near-the-optimum negative log posterior by Newton's method
    with backtracking, one full-data pass (value, gradient, Hessian) per iteration.

    It stops at an evaluated point ``theta`` from which the Newton step lands within
    ``sqrt(NEWTON_DECREMENT)`` posterior sd of the optimum (in the Laplace metric), and
    returns that step's end as the optimum without another pass. The Newton decrement
    ``lambda^2 = g' H^-1 g`` is the squared distance of ``theta`` itself; under quadratic
    convergence the next one is ``C lambda^4``, with ``C`` estimated from the last two
    decrements, so the search stops when ``lambda^2`` or, within one sd, ``C lambda^4`` is
    below ``NEWTON_DECREMENT``. On a tall data set, whose log-likelihood is nearly quadratic
    over many sd, that is two passes from a subsample's MAP.

    Returns
    -------
    theta_map : ndarray of shape (d,)
        ``theta - H^-1 g``.
    theta : ndarray of shape (d,)
        The last point evaluated, with the objective's ``value``, ``gradient`` and
        ``hessian`` there.
    value, gradient, hessian
    n_passes : int
    converged : bool
        False when the Hessian was not positive definite, a step would not decrease the
        objective, or ``max_iter`` ran out (a caller then falls back to :func:`find_map`).
    """
    theta = np.array(theta0, dtype=np.float64)
    value, gradient, hessian = objective(theta, 2)
    n_passes = 1
    previous = np.inf
    for _ in range(max_iter):
        if not np.isfinite(value):
            break
        # Factored with Jacobi's scaling (unit diagonal), accurate whatever the units.
        scales = jacobi_scales(np.diag(hessian))
        try:
            factor = np.linalg.cholesky(0.5 * (hessian + hessian.T) * np.outer(scales, scales))
        except np.linalg.LinAlgError:
            break
        step = scales * np.linalg.solve(factor.T, np.linalg.solve(factor, scales * gradient))
        decrement = float(gradient @ step)
        if not np.isfinite(decrement):  # a degenerate point (a Gamma fit's dispersion near 0)
            break
        # C lambda^4, C = lambda^2 / prev^4 (in NumPy's floats: an overflow is inf)
        with np.errstate(over="ignore"):
            predicted = np.float64(decrement) ** 2 / np.float64(previous) ** 2 * decrement
        if decrement < NEWTON_DECREMENT or (decrement < 1.0 and predicted < NEWTON_DECREMENT):
            return theta - step, theta, value, gradient, hessian, n_passes, True
        previous = decrement
        length = 1.0
        for _ in range(NEWTON_BACKTRACKS):
            trial = theta - length * step
            n_passes += 1
            try:
                trial_value, trial_gradient, trial_hessian = objective(trial, 2)
            except ValueError:  # the log-likelihood is not finite there: a shorter step
                trial_value = np.inf
            if trial_value <= value:
                break
            length *= 0.5
        else:
            break
        theta, value, gradient, hessian = trial, trial_value, trial_gradient, trial_hessian
    return theta, theta, value, gradient, hessian, n_passes, False


def laplace_covariance(hessian):
    """The inverse of a negative log posterior's Hessian (the Laplace covariance), or of its
    diagonal (variances).

    A Hessian that is not positive definite (at a saddle, or in floating point on extreme
    data) is repaired rather than inverted blindly: eigenvalues below ``EIGENVALUE_FLOOR``
    times the largest are raised to that floor, so the covariance is always a valid,
    finite proposal shape. A full Hessian's eigenvalues are those of ``D H D`` with Jacobi's
    scaling ``D`` (:func:`jacobi_scales`), whose spread does not depend on the parameters'
    units: in raw units a well-determined but badly scaled posterior (a robust regression
    on California housing in dollars: a raw intercept whose sd is 75,000 times a rooms
    coefficient's) fell below the floor and had its widest direction narrowed 84 times.

    Returns
    -------
    covariance : ndarray of shape (d, d) or (d,)
    repaired : bool
        Whether any eigenvalue (or diagonal entry) had to be raised.
    """
    hessian = np.asarray(hessian, dtype=np.float64)
    if hessian.ndim == 1:
        floor = EIGENVALUE_FLOOR * max(np.max(np.abs(hessian)), 1e-300)
        repaired = bool(np.any(~(hessian >= floor)))
        return 1.0 / np.maximum(np.nan_to_num(hessian, nan=floor), floor), repaired
    symmetric = 0.5 * (hessian + hessian.T)
    scales = jacobi_scales(np.diag(symmetric))
    values, vectors = np.linalg.eigh(symmetric * np.outer(scales, scales))
    floor = EIGENVALUE_FLOOR * max(np.max(np.abs(values)), 1e-300)
    repaired = bool(np.any(values < floor))
    values = np.maximum(values, floor)
    covariance = (vectors / values) @ vectors.T * np.outer(scales, scales)
    return 0.5 * (covariance + covariance.T), repaired

"""The posterior a sampler targets, as the kernels see it, and the control variates
(Taylor proxies of every row's log-likelihood) built from it in one full-data pass."""
import os
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import scipy.sparse as sp

from .._kernels._jit import STATUS_OK
from .._kernels.layouts import BOTH_OPS, firefly_model_tuple, model_tuple
from .._kernels.passes import linear_derivatives, row_sums
from .._data import multiply, sum_each_row
from .._passes import PASS_CHUNK, chunks, sum_stripes
from .._validation import check_dense_matrix
from ._shared import KERNEL_TUPLES, reduce_target
from ..models._base import (GROUP_INTERWEAVE_MIN_DETERMINED, GROUP_RESCALE_MAX_DETERMINED,
                            GROUP_RESCALE_MIN_EVIDENCE)
from ..models._optimize import (LowRankCovariance, full_covariance_affordable,
                                low_rank_directions)


#: :meth:`Target.log_posterior_estimates` estimates the sum of the rows' Taylor remainders
#: on a random subsample of this many rows.
REMAINDER_ROWS = 5_000
#: :meth:`Target.log_posteriors` sums the rows' log-likelihoods in one thread up to this
#: many (theta, row) pairs in all (beyond, one full-data pass on every core a theta) ...
ROW_TABLE_MAX = 10_000_000
#: ... in tables of at most this many entries (8 MB), so that checking the chains of a wide
#: fit adds little memory to its draws.
ROW_TABLE_CHUNK = 1_000_000


@dataclass
class Target:
    """The tempered posterior ``p(theta) prod_i p(x_i | theta)^(w_i / K)``.

    Attributes
    ----------
    kind : {"linear", "rows"}
        A linear-predictor model (``model``, ``data``) or a user's per-row functions.
    spec : tuple
        The kernels' model tuple (``_kernels/specs.py``).
    prior : BuiltinPrior
    inv_temperature : float
    n_data, n_params : int
    model, data : LinearModel, LinearData or None
    mean, covariance : ndarray or None
        The Laplace approximation at the MAP (covariance ``(d, d)``, or ``(d,)`` variances
        above the full-covariance size), when one was computed.
    low_rank : LowRankCovariance or None
        Above the full-covariance size, where affordable: the Laplace covariance as
        low-rank-plus-diagonal (``covariance`` then holds its variances).
    lipschitz : float or None
        A per-row Lipschitz constant of the log-likelihood in theta (Euclidean), if any.
    has_gradient, has_hessian : bool
        Whether per-row gradients and Hessians can be evaluated (linear models always; user
        models when given).
    max_weight : float
        The largest sample weight (1 without weights).
    n_passes : float
        Full-data passes spent building it (MAP, Laplace; a subsample's as a fraction).
    extra : dict
        ``"reference"``: ``(theta, sum w_i l_i, gradient, Hessian)`` of the untempered
        log-likelihood at the MAP, when the search's last pass was there. ``"modes"``:
        ``(negative log posterior, point)`` of each distinct mode the MAP search found from
        its starts (lowest first; the first is refined into ``mean``).
    """

    kind: str
    spec: tuple
    prior: object
    inv_temperature: float
    n_data: int
    n_params: int
    model: object = None
    data: object = None
    mean: np.ndarray = None
    covariance: np.ndarray = None
    low_rank: LowRankCovariance = None
    lipschitz: float = None
    has_gradient: bool = True
    has_hessian: bool = True
    max_weight: float = 1.0
    n_passes: float = 0
    extra: dict = field(default_factory=dict)

    @classmethod
    def linear(cls, model, data, prior, inv_temperature=1.0, full=None, lipschitz=False,
               low_rank=None):
        """The tempered posterior of a linear-predictor model, with its MAP and Laplace
        approximation (full when ``full``; None: where
        :func:`~skbayes_mh.models._optimize.full_covariance_affordable` says, else
        low-rank-plus-diagonal with as many directions as
        :func:`~skbayes_mh.models._optimize.low_rank_directions` affords, or ``low_rank``
        directions when given), and with ``lipschitz`` its per-row Lipschitz constant (one
        more pass).
        The log-likelihood's gradient and Hessian at the MAP, from the last pass of the
        search, are kept for the control variates."""
        d = model.n_params(data)
        if low_rank is None and full is None and not full_covariance_affordable(data.n_rows, d):
            low_rank = low_rank_directions(data.n_rows, d, model.n_outputs * data.row_cost)
        full = full_covariance_affordable(data.n_rows, d) if full is None else bool(full)
        theta_map, covariance, n_passes, reference = model.laplace(data, prior,
                                                                   inv_temperature, full)
        if prior.group_sds.size:
            determined = model.group_determined
            interwoven = ((model.group_evidence < GROUP_RESCALE_MIN_EVIDENCE)
                          & (determined >= GROUP_INTERWEAVE_MIN_DETERMINED))
            prior = prior.with_rescaled_sds(
                (determined < GROUP_RESCALE_MAX_DETERMINED) & ~interwoven, interwoven)
        target = cls("linear", model.spec(data), prior, float(inv_temperature), data.n_rows, d,
                     model, data, theta_map, covariance, n_passes=n_passes)
        if low_rank and not full:
            target.low_rank, passes = model.low_rank_laplace(
                data, prior, inv_temperature, theta_map, covariance, int(low_rank))
            target.covariance = target.low_rank.variances()
            target.n_passes += passes
        if reference is not None:
            target.extra["reference"] = reference
        target.extra["modes"] = list(getattr(model, "searched_modes", []))
        if lipschitz:
            target.lipschitz = model.lipschitz(data.max_row_norm())
            target.n_passes += 1
        return target

    def __reduce__(self):
        # Sent to Ray's workers within a fit: a handle to one copy (``_shared.py``).
        return reduce_target(self)

    def kernel_model(self, used=BOTH_OPS):
        """The :data:`~skbayes_mh._kernels.specs.MODEL` tuple the chain loops take
        (``_kernels/layouts.py``), with the ops ``used`` compiled."""
        return self._kernel_tuple(("model", used), partial(
            model_tuple, self.spec, self.kind == "linear", self.n_params, used))

    @property
    def firefly_model(self):
        """The :data:`~skbayes_mh._kernels.specs.FIREFLY_MODEL` tuple Firefly's kernels take
        (a linear model's)."""
        return self._kernel_tuple(("firefly",), partial(firefly_model_tuple, self.spec))

    def _kernel_tuple(self, key, make):
        """``make()``, made once per process and :attr:`spec`: a kernel tuple holds the
        spec's arrays' and functions' addresses, valid in this process while the spec lives
        (the cache keeps it, and is never pickled: ``_shared.reduce_target``); a new spec
        (rows gathered anew) replaces the old one's, which is then not kept alive. Made
        afresh for every kernel call, it cost a small fit (200 rows, four chains of a few
        hundred draws in rounds) a fifth of its time."""
        cache = self.__dict__.setdefault(KERNEL_TUPLES, {})
        key = (os.getpid(), *key)
        found = cache.get(key)
        if found is None or found[0] is not self.spec:
            found = cache[key] = (self.spec, make())
        return found[1]

    @property
    def bounds_residual_range(self):
        """Whether the model bounds the range of the rows' Taylor remainders (through its
        third derivative along the linear predictor): single-output linear models that
        give a third-derivative bound."""
        model = self.model
        return (self.kind == "linear" and model.third_derivative is not None
                and model.n_outputs == 1 and model.n_extra == 0)

    @property
    def full_covariance(self):
        """Whether the Laplace covariance is a full matrix (not variances)."""
        return self.covariance is not None and np.ndim(self.covariance) == 2

    @property
    def laplace_covariance(self):
        """The Laplace covariance in the richest form at hand, for
        :meth:`~skbayes_mh.sampling.Shape.from_covariance`: ``low_rank``, else ``covariance``."""
        return self.low_rank if self.low_rank is not None else self.covariance

    @property
    def covariance_matrix(self):
        """The Laplace covariance as a ``(d, d)`` matrix (diagonal when stored as variances),
        or None."""
        if self.covariance is None:
            return None
        cov = np.asarray(self.covariance, dtype=np.float64)
        return np.diag(cov) if cov.ndim == 1 else cov

    def log_posterior(self, theta):
        """The tempered log posterior at ``theta`` (up to its normalising constant), exact:
        one full-data pass (a linear model's)."""
        loglik = self.model.loglik_derivatives(self.data, theta, order=0, full=False)[0]
        return self.inv_temperature * loglik + self.prior.log_density(theta)[0]

    def log_posteriors(self, thetas, cv=None):
        """:meth:`log_posterior` at each of ``thetas`` (S, d). With control variates ``cv``
        in use, estimated from them (:meth:`log_posterior_estimates`, no full-data pass);
        otherwise exact, from tables of every row's log-likelihood at some of them
        (:meth:`row_terms`, one kernel call a theta, no threads; at most
        :data:`ROW_TABLE_CHUNK` entries a table) when there are at most
        :data:`ROW_TABLE_MAX` (theta, row) pairs, else one full-data pass each."""
        thetas = np.asarray(thetas, dtype=np.float64)
        if cv is not None and cv[0]:
            return self.log_posterior_estimates(thetas, cv)
        if len(thetas) * self.n_data > ROW_TABLE_MAX:
            return np.array([self.log_posterior(theta) for theta in thetas])
        per_table = max(1, ROW_TABLE_CHUNK // max(self.n_data, 1))
        loglik = np.concatenate([
            self.row_terms(thetas[start:start + per_table], n_rows=self.n_data).sum(axis=1)
            for start in range(0, len(thetas), per_table)]) if len(thetas) else np.zeros(0)
        log_prior = np.array([self.prior.log_density(theta)[0] for theta in thetas])
        return self.inv_temperature * loglik + log_prior

    def log_posterior_estimates(self, thetas, cv, n_rows=REMAINDER_ROWS, random_state=0):
        """The tempered log posterior at each of ``thetas`` without a full-data pass each (a
        linear model's): the control variates' quadratic proxy, whose full-data sum ``cv``
        holds exactly, plus the sum of the rows' Taylor remainders, estimated on a random
        subsample of ``n_rows`` rows (every row when there are fewer). Near the proxies'
        centre, where the chains of a control-variate test sit, the remainders are small and
        so is the estimate's noise (``tests/sampling/test_chain_levels.py``); far from it
        the estimate stays unbiased but noisier.

        Parameters
        ----------
        thetas : ndarray of shape (S, d)
        cv : tuple
            The kernels' control variates (:func:`control_variates`).

        Returns
        -------
        ndarray of shape (S,)
            NaN where the log-likelihood of a subsampled row is not finite.
        """
        center, gradient, hessian = cv[1], cv[2], cv[3]
        thetas = np.asarray(thetas, dtype=np.float64)
        remainders = self.row_terms(thetas, cv, n_rows, random_state).sum(axis=1)
        reference = self.extra.get("reference")
        total = (reference[1] if reference is not None and np.array_equal(reference[0], center)
                 else self.loglik_derivatives(center, order=0)[0])
        exp_coords = cv[9]
        deltas = proxy_coordinates(thetas, exp_coords) - proxy_coordinates(center, exp_coords)
        proxies = (total + deltas @ gradient
                   + 0.5 * np.einsum("si,ij,sj->s", deltas, hessian, deltas))
        log_prior = np.array([self.prior.log_density(theta)[0] for theta in thetas])
        return self.inv_temperature * (proxies + remainders) + log_prior

    def row_terms(self, thetas, cv=None, n_rows=REMAINDER_ROWS, random_state=0):
        """Each row's (untempered, weighted) log-likelihood at each of ``thetas`` less, with
        control variates ``cv``, its Taylor proxy there: the terms whose sums a subsampling
        test estimates, on a random subsample of ``n_rows`` rows (every row when there are
        fewer), each weighted by ``N / n_rows`` too (a linear model's).

        Returns
        -------
        ndarray of shape (S, rows)
            NaN in the rows of a theta where some row's log-likelihood is not finite.
        """
        model = self.model
        part = (self.data if self.n_data <= n_rows
                else self.data.subsample(n_rows, random_state))
        K, block, rows = model.n_outputs, part.block, part.n_rows
        m = K + model.n_extra
        spec = model.spec(part)
        at_center = np.empty(rows)
        slopes, curvatures = np.empty((rows, m)), np.empty((rows, m, m))
        with_cv = cv is not None and cv[0]
        terms = np.full((len(thetas), rows), np.nan)
        if with_cv and linear_derivatives(spec, cv[1], 0, rows, 2, at_center, slopes,
                                          curvatures) != STATUS_OK:
            return terms
        exp_coords = cv[9] if with_cv else np.zeros(0)
        if exp_coords.size:  # each row's derivatives in the proxies' coordinates
            extra = exp_coords[K * block:]
            for e in np.flatnonzero(extra):
                a, value = K + e, np.exp(cv[1][K * block + e])
                curvatures[:, a, :] /= value
                curvatures[:, :, a] /= value
                curvatures[:, a, a] -= slopes[:, a] / value**2
                slopes[:, a] /= value
        shift = np.empty((rows, m))
        for s, theta in enumerate(np.asarray(thetas, dtype=np.float64)):
            theta = np.ascontiguousarray(theta)
            if linear_derivatives(spec, theta, 0, rows, 0, terms[s], slopes[:0],
                                  curvatures[:0]) != STATUS_OK:
                terms[s] = np.nan
                continue
            if with_cv:
                delta = (proxy_coordinates(theta, exp_coords)
                         - proxy_coordinates(cv[1], exp_coords))
                shift[:, :K] = part.design_times(0, rows,
                                                 delta[:K * block].reshape(K, block).T)
                shift[:, K:] = delta[K * block:]
                terms[s] -= (at_center + np.einsum("ra,ra->r", slopes, shift)
                             + 0.5 * np.einsum("ra,rab,rb->r", shift, curvatures, shift))
        return terms

    def loglik_derivatives(self, theta, order=2):
        """``(sum w_i l_i, gradient, Hessian)`` at ``theta`` in one full-data pass (untempered;
        the Hessian full)."""
        if self.kind == "linear":
            return self.model.loglik_derivatives(self.data, theta, order, full=True)
        theta = np.array(theta, dtype=np.float64)  # a writable copy: the user's loglik takes one
        d = theta.size

        def stripe(begin, end):
            gradient = np.zeros(d)
            hessian = np.zeros((d, d))
            total = 0.0
            for start, stop in chunks(begin, end):
                value, status = row_sums(self.spec, theta, start, stop, order, gradient,
                                         hessian)
                if status != STATUS_OK:
                    raise ValueError(f"The log-likelihood, its gradient or its Hessian is not "
                                     f"finite in rows {start} to {stop - 1} at the control "
                                     f"variates' centre.")
                total += value
            return total, gradient, hessian

        check_dense_matrix(d, "the log-likelihood's Hessian")
        return sum_stripes(stripe, self.n_data)


def no_control_variates(n_params):
    """The kernels' tuple for "no control variates" (the Hessian, never read then, empty)."""
    return (False, np.zeros(n_params), np.zeros(n_params), np.zeros((0, 0)),
            np.zeros((0, 0)), 0.0, 0.0, 0.0, 0.0, np.zeros(0), *sparse_hessian(None))


#: The kernels read the proxies' Hessian in CSR form (:func:`sparse_hessian`) from this many
#: parameters up where at most this share of its entries is nonzero: each Hamiltonian step
#: on the proxies multiplies by it, ``d^2`` products dense (group-level effects of 2,000
#: groups: 16 million), its nonzero entries sparse.
SPARSE_HESSIAN_MIN_PARAMS = 256
SPARSE_HESSIAN_MAX_SHARE = 0.125


def sparse_hessian(hessian):
    """``(indptr, indices, values)``: the CSR form of ``hessian`` (d, d) where it has at
    least :data:`SPARSE_HESSIAN_MIN_PARAMS` rows and at most
    :data:`SPARSE_HESSIAN_MAX_SHARE` of its entries are nonzero, each row's columns in
    increasing order; three empty arrays otherwise (and for None)."""
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    if hessian is None or hessian.shape[0] < SPARSE_HESSIAN_MIN_PARAMS:
        return empty
    if np.count_nonzero(hessian) > SPARSE_HESSIAN_MAX_SHARE * hessian.size:
        return empty
    csr = sp.csr_array(hessian)
    csr.sort_indices()
    return (csr.indptr.astype(np.int64), csr.indices.astype(np.int64),
            np.ascontiguousarray(csr.data, dtype=np.float64))


def control_variates(target, center=None, whitening_covariance=None):
    """Second-order Taylor proxies of every row's log-likelihood around ``center``: their
    full-data gradient and Hessian sums, in one pass (none when ``center`` is None or the
    point where the MAP search last evaluated them, its ``reference``, near the MAP; None
    without a reference is the MAP).

    With ``whitening_covariance`` (the Laplace covariance), also what the confidence
    sampler's range bound needs for a single-output linear model: the largest whitened row
    norm ``R = max_i sqrt(x_i' C x_i)`` (``x_i`` with its intercept 1), the largest linear
    predictor at the centre, and the model's third-derivative bound; a second pass.

    Returns
    -------
    cv : tuple
        The kernels' ``ControlVariates`` tuple.
    n_passes : int
    """
    if not (target.has_gradient and target.has_hessian):
        raise ValueError(
            "Control variates need each row's gradient and Hessian: give sample() the "
            "'gradient' and 'hessian' functions (numba.njit, gradient(theta, data, i, out) "
            "and hessian(theta, data, i, out)), or use control_variates=False.")
    reference = target.extra.get("reference")
    if center is None:
        center = target.mean if reference is None else reference[0]
    center = np.ascontiguousarray(center, dtype=np.float64)
    if reference is not None and np.array_equal(reference[0], center):
        _, total, gradient, hessian = reference  # the MAP search's last pass was here
        n_passes = 0
    else:
        total, gradient, hessian = target.loglik_derivatives(center, 2)
        n_passes = 1
    whitening = np.zeros((0, 0))
    radius = m3_scale = m3_rate = eta_max = 0.0
    model = target.model
    if whitening_covariance is not None and target.bounds_residual_range:
        covariance = np.asarray(whitening_covariance, dtype=np.float64)
        if covariance.ndim == 1:
            covariance = np.diag(covariance)
        whitening = np.linalg.cholesky(covariance)
        radius, eta_max = _whitened_radius(target.data, covariance, center)
        m3_scale, m3_rate = model.third_derivative
        n_passes += 1
    hessian = 0.5 * (hessian + hessian.T)
    exp_coords, checked = proxy_exp_coords(target, center, total, gradient, hessian)
    n_passes += checked
    gradient, hessian = map_derivatives(gradient, hessian, center, exp_coords)
    cv = (True, center, gradient, hessian, whitening, float(radius), float(m3_scale),
          float(m3_rate), float(eta_max), exp_coords, *sparse_hessian(hessian))
    return cv, n_passes


#: The proxies read a coordinate its model marks (``proxy_exp_extra``) as ``exp(theta_a)``
#: only where the quadratic in ``theta_a`` fails: along the coordinate, this many of its
#: Laplace sds either side of the centre ...
PROXY_CHECK_SDS = 3.0
#: ... it is off the exact log-likelihood by more than this many nats, and the quadratic in
#: ``exp(theta_a)`` by less. Where both hold within a few nats there, so deep in the tails,
#: the Hamiltonian paths on either reach as far, and the one in ``theta_a`` leaves the rows'
#: residuals less skewed (in ``exp``: skewness 10 to 30 against 2 to 3 on a negative
#: binomial's well-determined dispersion, which set off the test-error screen's
#: measurement, a second a fit). Negative binomial, 10 features, errors in ``log alpha``
#: and ``alpha`` at -3 and +3 sds: Poisson counts (``alpha`` 0) 2.8 and 26 nats against
#: 0.005 and 5.7 (10^4 rows), 1.5 and 7.2 against 0.001 and 0.1 (10^6); ``alpha`` 0.02 on
#: 10^4 rows 2.2 and 6.2 against 0.08 and 1.5, on 10^5 1.2 and 1.8 against 0.08 and 0.23;
#: ``alpha`` 0.5 on 10^5 rows 0.04 against 0.1.
PROXY_LOG_ERROR_LIMIT = 2.0


def proxy_exp_coords(target, center, total, gradient, hessian):
    """The kernels' ``exp_coords``: 1 at each coordinate the proxies read as ``exp(theta_a)``
    (of a linear model's extra coordinates its ``proxy_exp_extra`` marks, those where the
    quadratic in ``theta_a`` fails: :data:`PROXY_LOG_ERROR_LIMIT`), over all ``d``; an
    empty array where there is none. Also the full-data passes the check took.

    Parameters
    ----------
    target : Target
    center : ndarray of shape (d,)
    total : float
        The log-likelihood at ``center``; ``gradient`` and ``hessian`` its derivatives.
    """
    model = target.model
    flags = tuple(getattr(model, "proxy_exp_extra", ())) if target.kind == "linear" else ()
    if not any(flags):
        return np.zeros(0), 0
    exp_coords = np.zeros(target.n_params)
    exp_coords[target.n_params - len(flags):] = np.asarray(flags, dtype=np.float64)
    if target.covariance is None:
        return exp_coords, 0
    variances = (np.diag(target.covariance) if np.ndim(target.covariance) == 2
                 else np.asarray(target.covariance))
    mapped_gradient, mapped_hessian = map_derivatives(gradient, hessian, center, exp_coords)
    errors = np.zeros(2)  # the largest error of the proxies in theta, and in exp(theta)
    n_passes = 0
    for a in np.flatnonzero(exp_coords):
        for side in (-1.0, 1.0):
            theta = np.array(center, dtype=np.float64)
            theta[a] += side * PROXY_CHECK_SDS * np.sqrt(variances[a])
            exact = target.loglik_derivatives(theta, order=0)[0] - total
            n_passes += 1
            for k, (delta, g, h) in enumerate((
                    (theta - center, gradient, hessian),
                    (proxy_coordinates(theta, exp_coords)
                     - proxy_coordinates(center, exp_coords), mapped_gradient,
                     mapped_hessian))):
                errors[k] = max(errors[k], abs(exact - delta @ g - 0.5 * delta @ h @ delta))
    keep = errors[0] > PROXY_LOG_ERROR_LIMIT and errors[1] < errors[0]
    return (exp_coords if keep else np.zeros(0)), n_passes


def map_derivatives(gradient, hessian, center, exp_coords):
    """The gradient and Hessian at ``center`` in the coordinates where each one that
    ``exp_coords`` marks is ``alpha = exp(theta_a)``: ``g / alpha`` and ``(H_aa - g_a) /
    alpha^2``, mixed entries ``/ alpha`` (copies; as given without marks)."""
    if not exp_coords.size:
        return gradient, hessian
    gradient, hessian = np.array(gradient, dtype=np.float64), np.array(hessian, np.float64)
    for a in np.flatnonzero(exp_coords):
        value = np.exp(center[a])
        hessian[a, :] /= value
        hessian[:, a] /= value
        hessian[a, a] -= gradient[a] / value**2
        gradient[a] /= value
    return gradient, hessian


def proxy_coordinates(thetas, exp_coords):
    """``thetas`` with each coordinate that ``exp_coords`` marks exponentiated (the
    proxies' coordinates)."""
    if not exp_coords.size:
        return thetas
    marked = exp_coords != 0
    mapped = np.array(thetas, dtype=np.float64)
    mapped[..., marked] = np.exp(mapped[..., marked])
    return mapped


def _whitened_radius(data, covariance, center):
    """``max_i sqrt(x_i' C x_i)`` and ``max_i x_i . center`` (``x_i`` with the intercept)."""
    parts = data.map_parts(partial(_whitened_extremes, covariance, center))
    return np.sqrt(max(part[0] for part in parts)), max(part[1] for part in parts)


def _whitened_extremes(covariance, center, part, begin, end):
    """``max x_i' C x_i`` and ``max x_i . center + o_i`` over rows ``begin..end-1`` of ``part``
    (``x_i`` with the intercept's 1: its row and column of ``C`` are added apart, so that a
    sparse row stays sparse)."""
    D = part.n_features
    weights_c, side = covariance[:D, :D], covariance[:D, D:D + 1]
    radius2 = 0.0
    eta_max = -np.inf
    # Rows per chunk: the (rows, D) product X C stays at a few MB.
    size = max(1, min(PASS_CHUNK, 1_000_000 // max(D, 1)))
    for start, stop in chunks(begin, end, size):
        X = part.rows(start, stop)
        quadratic = sum_each_row(multiply(X, np.asarray(X @ weights_c)))
        eta = np.asarray(X @ center[:D])
        if part.intercept:
            quadratic += 2.0 * np.asarray(X @ side).ravel() + covariance[D, D]
            eta = eta + center[D]
        if part.offset.size:
            eta = eta + part.offset[start:stop]
        radius2 = max(radius2, float(np.max(quadratic)))
        eta_max = max(eta_max, float(np.max(eta)))
    return radius2, eta_max

"""Posterior-predictive means, from a second- or third-order expansion with a proven error
bound where the posterior is narrow, and over every stored draw elsewhere.

A prediction is the mean over the stored draws ``s`` of ``f(eta_s)``, where ``eta_s = x
W_s' + b_s`` are a row's linear predictors under draw ``s`` and ``f`` gives class
probabilities or a mean outcome. For a model of one linear predictor with few weights,
:class:`SecondOrder` expands about ``mu``, the mean of ``eta_s`` over every draw: that mean
of ``f(mu + d_s)`` is ``f(mu) + f2(mu) v / 2 + R`` exactly (``f2``, ``f3``: the second and
third derivatives), with ``v`` the draws' variance of ``d_s = eta_s - mu`` (from their
covariance: no draw is evaluated), and ``|R| <= sup |f3| rho v^(3/2) / 6`` over ``mu +- rho
sqrt(v)``, where ``rho`` is the largest Mahalanobis radius of a draw (Cauchy-Schwarz:
``|d_s| <= rho sqrt(v)``). Where that bound is above the tolerance and the family gives
its third and fourth derivatives, the third-order estimate ``f(mu) + f2(mu) v / 2 +
f3(mu) m3 / 6`` (``m3``, the draws' mean of ``d_s^3``, from their third moments) with
``|R| <= sup |f4| rho^2 v^2 / 24`` (``d_s^4 <= rho^2 v d_s^2``) replaces it where that bound
is the smaller: where the posterior is a few times wider than on tall data (a few thousand
rows), it settles the rows the second-order bound leaves. A row whose bound is within the
tolerance keeps its estimate; every other row, and every row of a model without the bound
(several outputs, more than a quarter as many weights as draws), is averaged over every
draw. A bound, not a standard
error: no row can be off by more (but for the rounding of ``f2``'s differences, about 1e-8
of ``f`` times ``v``), whatever the shape of the posterior. (Estimates from subsets of the
draws were tried and dropped: on rows whose probabilities sit near 1 in all but a few
draws, the subsets missed those draws, estimated a standard error near 0 and erred by 50
times the tolerance, and where the posterior is wide they cost more than every draw.)
"""
import functools

import numpy as np

from .._passes import map_on_cores

#: Bytes of one block of test rows' linear predictors under every draw (rows x draws x
#: outputs, float64): it bounds the memory, and blocks run on every core.
PREDICT_BLOCK_BYTES = 1 << 24
#: The mean over every draw runs on tiles of at most this many rows x as many draws as fit
#: in :data:`PREDICT_TILE_BYTES` of linear predictors, its sums added tile by tile: a
#: tile's transform reads and writes its values several times (the softmax's largest
#: class, differences, exponentials, totals) while they stay in a core's caches, where a
#: block of every draw spilled to memory at each pass (digits' 2,432 draws x 10 classes
#: over 4,000 rows on one core: 27.6 s per 10^5 rows against 43.5).
PREDICT_TILE_ROWS = 256
PREDICT_TILE_BYTES = 1 << 21
#: Rows per block of the mean over every draw (a few tiles), the blocks on every core.
EVERY_DRAW_BLOCK_ROWS = 4 * PREDICT_TILE_ROWS
#: The second-order path serves models of one linear predictor with at most this share of
#: weights and intercept per stored draw: its per-row variance costs a product of the row
#: with a (weights x weights) factor, against a product with every draw's weights.
SECOND_ORDER_MAX_SHARE = 0.25
#: Rows per block of the second-order path: its few arrays per row stay in the caches, and
#: the blocks spread evenly over the cores (the rows it does not settle average every draw
#: in blocks of :data:`PREDICT_BLOCK_BYTES`).
SECOND_ORDER_BLOCK_ROWS = 1 << 13
#: The third-order term serves draws of at most this many directions (weights and
#: intercept): a row's costs their cube, against their number times the draws for every
#: draw.
THIRD_ORDER_MAX_DIRECTIONS = 32
#: Predictions within at least this tolerance average every draw in float32 where the
#: family's float32 values err by at most 2.5e-7 (``single_precision_probabilities``).
SINGLE_PRECISION_MIN_TOL = 1e-5
#: Rows of the pilot that decides whether the second-order path is tried at all.
PILOT_ROWS = 256
#: Step of the second differences that give ``f2`` at ``mu``, relative to ``1 + |mu|``
#: (their rounding error, about 1e-8 of ``f``, meets a variance below 1e-3 where the
#: remainder's bound passes).
CURVATURE_STEP = 1e-4


def linear_predictors(X, coef, intercept):
    """``X W_s' + b_s`` for every draw ``s``: ``(n_draws, n_rows, n_outputs)`` from ``X``
    (n_rows, n_features; an array or a sparse matrix), ``coef`` (n_draws, n_outputs,
    n_features) and ``intercept`` (n_draws, n_outputs), as one matrix product.

    The draws are contiguous in memory (strides: draws, then outputs, then rows), so that
    an element-wise transform keeps that layout and its mean over the draws reads
    contiguous values (several times faster than with the outputs innermost)."""
    return OutputMajorDraws(coef, intercept).linear_predictors(X)


class OutputMajorDraws:
    """Stored draws laid out output by output, for :meth:`linear_predictors`.

    Parameters
    ----------
    coef : ndarray of shape (n_draws, n_outputs, n_features)
    intercept : ndarray of shape (n_draws, n_outputs)
    """

    def __init__(self, coef, intercept):
        self.n_draws, self.n_outputs, n_features = coef.shape
        self.weights = np.ascontiguousarray(coef.transpose(1, 0, 2))
        self.intercepts = np.ascontiguousarray(intercept.T)

    def linear_predictors(self, X):
        """The linear predictors of ``X``'s rows under every draw, ``(n_draws, n_rows,
        n_outputs)`` with the draws contiguous."""
        n_outputs, n_draws, n_features = self.weights.shape
        eta = np.asarray(X @ self.weights.reshape(n_outputs * n_draws, n_features).T)
        eta = eta.reshape(X.shape[0], n_outputs, n_draws)
        eta += self.intercepts
        return eta.transpose(2, 0, 1)


def mean_over_draws(coef, intercept, transform, single=False):
    """A function of rows ``X`` (n_rows, n_features; an array or a sparse matrix) giving the
    mean of ``transform(eta, draws)`` over every draw, ``(n_rows, ...)``, summed tile by
    tile: :data:`PREDICT_TILE_ROWS` rows x the draws whose linear predictors take
    :data:`PREDICT_TILE_BYTES`, each tile's ``eta`` of shape ``(len(draws), rows,
    n_outputs)`` with the draws contiguous (as :func:`linear_predictors` gives them).

    Parameters
    ----------
    coef : ndarray of shape (n_draws, n_outputs, n_features)
    intercept : ndarray of shape (n_draws, n_outputs)
    transform : callable
        As :func:`predictive_mean` takes it.
    single : bool, default=False
        ``transform`` receives float32 linear predictors (computed in float64) and may
        return float32 values; their sums are float64.
    """
    n_draws, n_outputs, n_features = coef.shape
    tile_draws = max(1, PREDICT_TILE_BYTES // (8 * PREDICT_TILE_ROWS * n_outputs))
    # Each tile's weights as one contiguous (features, outputs x draws) factor, made once
    # for every block of rows (together the size of ``coef``).
    tiles = [(np.arange(start, min(start + tile_draws, n_draws)),
              np.ascontiguousarray(coef[start:start + tile_draws].transpose(2, 1, 0)).reshape(
                  n_features, -1),
              np.ascontiguousarray(intercept[start:start + tile_draws].T))
             for start in range(0, n_draws, tile_draws)]

    def mean(X):
        parts = []
        for X_tile in in_blocks(X, PREDICT_TILE_ROWS):
            total = None
            for draws, factor, intercepts in tiles:
                eta = np.asarray(X_tile @ factor).reshape(X_tile.shape[0], n_outputs, -1)
                eta += intercepts
                if single:
                    eta = eta.astype(np.float32)
                values = transform(eta.transpose(2, 0, 1), draws).sum(axis=0,
                                                                      dtype=np.float64)
                if total is None:
                    total = values
                else:
                    total += values
            total /= n_draws
            parts.append(total)
        return np.concatenate(parts)

    return mean


def block_rows(n_draws, n_outputs):
    """Rows whose linear predictors under ``n_draws`` draws of ``n_outputs`` outputs take
    about :data:`PREDICT_BLOCK_BYTES`."""
    return max(1, PREDICT_BLOCK_BYTES // (8 * n_draws * n_outputs))


#: Bytes of ``X`` a prediction from an ``np.memmap`` reads at a time: larger memmaps are
#: predicted block by block (validation would otherwise read, and a float32 memmap copy to
#: float64, all of it at once).
MEMMAP_PREDICT_BLOCK_BYTES = 1 << 24


def out_of_core_blocks(X):
    """``X``'s rows in blocks as NumPy arrays, one at a time, where ``X`` must not be read
    whole: a 2-D ``dask.array`` (a block per row block, computed when its turn comes) and
    an ``np.memmap`` above :data:`MEMMAP_PREDICT_BLOCK_BYTES` (slices of about that many
    bytes); None for any other ``X`` (and for a Dask array that is empty, not 2-D or of
    unknown block sizes, which the usual validation then reports)."""
    from .._dask import is_dask_array

    if is_dask_array(X):
        if X.ndim != 2 or X.shape[0] == 0 or any(np.isnan(n) for n in X.chunks[0]):
            return None
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})  # every block holds whole rows
        return (np.asarray(X.blocks[k].compute()) for k in range(X.numblocks[0]))
    if isinstance(X, np.memmap) and X.ndim == 2 and X.nbytes > MEMMAP_PREDICT_BLOCK_BYTES:
        rows = max(1, MEMMAP_PREDICT_BLOCK_BYTES // max(1, X.itemsize * X.shape[1]))
        return (X[start:start + rows] for start in range(0, X.shape[0], rows))
    return None


def by_row_blocks(method):
    """``method(self, X, ...)`` (a prediction, one row of output per row of ``X``, or a tuple
    of such) applied to :func:`out_of_core_blocks` of ``X`` one after another and
    concatenated, where ``X`` must not be read whole; as it is otherwise."""
    @functools.wraps(method)
    def blockwise(self, X, *args, **kwargs):
        blocks = out_of_core_blocks(X)
        if blocks is None:
            return method(self, X, *args, **kwargs)
        parts = [method(self, block, *args, **kwargs) for block in blocks]
        if isinstance(parts[0], tuple):
            return tuple(np.concatenate(values) for values in zip(*parts))
        return np.concatenate(parts)

    return blockwise


def in_blocks(X, rows):
    """``X``'s rows in consecutive blocks of ``rows`` (the last one shorter)."""
    return [X[start:start + rows] for start in range(0, X.shape[0], rows)]


def row_blocks(X, n_draws, n_outputs):
    """``X``'s rows in blocks of :func:`block_rows`."""
    return in_blocks(X, block_rows(n_draws, n_outputs))


def predictive_mean(X, coef, intercept, transform, tol, relative=False,
                    third_derivative=None, curvature=None, third=None,
                    fourth_derivative=None, single=False):
    """The mean over the stored draws of ``transform(eta, draws)`` for each row of ``X``:
    the second-order estimate where its error bound is within ``tol``, the mean over every
    draw elsewhere; in blocks of rows on every core.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_rows, n_features)
        Validated rows.
    coef : ndarray of shape (n_draws, n_outputs, n_features)
        Every stored draw's weights.
    intercept : ndarray of shape (n_draws, n_outputs)
        Every stored draw's intercepts.
    transform : callable
        ``transform(eta, draws)`` with ``eta`` of shape ``(len(draws), rows, n_outputs)``
        (the draws contiguous) and ``draws`` the indices of the draws whose other
        parameters apply: each draw's values, ``(len(draws), rows, ...)``.
    tol : float or None
        The error allowed on each value; None: every draw for every row.
    relative : bool, default=False
        ``tol`` is relative to ``max(1, |value|)`` (means on any scale) instead of absolute
        (probabilities).
    third_derivative : callable or None, default=None
        ``third_derivative(low, high)``: for one linear predictor, a bound on the absolute
        third derivative of ``f`` over ``[low, high]`` (arrays of shape (rows,)), the same
        for each of ``f``'s values; None: every draw for every row.
    curvature : callable or None, default=None
        ``curvature(mu)`` for ``mu`` of shape (rows,): ``transform``'s values at ``mu`` and
        their second derivatives in it, each of ``transform``'s value shape per row (the
        family's ``mean_curvature`` or ``inverse_link_curvature``); None: second
        differences of ``transform``.
    third, fourth_derivative : callable or None, default=None
        ``third(mu)``: the third derivatives at ``mu``, shaped as ``curvature``'s values
        (the family's ``mean_third_derivative`` or ``inverse_link_third_derivative``), and
        ``fourth_derivative(low, high)``, a bound on the absolute fourth derivative, as
        ``third_derivative``: rows whose second-order bound is above ``tol`` then take the
        third-order estimate where its bound is within it.
    single : bool, default=False
        The mean over every draw evaluates ``transform`` in float32
        (:func:`mean_over_draws`): for a transform whose float32 values err by far less
        than ``tol``.

    Returns
    -------
    ndarray of shape (n_rows, ...)
    """
    every_draw = mean_over_draws(coef, intercept, transform, single)
    n_draws, n_outputs = intercept.shape

    second_order = None
    if (tol is not None and third_derivative is not None and n_outputs == 1
            and coef.shape[2] + 1 <= SECOND_ORDER_MAX_SHARE * n_draws):
        second_order = SecondOrder(coef[:, 0], intercept[:, 0], third_derivative,
                                   curvature, third, fourth_derivative)

    def within(estimate, bound):
        allowed = tol
        if relative:
            allowed = tol * np.maximum(1.0, np.abs(estimate)).reshape(bound.size, -1).min(
                axis=1)
        return bound <= allowed

    def loose(estimate, bound):
        return ~within(estimate, bound)

    if second_order is not None:
        # A pilot of evenly spaced rows: where the bound settles fewer than half of them (a
        # posterior too wide for the expansion), every row averages every draw at once.
        pilot = X[np.linspace(0, X.shape[0] - 1, min(X.shape[0], PILOT_ROWS)).astype(np.intp)]
        if np.mean(within(*second_order.estimate(pilot, transform, loose))) < 0.5:
            second_order = None
    if second_order is None:
        return np.concatenate(map_on_cores(every_draw, in_blocks(X, EVERY_DRAW_BLOCK_ROWS)))

    def second_order_or_every_draw(X_block):
        estimate, bound = second_order.estimate(X_block, transform, loose)
        rest = np.flatnonzero(loose(estimate, bound))
        if rest.size:
            estimate[rest] = every_draw(X_block[rest])
        return estimate

    return np.concatenate(map_on_cores(second_order_or_every_draw,
                                       in_blocks(X, SECOND_ORDER_BLOCK_ROWS)))


class SecondOrder:
    """The expansion's path for one linear predictor: each row's estimate ``f(mu) + f2(mu)
    v / 2`` and the bound on its error (the module's docstring); where a family gives its
    third and fourth derivatives, the third-order estimate and its bound for the rows
    whose second-order bound is too loose.

    Parameters
    ----------
    weights : ndarray of shape (n_draws, n_features)
    intercepts : ndarray of shape (n_draws,)
    third_derivative : callable
        ``third_derivative(low, high)``: a bound on ``|f3|`` over each row's interval.
    curvature : callable or None, default=None
        ``curvature(mu)``: ``f(mu)`` and ``f2(mu)`` (:func:`predictive_mean`); None: ``f2``
        from second differences of the transform.
    third : callable or None, default=None
        ``third(mu)``: ``f3(mu)``, shaped as ``f(mu)``.
    fourth_derivative : callable or None, default=None
        ``fourth_derivative(low, high)``: a bound on ``|f4|`` over each row's interval.
        With ``third`` and ``curvature``, and at most :data:`THIRD_ORDER_MAX_DIRECTIONS`
        directions of the draws, the third-order term is available.
    """

    def __init__(self, weights, intercepts, third_derivative, curvature=None, third=None,
                 fourth_derivative=None):
        theta = np.column_stack([weights, intercepts])
        self.mean = theta.mean(axis=0)
        centred = theta - self.mean
        eigenvalues, eigenvectors = np.linalg.eigh(centred.T @ centred / theta.shape[0])
        kept = eigenvalues > eigenvalues.max(initial=0.0) * 1e-12
        # v = |z' factor|^2 for z = (x, 1): every centred draw lies in the kept directions.
        # One product of the rows with (mean, factor) gives mu and the spread.
        columns = np.column_stack([self.mean, eigenvectors[:, kept]
                                   * np.sqrt(eigenvalues[kept])])
        self.weight_columns = np.ascontiguousarray(columns[:-1])
        self.intercept_columns = columns[-1]
        whitened = centred @ (eigenvectors[:, kept] / np.sqrt(eigenvalues[kept]))
        self.radius = float(np.sqrt(np.max(np.einsum("sk,sk->s", whitened, whitened),
                                           initial=0.0)))
        self.third_derivative = third_derivative
        self.curvature = curvature
        self.third, self.fourth_derivative = third, fourth_derivative
        self._whitened = whitened
        self.has_third_order = (curvature is not None and third is not None
                                and fourth_derivative is not None
                                and 0 < whitened.shape[1] <= THIRD_ORDER_MAX_DIRECTIONS)

    @functools.cached_property
    def third_moments(self):
        """The whitened draws' third moments ``E[w_i w_j w_k]``, ``(k, k^2)``: a row's
        ``d_s = a . w_s`` (``a`` its spread) has ``E[d_s^3]`` their contraction with
        ``a`` three times."""
        whitened = self._whitened
        pairs = (whitened[:, :, None] * whitened[:, None, :]).reshape(len(whitened), -1)
        return (whitened.T @ pairs) / len(whitened)

    def estimate(self, X, transform, refine=None):
        """Each row's second-order estimate ``(rows, ...)`` of the mean of ``transform``
        over every draw, and the bound on its error ``(rows,)``; with ``refine``
        (``refine(estimate, bound)``: the rows, a boolean mask, whose bound is too loose)
        and the third-order term available, those rows' third-order estimate where its
        bound is the smaller."""
        centre, spread, variance = self._projections(X)
        estimate, bound, reach = self._second_order(centre, variance, transform)
        if refine is not None and self.has_third_order:
            rows = np.flatnonzero(refine(estimate, bound))
            if rows.size:
                self._third_order(estimate, bound, rows, centre[rows], spread[rows],
                                  variance[rows], reach[rows])
        return estimate, bound

    def third_order(self, X):
        """Each row's third-order estimate and its bound (for the tests: :meth:`estimate`
        takes them only where the second-order bound is too loose and theirs is tighter)."""
        centre, spread, variance = self._projections(X)
        estimate, bound, reach = self._second_order(centre, variance, None)
        bound[:] = np.inf
        self._third_order(estimate, bound, np.arange(X.shape[0]), centre, spread, variance,
                          reach)
        return estimate, bound

    def _projections(self, X):
        """Each row's ``mu``, its spread ``a`` (``d_s = a . w_s`` for the whitened draws
        ``w_s``) and ``v = |a|^2``."""
        products = np.asarray(X @ self.weight_columns)
        products += self.intercept_columns
        centre, spread = products[:, 0], products[:, 1:]
        return centre, spread, np.einsum("rk,rk->r", spread, spread)

    def _second_order(self, centre, variance, transform):
        """The second-order estimates, their bounds and each row's reach ``rho sqrt(v)``."""
        if self.curvature is not None:
            estimate, second = self.curvature(centre)
            expand = (slice(None),) + (None,) * (estimate.ndim - 1)
            second *= (0.5 * variance)[expand]
            estimate += second
        else:
            estimate = self._second_differences(centre, variance, transform)
        sd = np.sqrt(variance)
        reach = self.radius * sd
        bound = self.third_derivative(centre - reach, centre + reach)
        bound *= (self.radius / 6.0) * variance * sd
        return estimate, bound, reach

    def _third_order(self, estimate, bound, rows, centre, spread, variance, reach):
        """Where the third-order bound on ``rows`` is below ``bound``: ``estimate`` plus
        ``f3(mu) m3 / 6`` (``m3`` the draws' mean of ``d_s^3``) and that bound, ``sup |f4|
        m4 / 24`` with ``m4``, the mean of ``d_s^4``, at most ``rho^2 v^2`` (``|d_s| <= rho
        sqrt(v)``), in place."""
        directions = spread.shape[1]
        outer = (spread @ self.third_moments).reshape(len(rows), directions, directions)
        third_moment = np.einsum("rjk,rj,rk->r", outer, spread, spread)
        tighter = self.fourth_derivative(centre - reach, centre + reach)
        tighter *= (self.radius ** 2 / 24.0) * variance * variance
        better = np.flatnonzero(tighter < bound[rows])
        if better.size:
            third = self.third(centre[better])
            expand = (slice(None),) + (None,) * (third.ndim - 1)
            third *= (third_moment[better] / 6.0)[expand]
            estimate[rows[better]] += third
            bound[rows[better]] = tighter[better]

    @staticmethod
    def _second_differences(centre, variance, transform):
        """``f(mu) + f2(mu) v / 2`` with ``f2`` from second differences of ``transform``."""
        step = np.abs(centre)
        step += 1.0
        step *= CURVATURE_STEP
        at = transform(np.stack([centre - step, centre, centre + step])[:, :, None],
                       np.zeros(3, dtype=np.intp))
        expand = (slice(None),) + (None,) * (at.ndim - 2)
        # f(mu) + (f(mu - h) - 2 f(mu) + f(mu + h)) / h^2 * v / 2
        estimate = at[0] + at[2]
        estimate -= 2.0 * at[1]
        estimate *= (0.5 * variance / (step * step))[expand]
        estimate += at[1]
        return estimate

"""Sampling in the rows' span: an exact reduction of a linear model whose weights have
more coordinates than the rows inform (more features than rows, or rows of low rank).

The likelihood reads the weights ``w_k`` (one vector per output) only through ``X w_k``.
Under independent Gaussian priors ``w_kj ~ N(0, s_j^2)`` (``s_j`` the same for every
output), whiten them, ``v_k = w_k / s``, and centre the rows on the point where the
intercept's prior sits (``c``: the features' means for autoscaled priors, whose prior is on
the intercept at the means, ``b_k + c . w_k``; 0 otherwise): the row ``i``'s linear
predictor is ``z_i . v_k + (b_k + c . w_k)`` with ``z_i = (x_i - c) * s``. Split ``v_k``
along the ``r``-dimensional span of the rows ``z_i`` (an orthonormal basis ``V``,
``(D, r)``) and its orthogonal complement: ``v_k = V a_k + (I - V V') e_k``. The likelihood
reads ``a_k`` alone, and under the prior ``N(0, I)`` the two parts are independent, so the
posterior of ``(a_k, b_k + c . w_k, extra)`` is that of the same family on the ``r``
columns ``Z V`` under a ``N(0, 1)`` prior on each, and the complement is distributed as
the prior whatever the data say. The chains sample the reduced model; each kept draw gets
a fresh prior draw ``e_k`` for its complement, and its weights in the original layout
follow: ``w_k = s * (e_k + V (a_k - V' e_k))``, ``b_k = (b_k + c . w_k) - c . w_k``.

``V`` and the reduced columns come from the eigendecomposition of the rows' Gram matrix
``Z Z' = U diag(lambda) U'`` (``n x n``, for fewer rows than features) or of the columns'
``Z' Z`` (``D x D``, small data of low rank): the reduced columns are ``U sqrt(lambda)``
(orthogonal, in the order of the rows' principal directions) and ``V = Z' U /
sqrt(lambda)``, which is applied through products with ``Z`` for fewer rows than features
(never formed: ``D x r`` could be far larger than ``X``, a sparse one above all) and kept as
it is for the columns' Gram matrix (``D x r`` at most ``D x D``, where a product with ``Z``
would read all ``n`` rows for every draw). Directions whose singular value lies below
rounding of the largest are left in the complement: the likelihood moves by less than
rounding along them.
"""
from dataclasses import dataclass
from functools import partial

import numpy as np
import scipy.sparse as sp

from .._data import LinearData
from .._passes import chunks, map_stripes
from .._validation import read_only
from ..models._prior import GAUSSIAN, BuiltinPrior

#: The rows' span is sampled for fewer rows than features (the Gram matrix of the rows is
#: ``n x n``) up to this many rows (a 64 MiB Gram matrix; the reduced columns are as large).
SPAN_MAX_ROWS = 2896
#: ... and, for at least as many rows as features, on small data (at most this many
#: row-feature products for the columns' Gram matrix) whose rows have a rank below the
#: features' count: constant or duplicated columns.
SPAN_MAX_COLUMN_WORK = 1e9
#: Eigenvalues of the Gram matrix below its largest times this (times its size) count as 0:
#: rounding of a float64 Gram matrix.
GRAM_TOLERANCE = 4 * np.finfo(np.float64).eps
#: Kept draws are completed in blocks of this many; each block of a chain draws its
#: complement from its own generator (``[seed, SPAN_STREAM, block]``), so that a draw's
#: complement depends only on the chain's seed and the draw's index: a ``warm_start``
#: continuation completes the earlier draws as before.
SPAN_BLOCK = 64
SPAN_STREAM = 0x5BA
#: Bytes of one block's complement draws, ``(draws, outputs, features)`` float64.
SPAN_BLOCK_BYTES = 1 << 25


def span_applies(data, prior):
    """Whether :func:`row_span` can reduce ``data`` under ``prior``: rows in memory (an
    array, a memory map or a CSR matrix), Gaussian priors centred at 0 on the weights with the
    same scale for every output, and the rows' shape within :data:`SPAN_MAX_ROWS` or
    :data:`SPAN_MAX_COLUMN_WORK`, and no group-level effects (their sds are sampled: the
    split of the weights is exact for fixed scales only)."""
    if data.distributed or prior.kind & 3 != GAUSSIAN or prior.scale_of.size:
        return False
    n, D = data.n_rows, data.n_features
    if D < 2 or n < 1:
        return False
    if n >= D and (float(n) * D * D > SPAN_MAX_COLUMN_WORK or data.sparse):
        return False
    if n < D and n > SPAN_MAX_ROWS:
        return False
    weights = np.flatnonzero(prior.weight_mask())
    scales = prior.scales[weights].reshape(prior.n_outputs, D)
    return bool(np.all(prior.locations[weights] == 0) and np.all(scales == scales[0]))


@dataclass
class RowSpan:
    """A linear model reduced to its rows' span (see the module's docstring).

    Attributes
    ----------
    data : LinearData
        The reduced rows ``Z V`` (``(n, r)``, float64), with the original ``y``, weights
        and intercept.
    prior : BuiltinPrior
        ``N(0, 1)`` on each reduced weight; the intercepts' and extra parameters' priors
        as before, the intercepts' without centring (the rows are centred).
    X : ndarray or sparse matrix of shape (n, D)
        The original rows (the complement's products read them).
    centre, scale : ndarray of shape (D,)
        ``c`` and ``s``.
    left : ndarray of shape (n, r), or (0, r) where ``basis`` is kept
        ``U / sqrt(lambda)``: ``V = Z' left``.
    basis : ndarray of shape (D, r) or None
        ``V`` itself where it is kept (at least as many rows as features), None where it is
        applied through ``Z`` and ``left``.
    n_outputs, n_extra : int
    intercept : bool
    """

    data: LinearData
    prior: BuiltinPrior
    X: object
    centre: np.ndarray
    scale: np.ndarray
    left: np.ndarray
    n_outputs: int
    n_extra: int
    intercept: bool
    basis: object = None

    @property
    def rank(self):
        """``r``, the reduced weights per output."""
        return self.left.shape[1]

    @property
    def n_features(self):
        return self.X.shape[1]

    def _z_times(self, vectors):
        """``Z vectors'`` for ``vectors`` of shape (m, D): shape (m, n)."""
        scaled = vectors * self.scale
        product = np.asarray(self.X @ scaled.T).T
        return product - (scaled @ self.centre)[:, None]

    def _z_transpose_times(self, vectors):
        """``Z' vectors'`` for ``vectors`` of shape (m, n): shape (m, D)."""
        product = np.asarray(self.X.T @ vectors.T).T
        product -= vectors.sum(axis=1)[:, None] * self.centre
        product *= self.scale
        return product

    def complete(self, reduced, normals, out):
        """Weights and intercepts in the original layout for a block of reduced draws
        ``reduced`` (m, d_reduced), with the complement's draws (m, K, D) of the whitened
        weights' prior: written into ``out[:, :K * width]``."""
        m = reduced.shape[0]
        K, D, r = self.n_outputs, self.n_features, self.rank
        width, reduced_width = D + self.intercept, r + self.intercept
        blocks = reduced[:, :K * reduced_width].reshape(m, K, reduced_width)
        e = normals.reshape(m * K, D)
        a = blocks[..., :r].reshape(m * K, r)
        if self.basis is not None:
            v = e + (a - e @ self.basis) @ self.basis.T  # e + V (a - V' e)
        else:
            coordinates = a - self._z_times(e) @ self.left  # a - V' e
            v = e + self._z_transpose_times(coordinates @ self.left.T)
        weights = (v * self.scale).reshape(m, K, D)
        linear = out[:, :K * width].reshape(m, K, width)
        linear[..., :D] = weights
        if self.intercept:
            linear[..., D] = blocks[..., r] - weights @ self.centre


def complete_draws(draws, seeds, span):
    """The kept draws of a fit that sampled ``span`` (:class:`RowSpan`) in the original
    layout, each draw's complement drawn from the prior (``span.prior``'s scale on the
    reduced weights, the same for all of them, over the square root of its power).

    Each chain's complement comes from its own seed alone, a block of :data:`SPAN_BLOCK`
    draws at a time (generator ``[seed, SPAN_STREAM, block]``): a ``warm_start``
    continuation completes the earlier draws as before.

    Parameters
    ----------
    draws : ndarray of shape (n_chains, n_draws, d_reduced)
    seeds : sequence of int
    span : RowSpan

    Returns
    -------
    ndarray of shape (n_chains, n_draws, d)
    """
    n_chains, n_draws, _ = draws.shape
    K, D, E = span.n_outputs, span.n_features, span.n_extra
    d = K * (D + span.intercept) + E
    out = np.empty((n_chains, n_draws, d))
    out[..., d - E:] = draws[..., draws.shape[2] - E:]
    prior = span.prior
    sd = prior.scales[prior.weight_mask()][0] / np.sqrt(prior.power) if span.rank else 1.0
    per_block = max(1, min(SPAN_BLOCK, SPAN_BLOCK_BYTES // (8 * K * D)))
    for c in range(n_chains):
        for start in range(0, n_draws, SPAN_BLOCK):
            stop = min(start + SPAN_BLOCK, n_draws)
            rng = np.random.default_rng([int(seeds[c]), SPAN_STREAM, start // SPAN_BLOCK])
            normals = sd * rng.standard_normal((SPAN_BLOCK, K, D))
            for first in range(start, stop, per_block):
                last = min(first + per_block, stop)
                span.complete(draws[c, first:last], normals[first - start:last - start],
                              out[c, first:last])
    return out


def row_span(data, prior):
    """The reduction of ``data`` under ``prior`` to the rows' span (:class:`RowSpan`), or
    None where it would not reduce the weights (rank ``r`` equal to the features' count) or
    does not apply (:func:`span_applies`)."""
    if not span_applies(data, prior):
        return None
    D, n = data.n_features, data.n_rows
    scale = np.ascontiguousarray(prior.scales[:D], dtype=np.float64)
    centred = prior.means.size > 0 and prior.intercept
    centre = (np.ascontiguousarray(prior.means, dtype=np.float64) if centred
              else np.zeros(D))
    X = data.X
    if n < D:
        eigenvalues, vectors = np.linalg.eigh(_row_gram(X, centre, scale))
        keep = eigenvalues > GRAM_TOLERANCE * max(n, D) * max(eigenvalues[-1], 0.0)
        U = _signs_fixed(vectors[:, keep])
        root = np.sqrt(eigenvalues[keep])
        reduced_X = np.ascontiguousarray((U * root)[:, ::-1])  # widest first
        left, basis = np.ascontiguousarray((U / root)[:, ::-1]), None
    else:
        # The columns' Gram matrix a block of rows at a time: no copy of X (a tall memory
        # map's rows stay where they are, and full-rank rows, the common case, cost one pass).
        eigenvalues, vectors = np.linalg.eigh(_column_gram(data, centre, scale))
        keep = eigenvalues > GRAM_TOLERANCE * max(n, D) * max(eigenvalues[-1], 0.0)
        if keep.sum() >= D:
            return None
        # V itself: the reduced rows are Z V (U sqrt(lambda), with U = Z V / sqrt(lambda)).
        basis = np.ascontiguousarray(_signs_fixed(vectors[:, keep])[:, ::-1])
        reduced_X = _z_product(data, centre, scale, basis)
        left = np.empty((0, basis.shape[1]))  # unused: the basis applies V directly
    reduced = LinearData(read_only(reduced_X), data.y, data.weights, data.intercept,
                         offset=data.offset)
    return RowSpan(reduced, _reduced_prior(prior, data.block, D, left.shape[1]), X, centre,
                   scale, left, prior.n_outputs, prior.n_params - prior.n_outputs * data.block,
                   bool(data.intercept), basis)


def _signs_fixed(directions):
    """``directions`` (columns) with each one's sign fixed by its largest entry (eigh's is
    arbitrary and may differ between a dense and a sparse X, or between BLAS builds)."""
    largest = directions[np.argmax(np.abs(directions), axis=0), np.arange(directions.shape[1])]
    return directions * np.where(largest < 0, -1.0, 1.0)


def _z_rows(data, centre, scale, start, stop):
    """Rows ``start..stop-1`` of ``Z = (X - centre) * scale`` (dense ``X``), in float64."""
    return (data.rows(start, stop) - centre) * scale


def _column_gram(data, centre, scale):
    """``Z' Z`` (D x D): a full-data pass, a chunk of rows at a time on every core."""
    return data.sum_parts(partial(_gram_part, centre, scale))[0]


def _gram_part(centre, scale, part, start, stop):
    gram = 0.0
    for a, b in chunks(start, stop):
        Z = _z_rows(part, centre, scale, a, b)
        gram = gram + Z.T @ Z
    return (gram,)


def _z_product(data, centre, scale, V):
    """``Z V`` (n x r), a chunk of rows at a time on every core."""
    out = np.empty((data.n_rows, V.shape[1]))

    def stripe(start, stop):
        for a, b in chunks(start, stop):
            out[a:b] = _z_rows(data, centre, scale, a, b) @ V

    map_stripes(stripe, data.n_rows)
    return out


def _row_gram(X, centre, scale):
    """``Z Z'`` (n x n) for ``Z = (X - centre) * scale``, without forming ``Z`` for a sparse
    ``X`` (and a column block at a time for a dense one)."""
    n, D = X.shape
    if sp.issparse(X):
        scaled = sp.csr_array(X) @ sp.diags_array(scale)
        gram = np.asarray((scaled @ scaled.T).toarray())
        shift = np.asarray(scaled @ (centre * scale)).ravel()
        gram -= shift[:, None] + shift[None, :]
        gram += float((centre * scale) @ (centre * scale))
        return gram
    gram = np.zeros((n, n))
    columns = max(1, (1 << 24) // (8 * max(n, 1)))
    for start in range(0, D, columns):
        stop = min(start + columns, D)
        Z = (np.asarray(X[:, start:stop], dtype=np.float64) - centre[start:stop])
        Z *= scale[start:stop]
        gram += Z @ Z.T
    return gram


def _reduced_prior(prior, block, n_features, rank):
    """``N(0, 1)`` on each reduced weight, the intercepts' and extra parameters' priors as
    given, the intercepts' centring dropped (the reduced rows are centred already)."""
    K = prior.n_outputs
    intercept = block > n_features
    reduced_block = rank + int(intercept)
    scales = np.ones((K, reduced_block))
    locations = np.zeros((K, reduced_block))
    if intercept:
        scales[:, -1] = prior.scales[block - 1:K * block:block]
        locations[:, -1] = prior.locations[block - 1:K * block:block]
    tail = slice(K * block, None)
    return BuiltinPrior(prior.kind, np.append(scales.ravel(), prior.scales[tail]),
                        np.append(locations.ravel(), prior.locations[tail]), None,
                        n_outputs=K, block=reduced_block, intercept=intercept,
                        power=prior.power, learn_scale=prior.learn_scale)

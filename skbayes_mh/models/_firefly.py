"""Firefly's collapsed bounds for every linear-predictor model: the bounds' coefficients of
each row (the family's ``bound_coefficients`` kernel) summed over the rows into one
quadratic in the coefficients, in one full-data pass (Maclaurin and Adams 2014)."""
from functools import partial

import numpy as np

from .._kernels._jit import STATUS_OK
from .._kernels.firefly import bound_coefficients
from .._kernels.specs import FireflyBound
from .._passes import chunk_rows, chunks
from .._validation import check_dense_matrix

#: Up to this many rows Firefly keeps each row's linear predictors at the bounds' tangent
#: (8 bytes a row per output); above, a query computes them again.
TANGENT_CACHE_MAX_ROWS = 1 << 20


def _bound_sums(model, tangent, params, tangent_u, part, begin, end):
    """Firefly's bounds summed over rows ``begin..end-1`` of ``part``: ``(quad, lin, const,
    scale_count)`` (see :meth:`LinearModel.firefly_bound`); each row's ``u`` at the tangent
    written into ``tangent_u`` when it is not None."""
    K, block = model.n_outputs, part.block
    n_linear = K * block
    m = K + model.n_extra
    placeholder = (type(model).bound_coefficients, tangent, params, np.zeros((0, 0)),
                   np.zeros(0), 0.0, 0.0, float(model.bound_log_scale), np.empty((0, m)))
    spec = model.spec(part)
    size = chunk_rows(K, part.n_rows)
    quad = np.zeros((n_linear, n_linear))
    lin = np.zeros(n_linear)
    const = scale_count = 0.0
    constants = np.empty(size)
    linear = np.empty((size, K))
    curvatures = np.empty((size, K, K))
    scale_terms = np.empty(size)
    chunk_u = np.empty((size, m))
    for start, stop in chunks(begin, end, size):
        rows = stop - start
        status = bound_coefficients(spec, placeholder, start, stop, constants, linear,
                                    curvatures, scale_terms, chunk_u)
        if status != STATUS_OK:
            first = part.row_offset + start
            raise ValueError(f"Firefly's bounds are not finite in rows {first} to "
                             f"{first + rows - 1}.")
        if tangent_u is not None:
            tangent_u[start:stop] = chunk_u[:rows]
        const += constants[:rows].sum()
        scale_count += scale_terms[:rows].sum()
        lin += part.design_sum(start, stop, linear[:rows]).T.ravel()
        for k in range(K):
            for j in range(k, K):
                gram = part.design_gram(start, stop, curvatures[:rows, k, j])
                quad[k * block:(k + 1) * block, j * block:(j + 1) * block] += gram
                if j != k:
                    quad[j * block:(j + 1) * block, k * block:(k + 1) * block] += gram.T
    return quad, lin, const, scale_count


class FireflyBounds:
    """What :class:`~skbayes_mh.models._base.LinearModel` does for Firefly: a family sets
    ``bound_coefficients`` (None: it has no collapsible bound) and
    ``firefly_bound_params``."""

    def firefly_bound_params(self, bound):
        """The ``bound_params`` of the coefficients kernel for ``bound`` ("map"/"untuned")."""
        raise NotImplementedError

    def firefly_tangent(self, theta_map, bound):
        """The parameters at which the bounds touch the likelihood."""
        return theta_map

    def check_bounds(self):
        """A ``ValueError`` when the model has no collapsible lower bound (Firefly's)."""
        if type(self).bound_coefficients is None:
            raise ValueError(
                f"acceptance='firefly' needs a model with a collapsible lower bound on each "
                f"likelihood; the {self.name} likelihood has none (no global quadratic lower "
                f"bound exists for it). Choose another acceptance test.")

    def firefly_bound(self, data, theta_map, bound, inv_temperature):
        """Firefly's bounds, tight at the MAP or untuned, collapsed over every row in one pass
        (the tuple ``specs.FireflyBound``, tempered).

        Raises
        ------
        ValueError
            When the model has no collapsible lower bound.
        """
        self.check_bounds()
        tangent = np.ascontiguousarray(self.firefly_tangent(theta_map, bound), dtype=np.float64)
        params = np.ascontiguousarray(self.firefly_bound_params(bound), dtype=np.float64)
        # Each row's u at the tangent, kept for the queries up to TANGENT_CACHE_MAX_ROWS
        # rows of local data (one dot product a query instead of two); recomputed per query
        # above, and for Dask data (gathered after this pass).
        cache = data.n_rows <= TANGENT_CACHE_MAX_ROWS and not data.distributed
        tangent_u = np.empty((data.n_rows if cache else 0, self.n_outputs + self.n_extra))
        check_dense_matrix(self.n_outputs * data.block,
                           "Firefly's collapsed bounds (a quadratic in the coefficients)")
        quad, lin, const, scale_count = data.sum_parts(
            partial(_bound_sums, self, tangent, params, tangent_u if cache else None))
        return FireflyBound(type(self).bound_coefficients, tangent, params,
                            inv_temperature * quad, inv_temperature * lin,
                            inv_temperature * const, inv_temperature * scale_count,
                            float(self.bound_log_scale), tangent_u)

"""The entry kernels' tuples as named tuples whose arrays are borrowed (``_common.borrow``):
Python keeps the arrays alive for the whole call, and the kernels pass them around with no
reference counting."""
from numba import types
from numba.extending import overload

from ._common import borrow, borrow_for_user, data_address, function_at
from ._jit import ADDRESSED_KINDS, jit
from .specs import (ADD_GRADIENT, BATCH_VALUES, BRIGHT_PART, CSR, DATA_PASS,
                    LOG_PRIOR, POINT_TERMS, ControlVariates, FireflyBound, FireflyModel,
                    LinearSpec, Matrix, Model, Ops, Prior, Proposal, RowSpec, Test)


def matrix_view(X):
    """``X`` borrowed: a dense array, a sparse matrix's plain tuple as a :data:`.specs.CSR`,
    or a linear model's plain tuple as a :data:`.specs.Matrix`."""


@overload(matrix_view, inline="always")
def _matrix_view(X):
    if isinstance(X, types.Array):
        return lambda X: borrow(X)
    if len(X) == len(Matrix._fields):
        return lambda X: Matrix(X[0], borrow(X[1]), borrow(X[2]), borrow(X[3]), borrow(X[4]),
                                borrow(X[5]), X[6])
    return lambda X: CSR(borrow(X[0]), borrow(X[1]), borrow(X[2]), X[3])


def as_functions(value):
    """An argument an entry kernel took with its functions as addresses
    (``_entry.EntryKernel``'s ``functions_as_addresses``) as the type it stands for, its
    functions functions again (:func:`with_functions`)."""


@overload(as_functions, inline="always")
def _as_functions(value):
    kind = ADDRESSED_KINDS[value]
    return lambda value: with_functions(value, kind)


@jit(inline="always")
def linear_view(spec):
    X, y, weights, params, link, link_rows, n_outputs, n_extra, intercept, offset = spec
    return LinearSpec(matrix_view(X), borrow(y), borrow(weights), borrow(params), link,
                      link_rows, n_outputs, n_extra, intercept, borrow(offset))


@jit(inline="always")
def row_view(spec):
    data, weights, loglik, gradient, hessian, log_prior = spec
    return RowSpec(matrix_view(data), borrow(weights), loglik, gradient, hessian, log_prior)


def with_functions(value, kind):
    """``value`` (of type ``_jit.with_addresses(kind)``, as Python passes it) as the type
    ``kind``: each function's addresses made a function again (``_common.function_at``),
    every array borrowed."""


@overload(with_functions, inline="always")
def _with_functions(value, kind):
    target = kind.instance_type
    namespace = {"borrow": borrow}

    def code(kind, expression):
        if isinstance(kind, types.Array):
            return f"borrow({expression})"
        if isinstance(kind, types.FunctionType):
            name = f"make_{len(namespace)}"
            namespace[name] = function_at(kind)
            return f"{name}({expression}[0], {expression}[1])"
        if isinstance(kind, types.BaseTuple):
            parts = [code(item, f"{expression}[{k}]") for k, item in enumerate(kind.types)]
            return f"({', '.join(parts)},)"
        return expression

    exec(f"def impl(value, kind):\n    return {code(target, 'value')}\n", namespace)
    return namespace["impl"]


@jit(inline="always")
def model_view(model):
    """A :data:`.specs.MODEL` tuple as the :data:`.specs.Model` the chain loops take: its
    spec's address in the bytes Python stored it in."""
    layout, ops, n_rows, work_size, log_prior = model
    return Model(data_address(layout),
                 Ops(with_functions(ops[0], DATA_PASS), with_functions(ops[1], BATCH_VALUES)),
                 n_rows, work_size, with_functions(log_prior, LOG_PRIOR))


@jit(inline="always")
def firefly_model_view(model):
    """A :data:`.specs.FIREFLY_MODEL` tuple as the :data:`.specs.FireflyModel` Firefly's
    kernels take (see :func:`model_view`)."""
    layout, point_terms, add_gradient, bright_part, n_rows, n_outputs, n_extra, width = model
    return FireflyModel(data_address(layout), with_functions(point_terms, POINT_TERMS),
                        with_functions(add_gradient, ADD_GRADIENT),
                        with_functions(bright_part, BRIGHT_PART), n_rows, n_outputs, n_extra,
                        width)


@jit(inline="always")
def prior_view(prior):
    kind, scales, locations, means, n_outputs, block, intercept, power, scale_of, \
        correlations = prior
    return Prior(kind, borrow(scales), borrow(locations), borrow(means), n_outputs, block,
                 intercept, power, borrow(scale_of), borrow(correlations))


@jit(inline="always")
def proposal_view(proposal):
    kind, scale, factor, diag, basis, gain, mean, parameter, moves = proposal
    return Proposal(kind, scale, borrow(factor), borrow(diag), borrow(basis), borrow(gain),
                    borrow(mean), parameter, moves)


@jit(inline="always")
def test_view(test):
    params, support, cdf, decide = test
    return Test(borrow(params), borrow(support), borrow(cdf), decide)


@jit(inline="always")
def cv_view(cv):
    (use, center, grad, hess, whitening, radius, m3_scale, m3_rate, eta_center_max, exp_coords,
     hess_indptr, hess_indices, hess_values) = cv
    return ControlVariates(use, borrow_for_user(center), borrow(grad), borrow(hess),
                           borrow(whitening), radius, m3_scale, m3_rate, eta_center_max,
                           borrow(exp_coords), borrow(hess_indptr), borrow(hess_indices),
                           borrow(hess_values))


@jit(inline="always")
def bound_view(bound):
    (coefficients, tangent, bound_params, quad, lin, const, scale_count, fixed_log_scale,
     tangent_u) = bound
    return FireflyBound(coefficients, borrow(tangent), borrow(bound_params), borrow(quad),
                        borrow(lin), const, scale_count, fixed_log_scale, borrow(tangent_u))


def rebind(value):
    """``value`` with every array in it borrowed afresh (an array, a named tuple of the
    kernels, or a tuple of those).

    A function compiled on its own that loops over rows should rebind the tuples and arrays
    it was given before its loop: numba then sees fresh values whose (no-op) reference
    counting it can prune, instead of paying a call per access in the loop.
    """


def _rebind_code(value):
    """Source of ``lambda value: ...`` rebuilding ``value`` with its arrays borrowed."""
    if isinstance(value, types.Array):
        return "borrow(value)"
    if isinstance(value, types.BaseTuple):
        parts = []
        for k, item in enumerate(value.types):
            inner = _rebind_code(item)
            parts.append(inner.replace("value", f"value[{k}]"))
        if isinstance(value, types.NamedTuple):
            return f"{value.instance_class.__name__}({', '.join(parts)})"
        return f"({', '.join(parts)}{',' if len(parts) == 1 else ''})"
    return "value"


@overload(rebind, inline="always")
def _rebind(value):
    namespace = {"borrow": borrow, **{cls.__name__: cls for cls in _NAMED}}
    exec(f"def impl(value):\n    return {_rebind_code(value)}\n", namespace)
    return namespace["impl"]


_NAMED = (CSR, ControlVariates, FireflyBound, FireflyModel, LinearSpec, Matrix, Model, Ops,
          Prior, Proposal, RowSpec, Test)

"""The four ways a model's data reach the chain loops, behind function pointers.

A Metropolis-Hastings chain loop (``mh.py``) reads the data in two places only: a full-data
pass, and the rows of a minibatch; Firefly's loop (``firefly.py``) in three: a row's
likelihood and bound, a row's gradient, and the bright set's sum. Everything else
(proposals, Hamiltonian paths, the acceptance tests, slice and brightness updates) is the
same for every model and data layout. So the loops take one type for every model,
:data:`.specs.Model` (Firefly: :data:`.specs.FireflyModel`), and reach the data through
*ops*: functions compiled once per layout, each a few lines around the ``rows.py`` (or
``firefly.py``) code the loops used to inline. The four layouts (the order of
:data:`.specs.LAYOUTS`):

0. a linear model on a float64 array;
1. a linear model on any other layout (:data:`.specs.Matrix`: float32 or CSR);
2. a user's per-row model on dense data;
3. a user's per-row model on sparse data.

Each chain loop compiles once instead of once per kind of model and layout (the
Metropolis-Hastings entry kernels 4 times instead of 14, Firefly's 4 instead of 8), and a
fit compiles its loop and its own layout's ops: ``python -m skbayes_mh compile`` went from
187 s to 86 s on two cores, the first default fit of breast cancer from 35 s to 28 s
(``benchmarks/perf/fit_time.py --cold``, the same day). A call through an op
costs nanoseconds, once per full-data pass, minibatch round or bright-set sum; Firefly's
single queries (the brightness updates) call one per row, which measured no slower on
MNIST 7 vs 9 (untuned bounds: 7,551 queries an iteration, 2.29 s per 1,000 iterations
before and after).

:func:`model_tuple` and :func:`firefly_model_tuple` build a model's tuple in Python: its
own spec stored in bytes (:func:`packed_layout`, :func:`pack_layout`), which the ops read
at that address, and the ops' addresses.
"""
import functools
import math

import numpy as np
from numba import types
from numba.extending import overload

from ._common import store_at, stored_size, value_at
from ._entry import entry_kernel
from ._jit import BYTES, STATUS_BAD_LOGLIK, addressed, function_addresses, with_addresses
from .firefly import bright_part, point_terms
from .linear import add_gradient
from .rows import data_pass, flat_log_prior
from .specs import (ADD_GRADIENT, BATCH_VALUES, BRIGHT_PART, DATA_PASS, LAYOUTS, LOG_PRIOR,
                    POINT_TERMS, QUERY_CONTEXT)
from .subsample import BATCH_BAD_LOGLIK, batch_values, linear_batch_values
from .views import linear_view, row_view, with_functions


#: Each layout's spec from the address the ops are given (``views.model_view``).
read_layout_0, read_layout_1, read_layout_2, read_layout_3 = (value_at(kind)
                                                              for kind in LAYOUTS.types)
#: Firefly's query context from its address (``firefly.query_context``).
read_context = value_at(QUERY_CONTEXT)


def _op(signature, layout):
    """An op for ``layout`` (see :data:`OTHER_LAYOUTS`), compiled for its one signature on
    first use (``_entry.EntryKernel``)."""
    def decorate(function):
        kernel = entry_kernel(signature.signature)(function)
        kernel.other_layout = layout in OTHER_LAYOUTS  # None: a stand-in, for every layout
        return kernel
    return decorate


#: The layouts that are not float64 data (float32 or sparse), which
#: ``python -m skbayes_mh compile --float64-only`` leaves out.
OTHER_LAYOUTS = (1, 3)


@_op(DATA_PASS, 0)
def pass_linear(address, theta, want_grad, gradient, work):
    """``rows.data_pass`` for layout 0, a linear model on a float64 array."""
    return data_pass(linear_view(read_layout_0(address)), theta, want_grad, gradient, work)


@_op(DATA_PASS, 1)
def pass_linear_matrix(address, theta, want_grad, gradient, work):
    """``rows.data_pass`` for layout 1, a linear model on float32 or sparse data."""
    return data_pass(linear_view(read_layout_1(address)), theta, want_grad, gradient, work)


@_op(DATA_PASS, 2)
def pass_rows(address, theta, want_grad, gradient, work):
    """``rows.data_pass`` for layout 2, a user's model on dense data."""
    return data_pass(row_view(read_layout_2(address)), theta, want_grad, gradient, work)


@_op(DATA_PASS, 3)
def pass_sparse_rows(address, theta, want_grad, gradient, work):
    """``rows.data_pass`` for layout 3, a user's model on sparse data."""
    return data_pass(row_view(read_layout_3(address)), theta, want_grad, gradient, work)


@_op(BATCH_VALUES, 0)
def batch_linear(address, theta, theta_prop, cv, batch, start, stop, inv_temperature, values,
                 work):
    """``subsample.linear_batch_values`` for layout 0."""
    return linear_batch_values(linear_view(read_layout_0(address)), theta, theta_prop, cv,
                               batch, start, stop, inv_temperature, values, work)


@_op(BATCH_VALUES, 1)
def batch_linear_matrix(address, theta, theta_prop, cv, batch, start, stop, inv_temperature,
                        values, work):
    """``subsample.linear_batch_values`` for layout 1."""
    return linear_batch_values(linear_view(read_layout_1(address)), theta, theta_prop, cv,
                               batch, start, stop, inv_temperature, values, work)


@_op(BATCH_VALUES, 2)
def batch_rows(address, theta, theta_prop, cv, batch, start, stop, inv_temperature, values,
               work):
    """``subsample.batch_values`` for layout 2."""
    return batch_values(row_view(read_layout_2(address)), theta, theta_prop, cv, batch,
                        start, stop, inv_temperature, values, work)


@_op(BATCH_VALUES, 3)
def batch_sparse_rows(address, theta, theta_prop, cv, batch, start, stop, inv_temperature,
                      values, work):
    """``subsample.batch_values`` for layout 3."""
    return batch_values(row_view(read_layout_3(address)), theta, theta_prop, cv, batch,
                        start, stop, inv_temperature, values, work)


#: Each layout's ops, in the order of :data:`.specs.Ops`.
OPS = ((pass_linear, batch_linear), (pass_linear_matrix, batch_linear_matrix),
       (pass_rows, batch_rows), (pass_sparse_rows, batch_sparse_rows))


def store_spec(spec, buffer):
    """Store ``spec``, a layout's spec as Python passes it (functions as addresses), in
    ``buffer`` as the kernels hold it (:data:`.specs.LAYOUTS`' type for that layout:
    functions, borrowed arrays), for the ops to read at its address."""


@overload(store_spec, inline="always")
def _store_spec(spec, buffer):
    kind = next(kind for kind in LAYOUTS.types if with_addresses(kind) == spec)
    return lambda spec, buffer: store_at(buffer, with_functions(spec, kind), kind)


@entry_kernel(*[types.void(with_addresses(kind), BYTES) for kind in LAYOUTS.types])
def pack_layout(spec, buffer):
    """:func:`store_spec`, compiled for each layout's spec (signature ``k`` for layout ``k``)
    on first use."""
    store_spec(spec, buffer)


@_op(POINT_TERMS, 0)
def terms_linear(address, context, theta, i, inv_temperature, want_slope, slope):
    """``firefly.point_terms`` for layout 0 (Firefly's row query), its bound and scratch at
    the address ``context`` (``firefly.query_context``)."""
    bound, work, bound_work = read_context(context)
    return point_terms(linear_view(read_layout_0(address)), bound, theta, i, inv_temperature,
                       want_slope, slope, work, bound_work)


@_op(POINT_TERMS, 1)
def terms_linear_matrix(address, context, theta, i, inv_temperature, want_slope, slope):
    """``firefly.point_terms`` for layout 1."""
    bound, work, bound_work = read_context(context)
    return point_terms(linear_view(read_layout_1(address)), bound, theta, i, inv_temperature,
                       want_slope, slope, work, bound_work)


@_op(ADD_GRADIENT, 0)
def gradient_linear(address, i, slope, weight, gradient):
    """``linear.add_gradient`` for layout 0."""
    add_gradient(linear_view(read_layout_0(address)), i, slope, weight, gradient)


@_op(ADD_GRADIENT, 1)
def gradient_linear_matrix(address, i, slope, weight, gradient):
    """``linear.add_gradient`` for layout 1."""
    add_gradient(linear_view(read_layout_1(address)), i, slope, weight, gradient)


@_op(BRIGHT_PART, 0)
def bright_linear(address, context, value, theta, bright_rows, n_bright, inv_temperature,
                  want_grad, diffs, slopes, gradient):
    """``firefly.bright_part`` for layout 0: a bright set's queries in one call."""
    bound, work, bound_work = read_context(context)
    return bright_part(linear_view(read_layout_0(address)), bound, value, theta, bright_rows,
                       n_bright, inv_temperature, want_grad, diffs, slopes, gradient, work,
                       bound_work)


@_op(BRIGHT_PART, 1)
def bright_linear_matrix(address, context, value, theta, bright_rows, n_bright, inv_temperature,
                         want_grad, diffs, slopes, gradient):
    """``firefly.bright_part`` for layout 1."""
    bound, work, bound_work = read_context(context)
    return bright_part(linear_view(read_layout_1(address)), bound, value, theta, bright_rows,
                       n_bright, inv_temperature, want_grad, diffs, slopes, gradient, work,
                       bound_work)


#: Firefly's ops for the two layouts of a linear model, in the order of
#: :data:`.specs.FireflyModel`.
FIREFLY_OPS = ((terms_linear, gradient_linear, bright_linear),
               (terms_linear_matrix, gradient_linear_matrix, bright_linear_matrix))
#: Their function types, in the same order.
FIREFLY_OP_TYPES = (POINT_TERMS, ADD_GRADIENT, BRIGHT_PART)


@_op(DATA_PASS, None)
def no_data_pass(address, theta, want_grad, gradient, work):
    """Stands in for the full-data pass where a kernel does not make one (the subsampling
    tests' loop): a call would fail with a status, never read memory."""
    return math.nan, STATUS_BAD_LOGLIK


@_op(BATCH_VALUES, None)
def no_batch_values(address, theta, theta_prop, cv, batch, start, stop, inv_temperature,
                    values, work):
    """Stands in for the minibatch rows where a kernel reads none (the exact tests' and the
    slice updates' loops): a call would fail with a status."""
    return BATCH_BAD_LOGLIK, 0


#: The ops a kernel calls: for each of :data:`.specs.Ops`, whether it is called.
BOTH_OPS, DATA_PASS_ONLY, BATCH_VALUES_ONLY = (True, True), (True, False), (False, True)


def layout_of(spec, linear):
    """The layout (0-3, see the module's docstring) of a linear model's spec (``linear``) or
    a user's model's: a tuple in its data's place is a ``Matrix`` or CSR."""
    return (0 if linear else 2) + isinstance(spec[0], tuple)


def packed_layout(spec, layout):
    """``spec`` (of ``layout``) stored in a byte buffer as the ops read it: its arrays'
    addresses, not references, so the caller keeps ``spec`` alive while the buffer is in use
    (a target keeps its spec; the buffer is made afresh for each kernel call, in the process
    that makes it, and never pickled). The chain loops take this buffer, not the spec, so
    that they do not unbox, convert and type every layout's spec: a kernel doing nothing but
    that conversion took 4.5-5.2 s to compile, against 1.0 s given the bytes; with the
    one-step moves behind pointers too (``proposals.py``), ``mh.mh_exact`` compiled in 15.0 s
    instead of 21.9 s (means of three runs each on two cores, with an empty cache)."""
    kind = LAYOUTS.types[layout]
    buffer = np.zeros(_stored_sizes()[layout], dtype=np.uint8)
    pack_layout.prepare(layout)(addressed(spec, kind), buffer)
    return buffer


@functools.lru_cache(maxsize=None)
def _stored_sizes():
    return tuple(stored_size(kind) for kind in LAYOUTS.types)


def _shape(data):
    """``(N, D)`` of a spec's data: an array, or a ``Matrix`` or CSR tuple (its shape last)."""
    return tuple(data[-1]) if isinstance(data, tuple) else data.shape


def firefly_model_tuple(spec):
    """The :data:`.specs.FIREFLY_MODEL` tuple Firefly's kernels take, for a linear model's
    spec (``specs.LinearSpec``)."""
    layout = layout_of(spec, True)
    n_rows, n_features = _shape(spec[0])
    ops = [function_addresses(op.prepare(), kind)
           for op, kind in zip(FIREFLY_OPS[layout], FIREFLY_OP_TYPES)]
    return (packed_layout(spec, layout), *ops, int(n_rows), int(spec[6]), int(spec[7]),
            int(n_features) + int(spec[8]))


def model_tuple(spec, linear, n_params, used=BOTH_OPS):
    """The :data:`.specs.MODEL` tuple the chain loops take, for a linear model's spec
    (``linear``, a ``specs.LinearSpec`` tuple) or a user's model's (``specs.RowSpec``)
    with ``n_params`` parameters: its functions as addresses, so that passing it costs
    nothing per function (see :func:`function_addresses`). Of its layout's ops, those
    ``used`` (:data:`BOTH_OPS`, :data:`DATA_PASS_ONLY`, :data:`BATCH_VALUES_ONLY`) are
    compiled; stand-ins take the others' places."""
    layout = layout_of(spec, linear)
    n_rows = _shape(spec[0])[0]
    work_size = spec[6] + spec[7] if linear else n_params
    log_prior = function_addresses(flat_log_prior if linear else spec[5], LOG_PRIOR)
    ops = tuple(function_addresses((op if use else stand_in).prepare(), kind)
                for op, stand_in, use, kind in zip(OPS[layout], (no_data_pass, no_batch_values),
                                                   used, (DATA_PASS, BATCH_VALUES)))
    return (packed_layout(spec, layout), ops, int(n_rows), int(work_size), log_prior)

"""What the kernels are given: small named tuples, and their numba types.

Python passes plain tuples to the entry kernels (numba converts a model's jitted functions
into function pointers only inside plain tuples); the entry kernels rebuild the named
tuples at once, so that every other kernel reads fields by name.

Two kinds of model reach the kernels:

* :data:`LinearSpec`: a likelihood that sees row ``i`` only through
  ``u = [W x_i + b + o_i (K values), extra parameters (E values)]`` (``o_i`` the row's
  offset: ``offset[i]``, 0 where ``offset`` is empty), as every estimator's model
  does. The model supplies ``link(u, y_i, params, order, d1, d2)``: the log-likelihood and,
  for ``order`` 1 or 2, its gradient ``d1`` and Hessian ``d2`` in ``u``; and ``link_rows``,
  the same for a block of rows in one call (:data:`LINK_ROWS`). The kernels read
  ``X`` and ``y`` where they are (float64 or float32, a memory map included, or a sparse
  matrix's CSR arrays, :data:`CSR`) and do the dot products themselves. Theta is ``K``
  blocks of ``D`` weights (plus an intercept each), then the ``E`` extra parameters.
* :data:`RowSpec`: a user's per-row ``loglik(theta, data, i)``, with an optional gradient,
  Hessian and log-prior, for :func:`skbayes_mh.sample`.
"""
from collections import namedtuple

from numba import types

from ._entry import TUPLE_FIELDS
from ._jit import ADDRESS, BOOL, BYTES, F4, F8, FLAGS, I4, I8, INDEX, MATRIX, RNG, VECTOR, readonly

LinearSpec = namedtuple("LinearSpec", "X y weights params link link_rows n_outputs n_extra "
                                      "intercept offset")
#: A linear model's ``X`` in any layout but a float64 array, so that the kernels compile
#: once for those: ``kind`` (:data:`DENSE32` or :data:`SPARSE`) names the arrays that hold
#: it (a float32 C-contiguous ``dense32``, or a CSR matrix's ``data``, ``indices`` and
#: ``indptr``, see :data:`CSR`); the others are empty. ``labels32`` is ``y`` in float32 where
#: it is exactly that (a float32 ``y`` given beside a float32 ``X``, or class indices),
#: the spec's ``y`` then empty: a tall memory map's labels are not copied to float64
#: (read as ``rows.row_label``). ``shape`` is ``(N, D)`` for both.
#: The layout is a branch per row, which the processor predicts every time. A float64
#: array, the common case, has a signature of its own (one for every layout compiles a
#: third slower than one for float64 arrays alone: a first fit would wait longer).
Matrix = namedtuple("Matrix", "kind dense32 data indices indptr labels32 shape")
DENSE32, SPARSE = 1, 2
#: A sparse ``X`` in compressed sparse rows: row ``i``'s values ``data[indptr[i]:indptr[i+1]]``
#: in columns ``indices[...]`` (both int32), and its ``shape`` ``(N, D)``, so that the kernels
#: read ``X.shape`` alike for dense and sparse data.
CSR = namedtuple("CSR", "data indices indptr shape")
RowSpec = namedtuple("RowSpec", "data weights loglik gradient hessian log_prior")
#: A model of either kind in any data layout, as the Metropolis-Hastings chain loops see it:
#: one type for all, so that each loop compiles once (``layouts.py``). ``layout`` is the
#: address of the model's spec in its layout (one of :data:`LAYOUTS`: a linear model on a
#: float64 array, a linear model on a :data:`Matrix`, a user's model on dense data, a user's
#: model on sparse data), stored by Python in a byte buffer (``layouts.packed_layout``),
#: which only the ``ops`` (:data:`Ops`) read: the functions that read the model's layout,
#: called through function pointers. ``n_rows`` is N, ``work_size`` the length of the row
#: functions' scratch vectors (``rows.make_workspace``), ``log_prior`` the model's own
#: log-prior term.
Model = namedtuple("Model", "layout ops n_rows work_size log_prior")
#: What a chain loop reads the data through (``layouts.py``):
#:
#: * ``data_pass(layout, theta, want_grad, gradient, work) -> (loglik, status)``: the
#:   full-data pass of ``rows.data_pass``;
#: * ``batch_values(layout, theta, theta_prop, cv, batch, start, stop, inv_temperature,
#:   values, work) -> (outcome, read)``: for the minibatch rows ``batch[start:stop]``, each
#:   row's tempered log ratio ``lambda`` (``subsample.grow_batch``) into ``values[j]``,
#:   stopping early at a row that decides the test (``outcome``; ``read`` rows read).
Ops = namedtuple("Ops", "data_pass batch_values")
#: A linear model in either of its layouts (0 or 1 of :data:`LAYOUTS`) as Firefly's kernels
#: see it, one type for both (``layouts.py``): the address of its spec (as in :data:`Model`),
#: the functions that read rows there, called through function pointers
#: (``point_terms(layout, context, theta, i, inv_temperature, want_slope, slope) ->
#: (l_i, b_i)``, see ``firefly.point_terms``, with the bound and scratch at the address
#: ``context``; ``add_gradient(layout, i, slope, weight, gradient)``, see
#: ``linear.add_gradient``; ``bright_part(layout, context, value, theta, bright_rows,
#: n_bright, inv_temperature, want_grad, diffs, slopes, gradient) -> (value, status)``, see
#: ``firefly.bright_part``), and the model's shape: N, ``n_outputs`` blocks of ``width``
#: coordinates (the weights and the intercept), ``n_extra`` parameters after them.
FireflyModel = namedtuple("FireflyModel", "layout point_terms add_gradient bright_part n_rows "
                                          "n_outputs n_extra width")
#: A built-in prior (``priors.py``): ``kind``, per-coordinate ``scales`` and ``locations``,
#: the feature ``means`` that centre each block's intercept (empty: no centring), and the
#: block layout (``n_outputs`` blocks of ``block`` coordinates, the intercept last in each),
#: the ``power`` the density is raised to (1; ``1 / S`` for one of ``S`` shards), and
#: ``scale_of`` (empty: none), which marks group-level effects and their learned sds
#: (``priors.py``: :data:`~.priors.GROUP_SD`), and ``correlations`` (empty: none), the
#: groupings whose terms' effects are correlated (``priors.py``: ``_correlated_terms``).
Prior = namedtuple("Prior", "kind scales locations means n_outputs block intercept power "
                            "scale_of correlations")
#: A proposal (``proposals.py``): its kind, scale and shape (a lower-triangular ``factor``,
#: or per-coordinate ``diag`` when ``factor`` is empty, corrected along the orthonormal rows
#: of ``basis`` by the ``gain`` factors; ``basis`` has 0 rows for a diagonal shape), the
#: reference distribution's ``mean`` for the autoregressive proposal, and one more
#: ``parameter``: the autoregressive reference's degrees of freedom (0: Gaussian), or
#: Hamiltonian Monte Carlo's path length. ``moves`` holds the addresses of the compiled
#: ``propose`` and ``log_ratio`` ops (:data:`PROPOSE`, :data:`MOVE_LOG_RATIO`;
#: ``proposals.move_addresses``) through which the chain loops make a one-step move, or
#: zeros (:data:`NO_MOVES`) where the loops make none (Hamiltonian paths, slice updates).
Proposal = namedtuple("Proposal", "kind scale factor diag basis gain mean parameter moves")
#: An acceptance test: its parameters packed in the order of its named tuple
#: (``decisions.pack_params``), for the minibatch Barker test the correction distribution
#: (support and cumulative weights), and the addresses of its compiled decision op
#: (``decisions.decision_addresses``).
Test = namedtuple("Test", "params support cdf decide")
#: Control variates: Taylor proxies of every row's log-likelihood around ``center``, with
#: the full-data sums of their gradient and Hessian there. For the range bound of the
#: confidence sampler: the Cholesky factor ``whitening`` of the covariance that defines
#: the whitened norm, the largest whitened row norm ``radius``, and the third-derivative
#: bound ``m3_scale * exp(m3_rate * eta)`` with ``eta <= eta_center_max + radius * |u|``.
#: ``exp_coords`` (length d, or empty for none) marks the coordinates ``theta_a`` that the
#: proxies read as ``exp(theta_a)``: a positive parameter sampled as its log, whose rows'
#: log-likelihood is close to quadratic in the parameter itself, not in its log (a
#: negative binomial's dispersion near the Poisson limit); ``grad`` and ``hess`` are then
#: in those coordinates. ``hess_indptr``, ``hess_indices`` and ``hess_values`` hold
#: ``hess`` in CSR form where most of its entries are 0 (group-level effects: two groups'
#: effects never share a row), for the proxies' full-data sum; empty otherwise.
ControlVariates = namedtuple("ControlVariates", "use center grad hess whitening radius m3_scale "
                                                "m3_rate eta_center_max exp_coords hess_indptr "
                                                "hess_indices hess_values")
#: Firefly's collapsible bounds. Each row's log-likelihood is bounded below by a quadratic
#: in its linear predictors ``eta`` (the first ``K`` entries of ``u``), scaled by
#: ``exp(-2 v)`` for a model with a log-scale ``v`` (the last entry of ``u``, or
#: ``fixed_log_scale``)::
#:
#:     b(u) = exp(-2 v) (c + l . eta - eta' A eta / 2) + c0 - s v
#:
#: The model's ``coefficients(u_t, y_i, params, bound_params, l, A) -> (c, c0, s)`` gives
#: them from the row's ``u_t`` at the ``tangent`` parameters (the MAP for tuned bounds).
#: ``tangent_u`` (N, K + extra) keeps every row's ``u_t``, computed in the pass that
#: collapses the bounds, so that a query reads one dot product, not two (8 bytes a row for
#: a single output); with 0 rows (tall data) a query computes ``u_t`` again. Summed over the
#: rows the bounds collapse into ``exp(-2 v) (-w' quad w / 2 + lin . w + const) -
#: scale_count v`` over the linear coordinates ``w`` (constants dropped).
FireflyBound = namedtuple("FireflyBound", "coefficients tangent bound_params quad lin const "
                                          "scale_count fixed_log_scale tangent_u")

#: A chain loop's per-iteration outputs: the draws (n_iter, d), whether each iteration
#: moved, the data rows read (or likelihood queries), the log target, and for Firefly the
#: bright count after each iteration (empty for Metropolis-Hastings).
Trace = namedtuple("Trace", "draws accepted n_read lp n_bright")
#: A Firefly chain's state, updated in place: ``theta``; the bright set
#: (``bright_rows[:n_bright[0]]`` and a bit per row in ``bright_bits``); the bright points'
#: ``l - b`` and its gradient in ``u`` by position in that list (``point_diff``,
#: ``point_slope``), so that darkening a point costs no query; the log pseudo-posterior's
#: gradient (MALA) and its value ``current[0]`` (NaN: unknown). The two counts are
#: one-element arrays because a run stops and resumes (timed chunks, Ctrl-C) with them.
FireflyChain = namedtuple("FireflyChain", "theta bright_rows bright_bits n_bright point_diff "
                                          "point_slope gradient current")
#: Firefly's brightness update: ``resample`` (implicit or explicit), the dark-to-bright
#: proposal probability ``q_db`` (implicit) and the rows resampled per iteration (explicit).
BrightnessUpdate = namedtuple("BrightnessUpdate", "resample q_db resample_count")

#: Arrays a kernel only reads are typed read-only: a read-only array (a Ray or Dask worker's
#: zero-copy view, a read-only memmap, ``setflags(write=False)``) matches them, and so does a
#: writable one. Only the arrays a kernel writes (a chain's state, outputs) are writable.
IN_VECTOR = readonly(F8, 1)
IN_MATRIX = readonly(F8, 2)

#: ``link(u, y_i, params, order, d1, d2) -> log-likelihood``.
LINK = types.FunctionType(F8(VECTOR, F8, IN_VECTOR, I8, VECTOR, MATRIX))
#: ``link_rows(U, y, start, count, params, order, values, slopes, curvatures)``: for
#: ``r < count``, ``values[r]`` the log-likelihood of row ``start + r`` (outcome
#: ``y[start + r]``) at ``u = U[r]`` and, for ``order`` >= 1 (2), ``slopes[r]``
#: (``curvatures[r]``) its gradient (Hessian) in ``u``; for ``order`` <= 1 ``curvatures``
#: may hold a single matrix, which the link leaves alone. It is ``link`` row by row,
#: called directly (a jitted loop of the model's own, in which LLVM inlines the link). A
#: full-data pass calls it once per block of rows: a call through a function pointer costs
#: about 30 ns, twice the logistic link's own arithmetic.
LINK_ROWS = types.FunctionType(types.void(MATRIX, IN_VECTOR, I8, I8, IN_VECTOR, I8, VECTOR,
                                          MATRIX, types.Array(F8, 3, "C")))
#: ``coefficients(u_t, y_i, params, bound_params, l, A) -> (c, c0, s)`` (see FireflyBound).
BOUND_COEFFICIENTS = types.FunctionType(types.UniTuple(F8, 3)(VECTOR, F8, IN_VECTOR, IN_VECTOR,
                                                              VECTOR, MATRIX))

DATA = readonly(F8, 2)
#: A sparse ``data`` as the user's functions see it: a :data:`CSR` named tuple.
SPARSE_DATA = types.NamedTuple((readonly(F8, 1), readonly(I4, 1), readonly(I4, 1),
                                types.UniTuple(I8, 2)), CSR)


def user_function_types(data):
    """The user's ``loglik(theta, data, i)``, ``gradient(theta, data, i, out)`` and
    ``hessian(theta, data, i, out)`` for ``data`` of type ``data`` (:data:`DATA` or
    :data:`SPARSE_DATA`)."""
    return (types.FunctionType(F8(VECTOR, data, I8)),
            types.FunctionType(types.void(VECTOR, data, I8, VECTOR)),
            types.FunctionType(types.void(VECTOR, data, I8, MATRIX)))


LOGLIK, GRADIENT, HESSIAN = user_function_types(DATA)
LOG_PRIOR = types.FunctionType(F8(VECTOR))

WEIGHTS = readonly(F8, 1)


#: A sparse ``X`` as Python passes it: the :data:`CSR` fields in a plain tuple.
CSR_MATRIX = types.Tuple((readonly(F8, 1), readonly(I4, 1), readonly(I4, 1), types.UniTuple(I8, 2)))


#: A :data:`Matrix` as Python passes it (a plain tuple).
MATRIX_DATA = types.Tuple((I8, readonly(F4, 2), readonly(F8, 1), readonly(I4, 1),
                           readonly(I4, 1), readonly(F4, 1), types.UniTuple(I8, 2)))


def linear_spec_type(X):
    """The numba type of a :data:`LinearSpec` tuple with ``X`` of type ``X`` (``y`` is
    float64 for every layout; a :data:`Matrix` may hold it as ``labels32`` instead)."""
    return types.Tuple((X, readonly(F8, 1), WEIGHTS, IN_VECTOR, LINK, LINK_ROWS, I8, I8, I8,
                        WEIGHTS))


#: A float64 array ``X``, and every other layout (a :data:`MATRIX_DATA`): the order of
#: ``_entry.by_data_layout``.
LINEAR_SPECS = (linear_spec_type(readonly(F8, 2)), linear_spec_type(MATRIX_DATA))
#: A user's model on dense and on sparse data (the order of ``_entry.by_row_data``).
ROW_SPECS = (types.Tuple((DATA, WEIGHTS, LOGLIK, GRADIENT, HESSIAN, LOG_PRIOR)),
             types.Tuple((CSR_MATRIX, WEIGHTS, *user_function_types(SPARSE_DATA), LOG_PRIOR)))
PRIOR = types.Tuple((I8, IN_VECTOR, IN_VECTOR, IN_VECTOR, I8, I8, I8, F8,
                     readonly(I8, 1), readonly(I8, 1)))
TEST = types.Tuple((IN_VECTOR, IN_VECTOR, IN_VECTOR, ADDRESS))
CONTROL_VARIATES = types.Tuple((BOOL, IN_VECTOR, IN_VECTOR, IN_MATRIX, IN_MATRIX, F8, F8, F8, F8,
                                IN_VECTOR, readonly(I8, 1), readonly(I8, 1), IN_VECTOR))
FIREFLY_BOUND = types.Tuple((BOUND_COEFFICIENTS, IN_VECTOR, IN_VECTOR, IN_MATRIX, IN_VECTOR, F8,
                             F8, F8, IN_MATRIX))

#: The four layouts of :data:`Model` (the order of ``layouts.py``'s ops).
LAYOUTS = types.Tuple((*LINEAR_SPECS, *ROW_SPECS))
#: ``rows.make_workspace``'s scratch: four vectors and a matrix.
WORK = types.Tuple((VECTOR, VECTOR, VECTOR, VECTOR, MATRIX))
#: :data:`ControlVariates` as the kernels hold them (``views.cv_view``: the centre writable,
#: to be handed to a user's function).
CV_VIEW = types.NamedTuple((BOOL, VECTOR, IN_VECTOR, IN_MATRIX, IN_MATRIX, F8, F8, F8, F8,
                            IN_VECTOR, readonly(I8, 1), readonly(I8, 1), IN_VECTOR),
                           ControlVariates)
DATA_PASS = types.FunctionType(types.Tuple((F8, I8))(types.voidptr, VECTOR, BOOL, VECTOR, WORK))
BATCH_VALUES = types.FunctionType(types.Tuple((I8, I8))(types.voidptr, VECTOR, VECTOR, CV_VIEW,
                                                        INDEX, I8, I8, F8, VECTOR, WORK))
#: A :data:`Proposal` as Python passes it, and as the kernels hold it (``views.proposal_view``).
PROPOSAL = types.Tuple((I8, F8, IN_MATRIX, IN_VECTOR, IN_MATRIX, IN_VECTOR, IN_VECTOR, F8,
                        types.UniTuple(ADDRESS, 2)))
PROPOSAL_VIEW = types.NamedTuple(PROPOSAL.types, Proposal)
#: ``Proposal.moves`` where the chain loops make no one-step move.
NO_MOVES = ((0, 0), (0, 0))
#: Three scratch vectors.
VECTORS = types.UniTuple(VECTOR, 3)
#: ``propose(proposal, theta, gradient, rng, noise, work, out)``: ``proposals.propose``.
PROPOSE = types.FunctionType(types.void(PROPOSAL_VIEW, VECTOR, VECTOR, RNG, VECTOR, VECTORS,
                                        VECTOR))
#: ``log_ratio(proposal, theta, theta_prop, gradient_prop, noise, work)``:
#: ``proposals.proposal_log_ratio``.
MOVE_LOG_RATIO = types.FunctionType(F8(PROPOSAL_VIEW, VECTOR, VECTOR, VECTOR, VECTOR, VECTORS))


#: A :data:`Model` as Python passes it (a plain tuple, its functions as addresses).
#: A model's spec stored in bytes (``layouts.packed_layout``), as Python passes it.
PACKED_LAYOUT = readonly(types.uint8, 1)
MODEL = types.Tuple((PACKED_LAYOUT, types.UniTuple(ADDRESS, 2), I8, I8, ADDRESS))
#: :data:`FireflyBound` as the kernels hold it (``views.bound_view``), and the scratch of
#: ``firefly.point_terms``.
BOUND_VIEW = types.NamedTuple((BOUND_COEFFICIENTS, IN_VECTOR, IN_VECTOR, IN_MATRIX, IN_VECTOR,
                               F8, F8, F8, IN_MATRIX), FireflyBound)
BOUND_WORK = types.Tuple((VECTOR, VECTOR, MATRIX, VECTOR))
#: What a Firefly query reads besides the row: the bounds and the scratch, passed by address
#: (``firefly.query_context``).
QUERY_CONTEXT = types.Tuple((BOUND_VIEW, WORK, BOUND_WORK))
POINT_TERMS = types.FunctionType(types.UniTuple(F8, 2)(types.voidptr, types.voidptr, VECTOR, I8,
                                                       F8, BOOL, VECTOR))
ADD_GRADIENT = types.FunctionType(types.void(types.voidptr, I8, VECTOR, F8, VECTOR))
BRIGHT_PART = types.FunctionType(types.Tuple((F8, I8))(types.voidptr, types.voidptr, F8, VECTOR,
                                                       INDEX, I8, F8, BOOL, VECTOR, MATRIX, VECTOR))
#: A :data:`FireflyModel` as Python passes it.
FIREFLY_MODEL = types.Tuple((PACKED_LAYOUT, ADDRESS, ADDRESS, ADDRESS, I8, I8, I8,
                             I8))

TRACE = types.Tuple((MATRIX, FLAGS, INDEX, VECTOR, INDEX))
FIREFLY_CHAIN = types.Tuple((VECTOR, INDEX, BYTES, INDEX, VECTOR, MATRIX, VECTOR, VECTOR))
BRIGHTNESS_UPDATE = types.Tuple((I8, F8, I8))

TUPLE_FIELDS.update({TRACE: Trace, FIREFLY_CHAIN: FireflyChain,
                     BRIGHTNESS_UPDATE: BrightnessUpdate})
TUPLE_FIELDS.update(dict.fromkeys(LINEAR_SPECS, LinearSpec))
TUPLE_FIELDS.update(dict.fromkeys(ROW_SPECS, RowSpec))
TUPLE_FIELDS.update({MODEL: Model, FIREFLY_MODEL: FireflyModel, CSR_MATRIX: CSR,
                     MATRIX_DATA: Matrix, PRIOR: Prior, PROPOSAL: Proposal, TEST: Test,
                     CONTROL_VARIATES: ControlVariates, FIREFLY_BOUND: FireflyBound})

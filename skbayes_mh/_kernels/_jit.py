"""The house numba decorator and the types every kernel signature is built from.

Arrays are cast at the Python boundary (float64, C-contiguous, data read-only, int64
indices) so that each kernel compiles exactly one signature, cached on disk.
"""
import functools

import numba
from numba import types

#: One decorator for every kernel: on-disk cache, GIL released (chains run in threads),
#: NumPy's error model (a division by zero gives inf/nan, which the kernels check, instead
#: of raising inside nopython code). No fastmath: acceptance arithmetic must be exact IEEE.
jit = functools.partial(numba.njit, cache=True, nogil=True, error_model="numpy")

F8 = types.float64
I8 = types.int64
VECTOR = types.Array(F8, 1, "C")
MATRIX = types.Array(F8, 2, "C")
INDEX = types.Array(I8, 1, "C")
FLAGS = types.Array(types.boolean, 1, "C")
DATA = types.Array(F8, 2, "C", readonly=True)
RNG = types.NumPyRandomGeneratorType("NumPyRandomGeneratorType")

#: ``loglik(theta, data, i) -> log p(x_i | theta)``: the user's per-datum log-likelihood.
LOGLIK = types.FunctionType(F8(VECTOR, DATA, I8))
#: ``log_prior(theta) -> log p(theta)`` (up to a constant).
LOG_PRIOR = types.FunctionType(F8(VECTOR))

#: The one signature shared by every acceptance test's decision kernel::
#:
#:     decide(loglik, data, theta, theta_prop, log_psi, inv_temperature, loglik_sum,
#:            params, correction_support, correction_cdf, index_pool, scratch, rng)
#:         -> (is_accepted, n_data_read, loglik_sum_prop, status)
#:
#: ``log_psi`` is log prior ratio + log proposal ratio (never tempered); ``loglik_sum`` the
#: cached full-data log-likelihood of ``theta`` (NaN when unknown); ``params`` the test's
#: packed parameters; ``index_pool`` a permutation of ``0..N-1`` that minibatches are drawn
#: from; ``scratch`` a length-N float buffer; ``status`` is one of the STATUS_* codes.
DECIDE_RESULT = types.Tuple((types.boolean, I8, F8, I8))
DECIDE_SIGNATURE = DECIDE_RESULT(
    LOGLIK, DATA, VECTOR, VECTOR, F8, F8, F8, VECTOR, VECTOR, VECTOR, INDEX, VECTOR, RNG
)

STATUS_OK = 0
#: The log-likelihood returned NaN or +inf for some row.
STATUS_BAD_LOGLIK = 1
#: The log-prior returned NaN or +inf.
STATUS_BAD_LOG_PRIOR = 2

"""Binary logistic regression: ``p(y_i = 1 | x_i, w) = 1 / (1 + exp(-x_i . w))``.

Data rows are ``[x_i, y_i]`` with ``y_i`` in {0, 1}; an intercept is a column of ones in ``x``.
"""
from .._kernels._common import log_sigmoid
from .._kernels._jit import DATA, F8, I8, VECTOR, jit


@jit(F8(DATA, I8, VECTOR), fastmath={"reassoc", "contract"})
def row_dot(data, i, weights):
    """``data[i, :d] . weights`` with ``d = len(weights)``.

    Reassociation lets LLVM vectorise the sum (a sequential float reduction cannot be);
    it changes only the rounding of this dot product, not any acceptance arithmetic.
    """
    total = 0.0
    for k in range(weights.shape[0]):
        total += data[i, k] * weights[k]
    return total


@jit(F8(VECTOR, DATA, I8))
def logistic_loglik(theta, data, i):
    """``log p(y_i | x_i, theta) = y log S(z) + (1 - y) log S(-z)`` with ``z = x_i . theta``."""
    z = row_dot(data, i, theta)
    y = data[i, data.shape[1] - 1]
    return y * log_sigmoid(z) + (1.0 - y) * log_sigmoid(-z)

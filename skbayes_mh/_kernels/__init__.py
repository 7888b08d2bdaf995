"""numba kernels of skbayes_mh: nothing here imports scikit-learn.

Every kernel is compiled once with an explicit signature (see :mod:`._jit`), so the
on-disk numba cache serves every user model: a user's ``loglik`` reaches the chain
loop as a first-class function of the fixed type :data:`._jit.LOGLIK`.
"""

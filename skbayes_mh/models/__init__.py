"""Likelihood families: per-datum log-likelihoods (numba, ``loglik(theta, data, i)``),
their priors, and what the experiments need to know about them."""

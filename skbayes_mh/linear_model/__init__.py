"""Bayesian linear models sampled by Metropolis-Hastings with pluggable acceptance tests."""
from ._logistic import MinibatchMHLogisticRegression

__all__ = ["MinibatchMHLogisticRegression"]

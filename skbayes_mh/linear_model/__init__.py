"""Bayesian linear models sampled by Metropolis-Hastings with pluggable acceptance tests."""
from ._logistic import MinibatchMHLogisticRegression
from ._robust import RobustTRegression
from ._softmax import FireflySoftmaxClassifier

__all__ = ["FireflySoftmaxClassifier", "MinibatchMHLogisticRegression", "RobustTRegression"]

"""skbayes_mh: scikit-learn-compatible Bayesian estimators for tall data, with minibatch
Metropolis-Hastings acceptance tests."""
from . import acceptance
from ._sample import SampleResult, acceptance_probability, sample
from .linear_model import (FireflySoftmaxClassifier, MinibatchMHLogisticRegression,
                           RobustTRegression)

__version__ = "0.1.0"

__all__ = ["FireflySoftmaxClassifier", "MinibatchMHLogisticRegression", "RobustTRegression",
           "SampleResult", "acceptance", "acceptance_probability", "sample"]

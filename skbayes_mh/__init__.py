"""skbayes_mh: scikit-learn-compatible Bayesian estimators for tall data, with minibatch
Metropolis-Hastings acceptance tests and Firefly Monte Carlo."""
from . import acceptance, proposals
from .consensus import ConsensusMonteCarlo
from .linear_model import (BinomialRegression, FireflySoftmaxClassifier, GammaRegression,
                           MinibatchMHLogisticRegression, MinibatchMHPoissonRegression,
                           NegativeBinomialRegression, OrdinalRegression,
                           RobustTRegression)
from .sampling import SampleResult, acceptance_probability, sample

__version__ = "0.1.0"

__all__ = ["BinomialRegression", "ConsensusMonteCarlo", "FireflySoftmaxClassifier",
           "GammaRegression", "MinibatchMHLogisticRegression", "MinibatchMHPoissonRegression",
           "NegativeBinomialRegression", "OrdinalRegression", "RobustTRegression",
           "SampleResult", "acceptance", "acceptance_probability", "proposals", "sample"]

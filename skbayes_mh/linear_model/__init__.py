"""Bayesian linear models sampled by Metropolis-Hastings with pluggable acceptance tests and
proposals, or by Firefly Monte Carlo. Each estimator is a thin shell (``_base.py``) over a
likelihood family of :mod:`skbayes_mh.models`, in a file of its own here, imported by name
below (so that editors and type checkers see it), which registers it in
:data:`ESTIMATORS`."""
from ._base import ESTIMATORS
from ._binomial import BinomialRegression
from ._gamma import GammaRegression
from ._logistic import MinibatchMHLogisticRegression
from ._negative_binomial import NegativeBinomialRegression
from ._ordinal import OrdinalRegression
from ._poisson import MinibatchMHPoissonRegression
from ._robust import RobustTRegression
from ._softmax import FireflySoftmaxClassifier

__all__ = ["BinomialRegression", "ESTIMATORS", "FireflySoftmaxClassifier", "GammaRegression",
           "MinibatchMHLogisticRegression", "MinibatchMHPoissonRegression",
           "NegativeBinomialRegression", "OrdinalRegression", "RobustTRegression"]

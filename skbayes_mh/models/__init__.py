"""Likelihood families. Each owns, in one file, both halves of its model: the numba side (a
link giving each row's log-likelihood and its derivatives in the linear predictors, its
Firefly bound where one exists, its starting point and bounds) and the NumPy side
(log-likelihood, simulation and predictive quantities on draws), with the layout of its
parameters. ``_base.py`` gives them the shared passes, MAP, Laplace approximation and
collapsed bounds. A family registers itself in :data:`FAMILIES` when its file is imported;
every file here is imported by name below (so that editors and type checkers see
``from skbayes_mh.models import LogisticModel``). A user's own per-row functions, for
:func:`skbayes_mh.sample`, are wrapped in :mod:`skbayes_mh.sampling` instead."""
from .._data import LinearData
from ._base import FAMILIES, LinearModel
from .binomial import BinomialModel
from .gamma import GammaModel
from .logistic import LogisticModel
from .negative_binomial import NegativeBinomialModel
from .ordinal import CumulativeModel
from .poisson import PoissonModel
from .probit import ProbitModel
from .softmax import CentredSoftmaxModel, SoftmaxModel
from .student_t import StudentTModel

__all__ = ["FAMILIES", "BinomialModel", "CentredSoftmaxModel", "CumulativeModel",
           "GammaModel", "LinearData", "LinearModel", "LogisticModel", "NegativeBinomialModel", "PoissonModel", "ProbitModel",
           "SoftmaxModel", "StudentTModel"]

"""Likelihood families. Each owns, in one file, both halves of its model: the numba side (a
link giving each row's log-likelihood and its derivatives in the linear predictors, its
Firefly bound where one exists, its starting point and bounds) and the NumPy side
(log-likelihood, simulation and predictive quantities on draws), with the layout of its
parameters. ``_base.py`` gives them the shared passes, MAP, Laplace approximation and
collapsed bounds. A family registers itself in :data:`FAMILIES` when its file is imported;
every file here is imported below. A user's own per-row functions, for
:func:`skbayes_mh.sample`, are wrapped in :mod:`skbayes_mh.sampling` instead."""
import importlib
import pkgutil

from .._data import LinearData
from ._base import FAMILIES, LinearModel

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

globals().update(FAMILIES)
__all__ = ["FAMILIES", "LinearData", "LinearModel", *sorted(FAMILIES)]

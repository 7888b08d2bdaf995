"""Bayesian linear models sampled by Metropolis-Hastings with pluggable acceptance tests and
proposals, or by Firefly Monte Carlo. Each estimator is a thin shell (``_base.py``) over a
likelihood family of :mod:`skbayes_mh.models`, in a file of its own here that registers the
estimator in :data:`ESTIMATORS` when imported; every such file is imported below."""
import importlib
import pkgutil

from ._base import ESTIMATORS

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in ("_base", "_docs"):
        importlib.import_module(f"{__name__}.{_module.name}")

globals().update(ESTIMATORS)
__all__ = ["ESTIMATORS", *sorted(ESTIMATORS)]

"""Saving fitted estimators: pickle, or safely with skops.

``skops.io.load`` refuses to build any type it was not told to trust. A fitted estimator of
this library holds, besides NumPy arrays and plain Python objects, the types listed in
:data:`SKOPS_TRUSTED_TYPES`: the estimator, its ``posterior_``, the acceptance test and
proposal it used, and scikit-learn's ``Bunch`` (``diagnostics_``, ``data_passes_``)::

    import skops.io
    from skbayes_mh.persistence import SKOPS_TRUSTED_TYPES

    skops.io.dump(clf, "clf.skops")
    clf = skops.io.load("clf.skops", trusted=SKOPS_TRUSTED_TYPES)

Check a file from elsewhere first: ``skops.io.get_untrusted_types(file=...)`` must list
nothing outside :data:`SKOPS_TRUSTED_TYPES`.
"""
from .acceptance import ACCEPTANCE_TESTS
from .acceptance.correction import CorrectionDistribution
from .consensus import ConsensusMonteCarlo
from .linear_model import ESTIMATORS
from .linear_model._groups import GroupTerms
from .posterior import Posterior
from .proposals import PROPOSALS

__all__ = ["SKOPS_TRUSTED_TYPES"]


def _name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


#: The fully qualified names of the types a fitted estimator may hold beyond what skops
#: trusts by default (for ``skops.io.load(..., trusted=SKOPS_TRUSTED_TYPES)``).
SKOPS_TRUSTED_TYPES = sorted(
    [_name(cls) for cls in (*ESTIMATORS.values(), ConsensusMonteCarlo, Posterior,
                            CorrectionDistribution)]
    + [_name(cls) for cls in ACCEPTANCE_TESTS.values()]
    + [_name(cls) for cls in PROPOSALS.values()]
    + [_name(GroupTerms), "sklearn.utils._bunch.Bunch"])

"""Acceptance tests: small parameter objects, selectable by name.

================  ============================  ============================================
name              class                         decision
================  ============================  ============================================
``"metropolis"``  :class:`Metropolis`           exact, full data, ``min(1, exp(Delta))``
``"barker"``      :class:`Barker`               exact, full data, ``1 / (1 + exp(-Delta))``
``"minibatch"``   :class:`MinibatchBarker`      Barker test on adaptive random minibatches
``"austerity"``   :class:`Austerity`            sequential t-test on random minibatches
``"confidence"``  :class:`ConfidenceSampler`    concentration bound on random minibatches
``"firefly"``     :class:`Firefly`              exact, bright points only (models with bounds)
================  ============================  ============================================
"""
from .._docstrings import with_sections
from .._validation import resolve_option, resolve_sections
from ._base import AcceptanceTest
from .austerity import Austerity
from .barker import Barker
from .confidence import ConfidenceSampler
from .correction import CorrectionDistribution
from .firefly import Firefly
from .metropolis import Metropolis
from .minibatch import MinibatchBarker

#: name -> class of every acceptance test available by name.
ACCEPTANCE_TESTS = {cls.name: cls for cls in (Metropolis, Barker, MinibatchBarker, Austerity,
                                                  ConfidenceSampler, Firefly)}


@with_sections(resolve_sections("acceptance", "AcceptanceTest", "ACCEPTANCE_TESTS",
                                "acceptance test"))
def resolve_acceptance(acceptance):
    """Turn ``acceptance`` (a registry name or an :class:`AcceptanceTest`) into a validated
    fresh object; an object is cloned, never modified."""
    return resolve_option(acceptance, ACCEPTANCE_TESTS, AcceptanceTest, "acceptance")


__all__ = ["ACCEPTANCE_TESTS", "AcceptanceTest", "Austerity", "Barker", "ConfidenceSampler",
           "CorrectionDistribution", "Firefly", "Metropolis", "MinibatchBarker",
           "resolve_acceptance"]

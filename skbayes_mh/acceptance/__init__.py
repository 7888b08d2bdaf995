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
from .._validation import resolve_option
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


def resolve_acceptance(acceptance):
    """Turn ``acceptance`` (a registry name or an :class:`AcceptanceTest`) into a validated
    fresh object; an object is cloned, never modified.

    Parameters
    ----------
    acceptance : str or AcceptanceTest
        A name of :data:`ACCEPTANCE_TESTS` or an acceptance test object.

    Returns
    -------
    AcceptanceTest
        A validated object: a new one with default parameters for a name, a clone for
        an object.

    Raises
    ------
    ValueError
        Unknown name or invalid parameters.
    TypeError
        Neither a string nor an :class:`AcceptanceTest`.
    """
    return resolve_option(acceptance, ACCEPTANCE_TESTS, AcceptanceTest, "acceptance")


__all__ = ["ACCEPTANCE_TESTS", "AcceptanceTest", "Austerity", "Barker", "ConfidenceSampler",
           "CorrectionDistribution", "Firefly", "Metropolis", "MinibatchBarker",
           "resolve_acceptance"]

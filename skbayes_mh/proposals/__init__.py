"""Proposals (parameter updates): small parameter objects, selectable by name.

=================  ====================  ==================================================
name               class                 move
=================  ====================  ==================================================
``"random_walk"``  :class:`RandomWalk`   Gaussian random walk in the proposal shape
``"mala"``         :class:`MALA`         preconditioned Langevin (needs the gradient)
``"pcn"``          :class:`PCN`          autoregressive around the Laplace approximation
``"hmc"``          :class:`HMC`          Hamiltonian Monte Carlo (needs the gradient)
``"slice"``        :class:`Slice`        slice sampling (exact tests and Firefly only)
=================  ====================  ==================================================
"""
from .._docstrings import with_sections
from .._validation import resolve_option, resolve_sections
from ._base import Proposal
from .hmc import HMC
from .mala import MALA
from .pcn import PCN
from .random_walk import RandomWalk
from .slice import Slice

#: name -> class of every proposal available by name.
PROPOSALS = {cls.name: cls for cls in (RandomWalk, MALA, PCN, HMC, Slice)}


@with_sections(resolve_sections("proposal", "Proposal", "PROPOSALS", "proposal",
                                '``"auto"`` is resolved by the caller, not here.'))
def resolve_proposal(proposal):
    """Turn ``proposal`` (a registry name or a :class:`Proposal`) into a validated fresh
    object; an object is cloned, never modified."""
    return resolve_option(proposal, PROPOSALS, Proposal, "proposal", extra=("auto",))


__all__ = ["HMC", "MALA", "PCN", "PROPOSALS", "Proposal", "RandomWalk", "Slice", "resolve_proposal"]

"""What every acceptance test's decision kernel is: one signature, its parameters by name,
and an op registered by :func:`decision_op`, through whose compiled address
(``Test.decide``) the chain loops call it.

A test is one module of ``_kernels/`` (``metropolis.py``, ``barker.py``, ``minibatch.py``,
``austerity.py``, ``confidence.py``) holding its parameters' named tuple, its decision and
its op, and one parameter object in ``acceptance/`` that fills the named tuple.

Every decision has the signature::

    decide(context, theta, theta_prop, log_psi, delta, rng) -> (is_accepted, n_data_read, status)

``context`` is a :class:`DecisionContext`: the model, the inverse temperature, the test
(:data:`.specs.Test`: its packed parameters, a correction distribution), the control
variates, scratch space and the chain's pool of random rows. ``log_psi`` is the log prior
ratio plus the log proposal ratio, plus, with control variates, the change of the proxies'
full-data sum (tempered). ``delta`` is the exact full-data log ratio, which the loop
computes for the exact tests only (NaN for the subsampling tests, which estimate it from
rows).
"""
from collections import namedtuple

import numpy as np
from numba import types

from ._common import function_at
from ._entry import entry_kernel
from ._jit import BOOL, F8, I8, RNG, VECTOR, function_addresses, jit
from .pool import POOL
from .specs import CONTROL_VARIATES, MODEL, TEST, VECTORS, WORK
from .views import cv_view, model_view, test_view

#: What a decision reads beside the move: ``spec`` the model, ``inv_temperature``,
#: ``test`` (:data:`.specs.Test`), ``cv`` the control variates (:data:`.specs.ControlVariates`),
#: ``workspace`` ``(row scratch, three parameter-space vectors)``, ``pool`` the random-row
#: pool minibatches are drawn from (``pool.py``) and ``scratch`` a length-N buffer
#: (reserved: only a batch's entries are written, so only they occupy memory; empty for
#: the exact tests).
DecisionContext = namedtuple("DecisionContext",
                             "spec inv_temperature test cv workspace pool scratch")
#: :class:`DecisionContext` as the chain loops pass it to an op: the model, the test and the
#: control variates as Python passed them to the loop's entry kernel.
DECISION_CONTEXT = types.Tuple((MODEL, F8, TEST, CONTROL_VARIATES, types.Tuple((WORK, VECTORS)),
                                POOL, VECTOR))
#: The type of every test's op: ``decide(context, theta, theta_prop, log_psi, delta, rng)``.
DECIDE = types.FunctionType(types.Tuple((BOOL, I8, I8))(
    DECISION_CONTEXT, VECTOR, VECTOR, F8, F8, RNG))

#: Every test's op by its name (``python -m skbayes_mh compile`` and the tests read it).
DECISIONS = {}


def decision_op(function):
    """Register ``function``, a test's op of type :data:`DECIDE`, as an entry kernel compiled
    on its own: a fit compiles its own test's decision only, and into a library of its own
    beside the loop, not every test into the loop (a first fit of tall data with the
    minibatch test waited for the subsampled loop, 23.5 s alone on two cores, 8.4 s of it
    the three subsampling tests' decisions)."""
    op = entry_kernel(DECIDE.signature)(function)
    op.other_layout = False  # one op for every data layout
    DECISIONS[function.__name__] = op
    return op


def decision_addresses(op):
    """``Test.decide`` for a test whose op is ``op``: its compiled addresses in this process
    (compiled first if need be)."""
    return function_addresses(op.prepare(), DECIDE)


def param_positions(params):
    """Where the kernels find each field of the named tuple class ``params`` in a test's
    packed ``test.params``: an instance of it holding the positions
    (``MINIBATCH.sigma == 1``), a constant the kernels index with."""
    return params(*range(len(params._fields)))


def pack_params(params):
    """A test's parameters (an instance of its named tuple) as the float64 vector the kernels
    read (``Test.params``)."""
    return np.array(tuple(params), dtype=np.float64).reshape(-1)


@jit(inline="always")
def context_view(context):
    """A :class:`DecisionContext` as an op received it, with the model, the test and the
    control variates made the kernels' views."""
    model, inv_temperature, test, cv, workspace, pool, scratch = context
    return DecisionContext(model_view(model), inv_temperature, test_view(test), cv_view(cv),
                           workspace, pool, scratch)


_make_decide = function_at(DECIDE)


@jit(inline="always")
def decide(context, theta, theta_prop, log_psi, delta, rng):
    """The decision of the test in ``context`` (as Python passed it), through its op's
    pointer ``Test.decide``."""
    c_address, jit_address = context[2][3]
    return _make_decide(c_address, jit_address)(context, theta, theta_prop, log_psi, delta, rng)

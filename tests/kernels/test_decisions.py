"""The acceptance tests' decision kernels as a registry: each test object names its own op,
and fills its kernel's parameters by name."""
import sys

import numpy as np
import pytest

from skbayes_mh.acceptance import ACCEPTANCE_TESTS
from skbayes_mh._kernels.decisions import DECIDE, DECISIONS, pack_params


@pytest.mark.parametrize("name", sorted(ACCEPTANCE_TESTS))
def test_each_test_names_its_registered_op_and_fills_its_kernels_parameters_by_name(name):
    """Every test but Firefly (its own sampler) names an op of the registry, compiled for the
    one decision signature; its parameters are its kernel module's named tuple, packed in
    the order of the positions the kernel reads them at."""
    test = ACCEPTANCE_TESTS[name]()
    if test.needs_bounds:
        assert test._decision is None
        return
    op = test._decision
    assert DECISIONS[op.__name__] is op
    assert op.signatures == [DECIDE.signature]
    params = test._kernel_params(lipschitz=2.5, max_weight=3.0)
    positions = getattr(sys.modules[op.__module__], "PARAM", ())
    assert tuple(positions) == tuple(range(len(params)))
    packed = pack_params(params)
    assert packed.dtype == np.float64 and packed.shape == (len(params),)
    for field in getattr(params, "_fields", ()):
        value = getattr(params, field)
        expected = np.nan if value is None else float(value)
        np.testing.assert_equal(packed[getattr(positions, field)], expected)
    if name == "confidence":  # what the model gives reaches the kernel
        assert (params.lipschitz, params.max_weight) == (2.5, 3.0)

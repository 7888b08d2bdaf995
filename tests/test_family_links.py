"""Every registered likelihood family's numba link at extreme linear predictors and extra
parameters (where a diverging Hamiltonian path or a wide warm-up step lands): the value is
finite or -inf (zero likelihood, a rejection), never NaN or +inf, and where it is finite
so are its first and second derivatives."""
import itertools

import numpy as np
import pytest

from skbayes_mh.models import FAMILIES

#: Constructor arguments of the families that take some.
EXAMPLES = {"SoftmaxModel": dict(n_outputs=3), "StudentTModel": dict(nu=4.0)}
#: Outcomes each kind of family reads.
OUTCOMES = {"classes": (0.0, 1.0), "counts": (0.0, 1.0, 5.0, 1000.0),
            "real": (-1e3, 0.0, 2.5, 1e3)}
EXTREMES = (-800.0, -300.0, -40.0, 0.0, 3.0, 40.0, 300.0, 800.0)


def _families():
    return [pytest.param(cls(**EXAMPLES.get(name, {})), id=name)
            for name, cls in sorted(FAMILIES.items())]


def test_every_family_has_an_example():
    for name, cls in FAMILIES.items():
        cls(**EXAMPLES.get(name, {}))  # a new family with arguments must be listed


def _outcomes(family):
    kind = family.outcome
    if kind == "classes":
        return tuple(float(k) for k in range(family.n_outputs if family.n_outputs > 1 else 2))
    return OUTCOMES[kind]


@pytest.mark.parametrize("family", _families())
def test_link_is_finite_or_minus_infinity_with_finite_derivatives(family):
    link = type(family).link
    params = np.ascontiguousarray(family.params(), dtype=np.float64)
    m = family.n_outputs + family.n_extra
    d1, d2 = np.zeros(m), np.zeros((m, m))
    outcomes = _outcomes(family)
    failures = []
    for values in itertools.product(EXTREMES, repeat=m):
        u = np.array(values)
        for y in outcomes:
            value = link(u, y, params, 2, d1, d2)
            finite_derivatives = np.all(np.isfinite(d1)) and np.all(np.isfinite(d2))
            if np.isnan(value) or value == np.inf or (np.isfinite(value)
                                                      and not finite_derivatives):
                failures.append((values, y, value))
            assert link(u, y, params, 0, d1, d2) == value or (np.isnan(value))
    assert not failures, f"{len(failures)} failures, e.g. {failures[:5]}"

"""Every registered likelihood family (``skbayes_mh.models.FAMILIES``), checked the same way:
its numba link's derivatives against finite differences, its NumPy log-likelihood against
the link (the two halves of the model differ by a constant in the parameters), its class
probabilities against its log-likelihood, and the link at extreme linear predictors and
extra parameters (where a diverging Hamiltonian path or a wide warm-up step lands): finite
or -inf, never NaN or +inf, with finite derivatives wherever the value is finite. A new
family is checked without editing this file (one with constructor arguments is listed in
``EXAMPLES``)."""
import itertools

import numpy as np
import pytest

from skbayes_mh.models import FAMILIES

#: Constructor arguments of the families that take some (each a case).
EXAMPLES = {"SoftmaxModel": [dict(n_outputs=3)],
            "CentredSoftmaxModel": [dict(n_classes=2), dict(n_classes=4)],
            "StudentTModel": [dict(nu=4.0), dict(nu=4.0, scale=2.0)],
            "CumulativeModel": [dict(n_classes=2), dict(n_classes=4),
                                dict(n_classes=4, link="probit")]}
#: Outcomes each kind of family reads.
OUTCOMES = {"classes": None, "counts": (0.0, 1.0, 5.0, 1000.0),
            "proportions": (0.0, 0.25, 1.0),
            "real": (-1e3, 0.0, 2.5, 1e3), "positive": (1e-3, 1.0, 5.0, 1000.0)}
#: +-1e200: a diverging Hamiltonian path's positions stay finite until they overflow (one
#: reached a residual of 5e165 and a log scale of 6e165: ``r^2 exp(-2 v)`` was ``inf x 0``).
EXTREMES = (-1e200, -800.0, -300.0, -40.0, 0.0, 3.0, 40.0, 300.0, 800.0, 1e200)


def _cases():
    return [pytest.param(cls(**kwargs), id=f"{name}-{i}")
            for name, cls in sorted(FAMILIES.items())
            for i, kwargs in enumerate(EXAMPLES.get(name, [{}]))]


def _outcomes(family):
    if family.outcome == "classes":
        return tuple(float(k) for k in range(n_classes(family)))
    return OUTCOMES[family.outcome]


def n_classes(family):
    """The classes a family of classes reads: its ``n_classes``, or one per output block
    (at least two)."""
    return getattr(family, "n_classes", max(family.n_blocks, 2))


def _width(family):
    return family.n_outputs + family.n_extra


def _link(family, u, y, order=0):
    m = _width(family)
    d1, d2 = np.zeros(m), np.zeros((m, m))
    params = np.ascontiguousarray(family.params(), dtype=np.float64)
    value = type(family).link(np.ascontiguousarray(u, dtype=np.float64), y, params, order,
                              d1, d2)
    return value, d1, d2


def _moderate_u(family, rng, n):
    """``n`` linear predictors (and extra parameters, on their sampled scale) where every
    family's likelihood is well away from its limits."""
    return rng.uniform(-1.5, 1.5, size=(n, _width(family)))


def test_every_family_has_an_example():
    for name, cls in FAMILIES.items():
        for kwargs in EXAMPLES.get(name, [{}]):
            cls(**kwargs)  # a new family with arguments must be listed


@pytest.mark.parametrize("family", _cases())
def test_link_derivatives_match_finite_differences(family):
    rng = np.random.default_rng(0)
    h = 1e-5
    for u in _moderate_u(family, rng, 5):
        for y in _outcomes(family)[:3]:
            _, d1, d2 = _link(family, u, y, order=2)
            for a in range(u.size):
                step = np.zeros(u.size)
                step[a] = h
                plus, g_plus, _ = _link(family, u + step, y, order=1)
                minus, g_minus, _ = _link(family, u - step, y, order=1)
                np.testing.assert_allclose(d1[a], (plus - minus) / (2 * h), rtol=1e-6,
                                           atol=1e-6)
                np.testing.assert_allclose(d2[a], (g_plus - g_minus) / (2 * h), rtol=1e-5,
                                           atol=1e-5)
            np.testing.assert_array_equal(d2, d2.T)


@pytest.mark.parametrize("family", _cases())
def test_numpy_log_likelihood_is_the_link_up_to_a_constant(family):
    """Rows (of each outcome) under several draws: the NumPy log-likelihood less the link's
    value depends on the outcome only (the link drops terms constant in the parameters)."""
    rng = np.random.default_rng(1)
    outcomes = np.array(_outcomes(family))
    n_draws = 6
    u = _moderate_u(family, rng, n_draws)
    eta, variables = family.u_variables(u)
    eta = np.repeat(eta, outcomes.size, axis=1)
    y = outcomes.astype(int) if family.outcome == "classes" else outcomes
    numpy_side = family.log_likelihood(eta, variables, y)
    assert numpy_side.shape == (n_draws, outcomes.size)
    link_side = np.array([[_link(family, u[d], float(v))[0] for v in outcomes]
                          for d in range(n_draws)])
    gap = numpy_side - link_side
    np.testing.assert_allclose(gap, np.broadcast_to(gap[0], gap.shape), rtol=0, atol=1e-9)
    if family.outcome == "classes":
        proba = family.class_probabilities(eta[:, :1], variables)
        np.testing.assert_allclose(proba.sum(axis=-1), 1.0)
        for k in range(proba.shape[-1]):
            np.testing.assert_allclose(
                np.log(proba[..., k]),
                family.log_likelihood(eta[:, :1], variables, np.array([k])), atol=1e-12)


@pytest.mark.parametrize("family", _cases())
def test_link_is_finite_or_minus_infinity_with_finite_derivatives(family):
    failures = []
    for values in itertools.product(EXTREMES, repeat=_width(family)):
        for y in _outcomes(family):
            value, d1, d2 = _link(family, np.array(values), y, order=2)
            finite_derivatives = np.all(np.isfinite(d1)) and np.all(np.isfinite(d2))
            if np.isnan(value) or value == np.inf or (np.isfinite(value)
                                                      and not finite_derivatives):
                failures.append((values, y, value))
            elif _link(family, np.array(values), y)[0] != value:
                failures.append((values, y, "order 0 differs"))
    assert not failures, f"{len(failures)} failures, e.g. {failures[:5]}"


@pytest.mark.parametrize("family", _cases())
def test_link_rows_is_the_link_row_by_row(family):
    """``link_rows`` (the link over a block of rows, called once per block by the full-data
    passes) gives every row's value, gradient and Hessian exactly as ``link`` does, for the
    rows ``start..start + count - 1`` only."""
    rng = np.random.default_rng(1)
    n, start, count = 12, 3, 7
    m = _width(family)
    U = _moderate_u(family, rng, n)
    outcomes = _outcomes(family)
    y = np.array([outcomes[k % len(outcomes)] for k in range(n)], dtype=np.float64)
    params = np.ascontiguousarray(family.params(), dtype=np.float64)
    for order in (0, 1, 2):
        values = np.full(n, -7.0)
        slopes, curvatures = np.full((n, m), -7.0), np.full((n, m, m), -7.0)
        block = slice(start, start + count)
        type(family).link_rows(np.ascontiguousarray(U[block]), y, start, count, params, order,
                               values, slopes, curvatures if order == 2 else curvatures[:1])
        for r in range(count):
            value, d1, d2 = _link(family, U[start + r], y[start + r], order)
            assert values[r] == value
            if order >= 1:
                np.testing.assert_array_equal(slopes[r], d1)
            if order == 2:
                np.testing.assert_array_equal(curvatures[r], d2)
        assert np.all(values[count:] == -7.0)  # rows beyond count untouched
        if order < 2:
            assert np.all(curvatures[1:] == -7.0)


@pytest.mark.parametrize("family", _cases())
def test_link_rows_sharing_their_extra_parameters_is_the_link_row_by_row(family):
    """As a chain's passes call it: a block of rows that share the extra parameters (a
    dispersion, a scale, cut-points), at every extreme value of them in turn, with each
    outcome repeated (a negative binomial's small counts, and counts beyond those whose
    terms a block shares), and the linear predictors moderate or extreme. ``link_rows``
    computes what the rows share once (``models/negative_binomial.py``, ``gamma.py``,
    ``student_t.py``), and must give exactly what ``link`` gives each row."""
    rng = np.random.default_rng(2)
    n_extra = family.n_extra
    m = _width(family)
    outcomes = list(_outcomes(family))
    if family.outcome == "counts":
        outcomes += [2.0, 63.0, 64.0, 65.0]
    y = np.array([outcomes[k % len(outcomes)] for k in range(60)], dtype=np.float64)
    params = np.ascontiguousarray(family.params(), dtype=np.float64)
    shared = [rng.uniform(-1.5, 1.5, n_extra), *([v] * n_extra for v in EXTREMES),
              [np.nan] * n_extra]
    for extras in shared:
        U = np.empty((y.size, m))
        U[:, :m - n_extra] = rng.choice([rng.uniform(-1.5, 1.5), *EXTREMES],
                                        size=(y.size, m - n_extra))
        U[:, m - n_extra:] = extras
        for order in (0, 1, 2):
            values, slopes = np.empty(y.size), np.empty((y.size, m))
            curvatures = np.empty((y.size if order == 2 else 1, m, m))
            type(family).link_rows(U, y, 0, y.size, params, order, values, slopes, curvatures)
            for r in range(y.size):
                value, d1, d2 = _link(family, U[r], y[r], order)
                np.testing.assert_array_equal(values[r], value, err_msg=f"{extras}, {order}")
                if order >= 1:
                    np.testing.assert_array_equal(slopes[r], d1)
                if order == 2:
                    np.testing.assert_array_equal(curvatures[r], d2)


def test_a_family_without_link_rows_is_refused():
    from skbayes_mh.models.logistic import LogisticModel, logistic_link
    from skbayes_mh.models.poisson import poisson_link

    with pytest.raises(TypeError, match="sets link but not link_rows"):
        class OwnLink(LogisticModel):  # a new link, the parent's block function
            link = poisson_link
    with pytest.raises(TypeError, match="sets link but not link_rows"):
        from skbayes_mh.models._base import LinearModel

        class NoRows(LinearModel):
            link = logistic_link
    assert "OwnLink" not in FAMILIES and "NoRows" not in FAMILIES


def test_the_vectorised_sigmoid_is_scipys_expit():
    """``logistic.sigmoid`` (the logistic family's ``inverse_link``, which the predictions
    average over every draw) against SciPy's ``expit``: within two units in the last place
    wherever ``expit`` is above 1e-300, 0 below ``eta = -709`` (where ``expit`` is below
    1e-308), the same for a number, a list and a Fortran-ordered array (the draws-major
    layout of the predictions), and written into ``out`` when given."""
    from scipy.special import expit

    from skbayes_mh.models.logistic import sigmoid

    eta = np.concatenate([np.linspace(-745.0, 745.0, 20_001), EXTREMES, [-0.0, 1e-300]])
    value, expected = sigmoid(eta), expit(eta)
    normal = expected > 1e-300
    np.testing.assert_allclose(value[normal], expected[normal], rtol=4.5e-16, atol=0)
    assert np.all(value[~normal] <= 1e-300) and np.all(value >= 0) and np.all(value <= 1)
    assert isinstance(sigmoid(0.3), np.float64) and sigmoid(0.3) == pytest.approx(expit(0.3))
    # Linear predictors rounded to float32 give float32 values within 2.5e-7 of the float64
    # ones of the predictors before rounding (what predictions within a tolerance of 1e-5
    # or more average).
    values = sigmoid(eta.astype(np.float32))
    assert values.dtype == np.float32
    np.testing.assert_allclose(values, value, rtol=0, atol=2.5e-7)
    np.testing.assert_allclose(sigmoid([1, 2]), expit([1.0, 2.0]), rtol=4.5e-16)
    draws_major = np.asfortranarray(np.random.default_rng(3).normal(0, 5, (40, 30)))
    out = np.empty_like(draws_major)
    assert sigmoid(draws_major, out=out) is out
    np.testing.assert_allclose(out, expit(draws_major), rtol=4.5e-16)


def _expansion_cases():
    """The families whose predictions take the expansion (``third_derivative_bound``):
    each with the prefix of its predictions' curvature and third-derivative methods (a
    binary family's ``inverse_link_*``, its second class's probability; a regressor's
    ``mean_*``)."""
    cases = []
    for param in _cases():
        family = param.values[0]
        if family.third_derivative_bound is None:
            continue
        binary = getattr(family, "inverse_link_curvature", None) is not None
        kind = "inverse_link" if binary else "mean"
        cases.append(pytest.param(family, kind, id=param.id))
    return cases


@pytest.mark.parametrize("family, kind", _expansion_cases())
def test_the_expansions_derivatives_and_their_bounds(family, kind):
    """What the predictions' expansion (``linear_model._predictive.SecondOrder``) reads of a
    family: the second derivative (``*_curvature``) and third (``*_third_derivative``) of its
    predictions match finite differences of the one before, and the bounds on the absolute
    third and fourth derivatives over an interval (``third_derivative_bound``,
    ``fourth_derivative_bound``) hold at every point of a fine grid of it."""
    curvature = getattr(family, f"{kind}_curvature")
    third = getattr(family, f"{kind}_third_derivative")
    fourth_bound = family.fourth_derivative_bound
    assert (third is None) == (fourth_bound is None)
    grid = np.linspace(-12.0, 12.0, 4801)
    h = 1e-4
    value, second = curvature(grid)
    plus, minus = curvature(grid + h)[0], curvature(grid - h)[0]
    scale = 1.0 + np.abs(value)
    np.testing.assert_allclose(second / scale, ((plus - 2 * value + minus) / h**2) / scale,
                               atol=1e-5)
    if third is None:
        third_values = (curvature(grid + h)[1] - curvature(grid - h)[1]) / (2 * h)
    else:
        third_values = third(grid)
        np.testing.assert_allclose(
            third_values / scale,
            ((curvature(grid + h)[1] - curvature(grid - h)[1]) / (2 * h)) / scale, atol=1e-6)
    rng = np.random.default_rng(3)
    third_size = np.abs(third_values).reshape(grid.size, -1).max(axis=1)
    if third is not None:
        fourth_size = (np.abs(third(grid + h) - third(grid - h)) / (2 * h)).reshape(
            grid.size, -1).max(axis=1)
    for _ in range(200):
        low, high = np.sort(rng.uniform(-10.0, 10.0, size=2))
        inside = (grid >= low) & (grid <= high)
        if not inside.any():
            continue
        bound = family.third_derivative_bound(np.array([low]), np.array([high]))[0]
        assert third_size[inside].max() <= bound * (1 + 1e-6) + 1e-12, (low, high)
        if third is not None:
            bound = fourth_bound(np.array([low]), np.array([high]))[0]
            assert fourth_size[inside].max() <= bound * (1 + 1e-4) + 1e-9, (low, high)

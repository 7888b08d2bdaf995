"""Firefly's bounds in each family that has them: below the likelihood and tight where they
touch it, their collapsed sums equal to the rows' sum, the softmax curvatures, and the
pseudo-posterior's gradient against finite differences."""
import numpy as np
import pytest
from scipy.special import log_expit, log_softmax, logsumexp, softmax

from skbayes_mh._kernels.firefly import firefly_pseudo_posterior
from skbayes_mh.models import LogisticModel, SoftmaxModel
from skbayes_mh.models.softmax import SOFTMAX_BOUNDS, softmax_curvature

from _models import firefly_row_terms, jaakkola_jordan_lambdas, linear_target


# --- bounds ----------------------------------------------------------------------------

def curvatures(psi, kind):
    """``softmax_curvature`` for every row of ``psi`` (N, K)."""
    out = np.empty((psi.shape[0], psi.shape[1], psi.shape[1]))
    for n in range(psi.shape[0]):
        softmax_curvature(np.ascontiguousarray(psi[n]), SOFTMAX_BOUNDS[kind], out[n])
    return out


def test_jaakkola_jordan_bound_is_below_and_tight():
    s = np.linspace(-12, 12, 2001)
    for xi in (0.0, 1e-8, 0.3, 1.5, 6.0):
        lam = jaakkola_jordan_lambdas(xi)
        bound = log_expit(xi) + (s - xi) / 2 - lam * (s**2 - xi**2)
        assert np.all(bound <= log_expit(s) + 1e-12)
        for tight in (xi, -xi):
            assert log_expit(xi) + (tight - xi) / 2 - lam * (tight**2 - xi**2) == \
                pytest.approx(log_expit(tight), abs=1e-12)
    # The xi -> 0 limit: a(0) = -lambda(0) = -1/8.
    assert jaakkola_jordan_lambdas(0.0) == 0.125
    assert jaakkola_jordan_lambdas(1e-4) == pytest.approx(0.125, rel=1e-8)


def _logistic_setup(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (rng.random(n) < 0.5).astype(float)
    return X, y


def _softmax_setup(n=200, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = rng.integers(0, k, size=n).astype(float)
    return X, y


def _collapsed(bound, theta):
    return -0.5 * theta @ bound.quad @ theta + bound.lin @ theta + bound.const


@pytest.mark.parametrize("bound", ["map", "untuned"])
def test_logistic_bounds_collapse_and_match_the_likelihood(bound):
    X, y = _logistic_setup()
    design = np.column_stack([X, np.ones(len(y))])
    target = linear_target(LogisticModel(), X, y, np.ones(3))
    bounds = target.model.firefly_bound(target.data, target.mean, bound, 1.0)
    theta_map = target.mean
    for theta in (theta_map, theta_map + np.array([0.5, -1.0, 2.0])):
        values = firefly_row_terms(target, bounds, theta)
        loglik = log_expit((2 * y - 1) * (design @ theta))
        np.testing.assert_allclose(values[:, 0], loglik, atol=1e-12)
        assert np.all(values[:, 1] <= values[:, 0] + 1e-12)
        assert _collapsed(bounds, theta) == pytest.approx(values[:, 1].sum(), rel=1e-10)
    if bound == "map":  # tight at the MAP
        np.testing.assert_allclose(firefly_row_terms(target, bounds, theta_map)[:, 1],
                                   firefly_row_terms(target, bounds, theta_map)[:, 0], atol=1e-10)


@pytest.mark.parametrize("curvature", ["jebara", "bohning"])
@pytest.mark.parametrize("bound", ["map", "untuned"])
def test_softmax_bounds_collapse_and_match_the_likelihood(bound, curvature):
    X, y = _softmax_setup()
    design = np.column_stack([X, np.ones(len(y))])
    target = linear_target(SoftmaxModel(3, curvature), X, y, np.ones(9))
    bounds = target.model.firefly_bound(target.data, target.mean, bound, 1.0)
    theta_map = target.mean
    rng = np.random.default_rng(1)
    for theta in (theta_map, theta_map + rng.normal(size=9)):
        values = firefly_row_terms(target, bounds, theta)
        scores = design @ theta.reshape(3, 3).T
        loglik = log_softmax(scores, axis=1)[np.arange(len(y)), y.astype(int)]
        np.testing.assert_allclose(values[:, 0], loglik, atol=1e-12)
        assert np.all(values[:, 1] <= values[:, 0] + 1e-12)
        assert _collapsed(bounds, theta) == pytest.approx(values[:, 1].sum(), rel=1e-10)
    if bound == "map":
        values = firefly_row_terms(target, bounds, theta_map)
        np.testing.assert_allclose(values[:, 1], values[:, 0], atol=1e-10)
    # The bound is not tight away from psi: some slack at a random point.
    values = firefly_row_terms(target, bounds, theta_map + rng.normal(size=9))
    assert np.any(values[:, 0] - values[:, 1] > 1e-3)


@pytest.mark.parametrize("curvature", ["jebara", "bohning"])
def test_softmax_curvatures_bound_logsumexp_everywhere(curvature):
    # f(eta) <= f(psi) + (eta - psi) . softmax(psi) + (eta - psi)' C (eta - psi) / 2 at
    # random pairs, tangent points from nearly uniform to very confident, steps up to 100.
    rng = np.random.default_rng(11)
    for n_classes in (2, 3, 5):
        psi = rng.normal(size=(3000, n_classes)) * rng.choice([0.1, 3.0, 20.0], size=(3000, 1))
        step = rng.normal(size=psi.shape) * rng.choice([1e-3, 1.0, 100.0], size=(3000, 1))
        curv = curvatures(psi, curvature)
        np.testing.assert_allclose(curv, np.swapaxes(curv, 1, 2))
        upper = (logsumexp(psi, axis=1) + np.sum(step * softmax(psi, axis=1), axis=1)
                 + 0.5 * np.einsum("na,nab,nb->n", step, curv, step))
        slack = upper - logsumexp(psi + step, axis=1)
        assert slack.min() > -1e-9 * (1 + np.abs(upper).max())
        # Tight to second order at psi: the curvature dominates the Hessian there.
        p = softmax(psi, axis=1)
        hessian = np.einsum("na,ab->nab", p, np.eye(n_classes)) - p[:, :, None] * p[:, None, :]
        assert np.linalg.eigvalsh(curv - hessian).min() > -1e-12


def test_jebara_curvature_is_jaakkola_jordan_for_two_classes_and_shrinks():
    psi = np.array([[0.0, 0.0], [2.0, -1.0], [-4.0, 5.0]])
    difference = psi[:, 0] - psi[:, 1]
    expected = 2 * jaakkola_jordan_lambdas(difference)[:, None, None] * np.array([[1, -1], [-1, 1]])
    np.testing.assert_allclose(curvatures(psi, "jebara"), expected, atol=1e-15)
    # A confidently classified point: far below Bohning's fixed curvature.
    confident = curvatures(np.array([[12.0, 0.0, -1.0]]), "jebara")[0]
    assert np.trace(confident) < 0.2 * np.trace(curvatures(np.zeros((1, 3)), "bohning")[0])


@pytest.mark.parametrize("model", ["logistic", "softmax", "softmax-bohning"])
def test_pseudo_posterior_gradient_matches_finite_differences(model):
    if model == "logistic":
        X, y = _logistic_setup()
        target = linear_target(LogisticModel(), X, y, np.ones(3), inv_temperature=0.5)
    else:
        X, y = _softmax_setup()
        curvature = "bohning" if model.endswith("bohning") else "jebara"
        target = linear_target(SoftmaxModel(3, curvature), X, y, np.ones(9), inv_temperature=0.5)
    bounds = tuple(target.model.firefly_bound(target.data, target.mean, "untuned", 0.5))
    n = len(y)
    order = np.arange(n)

    def value(theta, gradient=None):
        out, status = firefly_pseudo_posterior(
            target.firefly_model, target.prior.as_tuple(), bounds, theta, order, n // 2, 0.5,
            gradient is not None, np.zeros(theta.size) if gradient is None else gradient)
        assert status == 0
        return out

    theta = target.mean + 0.3
    gradient = np.zeros(theta.size)
    value(theta, gradient)
    h = 1e-6
    numeric = [(value(theta + h * e) - value(theta - h * e)) / (2 * h) for e in np.eye(theta.size)]
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6)

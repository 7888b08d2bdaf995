"""The centred softmax family (``CentredSoftmaxModel``): its likelihood and prior are the
over-parameterised family's with the direction the data cannot see (one vector added to
every class's block) taken apart, exactly; its reported blocks are centred; and both
families sample the same posterior of the centred coefficients and predictions."""
import numpy as np
import pytest

from skbayes_mh._validation import read_only
from skbayes_mh.models import CentredSoftmaxModel, LinearData, SoftmaxModel
from skbayes_mh.models._prior import GAUSSIAN, BuiltinPrior
from skbayes_mh.models.softmax import sum_to_zero_basis


@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_the_basis_is_orthonormal_and_sums_to_zero(n_classes):
    basis = sum_to_zero_basis(n_classes)
    assert basis.shape == (n_classes, n_classes - 1)
    np.testing.assert_allclose(basis.T @ basis, np.eye(n_classes - 1), atol=1e-14)
    np.testing.assert_allclose(basis.sum(axis=0), 0.0, atol=1e-14)


def _problem(n_classes, block_scales, means, rng):
    X = rng.standard_normal((60, 3)) * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0]
    y = rng.integers(0, n_classes, 60).astype(float)
    data = LinearData(read_only(X), read_only(y), read_only(np.zeros(0)), True)

    def prior(n_blocks):
        return BuiltinPrior(GAUSSIAN, np.tile(block_scales, n_blocks), None, means,
                            n_outputs=n_blocks, block=data.block, intercept=True)
    return data, prior


def test_log_posterior_splits_into_the_centred_one_and_the_prior_of_the_sum():
    """Theta = Q Z + 1 s' / sqrt(K): the over-parameterised log-likelihood is the centred
    family's at Z (any s), and its log prior (class blocks i.i.d. zero-mean Gaussians,
    intercepts centred at the feature means) is the centred prior at Z plus one block's
    prior at s."""
    rng = np.random.default_rng(0)
    n_classes = 4
    block_scales = np.array([1.0, 0.3, 2.0, 10.0])  # three weights, then the intercept
    data, prior = _problem(n_classes, block_scales, np.array([0.1, 2.0, -1.0]), rng)
    over, centred = SoftmaxModel(n_classes), CentredSoftmaxModel(n_classes)
    basis = sum_to_zero_basis(n_classes)
    for _ in range(5):
        Z = rng.standard_normal((n_classes - 1, data.block))
        s = 3.0 * rng.standard_normal(data.block)
        Theta = basis @ Z + np.outer(np.ones(n_classes), s) / np.sqrt(n_classes)
        over_value = over.loglik_derivatives(data, Theta.ravel(), 0)[0]
        centred_value = centred.loglik_derivatives(data, Z.ravel(), 0)[0]
        np.testing.assert_allclose(centred_value, over_value, rtol=1e-12)
        over_prior = prior(n_classes).log_density(Theta.ravel())[0]
        split = prior(n_classes - 1).log_density(Z.ravel())[0] + prior(1).log_density(s)[0]
        np.testing.assert_allclose(split, over_prior, rtol=1e-12)
        # Both report the centred class blocks, which sum to zero over the classes.
        reported = centred.posterior_variables(Z.ravel(), 3, True)
        np.testing.assert_allclose(reported["coef"], (Theta - Theta.mean(axis=0))[:, :3],
                                   atol=1e-12)
        np.testing.assert_allclose(over.posterior_variables(Theta.ravel(), 3, True)["intercept"],
                                   reported["intercept"], atol=1e-12)
        np.testing.assert_allclose(centred.theta_draws(reported, True), Z.ravel(), atol=1e-12)


def test_the_centred_gradient_and_hessian_are_the_over_parameterised_ones_projected():
    """In theta, the centred family's derivatives are ``(Q' x I) g`` and
    ``(Q' x I) H (Q x I)`` of the over-parameterised family's at ``Theta = Q Z``."""
    rng = np.random.default_rng(1)
    n_classes = 3
    data, _ = _problem(n_classes, np.ones(4), None, rng)
    basis = sum_to_zero_basis(n_classes)
    Z = rng.standard_normal((n_classes - 1, data.block))
    projection = np.kron(basis, np.eye(data.block))  # theta_over = projection @ theta_centred
    _, g_over, h_over = SoftmaxModel(n_classes).loglik_derivatives(data, projection @ Z.ravel())
    _, g, h = CentredSoftmaxModel(n_classes).loglik_derivatives(data, Z.ravel())
    np.testing.assert_allclose(g, projection.T @ g_over, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(h, projection.T @ h_over @ projection, rtol=1e-10, atol=1e-10)

"""The posterior container: lookup, membership, accessors and its summary line."""
import numpy as np
import pytest

from skbayes_mh.posterior import Posterior


@pytest.fixture
def posterior():
    coef = np.arange(2 * 6 * 3, dtype=float).reshape(2, 6, 3)
    return Posterior({"coef": coef, "intercept": np.zeros((2, 6))},
                     {"lp": np.ones((2, 6)), "n_bright": np.full((2, 6), 7)})


def test_lookup_and_membership(posterior):
    assert "coef" in posterior and "n_bright" in posterior
    assert "scale" not in posterior
    assert posterior["n_bright"].shape == (2, 6)
    with pytest.raises(KeyError, match="coef, intercept.*lp, n_bright"):
        posterior["scale"]


def test_repr_lists_draws_and_statistics(posterior):
    text = repr(posterior)
    assert "2 chains x 6 draws" in text
    for name in ("coef (3,)", "intercept ()", "lp", "n_bright"):
        assert name in text


def test_get_discards_thins_and_flattens(posterior):
    values = posterior.get("coef", discard=2, thin=2)
    np.testing.assert_array_equal(values, posterior["coef"][:, 2::2])
    assert posterior.get("coef", discard=2, thin=2, flat=True).shape == (4, 3)


def test_arrays_must_share_chains_and_draws():
    with pytest.raises(ValueError, match="n_chains, n_draws"):
        Posterior({"coef": np.zeros((2, 5, 3))}, {"lp": np.zeros((2, 4))})

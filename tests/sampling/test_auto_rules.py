"""The ``"auto"`` rules as they read the data's size and width: which test (rows, and rows
per parameter), and where the proposal shape is a full covariance (``N d^2`` and ``d``)."""
import numpy as np
import pytest
from sklearn.datasets import make_classification

from skbayes_mh import FireflySoftmaxClassifier
from skbayes_mh._core.auto import (AUTO_EXACT_MAX_ROWS, AUTO_MIN_ROWS_PER_PARAM,
                                   choose_acceptance)
from skbayes_mh.models._optimize import (FULL_COVARIANCE_MAX_DIM, FULL_COVARIANCE_MAX_WORK,
                                         full_covariance_affordable)


@pytest.mark.parametrize("n_rows, n_params, expected", [
    (AUTO_EXACT_MAX_ROWS, 1, "metropolis"),              # small data: exact
    (AUTO_EXACT_MAX_ROWS + 1, 21, "minibatch"),          # tall and narrow
    (10**6, 21, "minibatch"),
    (13_007, 785, "metropolis"),                         # MNIST 1 vs 7 on raw pixels
    (12_214, 51, "minibatch"),                           # MNIST 7 vs 9 on 50 components
    (AUTO_MIN_ROWS_PER_PARAM * 100, 100, "minibatch"),   # the boundary: enough rows
    (AUTO_MIN_ROWS_PER_PARAM * 100 - 1, 100, "metropolis"),
])
def test_auto_acceptance_reads_rows_and_width(n_rows, n_params, expected):
    assert choose_acceptance("auto", n_rows, n_params).name == expected
    assert choose_acceptance("barker", n_rows, n_params).name == "barker"  # as named


@pytest.mark.parametrize("n_rows, n_params, expected", [
    (1_347, 585, True),           # digits, centred softmax
    (13_007, 785, True),          # MNIST 1 vs 7 on raw pixels
    (10**7, 21, True),            # tall and narrow
    (60_000, 7_065, False),       # all ten MNIST digits on raw pixels: N d^2 too large
    (10, FULL_COVARIANCE_MAX_DIM + 1, False),  # a d x d matrix too large
])
def test_full_covariance_where_affordable(n_rows, n_params, expected):
    assert full_covariance_affordable(n_rows, n_params) is expected
    if expected:
        assert n_rows * n_params**2 <= FULL_COVARIANCE_MAX_WORK


def test_a_wide_softmax_gets_a_full_covariance_and_hamiltonian_paths():
    """451 parameters (12 classes, 40 features): above the old 400-parameter cut-off, the
    shape is the full Laplace covariance (its Cholesky factor gives every coordinate's
    step), and ``proposal="auto"`` takes Hamiltonian paths, which it does only then."""
    X, y = make_classification(n_samples=600, n_features=40, n_informative=20,
                               n_classes=12, n_clusters_per_class=1, random_state=0)
    clf = FireflySoftmaxClassifier(n_draws=20, n_warmup=20, n_chains=2,
                                   random_state=0).fit(X, y)
    assert clf.acceptance_.name == "metropolis" and clf.proposal_.name == "hmc"
    assert clf.posterior_["coef"].shape == (2, 20, 12, 40)
    assert np.all(np.isfinite(clf.predict_proba(X)))

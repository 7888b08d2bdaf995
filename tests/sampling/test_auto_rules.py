"""The ``"auto"`` rules as they read the data's size and width: which test (rows, and rows
per parameter), where the proposal shape is a full covariance (``N d^2`` and ``d``), and
how long the warm-up is (``d``, the test and the proposal)."""
import numpy as np
import pytest
from sklearn.datasets import make_classification

from skbayes_mh import FireflySoftmaxClassifier, MinibatchMHLogisticRegression
from skbayes_mh._core.auto import (AUTO_EXACT_MAX_ROWS, AUTO_MIN_ROWS_PER_PARAM,
                                   AUTO_SHORT_WARMUP, AUTO_SHORT_WARMUP_MIN_PARAMS,
                                   AUTO_WARMUP, choose_acceptance, choose_warmup)
from skbayes_mh.acceptance import resolve_acceptance
from skbayes_mh.proposals import resolve_proposal
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


@pytest.mark.parametrize("test, proposal, shaped, n_params, schedule, expected", [
    ("metropolis", "hmc", True, 785, None, AUTO_SHORT_WARMUP),          # MNIST 1 vs 7
    ("metropolis", "hmc", True, 585, None, AUTO_SHORT_WARMUP),          # digits
    ("barker", "hmc", True, AUTO_SHORT_WARMUP_MIN_PARAMS, None, AUTO_SHORT_WARMUP),
    ("barker", "hmc", True, AUTO_SHORT_WARMUP_MIN_PARAMS - 1, None, AUTO_WARMUP),
    ("metropolis", "hmc", True, 31, None, AUTO_WARMUP),                 # breast cancer
    ("metropolis", "hmc", True, 785, ((0, 10.0), (400, 1.0)), AUTO_WARMUP),
    ("metropolis", "random_walk", True, 20_001, None, AUTO_WARMUP),
    ("metropolis", "mala", True, 785, None, AUTO_WARMUP),               # no paths
    ("metropolis", "hmc", False, 785, None, AUTO_WARMUP),               # per-coordinate shape
    ("minibatch", "hmc", True, 785, None, AUTO_WARMUP),                 # reads a minibatch
])
def test_auto_warmup_is_short_only_for_wide_shapes_on_paths_under_full_data_tests(
        test, proposal, shaped, n_params, schedule, expected):
    acceptance, moves = resolve_acceptance(test), resolve_proposal(proposal)
    assert choose_warmup("auto", acceptance, moves, shaped, n_params, schedule) == expected
    assert choose_warmup(123, acceptance, moves, shaped, n_params, schedule) == 123


@pytest.mark.filterwarnings("ignore:.*may not have converged")
def test_a_wide_exact_fit_warms_up_for_the_short_rule_and_counts_it():
    """A sparse design of 600 rows and 520 columns (521 parameters) takes the exact test,
    Hamiltonian paths and the short warm-up (whole: the draws are fixed), kept in
    ``n_warmup_`` and counted in ``n_iter_``; a given ``n_warmup`` is kept."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = sp.random_array((600, 520), density=0.02, random_state=rng, format="csr")
    y = (rng.random(600) < 0.5).astype(int)
    clf = MinibatchMHLogisticRegression(n_draws=10, n_chains=2, random_state=0).fit(X, y)
    assert clf.acceptance_.name == "metropolis" and clf.proposal_.name == "hmc"
    np.testing.assert_array_equal(clf.n_warmup_, [AUTO_SHORT_WARMUP] * 2)
    np.testing.assert_array_equal(clf.n_iter_, AUTO_SHORT_WARMUP + 10 * clf.thin_)
    clf.set_params(n_warmup=40).fit(X, y)
    np.testing.assert_array_equal(clf.n_warmup_, [40, 40])
    np.testing.assert_array_equal(clf.n_iter_, 40 + 10 * clf.thin_)


@pytest.mark.filterwarnings("ignore:.*may not have converged")
def test_a_small_fit_keeps_the_long_warm_up():
    X, y = make_classification(n_samples=200, n_features=3, n_informative=3,
                               n_redundant=0, random_state=0)
    clf = MinibatchMHLogisticRegression(n_draws=10, n_chains=2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.n_warmup_, [AUTO_WARMUP] * 2)

"""A fitted estimator round-trips through pickle and through skops (trusting exactly
``SKOPS_TRUSTED_TYPES``) with identical predictions."""
import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, load_iris

from skbayes_mh import (ConsensusMonteCarlo, FireflySoftmaxClassifier,
                        MinibatchMHLogisticRegression, MinibatchMHPoissonRegression,
                        RobustTRegression)
from skbayes_mh.linear_model import ESTIMATORS
from skbayes_mh.persistence import SKOPS_TRUSTED_TYPES

from _models import target_kind

#: Short seeded chains: a round trip needs a fitted estimator of every kind, not a converged
#: one.
SHORT_SEEDED = dict(n_draws=50, n_warmup=50, n_chains=2, random_state=0)


def fitted():
    X, y = load_iris(return_X_y=True)
    X_reg, y_reg = load_diabetes(return_X_y=True)
    binary = y > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: convergence warnings
        yield "softmax-firefly", FireflySoftmaxClassifier(acceptance="firefly", **SHORT_SEEDED).fit(
            X, y), X
        yield "logistic-minibatch", MinibatchMHLogisticRegression(
            acceptance="minibatch", **SHORT_SEEDED).fit(X, binary), X
        yield "robust-firefly", RobustTRegression(acceptance="firefly", **SHORT_SEEDED).fit(
            X_reg, y_reg), X_reg
        yield "poisson", MinibatchMHPoissonRegression(**SHORT_SEEDED).fit(
            X_reg, np.round(np.abs(y_reg) / 50)), X_reg
        yield "consensus", ConsensusMonteCarlo(RobustTRegression(**SHORT_SEEDED), n_shards=2,
                                               random_state=0).fit(X_reg, y_reg), X_reg
        # Every other registered estimator, with its defaults.
        covered = (FireflySoftmaxClassifier, MinibatchMHLogisticRegression,
                   MinibatchMHPoissonRegression, RobustTRegression)
        targets = {"classification": (X, binary), "regression": (X_reg, y_reg),
                   "counts": (X_reg, np.round(np.abs(y_reg) / 50)),
                   "positive": (X_reg, np.exp(y_reg / np.abs(y_reg).max())),
                   "proportions": (X, np.column_stack([2 * binary, np.full(len(binary), 3)]))}
        for cls in ESTIMATORS.values():
            if cls not in covered:
                X_fit, y_fit = targets[target_kind(cls)]
                yield cls.__name__, cls(**SHORT_SEEDED).fit(X_fit, y_fit), X_fit


def predictions(estimator, X):
    method = "predict_proba" if hasattr(estimator, "predict_proba") else "predict"
    return getattr(estimator, method)(X)


@pytest.fixture(scope="module")
def fitted_estimators():
    """``(name, fitted estimator, X)`` of every case of :func:`fitted`, fitted once for the
    pickle and the skops tests."""
    return list(fitted())


def test_pickle_round_trip_keeps_predictions(fitted_estimators):
    for name, estimator, X in fitted_estimators:
        restored = pickle.loads(pickle.dumps(estimator))
        np.testing.assert_array_equal(predictions(restored, X), predictions(estimator, X),
                                      err_msg=name)


def test_skops_round_trip_trusts_exactly_the_listed_types_and_keeps_predictions(
        fitted_estimators):
    skops_io = pytest.importorskip("skops.io")  # an optional dependency: this case alone
    for name, estimator, X in fitted_estimators:
        data = skops_io.dumps(estimator)
        untrusted = set(skops_io.get_untrusted_types(data=data))
        assert untrusted <= set(SKOPS_TRUSTED_TYPES), (name, untrusted)
        loaded = skops_io.loads(data, trusted=SKOPS_TRUSTED_TYPES)
        np.testing.assert_array_equal(predictions(loaded, X), predictions(estimator, X),
                                      err_msg=name)
        assert type(loaded) is type(estimator)
        np.testing.assert_array_equal(loaded.posterior_["coef"], estimator.posterior_["coef"])

"""Property-based tests (hypothesis) of the estimators' contract on arbitrary small inputs
and settings: a ValueError or TypeError that names the problem, or a finite posterior
(converged or warned); never a NaN, a numba error or a hang. Bounded in time: few, small
examples, no deadline per example (first calls load kernels)."""
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from skbayes_mh import (FireflySoftmaxClassifier, MinibatchMHLogisticRegression,  # noqa: E402
                        MinibatchMHPoissonRegression, RobustTRegression)

BOUNDED = settings(max_examples=40, deadline=None, derandomize=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

values = st.one_of(st.floats(-1e3, 1e3), st.sampled_from([0.0, 1e-300, 1e150, -1e120,
                                                           np.nan, np.inf]))


@st.composite
def problems(draw):
    n_rows = draw(st.integers(1, 40))
    n_features = draw(st.integers(1, 3))
    X = draw(hnp.arrays(np.float64, (n_rows, n_features),
                        elements=st.floats(-5, 5) if draw(st.booleans()) else values))
    return X, n_rows


settings_strategy = st.fixed_dictionaries({
    "acceptance": st.sampled_from(["metropolis", "barker", "minibatch", "austerity",
                                   "confidence"]),
    "n_draws": st.integers(1, 20), "n_warmup": st.integers(0, 25),
    "n_chains": st.integers(1, 2),
    "prior_scale": st.sampled_from([1e-3, 1.0, 1e6]),
    "temperature": st.sampled_from([1e-3, 1.0, 100.0]),
    "random_state": st.integers(0, 5)})


def check_contract(estimator, X, y):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            estimator.fit(X, y)
    except (ValueError, TypeError) as error:
        message = str(error)
        assert message and "numba" not in message.lower() and "Traceback" not in message
        hypothesis.event(f"refused: {type(error).__name__}: {message[:60]}")
        return
    hypothesis.event("fitted")
    for name, draws in estimator.posterior_.draws.items():
        assert np.all(np.isfinite(draws)), name
    rhat = max(float(np.nanmax(np.append(np.ravel(v), 1.0)))
               for v in estimator.diagnostics_.r_hat.values())
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    assert rhat <= 1.01 or warned, "not converged, and no warning"
    finite_X = np.nan_to_num(X, nan=0.0, posinf=0.0, neginf=0.0)
    finite_X = np.clip(finite_X, -1e3, 1e3)
    output = (estimator.predict_proba(finite_X) if hasattr(estimator, "predict_proba")
              else estimator.predict(finite_X))
    assert np.all(np.isfinite(output))


@BOUNDED
@given(problems(), settings_strategy, st.data())
def test_logistic_contract(problem, params, data):
    X, n_rows = problem
    y = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n_rows, max_size=n_rows)))
    check_contract(MinibatchMHLogisticRegression(**params), X, y)


@BOUNDED
@given(problems(), settings_strategy, st.data())
def test_softmax_contract(problem, params, data):
    X, n_rows = problem
    y = np.array(data.draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n_rows,
                                    max_size=n_rows)))
    params = {**params, "acceptance": data.draw(st.sampled_from(["firefly", "metropolis"]))}
    check_contract(FireflySoftmaxClassifier(**params), X, y)


@BOUNDED
@given(problems(), settings_strategy, st.data())
def test_robust_contract(problem, params, data):
    X, n_rows = problem
    y = np.array(data.draw(st.lists(st.floats(-100, 100) if data.draw(st.booleans())
                                    else values, min_size=n_rows, max_size=n_rows)))
    params = {**params, "acceptance": data.draw(st.sampled_from(["firefly", "metropolis",
                                                                 "minibatch"]))}
    check_contract(RobustTRegression(**params), X, y)


@BOUNDED
@given(problems(), settings_strategy, st.data())
def test_poisson_contract(problem, params, data):
    X, n_rows = problem
    y = np.array(data.draw(st.lists(st.integers(0, 50), min_size=n_rows, max_size=n_rows)),
                 dtype=float)
    params = {**params, "acceptance": data.draw(st.sampled_from(["metropolis", "minibatch"]))}
    check_contract(MinibatchMHPoissonRegression(**params), X, y)

"""Property-based tests (hypothesis) of the estimators' contract on arbitrary small inputs
and settings: a ValueError or TypeError that names the problem, or a finite posterior
(converged or warned); never a NaN, a numba error or a hang. Input that is valid (finite
values of moderate size, the classes or rows a model needs, a correct call) must fit: a
refusal there fails. Bounded in time: few, small examples, no deadline per example (first
calls load kernels)."""
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


#: The largest |value| of X (and of a regression's y) that valid input has here; the drawn
#: values beyond (1e120, 1e150, inf, NaN) may be refused.
MODERATE = 1e3


def moderate(values):
    """Whether every value is finite and at most :data:`MODERATE` in size."""
    values = np.asarray(values, dtype=float)
    return bool(np.all(np.isfinite(values)) and np.all(np.abs(values) <= MODERATE))


def check_contract(estimator, X, y, valid):
    """Fit: a refusal must name its problem, and valid input (``valid``) must not be
    refused; a fit must give finite draws and predictions, converged or warned."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            estimator.fit(X, y)
    except (ValueError, TypeError) as error:
        message = str(error)
        assert message and "numba" not in message.lower() and "Traceback" not in message
        assert not valid, f"valid input refused: {type(error).__name__}: {message}"
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
    valid = moderate(X) and len(np.unique(y)) == 2
    check_contract(MinibatchMHLogisticRegression(**params), X, y, valid)


@BOUNDED
@given(problems(), settings_strategy, st.data())
def test_softmax_contract(problem, params, data):
    X, n_rows = problem
    y = np.array(data.draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n_rows,
                                    max_size=n_rows)))
    params = {**params, "acceptance": data.draw(st.sampled_from(["firefly", "metropolis"]))}
    valid = moderate(X) and len(np.unique(y)) >= 2
    check_contract(FireflySoftmaxClassifier(**params), X, y, valid)


@BOUNDED
@given(problems(), settings_strategy, st.data())
def test_robust_contract(problem, params, data):
    X, n_rows = problem
    y = np.array(data.draw(st.lists(st.floats(-100, 100) if data.draw(st.booleans())
                                    else values, min_size=n_rows, max_size=n_rows)))
    params = {**params, "acceptance": data.draw(st.sampled_from(["firefly", "metropolis",
                                                                 "minibatch"]))}
    # Valid: distinct values of y (many equal ones make the Student-t posterior with a free
    # scale improper, which fit refuses), more rows than coefficients (fit's stated rule),
    # and no line through them all.
    valid = (moderate(X) and moderate(y) and len(np.unique(y)) == len(y)
             and len(y) > X.shape[1] + 1 and not fitted_exactly(X, y))
    check_contract(RobustTRegression(**params), X, y, valid)


def fitted_exactly(X, y):
    """Whether a linear function (with an intercept) of X fits y to rounding: the noise
    scale's posterior is improper there, and RobustTRegression refuses such data."""
    if not (moderate(X) and moderate(y)):
        return True
    design = np.column_stack([X, np.ones(len(X))])
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    residual = y - design @ coef
    return bool(np.sqrt(np.mean(residual**2)) <= 1e-6 * (1.0 + np.std(y)))


@BOUNDED
@given(problems(), settings_strategy, st.data())
def test_poisson_contract(problem, params, data):
    X, n_rows = problem
    y = np.array(data.draw(st.lists(st.integers(0, 50), min_size=n_rows, max_size=n_rows)),
                 dtype=float)
    params = {**params, "acceptance": data.draw(st.sampled_from(["metropolis", "minibatch"]))}
    check_contract(MinibatchMHPoissonRegression(**params), X, y, moderate(X))


# sample() and acceptance_probability(): arbitrary user functions, starting points, step
# sizes, tests, proposals and counts. The contract is the same: a ValueError or TypeError
# naming the problem, or finite draws of the promised shape (a probability in [0, 1]).

from skbayes_mh import acceptance_probability, sample  # noqa: E402

from _models import (gaussian_mean_loglik, integer_loglik, linear_gaussian_gradient,  # noqa: E402
                     linear_gaussian_hessian, linear_gaussian_loglik, nan_beyond_one_loglik,
                     positive_log_prior, standard_normal_log_prior, zero_beyond_one_loglik)

#: (loglik, gradient, hessian, data columns): well-behaved and faulty user models.
USER_MODELS = [
    (gaussian_mean_loglik, None, None, 1),
    (linear_gaussian_loglik, linear_gaussian_gradient, linear_gaussian_hessian, 2),
    (nan_beyond_one_loglik, None, None, 1),
    (zero_beyond_one_loglik, None, None, 1),
    (integer_loglik, None, None, 1),
]

numbers_or_junk = st.one_of(st.floats(-3, 3), st.sampled_from([0.0, -1.0, 1e300, np.nan,
                                                              np.inf, -np.inf]))
junk = st.sampled_from([None, "0.1", [], [[0.1]], True, object()])


def check_refusal(error, valid):
    """A refusal names its problem, in words, and a valid call (``valid``) is not refused."""
    message = str(error)
    assert message and "numba" not in message.lower() and "Traceback" not in message
    assert "Failed in nopython mode" not in message
    assert not valid, f"valid call refused: {type(error).__name__}: {message}"
    hypothesis.event(f"refused: {type(error).__name__}: {message[:60]}")


#: The user models that are finite everywhere (the others return NaN, -inf or an integer).
WELL_BEHAVED = (gaussian_mean_loglik, linear_gaussian_loglik)


def valid_call(fault, loglik, kwargs):
    """Whether a drawn call is one ``sample`` must run: no fault, a well-behaved model, a
    start inside the prior's support, and what the proposal needs (a gradient for MALA,
    HMC and pCN, a Hessian too for pCN and for MALA or HMC with a subsampling test, whose
    proxies need it; an exact test for slice sampling)."""
    if fault is not None or loglik not in WELL_BEHAVED:
        return False
    if kwargs["log_prior"] is positive_log_prior:  # theta0 = 0 is outside its support
        return False
    exact = kwargs["acceptance"] in ("metropolis", "barker")
    gradient = kwargs.get("gradient") is not None
    hessian = kwargs.get("hessian") is not None
    proposal = kwargs["proposal"]
    if proposal == "slice":
        return exact
    if proposal == "pcn":
        return gradient and hessian
    if proposal in ("mala", "hmc"):
        return gradient and (exact or hessian)
    return True


#: What a drawn call gets wrong: nothing (half the calls), or one thing.
FAULTS = [None] * 8 + ["data 1-D", "data values", "theta0 values", "theta0 length",
                       "step_size", "acceptance", "proposal", "counts", "temperature",
                       "log_psi", "theta_prop"]


@st.composite
def user_calls(draw):
    """A user model, its data and starting point, and which argument is faulty."""
    fault = draw(st.sampled_from(FAULTS))
    loglik, gradient, hessian, n_columns = draw(st.sampled_from(USER_MODELS))
    n_rows = draw(st.integers(1, 60))
    data = draw(hnp.arrays(np.float64, (n_rows, n_columns),
                           elements=values if fault == "data values" else st.floats(-3, 3)))
    if fault == "data 1-D":
        data = data[:, 0]
    d = n_columns - 1 if n_columns > 1 else 1
    theta0 = np.zeros(d)
    if fault == "theta0 length":
        theta0 = np.zeros(draw(st.sampled_from([0, d + 1])))
    elif fault == "theta0 values":
        theta0 = draw(st.one_of(hnp.arrays(np.float64, d, elements=numbers_or_junk), junk))
    return fault, (loglik, gradient, hessian), data, theta0, d


def faulty(fault, name, good, bad):
    return bad if fault == name else good


@BOUNDED
@given(user_calls(), st.data())
def test_sample_contract(call, data):
    fault, (loglik, gradient, hessian), rows, theta0, d = call
    kwargs = dict(
        step_size=faulty(fault, "step_size", data.draw(st.floats(0.05, 1.0)), data.draw(
            st.one_of(numbers_or_junk, junk, hnp.arrays(np.float64, st.integers(0, 3),
                                                        elements=st.floats(1e-3, 1.0))))),
        log_prior=data.draw(st.sampled_from([None, standard_normal_log_prior,
                                             positive_log_prior])),
        acceptance=faulty(fault, "acceptance",
                          data.draw(st.sampled_from(["metropolis", "barker", "minibatch",
                                                     "austerity"])),
                          data.draw(st.sampled_from(["firefly", "no-such-test", 3]))),
        proposal=faulty(fault, "proposal",
                        data.draw(st.sampled_from(["random_walk", "mala", "hmc", "slice",
                                                   "pcn"])),
                        data.draw(st.sampled_from(["no-such-proposal", None]))),
        n_draws=faulty(fault, "counts", data.draw(st.integers(1, 30)),
                       data.draw(st.sampled_from([0, -1, 2.5, True, 10**13]))),
        n_warmup=data.draw(st.integers(0, 30)),
        temperature=faulty(fault, "temperature", data.draw(st.sampled_from([1.0, 100.0,
                                                                            1e-3])),
                           data.draw(st.sampled_from([0.0, -1.0, 1e-200, np.inf, np.nan]))),
        random_state=data.draw(st.integers(0, 5)))
    if data.draw(st.booleans()):
        kwargs.update(gradient=gradient, hessian=hessian)
    try:
        result = sample(loglik, rows, theta0, **kwargs)
    except (ValueError, TypeError) as error:
        check_refusal(error, valid_call(fault, loglik, kwargs))
        return
    hypothesis.event("sampled")
    # A theta0 longer than the model reads is a longer parameter vector to sample() (the
    # model ignores the rest), not an error it can see: the draws have theta0's length.
    assert result.draws.shape == (kwargs["n_draws"], np.size(theta0))
    assert np.size(theta0) == d or fault == "theta0 length"
    assert np.all(np.isfinite(result.draws))
    assert np.all(result.n_data_read >= 0)


@BOUNDED
@given(user_calls(), st.data())
def test_acceptance_probability_contract(call, data):
    fault, (loglik, gradient, hessian), rows, theta, d = call
    # A faulty theta (junk such as None or a string) gets a proposal of the right length.
    moved = (theta if isinstance(theta, np.ndarray) and theta.dtype.kind == "f"
             else np.zeros(d)) + data.draw(st.floats(-0.5, 0.5))
    theta_prop = faulty(fault, "theta_prop", moved,
                        data.draw(st.one_of(hnp.arrays(np.float64, st.sampled_from([d, d + 1]),
                                                       elements=numbers_or_junk), junk)))
    kwargs = dict(
        acceptance=faulty(fault, "acceptance",
                          data.draw(st.sampled_from(["metropolis", "barker", "minibatch",
                                                     "austerity"])),
                          data.draw(st.sampled_from(["firefly", "no-such-test", 3]))),
        log_psi=faulty(fault, "log_psi", data.draw(st.floats(-5, 5)),
                       data.draw(st.sampled_from([np.nan, np.inf, "0", None]))),
        temperature=faulty(fault, "temperature", data.draw(st.sampled_from([1.0, 1e-3])),
                           data.draw(st.sampled_from([0.0, -1.0, 1e-200, np.inf]))),
        n_trials=faulty(fault, "counts", data.draw(st.integers(1, 50)),
                        data.draw(st.sampled_from([0, -1, 1.5, False]))),
        random_state=data.draw(st.integers(0, 5)))
    if data.draw(st.booleans()):
        kwargs.update(gradient=gradient, hessian=hessian)
    try:
        probability, reads = acceptance_probability(loglik, rows, theta, theta_prop, **kwargs)
    except (ValueError, TypeError) as error:
        check_refusal(error, fault is None and loglik in WELL_BEHAVED)
        return
    hypothesis.event("estimated")
    assert 0.0 <= probability <= 1.0
    assert np.isfinite(reads) and reads >= 0

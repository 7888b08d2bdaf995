"""Property-based tests (hypothesis) of the estimators' and ``sample()``'s contract on
arbitrary small inputs and settings. Every drawn call is either valid or carries faults the
strategy put in (or that its data have: one class, too few rows), each with the message
that must name it. A valid call must fit (a finite posterior, converged or warned, finite
predictions) or sample (finite draws of the promised shape): a refusal fails the test. A
faulty one must raise a ValueError or TypeError whose message matches a fault's (never a
numba error or a traceback). Bounded in time: few, small examples, no deadline per example
(first calls load kernels)."""
import re
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
#: ... twice as many for the user-function calls: fast, and half of them faulty.
BOUNDED_CALLS = settings(BOUNDED, max_examples=80)

#: Values of a valid X or y: moderate, zero or tiny.
moderate = st.one_of(st.floats(-1e3, 1e3), st.sampled_from([0.0, 1e-300]))
NON_FINITE = st.sampled_from([np.nan, np.inf, -np.inf])
#: Finite values whose column mean is beyond the 1e100 that fit accepts (40 rows at most).
TOO_LARGE = st.sampled_from([1e150, -1e120])


def assert_refused(call, problems):
    """``call()`` raises a ValueError or TypeError whose message matches one of the regular
    expressions ``problems`` (the faults the call carries), without numba's words."""
    with pytest.raises((ValueError, TypeError), match="|".join(problems)) as refusal:
        call()
    message = str(refusal.value)
    assert "numba" not in message.lower() and "Traceback" not in message
    assert "Failed in nopython mode" not in message
    hypothesis.event(f"refused: {type(refusal.value).__name__}: {message[:60]}")


def with_value_at(draw, array, values):
    """A copy of ``array`` with one of ``values`` at a drawn place."""
    array = np.array(array, dtype=np.float64)
    place = draw(st.integers(0, array.size - 1))
    array.flat[place] = draw(values)
    return array


@st.composite
def feature_matrices(draw):
    """``(X, problems)``: 1 to 40 rows of 1 to 3 features of moderate values, in half the
    draws with one non-finite or too large value, and the messages that fault must raise."""
    n_rows, n_features = draw(st.integers(1, 40)), draw(st.integers(1, 3))
    X = draw(hnp.arrays(np.float64, (n_rows, n_features), elements=moderate))
    fault = draw(st.sampled_from([None, None, "non-finite", "too large"]))
    if fault == "non-finite":
        return with_value_at(draw, X, NON_FINITE), [r"Input X contains NaN or infinity"]
    if fault == "too large":
        return with_value_at(draw, X, TOO_LARGE), [
            r"Feature \d+ of X has a (mean|sd) of \S+: values beyond 1e\+100"]
    return X, []


settings_strategy = st.fixed_dictionaries({
    "acceptance": st.sampled_from(["metropolis", "barker", "minibatch", "austerity",
                                   "confidence"]),
    "n_draws": st.integers(1, 20), "n_warmup": st.integers(0, 25),
    "n_chains": st.integers(1, 2),
    "prior_scale": st.sampled_from([1e-3, 1.0, 1e6]),
    "temperature": st.sampled_from([1e-3, 1.0, 100.0]),
    "random_state": st.integers(0, 5)})


def check_contract(estimator, X, y, problems):
    """Fit ``estimator``: refused naming one of ``problems`` when there are any; else a
    finite posterior, converged or warned, and finite predictions on ``X``."""
    if problems:
        assert_refused(lambda: estimator.fit(X, y), problems)
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, y)
    hypothesis.event("fitted")
    for name, draws in estimator.posterior_.draws.items():
        assert np.all(np.isfinite(draws)), name
    rhat = max(float(np.nanmax(np.append(np.ravel(v), 1.0)))
               for v in estimator.diagnostics_.r_hat.values())
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    assert rhat <= 1.01 or warned, "not converged, and no warning"
    output = (estimator.predict_proba(X) if hasattr(estimator, "predict_proba")
              else estimator.predict(X))
    assert np.all(np.isfinite(output))


def labels(draw, classes, n_rows):
    """``(y, problems)``: ``n_rows`` labels drawn from ``classes``, and the message a single
    class must raise."""
    y = np.array(draw(st.lists(st.sampled_from(classes), min_size=n_rows, max_size=n_rows)))
    return y, [] if np.unique(y).size > 1 else [r"needs samples of at least 2 classes"]


@BOUNDED
@given(feature_matrices(), settings_strategy, st.data())
def test_logistic_contract(problem, params, data):
    X, problems = problem
    y, one_class = labels(data.draw, [0, 1], X.shape[0])
    check_contract(MinibatchMHLogisticRegression(**params), X, y, problems + one_class)


@BOUNDED
@given(feature_matrices(), settings_strategy, st.data())
def test_softmax_contract(problem, params, data):
    X, problems = problem
    y, one_class = labels(data.draw, ["a", "b", "c"], X.shape[0])
    params = {**params, "acceptance": data.draw(st.sampled_from(["firefly", "metropolis"]))}
    check_contract(FireflySoftmaxClassifier(**params), X, y, problems + one_class)


@BOUNDED
@given(feature_matrices(), settings_strategy, st.data())
def test_robust_contract(problem, params, data):
    """Valid outcomes are more than the coefficients and spread (drawn values plus the
    square root of the row's index): a line through most rows at once would leave the
    noise scale's posterior improper."""
    X, problems = problem
    n_rows, n_features = X.shape
    y = np.array(data.draw(st.lists(st.floats(-100, 100), min_size=n_rows, max_size=n_rows))
                 ) + np.sqrt(np.arange(n_rows))
    if n_rows <= n_features + 1:
        problems = problems + [r"needs more samples than coefficients"]
    fault = data.draw(st.sampled_from([None] * 3 + ["non-finite", "too large", "linear"]))
    if fault == "non-finite":
        y = with_value_at(data.draw, y, NON_FINITE)
        problems = problems + [r"Input y contains (NaN|infinity)"]
    elif fault == "too large":
        y = with_value_at(data.draw, y, TOO_LARGE)
        problems = problems + [r"y has a (mean|sd) of \S+: values beyond 1e\+100"]
    elif fault == "linear":
        coef = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=n_features,
                                           max_size=n_features)), dtype=float)
        y = X @ coef + data.draw(st.integers(-3, 3))
        problems = problems + [r"y is a linear function of X",
                               # where X's fault made y non-finite or too large
                               r"Input y contains (NaN|infinity)", r"y has a (mean|sd) of"]
    params = {**params, "acceptance": data.draw(st.sampled_from(["firefly", "metropolis",
                                                                 "minibatch"]))}
    check_contract(RobustTRegression(**params), X, y, problems)


@BOUNDED
@given(feature_matrices(), settings_strategy, st.data())
def test_poisson_contract(problem, params, data):
    X, problems = problem
    n_rows = X.shape[0]
    y = np.array(data.draw(st.lists(st.integers(0, 50), min_size=n_rows, max_size=n_rows)),
                 dtype=float)
    fault = data.draw(st.sampled_from([None, None, "negative", "non-finite"]))
    if fault == "negative":
        y = with_value_at(data.draw, y, st.sampled_from([-1.0, -0.5]))
        problems = problems + [r"needs non-negative counts y"]
    elif fault == "non-finite":
        y = with_value_at(data.draw, y, NON_FINITE)
        problems = problems + [r"Input y contains (NaN|infinity)"]
    params = {**params, "acceptance": data.draw(st.sampled_from(["metropolis", "minibatch"]))}
    check_contract(MinibatchMHPoissonRegression(**params), X, y, problems)


# sample() and acceptance_probability(): arbitrary user functions, starting points, step
# sizes, tests, proposals and counts. The contract is the same: a valid call returns finite
# draws of the promised shape (a probability in [0, 1]); a faulty one raises naming a fault.

from skbayes_mh import acceptance_probability, sample  # noqa: E402

from _models import (gaussian_mean_loglik, integer_loglik, linear_gaussian_gradient,  # noqa: E402
                     linear_gaussian_hessian, linear_gaussian_loglik, nan_beyond_one_loglik,
                     positive_log_prior, standard_normal_log_prior, zero_beyond_one_loglik)

#: (loglik, gradient, hessian, data columns): well-behaved and faulty user models. Faulty:
#: ``integer_loglik`` returns an int; ``nan_beyond_one_loglik`` returns NaN beyond
#: theta_0 = 1 (a fault once evaluated there). ``zero_beyond_one_loglik``'s -inf there is a
#: zero likelihood, valid.
USER_MODELS = [
    (gaussian_mean_loglik, None, None, 1),
    (linear_gaussian_loglik, linear_gaussian_gradient, linear_gaussian_hessian, 2),
    (nan_beyond_one_loglik, None, None, 1),
    (zero_beyond_one_loglik, None, None, 1),
    (integer_loglik, None, None, 1),
]
INTEGER_RETURNED = r"loglik must return a float64"
NAN_RETURNED = r"loglik returned NaN or \+inf"

#: What a drawn call gets wrong: nothing (half the calls), or one thing.
FAULTS = [None] * 8 + ["data 1-D", "data values", "theta0 values", "theta0 junk",
                       "theta0 far", "step_size", "acceptance", "proposal", "counts",
                       "temperature", "log_psi", "theta_prop"]
#: Arrays of the wrong type, size or shape, by name: the value and the message it must
#: raise (``{}``: the argument's name).
JUNK = {"None": (None, r"{} must be an array of real numbers"),
        "object": (object(), r"{} must be an array of real numbers"),
        "empty": ([], r"{} is empty"), "2-D": ([[0.1]], r"{} must be a 1-D array")}
#: Faulty settings shared by sample() and acceptance_probability(), with their messages.
BAD_ACCEPTANCE = {"firefly": r"acceptance='firefly' needs a model with a collapsible lower "
                             r"bound",
                  "no-such-test": r"Unknown acceptance 'no-such-test'",
                  3: r"parameter 'acceptance' must be a name"}
BAD_TEMPERATURE = r"temperature must be finite and >= 1e-100"


@st.composite
def user_calls(draw, name):
    """A user model, its data and starting point ``name`` (``theta0`` or ``theta``), the
    fault drawn, and the messages the faults so far must raise: the data's, the starting
    point's and the model's own (an int returned; in ``sample()`` a start with no
    likelihood or prior)."""
    fault = draw(st.sampled_from(FAULTS))
    loglik, gradient, hessian, n_columns = draw(st.sampled_from(USER_MODELS))
    n_rows = draw(st.integers(1, 60))
    data = draw(hnp.arrays(np.float64, (n_rows, n_columns), elements=st.floats(-3, 3)))
    problems = [INTEGER_RETURNED] if loglik is integer_loglik else []
    if fault == "data 1-D":
        data = data[:, 0]
        problems.append(r"data must be a 2-D array")
    elif fault == "data values":
        data = with_value_at(draw, data, NON_FINITE)
        problems.append(r"data contains NaN or infinity")
    d = n_columns - 1 if n_columns > 1 else 1
    theta = draw(hnp.arrays(np.float64, d, elements=st.floats(-0.9, 0.9)))
    if fault == "theta0 values":
        theta = with_value_at(draw, theta, NON_FINITE)
        problems.append(rf"{name} contains NaN or infinity")
    elif fault == "theta0 junk":
        theta, message = JUNK[draw(st.sampled_from(sorted(JUNK)))]
        problems.append(message.format(name))
    return fault, (loglik, gradient, hessian), data, theta, d, problems


def faulty(fault, name, good, bad):
    return bad if fault == name else good


def sample_problems(loglik, log_prior, theta0, kwargs, fault):
    """The messages ``sample()``'s faults beyond the data and the start's array must raise:
    a start of zero likelihood or prior, a proposal (a valid one, under a valid test)
    without the derivatives it needs or an exact one under a subsampling test."""
    problems = []
    if fault == "theta0 far":
        problems.append(NAN_RETURNED if loglik is nan_beyond_one_loglik
                        else r"theta0 has zero likelihood")
    start = None if fault in ("theta0 values", "theta0 junk") else np.asarray(theta0)
    if start is not None and log_prior is not None and not np.isfinite(log_prior(start)):
        problems.append(r"theta0 must have a finite log_prior")
    if fault in ("proposal", "acceptance"):
        return problems
    proposal, acceptance = kwargs["proposal"], kwargs["acceptance"]
    if proposal in ("mala", "hmc") and kwargs.get("gradient") is None:
        problems.append(rf"proposal='{proposal}' needs the gradient")
    if proposal == "pcn" and (kwargs.get("gradient") is None or kwargs.get("hessian") is None):
        problems.append(r"proposal='pcn' moves around the Laplace approximation")
    if proposal == "slice" and acceptance in ("minibatch", "austerity"):
        problems.append(r"proposal='slice' evaluates the posterior exactly")
    return problems


#: Step sizes that are not a positive number or an array of one per coordinate (d = 1).
BAD_STEP_SIZES = [0.0, -1.0, np.nan, np.inf, -np.inf, None, "0.1", [], [[0.1]],
                  np.array([0.1, 0.2]), object()]
#: n_draws (and n_trials) that are not a positive integer. (10**13 is left out: sample()
#: does not refuse draws beyond the machine's memory, it runs and fills it.)
BAD_COUNTS = {0: r"must be finite and >= 1", -1: r"must be finite and >= 1",
              2.5: r"must be an integer", True: r"must be an integer"}


@BOUNDED_CALLS
@given(user_calls("theta0"), st.data())
def test_sample_contract(call, data):
    fault, (loglik, gradient, hessian), rows, theta0, d, problems = call
    if fault == "theta0 far":
        theta0 = np.full(d, 1e300)
    bad_count = data.draw(st.sampled_from(sorted(BAD_COUNTS, key=str)))
    kwargs = dict(
        step_size=faulty(fault, "step_size", data.draw(st.floats(0.05, 1.0)),
                         data.draw(st.sampled_from(BAD_STEP_SIZES))),
        log_prior=data.draw(st.sampled_from([None, standard_normal_log_prior,
                                             positive_log_prior])),
        acceptance=faulty(fault, "acceptance",
                          data.draw(st.sampled_from(["metropolis", "barker", "minibatch",
                                                     "austerity"])),
                          data.draw(st.sampled_from(sorted(BAD_ACCEPTANCE, key=str)))),
        proposal=faulty(fault, "proposal",
                        data.draw(st.sampled_from(["random_walk", "mala", "hmc", "slice",
                                                   "pcn"])),
                        data.draw(st.sampled_from(["no-such-proposal", None]))),
        n_draws=faulty(fault, "counts", data.draw(st.integers(1, 30)), bad_count),
        n_warmup=data.draw(st.integers(0, 30)),
        temperature=faulty(fault, "temperature", data.draw(st.sampled_from([1.0, 100.0,
                                                                            1e-3])),
                           data.draw(st.sampled_from([0.0, -1.0, 1e-200, np.inf, np.nan]))),
        random_state=data.draw(st.integers(0, 5)))
    if data.draw(st.booleans()):
        kwargs.update(gradient=gradient, hessian=hessian)
    if fault == "step_size":
        problems = problems + [r"step_size must be"]
    elif fault == "acceptance":
        problems = problems + [BAD_ACCEPTANCE[kwargs["acceptance"]]]
    elif fault == "proposal":
        problems = problems + [r"Unknown proposal 'no-such-proposal'" if kwargs["proposal"]
                               else r"parameter 'proposal' must be a name"]
    elif fault == "counts":
        problems = problems + [r"n_draws " + BAD_COUNTS[bad_count]]
    elif fault == "temperature":
        problems = problems + [BAD_TEMPERATURE]
    problems = problems + sample_problems(loglik, kwargs["log_prior"], theta0, kwargs, fault)
    call = lambda: sample(loglik, rows, theta0, **kwargs)  # noqa: E731
    if problems:
        assert_refused(call, problems)
        return
    try:
        result = call()
    except ValueError as error:  # the model's NaN beyond 1, where a proposal went
        if loglik is not nan_beyond_one_loglik or not re.search(NAN_RETURNED, str(error)):
            raise
        hypothesis.event("refused: the model returned NaN")
        return
    hypothesis.event("sampled")
    assert result.draws.shape == (kwargs["n_draws"], d)
    assert np.all(np.isfinite(result.draws))
    assert np.all(result.n_data_read >= 0)


@BOUNDED_CALLS
@given(user_calls("theta"), st.data())
def test_acceptance_probability_contract(call, data):
    fault, (loglik, gradient, hessian), rows, theta, d, problems = call
    if fault == "theta_prop":
        bad = data.draw(st.sampled_from(["non-finite", "length", *sorted(JUNK)]))
        if bad == "non-finite":
            theta_prop = data.draw(hnp.arrays(np.float64, d, elements=NON_FINITE))
            problems = problems + [r"theta_prop contains NaN or infinity"]
        elif bad == "length":
            theta_prop = np.zeros(d + 1)
            problems = problems + [r"theta and theta_prop differ in shape"]
        else:
            theta_prop, message = JUNK[bad]
            problems = problems + [message.format("theta_prop")]
    elif fault in ("theta0 values", "theta0 junk"):  # a proposal of its own, valid
        theta_prop = np.zeros(d)
    else:
        theta_prop = theta + data.draw(st.floats(-0.5, 0.5))
    bad_count = data.draw(st.sampled_from(sorted(BAD_COUNTS, key=str)))
    kwargs = dict(
        acceptance=faulty(fault, "acceptance",
                          data.draw(st.sampled_from(["metropolis", "barker", "minibatch",
                                                     "austerity"])),
                          data.draw(st.sampled_from(sorted(BAD_ACCEPTANCE, key=str)))),
        log_psi=faulty(fault, "log_psi", data.draw(st.floats(-5, 5)),
                       data.draw(st.sampled_from([np.nan, np.inf, "0", None]))),
        temperature=faulty(fault, "temperature", data.draw(st.sampled_from([1.0, 1e-3])),
                           data.draw(st.sampled_from([0.0, -1.0, 1e-200, np.inf]))),
        n_trials=faulty(fault, "counts", data.draw(st.integers(1, 50)), bad_count),
        random_state=data.draw(st.integers(0, 5)))
    if data.draw(st.booleans()):
        kwargs.update(gradient=gradient, hessian=hessian)
    if fault == "acceptance":
        problems = problems + [BAD_ACCEPTANCE[kwargs["acceptance"]]]
    elif fault == "log_psi":
        problems = problems + [r"log_psi must be a real number or -inf"]
    elif fault == "temperature":
        problems = problems + [BAD_TEMPERATURE]
    elif fault == "counts":
        problems = problems + [r"n_trials " + BAD_COUNTS[bad_count]]
    points = [p for p in (theta, theta_prop) if isinstance(p, np.ndarray)]
    if loglik is nan_beyond_one_loglik and any(np.any(p[:1] > 1.0) for p in points):
        problems = problems + [NAN_RETURNED]
    # sample()'s faults of its own: no step size, proposal or start to judge here.
    call = lambda: acceptance_probability(loglik, rows, theta, theta_prop,  # noqa: E731
                                          **kwargs)
    if problems:
        assert_refused(call, problems)
        return
    probability, reads = call()
    hypothesis.event("estimated")
    assert 0.0 <= probability <= 1.0
    assert np.isfinite(reads) and reads >= 0

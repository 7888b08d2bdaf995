"""OrdinalRegression: the cumulative link against a direct evaluation and finite
differences (both links, every class, far tails), the NumPy side against the link,
agreement with a long exact chain of an independently written model (the default exact
test and the minibatch test), with statsmodels' ``OrderedModel`` on tall data (logit) and
on small data (probit), a scikit-learn workflow, and its refusals (the simulation-based
calibration of its default fit is in ``tests/sampling/test_default_calibration.py``)."""
import math
import warnings

import numba
import numpy as np
import pytest
from scipy.special import expit, log_expit, log_ndtr
from sklearn.exceptions import ConvergenceWarning

from skbayes_mh import OrdinalRegression
from skbayes_mh.models import CumulativeModel
from skbayes_mh.models.ordinal import LOGIT, PROBIT, cumulative_link

from _models import FAST, long_metropolis_chain, min_ess, stored_reference
from _stats import Z_LIMIT, assert_same_distribution

CUTS = (-1.0, 0.5, 2.0)


def ordered_classes(n, seed=0, weights=(1.0, -0.5), cuts=CUTS, link="logit"):
    """``X`` (n, len(weights)) and classes ``0 .. len(cuts)`` from a latent ``x . w`` plus
    logistic (or normal) noise cut at ``cuts``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(weights)))
    noise = rng.logistic(size=n) if link == "logit" else rng.normal(size=n)
    return X, np.digitize(X @ np.array(weights) + noise, cuts)


def direct_log_probability(u, k, kind):
    """``log(F(c_k - eta) - F(c_{k-1} - eta))`` from SciPy's ``log_expit`` or
    ``log_ndtr``, on the side without cancellation."""
    log_cdf = log_expit if kind == LOGIT else log_ndtr
    cuts = np.concatenate([[0.0], np.cumsum(np.exp(u[1:]))])
    a = cuts[k] - u[0] if k < len(cuts) else np.inf
    b = cuts[k - 1] - u[0] if k > 0 else -np.inf
    high, low = (log_cdf(-b), log_cdf(-a)) if b > 0 else (log_cdf(a), log_cdf(b))
    return float(high + np.log1p(-np.exp(low - high)))


@pytest.mark.parametrize("kind", [LOGIT, PROBIT])
@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_link_matches_a_direct_evaluation_and_finite_differences(kind, n_classes):
    rng = np.random.default_rng(int(kind) * 10 + n_classes)
    m = n_classes - 1
    params = np.array([kind])
    for k in range(n_classes):
        for _ in range(3):
            u = rng.normal(size=m) * 1.5
            d1, d2 = np.zeros(m), np.zeros((m, m))
            value = cumulative_link(u, float(k), params, 2, d1, d2)
            assert value == pytest.approx(direct_log_probability(u, k, kind), rel=1e-9)
            step = 1e-5
            gradient, hessian = np.zeros(m), np.zeros((m, m))
            for j in range(m):
                shift = np.zeros(m)
                shift[j] = step
                up, down = np.zeros(m), np.zeros(m)
                plus = cumulative_link(u + shift, float(k), params, 1, up, np.zeros((m, m)))
                minus = cumulative_link(u - shift, float(k), params, 1, down, np.zeros((m, m)))
                gradient[j] = (plus - minus) / (2 * step)
                hessian[:, j] = (up - down) / (2 * step)
            np.testing.assert_allclose(d1, gradient, atol=1e-6)
            np.testing.assert_allclose(d2, hessian, atol=1e-5)
            np.testing.assert_allclose(d2, d2.T, atol=1e-12)


@pytest.mark.parametrize("kind", [LOGIT, PROBIT])
def test_link_stays_finite_and_accurate_far_in_the_tails(kind):
    """At ``|eta|`` up to 60 every class's log-probability is finite (to -1,800 for the
    probit), its slope in ``eta`` that of the tail, and no derivative is NaN."""
    params = np.array([kind])
    d1, d2 = np.zeros(3), np.zeros((3, 3))
    for eta in (-60.0, -30.0, 30.0, 60.0):
        for k in range(4):
            u = np.array([eta, 0.0, 0.0])
            value = cumulative_link(u, float(k), params, 2, d1, d2)
            assert np.isfinite(value) and np.all(np.isfinite(d1)) and np.all(np.isfinite(d2))
            if kind == LOGIT and 0 < k < 3:  # log P ~ -|eta| + constant: slope -+1
                assert abs(d1[0]) == pytest.approx(1.0, abs=1e-9)
            if kind == PROBIT:
                assert value == pytest.approx(direct_log_probability(u, k, kind), rel=1e-6)


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_numpy_side_agrees_with_the_link(link):
    """Class probabilities sum to 1 and their logs are the NumPy log-likelihood and the
    kernel link's; cut-points round-trip through the sampled coordinates; simulated classes
    follow the probabilities."""
    model = CumulativeModel(4, link)
    rng = np.random.default_rng(1)
    theta = np.array([[0.7, -0.4, 0.3, 0.1, -0.2], [0.1, 0.2, -1.0, 0.5, 0.4]])
    variables = model.posterior_variables(theta, 2, True)
    np.testing.assert_allclose(model.theta_draws(variables, True), theta, rtol=1e-12)
    X = rng.normal(size=(30, 2)) * 3
    eta = (X @ variables["coef"].T).T[..., None]  # (2 draws, 30 rows, 1)
    probabilities = model.class_probabilities(eta, variables)
    np.testing.assert_allclose(probabilities.sum(axis=-1), 1.0, rtol=1e-12)
    y = rng.integers(0, 4, size=30)
    loglik = model.log_likelihood(eta, variables, y)
    np.testing.assert_allclose(loglik, np.log(probabilities[:, np.arange(30), y]), rtol=1e-9)
    params = model.params()
    for s in range(2):
        for i in range(30):
            u = np.append(X[i] @ theta[s, :2] + theta[s, 2], theta[s, 3:])
            value = cumulative_link(u, float(y[i]), params, 0, np.zeros(3), np.zeros((3, 3)))
            assert value == pytest.approx(loglik[s, i], rel=1e-9, abs=1e-12)
    first = {"cutpoints": variables["cutpoints"][:1]}
    simulated = model.simulate(np.zeros((1, 100_000, 1)), first, rng)[0]
    expected = model.class_probabilities(np.zeros((1, 1, 1)), first)[0, 0]
    observed = np.bincount(simulated, minlength=4) / simulated.size
    assert np.all(np.abs(observed - expected) < 4 * np.sqrt(expected / simulated.size))


@numba.njit
def reference_loglik(theta, data, i):
    """The cumulative logit model written out independently: ``data[i] = [x_1, x_2, y]``,
    theta ``[w_1, w_2, b, g_1, g_2]``, ``P(y <= k) = S(c_k - x . w - b)`` with cut-points
    ``c = 0, e^g_1, e^g_1 + e^g_2``."""
    eta = theta[0] * data[i, 0] + theta[1] * data[i, 1] + theta[2]
    cuts = np.array([0.0, math.exp(theta[3]), math.exp(theta[3]) + math.exp(theta[4])])
    k = int(data[i, 2])
    upper = 1.0 if k == 3 else 1.0 / (1.0 + math.exp(-(cuts[k] - eta)))
    lower = 0.0 if k == 0 else 1.0 / (1.0 + math.exp(-(cuts[k - 1] - eta)))
    return math.log(upper - lower)


@numba.njit
def reference_log_prior(theta):
    """``w ~ N(0, 1)``, ``b ~ N(0, 10^2)``, log-gaps ``~ N(0, 2^2)``: the estimator's prior
    with ``autoscale=False``."""
    return (-0.5 * (theta[0] ** 2 + theta[1] ** 2) - 0.5 * (theta[2] / 10.0) ** 2
            - 0.5 * (theta[3] ** 2 + theta[4] ** 2) / 4.0)


def independent_data():
    """The data of the independently written model's long reference."""
    X, y = ordered_classes(300, seed=2)
    return X, y


def independent_chain(n_draws):
    """The data and every tenth of ``n_draws`` steps of a random-walk Metropolis chain of
    the independently written model (``benchmarks/paper/family_references.py`` stores
    its summary)."""
    X, y = independent_data()
    start = np.array([1.0, -0.5, 1.0, math.log(1.5), math.log(1.5)])
    chain = long_metropolis_chain(reference_loglik, reference_log_prior,
                                  np.column_stack([X, y]).astype(float), start,
                                  step_size=0.08, n_draws=n_draws)
    return X, y, chain


@pytest.fixture(scope="module")
def long_exact_chain_of_independent_model():
    """The data (300 rows) and the stored summary of a long random-walk Metropolis chain of
    the independently written model (its ``b`` is the negative first cut-point: the
    reported cut-points less it)."""
    X, y = independent_data()
    return X, y, stored_reference("ordinal", X, y)


@pytest.mark.slow
@pytest.mark.parametrize("acceptance", ["auto", "minibatch"])
def test_fits_agree_with_a_long_exact_chain_of_an_independent_model(
        long_exact_chain_of_independent_model, acceptance):
    """Means within Monte Carlo error of both sides, sds within the error of an sd
    estimate (````), in the sampled coordinates."""
    X, y, reference = long_exact_chain_of_independent_model
    clf = OrdinalRegression(acceptance=acceptance, autoscale=False, n_draws=4000,
                            n_chains=2, random_state=3).fit(X, y)
    assert_same_distribution(clf._theta_draws(), reference, label=acceptance)


def statsmodels_ordered_fit(X, y, link):
    """statsmodels' ``OrderedModel`` maximum-likelihood fit: the weights, cut-points and
    their standard errors."""
    ordinal = pytest.importorskip("statsmodels.miscmodels.ordinal_model",
                                  reason="statsmodels is a test dependency")
    fit = ordinal.OrderedModel(y, X, distr=link).fit(method="bfgs", disp=False, maxiter=5000)
    d = X.shape[1]
    cuts = fit.model.transform_threshold_params(fit.params)[1:-1]
    return fit.params[:d], cuts, fit.bse[:d]


@pytest.mark.slow
@pytest.mark.parametrize("n_rows, link, test", [(100_000, "logit", "minibatch"),
                                                 (5_000, "probit", "metropolis")])
def test_default_fit_centres_on_the_maximum_likelihood_fit(n_rows, link, test):
    """The posterior means of the weights and cut-points are statsmodels' estimates within
    Monte Carlo error (the prior's pull and the mean's distance from the mode are O(1/N),
    far below it: 0.03 of the tolerance at 5,000 rows), and the weights' sds its standard
    errors within the error of an sd estimate: on tall data (the minibatch test with
    control variates) and with the probit link (the exact test)."""
    X, y = ordered_classes(n_rows, seed=4, weights=(1.0, -0.5, 0.2), link=link)
    clf = OrdinalRegression(link=link, random_state=0).fit(X, y)
    assert clf.acceptance_.name == test
    coef, cuts, se = statsmodels_ordered_fit(X, y, link)
    draws = np.column_stack([clf.posterior_.get("coef", flat=True),
                             clf.posterior_.get("cutpoints", flat=True)])
    ess = min_ess(clf)
    z = (draws.mean(axis=0) - np.append(coef, cuts)) / (draws.std(axis=0) / np.sqrt(ess))
    assert np.all(np.abs(z) < Z_LIMIT), z
    ratio = draws[:, :3].std(axis=0) / se
    assert np.all(np.abs(ratio - 1) < Z_LIMIT * np.sqrt(0.5 / ess)), ratio


def test_predictions_are_posterior_predictive_class_probabilities():
    X, y = ordered_classes(500, seed=5)
    clf = OrdinalRegression(random_state=0, **FAST).fit(X, y)
    coef = clf.posterior_.get("coef", flat=True)
    cuts = clf.posterior_.get("cutpoints", flat=True)
    cumulative = expit(cuts[:, None, :] - (X[:6] @ coef.T).T[..., None])
    ones = np.ones(cumulative.shape[:-1] + (1,))
    expected = np.diff(np.concatenate([0 * ones, cumulative, ones], axis=-1),
                       axis=-1).mean(axis=0)
    np.testing.assert_allclose(clf.predict_proba(X[:6]), expected, atol=1e-4)
    np.testing.assert_array_equal(clf.predict(X[:6]), clf.classes_[expected.argmax(axis=1)])
    np.testing.assert_allclose(clf.cutpoints_, cuts.mean(axis=0))
    assert clf.intercept_ == pytest.approx([0.0])
    summary = clf.summary(as_frame=False)
    assert "cutpoints[0|1]" in str(summary) and "intercept" not in str(summary)


def test_a_pipeline_with_one_hot_encoding_in_a_grid_search():
    """Defaults in a scikit-learn workflow: a categorical column one-hot encoded beside a
    numeric one, through ``GridSearchCV``, converged, with the accuracy of scikit-learn's
    multinomial ``LogisticRegression`` in the same pipeline (within 0.02: the data are
    ordinal, which that model does not know, with more parameters)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    rng = np.random.default_rng(6)
    n = 1500
    group = rng.integers(0, 3, size=n)
    x = rng.normal(size=n)
    latent = 1.5 * x + np.array([-1.0, 0.0, 1.0])[group] + rng.logistic(size=n)
    y = np.digitize(latent, CUTS)
    X = np.column_stack([x, group]).astype(object)
    encode = ColumnTransformer([("num", StandardScaler(), [0]),
                                ("cat", OneHotEncoder(), [1])])
    pipeline = make_pipeline(encode, OrdinalRegression(random_state=0, n_chains=2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # the defaults converge
        search = GridSearchCV(pipeline, {"ordinalregression__prior_scale": [0.1, 1.0]},
                              cv=2).fit(X, y)
    reference = cross_val_score(make_pipeline(encode, LogisticRegression()), X, y, cv=2)
    assert search.best_score_ > reference.mean() - 0.02


def test_labels_that_cannot_be_ordered_and_firefly_are_refused():
    X, y = ordered_classes(100)
    mixed = y.astype(object)
    mixed[3] = "high"
    with pytest.raises(TypeError, match=r"mixes labels of types \['int', 'str'\]"):
        OrdinalRegression(**FAST).fit(X, mixed)
    with pytest.raises(ValueError, match="no global quadratic lower bound|firefly|Firefly"):
        OrdinalRegression(acceptance="firefly", **FAST).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        OrdinalRegression(**FAST).fit(X, np.zeros(100, dtype=int))


def test_categories_give_the_order_of_string_levels():
    """Levels named by strings ordered by ``categories``, not alphabetically: the fit
    recovers the generating weights and cut-points (in 4 posterior sds), names the
    cut-points by the levels they separate and predicts levels; an alphabetical order
    (``"auto"``) puts ``"high"`` lowest; labels outside ``categories``, a repeated category
    and a single one are refused by name."""
    X, classes = ordered_classes(1000, seed=7, cuts=(-0.5, 1.0))
    levels = np.array(["low", "medium", "high"])
    y = levels[classes]
    clf = OrdinalRegression(categories=["low", "medium", "high"], random_state=0).fit(X, y)
    assert list(clf.classes_) == ["low", "medium", "high"]
    draws = np.column_stack([clf.posterior_.get("coef", flat=True),
                             clf.posterior_.get("cutpoints", flat=True)])
    z = (draws.mean(axis=0) - [1.0, -0.5, -0.5, 1.0]) / draws.std(axis=0)
    assert np.all(np.abs(z) < 4), z
    assert "cutpoints[low|medium]" in str(clf.summary(as_frame=False))
    assert set(clf.predict(X)) <= set(levels)
    assert list(OrdinalRegression(**FAST).fit(X, y).classes_) == ["high", "low", "medium"]
    with pytest.raises(ValueError, match=r"labels not among the categories: .*'medium'"):
        OrdinalRegression(categories=["low", "high"], **FAST).fit(X, y)
    with pytest.raises(ValueError, match="each class once"):
        OrdinalRegression(categories=["low", "low", "high"], **FAST).fit(X, y)
    with pytest.raises(ValueError, match="at least two classes"):
        OrdinalRegression(categories=["low"], **FAST).fit(X, y)


def test_an_ordered_categorical_y_gives_its_levels_order():
    """An ordered pandas ``Categorical`` ``y`` orders the classes as its categories do
    (its categories as ``categories=``: the same draws, a level the data lack included),
    in ``fit``, ``predict`` and ``score``; an unordered one sorts its labels, as plain
    strings do."""
    pd = pytest.importorskip("pandas")
    X, classes = ordered_classes(600, seed=7, cuts=(-0.5, 1.0))
    order = ["low", "medium", "high", "top"]  # "top" is never observed
    y = pd.Series(pd.Categorical(np.array(order)[classes], categories=order, ordered=True))
    by_dtype = OrdinalRegression(**FAST, random_state=0).fit(X, y)
    listed = OrdinalRegression(categories=order, **FAST, random_state=0).fit(X, y.to_numpy())
    assert list(by_dtype.classes_) == order
    np.testing.assert_array_equal(by_dtype.posterior_.get("cutpoints", flat=True),
                                  listed.posterior_.get("cutpoints", flat=True))
    np.testing.assert_array_equal(by_dtype.predict_proba(X), listed.predict_proba(X))
    assert by_dtype.score(X, y) == listed.score(X, y.to_numpy())
    unordered = pd.Categorical(np.array(order)[classes], categories=order)
    assert list(OrdinalRegression(**FAST).fit(X, unordered).classes_) == ["high", "low",
                                                                          "medium"]

"""Per-draw predictions, predictive quantiles, posterior-predictive draws, pointwise
log-likelihoods and the ArviZ export with its LOO."""
import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_breast_cancer, load_iris

from skbayes_mh import (BinomialRegression, FireflySoftmaxClassifier,
                        MinibatchMHLogisticRegression,
                        MinibatchMHPoissonRegression, RobustTRegression)
from skbayes_mh.models.poisson import poisson_mixture_quantiles
from skbayes_mh.models.student_t import student_t_mixture_quantiles

from _models import quiet_fit

#: Chains long enough that predictive intervals cover at their level and simulated labels
#: follow predict_proba (500 draws a row: the shapes ``(2, 250, ...)`` below), seeded.
CONVERGED_ENOUGH = dict(n_draws=250, n_warmup=250, n_chains=2, random_state=0)


def logistic_data(n, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ np.array([1.0, -1.0, 0.5])))).astype(int)
    return X, y


@pytest.mark.parametrize("n_draws", [1, 60, 3000])
def test_student_t_mixture_quantiles_solve_the_mixture_cdf(n_draws):
    rng = np.random.default_rng(n_draws)
    location = rng.normal(size=(n_draws, 5)) * 3 + rng.normal(size=(1, 5)) * 20
    scale = rng.uniform(0.5, 4.0, size=n_draws)
    q = np.array([0.01, 0.3, 0.5, 0.95])
    found = student_t_mixture_quantiles(location, scale, 3.5, q)
    cdf = stats.t.cdf((found[None, :, :] - location[:, :, None]) / scale[:, None, None],
                      3.5).mean(axis=0)
    np.testing.assert_allclose(cdf, np.broadcast_to(q, cdf.shape), atol=1e-7)
    if n_draws == 1:
        np.testing.assert_allclose(found, location[0][:, None] + scale[0]
                                   * stats.t.ppf(q, 3.5)[None, :], rtol=1e-9)


def test_a_student_t_mixture_quantile_does_not_depend_on_the_other_rows():
    """Each row's search stops on its own. (Rows solved together went on until the last
    converged, and a step at a root found to the last digit bisected the row half its
    bracket away: roots 1.6e-7 apart and 27 iterations where 3 do.)"""
    rng = np.random.default_rng(7)
    location = rng.normal(size=(4000, 40)) * rng.uniform(0.5, 30, size=40) + rng.normal(
        size=40) * 100
    scale = rng.uniform(20, 60, size=4000)
    q = np.array([0.05, 0.5, 0.95])
    together = student_t_mixture_quantiles(location, scale, 4.0, q)
    alone = np.concatenate([student_t_mixture_quantiles(location[:, [r]], scale, 4.0, q)
                            for r in range(40)])
    np.testing.assert_array_equal(together, alone)
    cdf = stats.t.cdf((together[None] - location[:, :, None]) / scale[:, None, None],
                      4.0).mean(axis=0)
    np.testing.assert_allclose(cdf, np.broadcast_to(q, cdf.shape), atol=1e-7)


def test_poisson_mixture_quantiles_are_the_smallest_counts_reaching_q():
    rng = np.random.default_rng(0)
    rate = np.exp(rng.normal(size=(400, 6)) * 0.3 + np.array([-3, -1, 0, 1, 3, 6]))
    q = np.array([0.05, 0.5, 0.95, 0.999])
    found = poisson_mixture_quantiles(rate, q)
    for row in range(rate.shape[1]):
        for j, level in enumerate(q):
            k = found[row, j]
            assert stats.poisson.cdf(k, rate[:, row]).mean() >= level
            assert k == 0 or stats.poisson.cdf(k - 1, rate[:, row]).mean() < level


def test_count_mixture_quantiles_widen_a_bracket_the_thinned_draws_miss():
    """The bracket starts from every 16th draw's quantiles (4,000 draws): here those draws
    have rate 1 in one row and 1,000 in the other, all others the reverse, so the whole
    mixture's quantiles lie far outside it; the answer is still the smallest count whose
    mixture CDF reaches q."""
    rate = np.full((4000, 2), 1000.0)
    rate[:, 1] = 1.0
    rate[::16, 0], rate[::16, 1] = 1.0, 1000.0
    q = np.array([0.05, 0.5, 0.95])
    found = poisson_mixture_quantiles(rate, q)
    for row in range(2):
        for j, level in enumerate(q):
            k = found[row, j]
            assert stats.poisson.cdf(k, rate[:, row]).mean() >= level
            assert k == 0 or stats.poisson.cdf(k - 1, rate[:, row]).mean() < level
    assert found[0, 1] > 900 and found[1, 1] < 5


@pytest.mark.slow
def test_robust_predictive_interval_covers_new_data_at_its_level():
    rng = np.random.default_rng(1)
    w = np.array([1.0, -2.0, 0.5])
    X = rng.normal(size=(2000, 3))
    y = X @ w + 0.3 + 0.5 * rng.standard_t(4, size=2000)
    reg = quiet_fit(RobustTRegression(**CONVERGED_ENOUGH), X[:500], y[:500])
    bounds = reg.predict_quantiles(X[500:], (0.05, 0.95))
    covered = np.mean((y[500:] >= bounds[:, 0]) & (y[500:] <= bounds[:, 1]))
    # 1,500 new rows: binomial sd 0.0077; 4 sd.
    assert abs(covered - 0.9) < 0.031, covered
    median = reg.predict_quantiles(X[500:510], 0.5)[:, 0]
    np.testing.assert_allclose(median, reg.predict(X[500:510]), atol=0.05)


@pytest.mark.slow
def test_poisson_predictive_interval_covers_new_counts():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2500, 2))
    y = rng.poisson(np.exp(X @ np.array([0.4, -0.3]) + 1.0)).astype(float)
    reg = quiet_fit(MinibatchMHPoissonRegression(**CONVERGED_ENOUGH), X[:500], y[:500])
    bounds = reg.predict_quantiles(X[500:], (0.05, 0.95))
    assert np.all(bounds == np.round(bounds))
    covered = np.mean((y[500:] >= bounds[:, 0]) & (y[500:] <= bounds[:, 1]))
    # Discrete: at least 90% (up to 4 binomial sds), and not far above.
    assert 0.9 - 0.027 < covered < 0.98, covered


@pytest.mark.parametrize("make", [
    lambda: (MinibatchMHLogisticRegression(**CONVERGED_ENOUGH),
             *load_breast_cancer(return_X_y=True)),
    lambda: (FireflySoftmaxClassifier(**CONVERGED_ENOUGH), *load_iris(return_X_y=True)),
], ids=["logistic", "softmax"])
def test_classifier_draws_average_to_predict_proba_and_simulate_their_frequencies(make):
    clf, X, y = make()
    quiet_fit(clf, X, y)
    draws = clf.predict_proba_draws(X[:20])
    assert draws.shape == (2, 250, 20, clf.classes_.size)
    np.testing.assert_allclose(draws.mean(axis=(0, 1)),
                               clf.set_params(predict_tol=None).predict_proba(X[:20]),
                               atol=1e-12)
    clf.set_params(predict_tol=1e-4)
    simulated = clf.sample_posterior_predictive(X[:20], random_state=0)
    assert simulated.shape == (2, 250, 20) and set(np.unique(simulated)) <= set(clf.classes_)
    np.testing.assert_array_equal(simulated,
                                  clf.sample_posterior_predictive(X[:20], random_state=0))
    frequency = np.stack([(simulated == c).mean(axis=(0, 1)) for c in clf.classes_], axis=1)
    # 500 simulated labels per row: binomial sd at most 0.0224; 5 sd.
    np.testing.assert_allclose(frequency, clf.predict_proba(X[:20]), atol=0.112)
    with pytest.raises(ValueError, match="labels not seen in fit"):
        clf.pointwise_log_likelihood(X[:2], np.array([clf.classes_[0], 99]))


def test_predictions_in_blocks_on_threads_equal_the_formulas_over_all_draws(monkeypatch):
    """Prediction averages over draws in blocks of rows, on every core, with the draws
    contiguous in memory, and its means over every draw in tiles of rows x draws: blocks of
    7 rows and tiles of 3 rows x 11 draws (here) must give each formula's value over all
    draws at once, for dense and sparse rows."""
    from scipy.sparse import csr_matrix
    from scipy.special import expit, softmax

    from skbayes_mh.linear_model import _predictive

    monkeypatch.setattr(_predictive, "PREDICT_BLOCK_BYTES", 8 * 500 * 3 * 7)  # 7 rows of softmax
    monkeypatch.setattr(_predictive, "EVERY_DRAW_BLOCK_ROWS", 7)
    monkeypatch.setattr(_predictive, "PREDICT_TILE_ROWS", 3)
    monkeypatch.setattr(_predictive, "PREDICT_TILE_BYTES", 8 * 3 * 3 * 11)  # 11 softmax draws
    X, y = load_iris(return_X_y=True)
    clf = quiet_fit(FireflySoftmaxClassifier(**CONVERGED_ENOUGH, predict_tol=None), X, y)
    coef, intercept = clf.posterior_.get("coef", flat=True), clf.posterior_.get(
        "intercept", flat=True)
    expected = softmax(np.einsum("skd,nd->snk", coef, X) + intercept[:, None, :],
                       axis=2).mean(axis=0)
    for rows in (X, csr_matrix(X)):
        np.testing.assert_allclose(clf.predict_proba(rows), expected, rtol=1e-12, atol=1e-15)

    Xb, yb = logistic_data(150)
    logistic = quiet_fit(MinibatchMHLogisticRegression(**CONVERGED_ENOUGH, predict_tol=None),
                         Xb, yb)
    p1 = expit(logistic.posterior_.get("coef", flat=True) @ Xb.T
               + logistic.posterior_.get("intercept", flat=True)[:, None]).mean(axis=0)
    np.testing.assert_allclose(logistic.predict_proba(Xb), np.c_[1 - p1, p1], rtol=1e-12)

    rng = np.random.default_rng(3)
    Xr = rng.normal(size=(100, 2))
    counts = rng.poisson(np.exp(0.5 * Xr[:, 0] + 1.0)).astype(float)
    poisson = quiet_fit(MinibatchMHPoissonRegression(**CONVERGED_ENOUGH, predict_tol=None),
                        Xr, counts)
    rate = np.exp(poisson.posterior_.get("coef", flat=True) @ Xr.T
                  + poisson.posterior_.get("intercept", flat=True)[:, None])
    mean, std = poisson.predict(Xr, return_std=True)
    np.testing.assert_allclose(mean, rate.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(poisson.predict(Xr), mean, rtol=1e-12)
    np.testing.assert_allclose(std, np.sqrt(rate.var(axis=0) + rate.mean(axis=0)), rtol=1e-12)

    yr = Xr @ np.array([1.0, 2.0]) + rng.standard_t(5, size=100)
    robust = quiet_fit(RobustTRegression(nu=5.0, **CONVERGED_ENOUGH), Xr, yr)
    location = (robust.posterior_.get("coef", flat=True) @ Xr.T
                + robust.posterior_.get("intercept", flat=True)[:, None])
    q = np.array([0.05, 0.5, 0.95])
    # Each row's search stops on its own: the same roots in blocks as all at once.
    np.testing.assert_allclose(
        robust.predict_quantiles(Xr, q),
        student_t_mixture_quantiles(location, robust.posterior_.get("scale", flat=True), 5.0, q),
        rtol=1e-12)
    # One output: 21 rows a block, so the 100 rows came in 5 blocks.
    assert [b.shape[0] for b in _predictive.row_blocks(Xr, 500, 1)] == [21, 21, 21, 21, 16]


def test_pointwise_log_likelihood_matches_scipy():
    X, y = load_iris(return_X_y=True)
    clf = quiet_fit(FireflySoftmaxClassifier(**CONVERGED_ENOUGH), X, y)
    ll = clf.pointwise_log_likelihood(X, y)
    proba = clf.predict_proba_draws(X)
    expected = np.log(np.take_along_axis(proba, y[None, None, :, None], axis=3)[..., 0])
    np.testing.assert_allclose(ll, expected, rtol=1e-9, atol=1e-13)

    Xb, yb = load_breast_cancer(return_X_y=True)
    logistic = quiet_fit(MinibatchMHLogisticRegression(**CONVERGED_ENOUGH), Xb, yb)
    p1 = logistic.predict_proba_draws(Xb)[..., 1]
    np.testing.assert_allclose(logistic.pointwise_log_likelihood(Xb, yb),
                               stats.bernoulli.logpmf(yb, p1), rtol=1e-7, atol=1e-12)

    rng = np.random.default_rng(3)
    Xr = rng.normal(size=(300, 2))
    yr = Xr @ np.array([1.0, 2.0]) + rng.standard_t(5, size=300)
    robust = quiet_fit(RobustTRegression(nu=5.0, **CONVERGED_ENOUGH), Xr, yr)
    location = robust.posterior_["coef"] @ Xr.T + robust.posterior_["intercept"][..., None]
    np.testing.assert_allclose(
        robust.pointwise_log_likelihood(Xr, yr),
        stats.t.logpdf(yr, 5.0, loc=location, scale=robust.posterior_["scale"][..., None]),
        rtol=1e-10)

    counts = rng.poisson(np.exp(0.5 * Xr[:, 0] + 1.0)).astype(float)
    poisson = quiet_fit(MinibatchMHPoissonRegression(**CONVERGED_ENOUGH), Xr, counts)
    rate = np.exp(poisson.posterior_["coef"] @ Xr.T + poisson.posterior_["intercept"][..., None])
    np.testing.assert_allclose(poisson.pointwise_log_likelihood(Xr, counts),
                               stats.poisson.logpmf(counts, rate), rtol=1e-10)


def test_regressor_posterior_predictive_draws_match_the_predictive_moments():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 2))
    y = X @ np.array([1.0, -1.0]) + rng.standard_t(6, size=400)
    reg = quiet_fit(RobustTRegression(nu=6.0, n_draws=1000, n_warmup=300, n_chains=2,
                                      random_state=0), X, y)
    simulated = reg.sample_posterior_predictive(X[:10], random_state=1)
    mean, std = reg.predict(X[:10], return_std=True)
    flat = simulated.reshape(-1, 10)
    # 2,000 draws: the mean's sd is std / 44.7; 5 sds. The sd within 10% (t_6 tails).
    np.testing.assert_array_less(np.abs(flat.mean(axis=0) - mean), 5 * std / np.sqrt(2000))
    np.testing.assert_allclose(flat.std(axis=0), std, rtol=0.1)


def test_to_arviz_has_observed_data_log_likelihood_and_posterior_predictive():
    arviz = pytest.importorskip("arviz")
    X, y = logistic_data(600)
    clf = quiet_fit(MinibatchMHLogisticRegression(**CONVERGED_ENOUGH), X, y)
    idata = clf.to_arviz(X, y, log_likelihood=True, posterior_predictive=True, random_state=0)
    for group in ("posterior", "sample_stats", "observed_data", "constant_data",
                  "log_likelihood", "posterior_predictive"):
        assert group in idata.groups(), group
    assert idata.log_likelihood["y"].shape == (2, 250, X.shape[0])
    assert idata.observed_data["y"].dims == ("row",)
    # The parameters' axes are named and labelled as in summary(), X's columns alike.
    names = [f"x{j}" for j in range(X.shape[1])]
    assert idata.posterior["coef"].dims == ("chain", "draw", "feature")
    assert list(idata.posterior["coef"].coords["feature"].values) == names
    assert idata.constant_data["X"].dims == ("row", "feature")
    loo = arviz.loo(idata)
    # A logistic model with 4 parameters: the effective number is near it.
    assert np.isfinite(loo.elpd_loo) and 2 < loo.p_loo < 8
    plain = clf.to_arviz()
    assert "observed_data" not in plain.groups()
    with pytest.raises(ValueError, match="needs X and y"):
        clf.to_arviz(X, log_likelihood=True)


@pytest.mark.slow
def test_subsampled_loo_agrees_with_full_loo():
    arviz = pytest.importorskip("arviz")
    arviz_stats = pytest.importorskip("arviz_stats")
    if not hasattr(arviz_stats, "loo_subsample"):
        pytest.skip("arviz_stats.loo_subsample needs arviz-base")
    X, y = logistic_data(3000)
    clf = quiet_fit(MinibatchMHLogisticRegression(**CONVERGED_ENOUGH), X, y)
    idata = clf.to_arviz(X, y, log_likelihood=True)
    full = arviz.loo(idata)
    sub = arviz_stats.loo_subsample(idata, observations=300, seed=0)
    # The difference estimator's subsampling error is its stated subsampling_se.
    assert sub.subsample_size == 300
    assert abs(sub.elpd - full.elpd_loo) < 4 * sub.subsampling_se + 1e-6


def counting(transform, seen):
    """``transform``, recording how many draws each call evaluated (the calls at the mean
    linear predictor, which name the first draw only, excluded)."""
    def counted(eta, draws):
        if np.unique(draws).size > 1:
            seen.append(eta.shape[1])
        return transform(eta, draws)
    return counted


@pytest.mark.parametrize("family", ["logistic", "softmax", "poisson"])
def test_predictions_within_their_tolerance_of_the_all_draws_mean(family):
    """``predict_tol``: each value within ``predict_tol`` of the mean over every draw (a
    bound: no Monte Carlo term), on a posterior (1,000 rows) and test rows (twice the
    training rows' spread) where, at one tolerance, some rows take every draw and others
    the second-order estimate, and at the other the pilot sends every row to every draw;
    ``predict_tol=None`` is that mean. Softmax has no second-order path: its predictions
    are that mean at any tolerance."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(1000, 4))
    eta = X @ np.array([1.0, -0.5, 0.5, 0.0])
    tols = (1e-3, 1e-4)
    if family == "softmax":
        make, y = FireflySoftmaxClassifier, np.digitize(eta + rng.logistic(size=1000), [-1, 1])
    elif family == "logistic":
        make, y = MinibatchMHLogisticRegression, (eta + rng.logistic(size=1000) > 0).astype(int)
    else:
        make, y = MinibatchMHPoissonRegression, rng.poisson(np.exp(1.0 + 0.5 * eta))
        tols = (1e-4, 1e-5)
    fit = quiet_fit(make(n_draws=500, n_warmup=300, random_state=0), X, y)
    X_test = rng.normal(size=(2000, 4)) * 2
    predict = fit.predict if family == "poisson" else fit.predict_proba
    fit.set_params(predict_tol=None)
    exact = predict(X_test)
    expanded = []
    for tol in tols:
        fit.set_params(predict_tol=tol)
        approximate = predict(X_test)
        scale = np.maximum(1.0, np.abs(exact)) if family == "poisson" else 1.0
        error = np.abs(approximate - exact) / scale
        assert error.max() <= tol * (1 + 1e-6) + 1e-12, (tol, error.max())
        # The rows that average every draw give that mean (the logistic's in float32, within
        # 2.5e-7 of it: SINGLE_PRECISION_MIN_TOL); the others, the expansion's estimate.
        expanded.append(np.mean(error > (1e-6 if family == "logistic" else 1e-13)))
    if family == "softmax":
        assert max(expanded) == 0
    else:  # some rows second-order and others every draw at one tolerance; at the other,
        # the bound settles too few of the pilot's rows and every row takes every draw
        assert 0 < max(expanded) < 1 and min(expanded) == 0
    for bad in (0.0, -1e-3, "1e-3", True):
        fit.set_params(predict_tol=bad)
        with pytest.raises(ValueError, match="predict_tol must be a positive float"):
            predict(X_test[:3])


def test_a_narrow_posterior_predicts_without_draws_and_a_wide_one_from_every_draw():
    """On tall data (20,000 rows) the second-order bound settles every row without
    evaluating a draw; on 40 rows it fails, and the rows average every draw."""
    from skbayes_mh.linear_model._predictive import predictive_mean

    evaluated = {}
    for name, n_rows in (("tall", 20_000), ("short", 40)):
        X, y = logistic_data(n_rows, seed=3)
        fit = quiet_fit(MinibatchMHLogisticRegression(n_draws=400, n_warmup=300,
                                                      random_state=0), X, y)
        X_all, coef, intercept = fit._linear_draws(logistic_data(5000, seed=4)[0])
        seen = []
        predictive_mean(X_all, coef, intercept, counting(fit._probabilities, seen),
                        fit.predict_tol, third_derivative=fit._family().third_derivative_bound)
        evaluated[name] = sum(seen)
    assert evaluated["tall"] == 0
    assert evaluated["short"] > 0


@pytest.mark.parametrize("family", ["logistic", "probit", "poisson", "robust", "binomial"])
def test_the_second_order_error_bound_holds_at_every_row(family):
    """``SecondOrder``: the estimate ``f(mu) + f2(mu) v / 2`` differs from the mean over
    every draw by at most its bound at every row (a deterministic bound: no tolerance but
    rounding), on a posterior wide enough (60 rows) that the remainder is not negligible;
    with the family's second derivative (``mean_curvature``, a binary family's
    ``inverse_link_curvature``: its second class's probability, which ``predict_proba``
    expands) as with second differences of the predictions, which agree to their rounding. The
    third-order estimate likewise, within its own bound."""
    from skbayes_mh.linear_model._predictive import SecondOrder

    rng = np.random.default_rng(21)
    X = rng.normal(size=(60, 3))
    eta = X @ np.array([1.0, -0.5, 0.5])
    if family in ("logistic", "probit"):
        fit = MinibatchMHLogisticRegression(link="logit" if family == "logistic" else "probit",
                                            n_draws=300, n_warmup=300, random_state=0)
        y = (eta + rng.logistic(size=60) > 0).astype(int)
    elif family == "poisson":
        fit, y = MinibatchMHPoissonRegression(n_draws=300, n_warmup=300, random_state=0), \
            rng.poisson(np.exp(0.5 + 0.5 * eta))
    elif family == "binomial":
        trials = rng.integers(1, 4, size=60)
        fit = BinomialRegression(n_draws=300, n_warmup=300, random_state=0)
        y = np.column_stack([rng.binomial(trials, 1 / (1 + np.exp(-eta))), trials])
    else:
        fit, y = RobustTRegression(n_draws=300, n_warmup=300, random_state=0), \
            eta + rng.standard_t(5, size=60)
    quiet_fit(fit, X, y)
    family_model = fit._family()
    binary = family in ("logistic", "probit")
    if binary:
        def transform(eta, draws):
            return family_model.inverse_link(eta[..., 0])
    else:
        def transform(eta, draws):
            return family_model.mean(eta, {})
    curvature = (family_model.inverse_link_curvature if binary
                 else family_model.mean_curvature)
    X_test = rng.normal(size=(500, 3)) * 1.5
    X_all, coef, intercept = fit._linear_draws(X_test)
    eta_all = X_all @ coef[:, 0].T + intercept[:, 0]
    exact = transform(eta_all.T[:, :, None], np.arange(eta_all.shape[1])).mean(axis=0)
    scale = 1 + np.abs(exact).reshape(len(X_test), -1).max(1)
    estimates = []
    for analytic in (None, curvature):
        estimate, bound = SecondOrder(coef[:, 0], intercept[:, 0],
                                      family_model.third_derivative_bound,
                                      analytic).estimate(X_all, transform)
        error = np.abs(estimate - exact).reshape(bound.size, -1).max(axis=1)
        assert np.all(error <= bound + 1e-9 * scale)
        estimates.append(estimate)
    difference = np.abs(estimates[0] - estimates[1]).reshape(bound.size, -1).max(axis=1)
    assert np.all(difference <= 1e-7 * scale)
    if family == "robust":
        assert np.all(bound == 0)
        return
    assert np.median(error / bound) < 0.5 and bound.max() > 1e-4  # not vacuous
    # The third-order estimate f(mu) + f2 v / 2 + f3(mu) E[d^3] / 6 and its bound, sup |f4|
    # rho^2 v^2 / 24, at every row.
    third = (family_model.inverse_link_third_derivative if binary
             else family_model.mean_third_derivative)
    expansion = SecondOrder(coef[:, 0], intercept[:, 0], family_model.third_derivative_bound,
                            curvature, third, family_model.fourth_derivative_bound)
    estimate3, bound3 = expansion.third_order(X_all)
    error3 = np.abs(estimate3 - exact).reshape(bound3.size, -1).max(axis=1)
    assert np.all(error3 <= bound3 + 1e-9 * scale)
    # Its terms are the draws' moments of eta: mean mu, variance v and third central
    # moment m3 (summed here over the draws directly).
    mu = eta_all.mean(axis=1)
    centred = eta_all - mu[:, None]
    value, second = curvature(mu)
    expand = (slice(None),) + (None,) * (value.ndim - 1)
    expected = (value + second * (0.5 * np.mean(centred ** 2, axis=1))[expand]
                + third(mu) * (np.mean(centred ** 3, axis=1) / 6.0)[expand])
    np.testing.assert_allclose(estimate3, expected, rtol=1e-9, atol=1e-12)


def test_the_third_order_term_settles_rows_the_second_order_bound_leaves():
    """A posterior of 1,000 rows: the second-order bound settles too few of the pilot's
    rows at the default ``predict_tol`` (1e-4), and every row averaged every draw; with the
    third-order term (the family's third derivatives) most rows take the expansion, each
    within ``predict_tol`` of the mean over every draw."""
    from skbayes_mh.linear_model._predictive import predictive_mean

    X, y = logistic_data(1000, seed=3)
    fit = quiet_fit(MinibatchMHLogisticRegression(n_draws=400, n_warmup=300, random_state=0),
                    X, y)
    X_all, coef, intercept = fit._linear_draws(logistic_data(5000, seed=4)[0])
    family = fit._family()
    exact = fit.set_params(predict_tol=None).predict_proba(X_all)[:, 1]
    evaluated = {}
    for order, terms in ((2, {}), (3, dict(third=family.inverse_link_third_derivative,
                                           fourth_derivative=family.fourth_derivative_bound))):
        seen = []
        found = predictive_mean(X_all, coef, intercept,
                                counting(lambda eta, draws: family.inverse_link(eta[..., 0]),
                                         seen),
                                1e-4, third_derivative=family.third_derivative_bound,
                                curvature=family.inverse_link_curvature, **terms)
        assert np.abs(found - exact).max() <= 1e-4
        evaluated[order] = sum(seen)
    assert evaluated[2] >= len(X_all)  # every row, every draw
    assert evaluated[3] < 0.5 * len(X_all)
    # The estimator's predictions take the third-order term (its rows that average every
    # draw do so in float32, within 2.5e-7).
    predicted = fit.set_params(predict_tol=1e-4).predict_proba(X_all)
    assert np.abs(predicted[:, 1] - found).max() <= 3e-7


def _traced_peak(function):
    """``function()`` and the peak bytes NumPy and Python allocated while it ran."""
    import tracemalloc

    tracemalloc.start()
    try:
        value = function()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return value, peak


@pytest.fixture(scope="module")
def wide_rows_fits():
    """A classifier, a softmax and a robust regressor fitted on 40 columns (quickly: what is
    tested is how rows are read at prediction)."""
    rng = np.random.default_rng(21)
    X = rng.normal(size=(400, 40))
    eta = X[:, :3] @ np.array([1.0, -1.0, 0.5])
    settings = dict(n_draws=100, n_warmup=100, n_chains=2, random_state=0)
    binary = quiet_fit(MinibatchMHLogisticRegression(**settings), X,
                       (rng.random(400) < 1 / (1 + np.exp(-eta))).astype(int))
    classes = quiet_fit(FireflySoftmaxClassifier(**settings), X, np.digitize(eta, [-0.5, 0.5]))
    robust = quiet_fit(RobustTRegression(**settings), X, eta + rng.standard_t(4, size=400))
    return binary, classes, robust


def test_a_dask_array_predicts_block_by_block_what_its_rows_predict(wide_rows_fits):
    """Every prediction of a ``dask.array`` (row blocks of 700, two column blocks) is that of
    the same rows in memory (every draw's mean: to rounding; the default's, within its
    tolerance of it), and a NumPy array."""
    da = pytest.importorskip("dask.array")
    binary, classes, robust = wide_rows_fits
    X = np.random.default_rng(22).normal(size=(3000, 40))
    X_dask = da.from_array(X, chunks=(700, 20))
    for fit in (binary, classes):
        found = fit.predict_proba(X_dask)
        assert isinstance(found, np.ndarray) and found.shape == (3000, len(fit.classes_))
        np.testing.assert_allclose(found, fit.predict_proba(X), rtol=0, atol=2 * fit.predict_tol)
        np.testing.assert_array_equal(fit.predict(X_dask), fit.predict(X))
        every = fit.set_params(predict_tol=None)
        np.testing.assert_allclose(every.predict_proba(X_dask), every.predict_proba(X),
                                   rtol=1e-12, atol=1e-15)
        fit.set_params(predict_tol=1e-4)
    np.testing.assert_allclose(binary.decision_function(X_dask), binary.decision_function(X),
                               rtol=1e-3)
    mean, std = robust.predict(X_dask, return_std=True)
    reference_mean, reference_std = robust.predict(X, return_std=True)
    np.testing.assert_allclose(mean, reference_mean, rtol=1e-12)
    np.testing.assert_allclose(std, reference_std, rtol=1e-12)
    np.testing.assert_allclose(robust.predict_quantiles(X_dask, (0.1, 0.9)),
                               robust.predict_quantiles(X, (0.1, 0.9)), rtol=1e-9)


@pytest.fixture
def one_thread(monkeypatch):
    """Predictions on one thread: a prediction's peak memory is then the same at every run.
    On two, each thread's temporaries peak when its turn comes, together or not (one
    block of the test below peaked at 79 MB in one run and 122 MB in another), while a
    prediction of many blocks meets the worst case in one of them."""
    monkeypatch.setattr("skbayes_mh._passes.pass_threads", lambda: 1)


def test_a_dask_array_is_never_read_whole(wide_rows_fits, one_thread):
    """A lazy 256 MB ``dask.array`` (800,000 rows in blocks of 20,000): ``predict_proba``
    allocates at most what predicting one block held in memory does, plus a few blocks and
    its result (reading it whole would add its 256 MB)."""
    da = pytest.importorskip("dask.array")
    binary = wide_rows_fits[0]
    X = da.random.default_rng(23).standard_normal((800_000, 40), chunks=(20_000, 40))
    block = X.blocks[0].compute()
    binary.predict_proba(block)  # the first call's one-time imports and caches
    _, one_block = _traced_peak(lambda: binary.predict_proba(block))
    proba, peak = _traced_peak(lambda: binary.predict_proba(X))
    assert proba.shape == (800_000, 2) and np.isfinite(proba).all()
    assert peak < one_block + 4 * block.nbytes + proba.nbytes, (
        peak / 2**20, one_block / 2**20, X.nbytes / 2**20)


def test_a_large_float32_memmap_predicts_in_slices(wide_rows_fits, tmp_path, one_thread):
    """A 96 MB float32 ``np.memmap`` (600,000 x 40) is predicted in slices of 16 MiB: at
    most what predicting one slice held in memory (as float64) allocates, plus a few slices
    and the result, where converting it to float64 whole takes 192 MB; the predictions are
    those of the rows in memory."""
    binary = wide_rows_fits[0]
    rng = np.random.default_rng(24)
    X = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=np.float32,
                                  shape=(600_000, 40))
    for start in range(0, X.shape[0], 100_000):
        X[start:start + 100_000] = rng.standard_normal((100_000, 40), dtype=np.float32)
    X.flush()
    X = np.load(tmp_path / "X.npy", mmap_mode="r")
    slice_rows = (1 << 24) // (X.itemsize * X.shape[1])
    in_memory = np.asarray(X[:slice_rows], dtype=np.float64)
    binary.predict_proba(in_memory)
    _, one_slice = _traced_peak(lambda: binary.predict_proba(in_memory))
    proba, peak = _traced_peak(lambda: binary.predict_proba(X))
    assert peak < one_slice + 3 * in_memory.nbytes + proba.nbytes, (
        peak / 2**20, one_slice / 2**20, X.nbytes / 2**20)
    rows = slice(None, None, 997)  # a sample of the rows, against the same rows in memory
    np.testing.assert_allclose(proba[rows], binary.predict_proba(np.asarray(X[rows])),
                               rtol=0, atol=2 * binary.predict_tol)

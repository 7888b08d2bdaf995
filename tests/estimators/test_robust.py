"""RobustTRegression and the Student-t Firefly bound: the bound and its collapsed sums, the
conjugate Gaussian limit, agreement of Firefly, exact and minibatch chains, invariance,
outliers, predictions, scikit-learn citizenship and bad input."""
import re
import warnings

import numpy as np
import pytest
from scipy.special import log1p
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skbayes_mh._core.fit as fit_module
from skbayes_mh import RobustTRegression
from skbayes_mh._kernels.firefly import firefly_pseudo_posterior, firefly_terms
from skbayes_mh.models import StudentTModel
from skbayes_mh.models._prior import GAUSSIAN, LOG_SCALE

from _models import (FAST, firefly_chain, firefly_row_terms, linear_target, long_metropolis_fit,
                     quiet_fit)
from _stats import Moments, assert_same_distribution

NU = 4.0


def _heavy_tailed(n=300, seed=0, outliers=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = X @ np.array([1.0, -0.5]) + 0.3 + 0.5 * rng.standard_t(NU, size=n)
    bad = rng.random(n) < outliers
    y[bad] += rng.choice([-1, 1], size=bad.sum()) * rng.uniform(15, 30, size=bad.sum())
    return X, y


def _target(sampled_scale=True, n=300, inv_temperature=1.0):
    X, y = _heavy_tailed(n)
    kind = GAUSSIAN | (LOG_SCALE if sampled_scale else 0)
    scales = np.append(np.ones(3), [1.0] if sampled_scale else [])
    model = StudentTModel(NU, None if sampled_scale else 1.0)
    return linear_target(model, X, y, scales, kind=kind, inv_temperature=inv_temperature)


# --- the bound ------------------------------------------------------------------------------

@pytest.mark.parametrize("sampled_scale", [True, False])
@pytest.mark.parametrize("bound", ["map", "untuned"])
def test_student_t_bound_is_below_collapses_and_is_tight_at_the_map(bound, sampled_scale):
    target = _target(sampled_scale)
    bounds = target.model.firefly_bound(target.data, target.mean, bound, 1.0)
    X, y = target.data.X, target.data.y
    design = np.column_stack([X, np.ones(len(y))])
    rng = np.random.default_rng(2)
    offsets = []
    for theta in (target.mean, target.mean + 0.3 * rng.normal(size=target.mean.size)):
        values = firefly_row_terms(target, bounds, theta)
        log_scale = theta[3] if sampled_scale else 0.0
        z = (y - design @ theta[:3]) ** 2 * np.exp(-2 * log_scale)
        np.testing.assert_allclose(values[:, 0], -log_scale - (NU + 1) / 2 * log1p(z / NU),
                                   atol=1e-12)
        assert np.all(values[:, 1] <= values[:, 0] + 1e-12)
        w = theta[:3]
        collapsed = (np.exp(-2 * log_scale) * (-0.5 * w @ bounds.quad @ w + bounds.lin @ w
                                               + bounds.const)
                     - bounds.scale_count * log_scale)
        # The collapsed form leaves out a constant (the sum of gamma_n): the same at every theta.
        offsets.append(values[:, 1].sum() - collapsed)
    assert offsets[0] == pytest.approx(offsets[1], rel=1e-10, abs=1e-9)
    if bound == "map":
        values = firefly_row_terms(target, bounds, target.mean)
        np.testing.assert_allclose(values[:, 1], values[:, 0], atol=1e-10)


@pytest.mark.parametrize("sampled_scale", [True, False])
def test_student_t_loglik_derivatives_match_finite_differences(sampled_scale):
    # The link's gradient and Hessian, summed over the rows in theta.
    target = _target(sampled_scale, n=80)
    theta = target.mean + 0.2
    _, gradient, hessian = target.model.loglik_derivatives(target.data, theta, 2)
    h = 1e-6
    value = lambda t: target.model.loglik_derivatives(target.data, t, 0)[0]
    grad_at = lambda t: target.model.loglik_derivatives(target.data, t, 1)[1]
    eye = np.eye(theta.size)
    np.testing.assert_allclose(gradient, [(value(theta + h * e) - value(theta - h * e)) / (2 * h)
                                          for e in eye], rtol=1e-5, atol=1e-6)
    numeric = np.array([(grad_at(theta + h * e) - grad_at(theta - h * e)) / (2 * h) for e in eye])
    np.testing.assert_allclose(hessian, numeric, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sampled_scale", [True, False])
def test_student_t_pseudo_posterior_gradient_matches_finite_differences(sampled_scale):
    target = _target(sampled_scale, n=80, inv_temperature=0.7)
    bounds = tuple(target.model.firefly_bound(target.data, target.mean, "untuned", 0.7))
    n = target.n_data
    theta = target.mean + 0.2
    # Bright: the points well away from tangency (near it, log(L/B - 1) is steep).
    values = np.empty((n, 2))
    firefly_terms(target.firefly_model, bounds, theta, 0.7, values)
    diff = values[:, 0] - values[:, 1]
    order = np.argsort(-diff)
    n_bright = int(np.sum(diff > 0.05))
    assert 0 < n_bright < n

    def value(theta, gradient=None):
        out, status = firefly_pseudo_posterior(
            target.firefly_model, target.prior.as_tuple(), bounds, theta, order, n_bright, 0.7,
            gradient is not None, np.zeros(theta.size) if gradient is None else gradient)
        assert status == 0
        return out

    gradient = np.zeros(theta.size)
    value(theta, gradient)
    h = 1e-6
    numeric = [(value(theta + h * e) - value(theta - h * e)) / (2 * h) for e in np.eye(theta.size)]
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6)


# --- correctness of the posterior -------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("acceptance, proposal", [("firefly", "slice"), ("firefly", "mala"),
                                                  ("metropolis", "slice")])
def test_large_nu_matches_conjugate_linear_regression(acceptance, proposal):
    # nu -> inf with a fixed scale: Gaussian noise, Gaussian prior, a Gaussian posterior.
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 2))
    scale = 0.8
    y = X @ np.array([0.7, -1.2]) + 2.0 + scale * rng.normal(size=400)
    prior_scale, intercept_scale = 0.5, 3.0
    reg = RobustTRegression(nu=1e7, scale=scale, prior="gaussian", prior_scale=prior_scale,
                            autoscale=False,  # the raw-scale prior integrated below
                            intercept_prior_scale=intercept_scale, acceptance=acceptance,
                            proposal=proposal, n_draws=10_000, n_warmup=1000, n_chains=2,
                            random_state=0).fit(X, y)
    design = np.column_stack([X, np.ones(400)])
    prior_precision = np.diag(1 / np.array([prior_scale, prior_scale, intercept_scale]) ** 2)
    prior_mean = np.array([0.0, 0.0, y.mean()])  # the intercept's prior is centred at mean(y)
    covariance = np.linalg.inv(design.T @ design / scale**2 + prior_precision)
    mean = covariance @ (design.T @ y / scale**2 + prior_precision @ prior_mean)
    sd = np.sqrt(np.diag(covariance))
    draws = np.concatenate([reg.posterior_["coef"], reg.posterior_["intercept"][..., None]],
                           axis=2)
    assert_same_distribution(draws, Moments(mean, sd))


@pytest.fixture(scope="module")
def long_exact_chain():
    """A long exact (Metropolis) run on a small heavy-tailed problem, scale sampled."""
    X, y = _heavy_tailed(200, seed=5)
    return X, y, long_metropolis_fit(RobustTRegression, X, y)


@pytest.mark.parametrize("acceptance, proposal", [("firefly", "slice"), ("firefly", "mala"),
                                                  ("firefly", "random_walk"),
                                                  ("minibatch", "random_walk")])
@pytest.mark.slow
def test_firefly_exact_and_minibatch_chains_agree(long_exact_chain, acceptance, proposal):
    X, y, reference = long_exact_chain
    reg = RobustTRegression(acceptance=acceptance, proposal=proposal, n_draws=20_000,
                            n_warmup=2000, n_chains=2, random_state=2).fit(X, y)
    assert_same_distribution(reg._theta_draws(), reference, label=f"{acceptance}-{proposal}")
    if acceptance == "firefly":
        assert reg.posterior_["n_bright"].mean() < 0.2 * len(y)


@pytest.mark.slow
def test_firefly_invariance_from_exact_draws():
    # theta = (w, log s) for y = w x + s t_4: the posterior on a fine grid; 1,000 chains
    # start at exact draws and take 10 Firefly slice steps; the moments must hold.
    rng = np.random.default_rng(6)
    n = 300
    x = rng.normal(size=n)
    y = 0.8 * x + 0.5 * rng.standard_t(NU, size=n)
    kind = GAUSSIAN | LOG_SCALE
    scales = np.array([1.0, 1.0])
    target = linear_target(StudentTModel(NU), x[:, None], y, scales, intercept=False, kind=kind)
    theta_map, covariance = target.mean, target.covariance
    half = 7 * np.sqrt(np.diag(covariance))
    axes = [np.linspace(m - h, m + h, 241) for m, h in zip(theta_map, half)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 2)
    z = (y[None, :] - grid[:, :1] * x[None, :]) ** 2 * np.exp(-2 * grid[:, 1:])
    log_post = (-n * grid[:, 1] - (NU + 1) / 2 * np.log1p(z / NU).sum(axis=1)
                - 0.5 * grid[:, 0] ** 2 + grid[:, 1] - np.exp(grid[:, 1]))
    weights = np.exp(log_post - log_post.max())
    weights /= weights.sum()
    mean = weights @ grid
    sd = np.sqrt(weights @ (grid - mean) ** 2)
    spacing = np.array([a[1] - a[0] for a in axes])
    n_chains = 1000
    cells = rng.choice(len(grid), size=n_chains, p=weights)
    starts = grid[cells] + (rng.random((n_chains, 2)) - 0.5) * spacing
    finals = np.array([
        firefly_chain(target, start, 20_000 + k, 0, 10, proposal="slice", bound="untuned",
                      step_size=2.0).draws[-1]
        for k, start in enumerate(starts)])
    z_mean = (finals.mean(axis=0) - mean) / (sd / np.sqrt(n_chains))
    assert np.all(np.abs(z_mean) < 4), z_mean
    ratio = finals.var(axis=0, ddof=1) / sd**2
    assert np.all(np.abs(ratio - 1) < 4 * np.sqrt(2.0 / n_chains)), ratio
    assert np.mean(np.abs(finals - starts) > spacing) > 0.5  # they moved


def test_gross_outliers_do_not_drag_the_coefficients():
    X, y = _heavy_tailed(2000, seed=7, outliers=0.05)
    X[y > 10, 0] += 3.0  # outliers with leverage
    reg = RobustTRegression(random_state=0, n_draws=1000, n_warmup=500, n_chains=2).fit(X, y)
    ols = LinearRegression().fit(X, y)
    truth = np.array([1.0, -0.5])
    assert np.all(np.abs(reg.coef_ - truth) < 0.06), reg.coef_
    assert abs(reg.intercept_ - 0.3) < 0.06
    assert np.max(np.abs(ols.coef_ - truth)) > 0.5, ols.coef_
    assert reg.scale_ < 0.7  # the noise scale is not inflated by the outliers


def _contaminated(kind, seed, n=400, fraction=0.05):
    """Linear data (coefficients 1, -2, 0.5; N(0, 0.5^2) noise) with a ``fraction`` of gross
    outliers: in y (targets far off), in X (features far out, y from the clean features)
    or both (high leverage and far-off targets, pulling least squares and least absolute
    deviations toward another line)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    truth = np.array([1.0, -2.0, 0.5])
    y = X @ truth + 0.5 * rng.standard_normal(n)
    rows = rng.choice(n, int(fraction * n), replace=False)
    if kind in ("X", "both"):
        X[rows] = rng.normal(loc=[20.0, 20.0, -20.0], size=(rows.size, 3))
    if kind in ("y", "both"):
        y[rows] = rng.normal(loc=200.0, scale=5.0, size=rows.size)
    return X, y, truth


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kind", ["y", "both"])
def test_defaults_find_the_global_mode_among_gross_outliers(kind, seed):
    # 5% gross outliers of high leverage put least squares and least absolute deviations
    # (the one start there was) in a local mode of the Student-t likelihood near (4.6, 1.6,
    # -3.2), hundreds of nats below the global one at the truth, where every chain agreed
    # and nothing warned; the trimmed-squares and prior-mean starts find the global mode.
    X, y, truth = _contaminated(kind, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # nor does it warn
        reg = RobustTRegression(random_state=0).fit(X, y)
    assert np.all(np.abs(reg.coef_ - truth) < 0.3), reg.coef_


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_chains_start_in_each_separated_mode_and_the_fit_says_which_sits_where(seed):
    # Rows far out in X whose y follow the clean features make two modes: the truth's and,
    # about 29 nats higher, a compromise that fits the leverage rows too (the Student-t
    # likelihood prefers it). The chains start in turn in each (the highest first), and the
    # check of their log posterior levels names the chains in the lower mode and the gap.
    X, y, truth = _contaminated("X", seed)
    with pytest.warns(ConvergenceWarning, match="sit in different modes") as caught:
        reg = RobustTRegression(random_state=0).fit(X, y)
    messages = [str(w.message) for w in caught]
    assert not any("no chain starts" in message for message in messages)
    per_chain = reg.posterior_["coef"].mean(axis=1)
    at_truth = np.all(np.abs(per_chain - truth) < 0.3, axis=1)
    np.testing.assert_array_equal(at_truth, [False, True, False, True])
    assert np.all(np.max(np.abs(per_chain[~at_truth] - truth), axis=1) > 0.3)
    levels = next(m for m in messages if "sit in different modes" in m)
    assert re.findall(r"(\d) \(\d+\.\d nats\)", levels) == ["1", "3"], levels
    means = reg.diagnostics_.log_posterior.mean
    gap = means[~at_truth].mean() - means[at_truth].mean()
    assert 1 < gap < 100, means
    # One chain cannot visit both: the search's warning names the gap to the other mode.
    with pytest.warns(ConvergenceWarning, match="no chain starts there") as caught:
        RobustTRegression(random_state=0, n_chains=1).fit(X, y)
    search = next(str(w.message) for w in caught if "no chain starts" in str(w.message))
    gaps = [float(g) for g in re.findall(r"(\d+\.\d) nats lower", search)]
    assert len(gaps) == 1 and abs(gaps[0] - gap) < 2.0, (gaps, gap)


def test_least_trimmed_squares_ignores_almost_half_of_the_rows():
    from skbayes_mh.models.student_t import _least_trimmed_squares

    rng = np.random.default_rng(3)
    design = np.column_stack([rng.normal(size=(500, 2)), np.ones(500)])
    coef = np.array([2.0, -1.0, 0.5])
    y = design @ coef + 0.01 * rng.standard_normal(500)
    bad = rng.choice(500, 200, replace=False)  # 40% far off, at high leverage
    design[bad, :2] = rng.normal(loc=15.0, size=(200, 2))
    y[bad] = rng.normal(loc=-100.0, scale=10.0, size=200)
    fitted, residual = _least_trimmed_squares(design, y)
    np.testing.assert_allclose(fitted, coef, atol=0.01)
    assert np.sum(np.abs(residual) < 0.05) >= 290


def test_the_map_search_keeps_the_best_of_its_starts():
    # The MAP from three starts has a log posterior at least that of the search from the
    # least-absolute-deviations start alone, and above it on contaminated data.
    X, y, _ = _contaminated("both", 0)
    family = StudentTModel(4.0)
    target = linear_target(family, X, y, np.array([10.0, 10.0, 10.0, 10.0, 10.0]),
                           kind=GAUSSIAN | LOG_SCALE)
    starts = family.initial_thetas(target.data, target.prior)
    assert len(starts) == 3
    objective = family.negative_log_posterior(target.data, target.prior, 1.0)
    alone = family.laplace(target.data, target.prior, 1.0, theta0=starts[0])[0]
    assert objective(target.mean, 1)[0] < objective(alone, 1)[0] - 100


def _housing_like(n=3000, seed=0):
    """Rows in the units of California housing's raw file: longitude and latitude (means far
    from 0 against their spread), counts of rooms and bedrooms (thousands, collinear), an
    income, and values in dollars."""
    rng = np.random.default_rng(seed)
    lon = rng.normal(-119.6, 2.0, n)
    lat = 35.6 - 0.9 * (lon + 119.6) + rng.normal(0.0, 0.8, n)
    rooms = np.exp(rng.normal(7.5, 0.6, n))
    bedrooms = 0.2 * rooms * np.exp(rng.normal(0.0, 0.1, n))
    income = np.exp(rng.normal(1.3, 0.45, n))
    X = np.column_stack([lon, lat, rooms, bedrooms, income])
    y = 1e5 * (2.0 - 0.4 * (lon + 119.6) - 0.4 * (lat - 35.6) + 0.8 * (income - 3.9)
               + 0.3 * (rooms - 2000.0) / 1000.0) + 5e4 * rng.standard_t(4, n)
    return X, y


@pytest.mark.parametrize("prior", ["laplace", "gaussian"])
def test_map_and_laplace_shape_do_not_depend_on_the_datas_units(monkeypatch, prior):
    # The log posterior's Hessian in these units has a condition number near 4e13. The
    # search used to stop short of the MAP in them (Newton decrement 3, 1.7 posterior sd,
    # with the default Laplace prior) and the eigenvalue floor narrowed the Laplace shape's
    # intercept 66 times; the chains of the minibatch test, whose control variates are
    # centred at that point, were biased by 0.3 sd on California housing in dollars.
    captured = []
    build = fit_module.Target.linear
    monkeypatch.setattr(fit_module.Target, "linear", staticmethod(
        lambda *args, **kwargs: captured.append(build(*args, **kwargs)) or captured[-1]))
    X, y = _housing_like()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        RobustTRegression(prior=prior, acceptance="metropolis", n_draws=20, n_warmup=20,
                          n_chains=1, random_state=0).fit(X, y)
    target = captured[-1]
    objective = target.model.negative_log_posterior(target.data, target.prior, 1.0)
    _, gradient, hessian = objective(target.mean, 2)
    # Inverted with a unit diagonal, where the condition number is about 1e5.
    scales = 1.0 / np.sqrt(np.diag(hessian))
    covariance = np.linalg.inv(hessian * np.outer(scales, scales)) * np.outer(scales, scales)
    assert gradient @ covariance @ gradient < 1e-2  # within 0.1 posterior sd of the MAP
    np.testing.assert_allclose(np.sqrt(np.diag(target.covariance)),
                               np.sqrt(np.diag(covariance)), rtol=1e-6)


# --- predictions --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fitted():
    X, y = _heavy_tailed(500, seed=8)
    return X, y, RobustTRegression(random_state=0, n_draws=500, n_warmup=300,
                                   n_chains=2).fit(X, y)


def test_predictive_mean_std_and_samples(fitted):
    X, y, reg = fitted
    mean, std = reg.predict(X[:5], return_std=True)
    np.testing.assert_array_equal(reg.predict(X[:5]), reg.predict(X[:5]))  # deterministic
    # The identity link: the control variate leaves no error, whatever the draws averaged.
    np.testing.assert_allclose(reg.predict(X[:5]), mean, rtol=1e-12, atol=1e-12)
    coef = reg.posterior_.get("coef", flat=True)
    intercept = reg.posterior_.get("intercept", flat=True)
    scale = reg.posterior_.get("scale", flat=True)
    location = X[:5] @ coef.T + intercept
    np.testing.assert_allclose(mean, location.mean(axis=1))
    expected = np.sqrt(location.var(axis=1) + np.mean(scale**2) * NU / (NU - 2))
    np.testing.assert_allclose(std, expected)
    assert np.all(std > reg.scale_)  # the noise is included
    samples = reg.sample_y(X[:5], n_samples=40_000, random_state=0)
    assert samples.shape == (5, 40_000)
    assert np.all(np.abs(samples.mean(axis=1) - mean) < 5 * std / np.sqrt(40_000))
    # The t_4 variance estimate has a heavy tail: a loose check on the spread.
    np.testing.assert_allclose(samples.std(axis=1), std, rtol=0.1)
    np.testing.assert_array_equal(reg.sample_y(X[:5], 3, random_state=1),
                                  reg.sample_y(X[:5], 3, random_state=1))
    assert reg.score(X, y) > 0.5


def test_std_is_infinite_for_nu_at_most_two():
    X, y = _heavy_tailed(200, seed=9)
    reg = RobustTRegression(nu=2.0, random_state=0, **FAST).fit(X, y)
    mean, std = reg.predict(X[:3], return_std=True)
    assert np.all(np.isfinite(mean)) and np.all(np.isinf(std))


def test_fixed_scale_and_attributes(fitted):
    X, y, _ = fitted
    reg = RobustTRegression(scale=0.5, acceptance="firefly", random_state=0, **FAST).fit(X, y)
    assert reg.scale_ == 0.5 and np.all(reg.posterior_["scale"] == 0.5)
    assert reg.posterior_["coef"].shape == (2, 60, 2)
    assert reg.posterior_["intercept"].shape == (2, 60)
    assert reg.posterior_["n_bright"].shape == (2, 60)
    no_intercept = RobustTRegression(fit_intercept=False, random_state=0, **FAST).fit(X, y)
    assert no_intercept.intercept_ == 0.0


# --- scikit-learn citizenship --------------------------------------------------------------

def test_pipeline_grid_search_cross_validation():
    X, y = _heavy_tailed(300, seed=10)
    pipeline = make_pipeline(StandardScaler(), RobustTRegression(random_state=0, **FAST))
    search = GridSearchCV(pipeline, {"robusttregression__prior_scale": [0.1, 1.0],
                                     "robusttregression__nu": [2.5, 4.0]}, cv=3).fit(X, y)
    assert search.best_score_ > 0.5
    scores = cross_val_score(RobustTRegression(random_state=0, **FAST), X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.5)


# --- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("params, message", [
    (dict(nu=0.0), "nu"), (dict(nu=-1.0), "nu"), (dict(scale=0.0), "scale"),
    (dict(prior="cauchy"), "prior"), (dict(proposal="nuts"), "proposal"),
    (dict(prior_scale=-1.0), "prior_scale"),
])
def test_bad_parameters_raise_clear_errors(params, message):
    X, y = _heavy_tailed(50)
    with pytest.raises(ValueError, match=message):
        RobustTRegression(**params, **FAST).fit(X, y)


def test_confidence_needs_a_fixed_scale_or_a_lipschitz_constant():
    X, y = _heavy_tailed(100)
    with pytest.raises(ValueError, match="lipschitz"):
        RobustTRegression(acceptance="confidence", **FAST).fit(X, y)
    reg = RobustTRegression(acceptance="confidence", scale=0.5, random_state=0, **FAST)
    assert np.all(np.isfinite(reg.fit(X, y).coef_))


def test_nan_in_data_and_bad_sample_y():
    X, y = _heavy_tailed(50)
    y_bad = y.copy()
    y_bad[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RobustTRegression(**FAST).fit(X, y_bad)
    reg = RobustTRegression(random_state=0, **FAST).fit(X, y)
    with pytest.raises(ValueError, match="n_samples"):
        reg.sample_y(X, n_samples=0)


def test_too_few_samples_for_a_sampled_scale():
    X, y = _heavy_tailed(3)
    with pytest.raises(ValueError, match="more samples than coefficients.*funnel toward scale 0"):
        RobustTRegression(**FAST).fit(X, y)
    assert np.isfinite(RobustTRegression(scale=1.0, random_state=0, **FAST).fit(X, y).coef_).all()


def test_the_refusals_advice_for_more_features_than_rows_is_what_it_says():
    """The refusal of more coefficients than rows names its way out: a fixed ``scale`` with
    ``prior="gaussian"`` samples the rows' span (and ``prior_scale="auto"`` is accepted
    there)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 60))
    y = X[:, 0] + rng.standard_t(4, size=20)
    with pytest.raises(ValueError, match=r"prior='gaussian'.*rows' span.*prior_scale='auto'"):
        RobustTRegression(**FAST).fit(X, y)
    fit = quiet_fit(RobustTRegression(scale=1.0, prior="gaussian", prior_scale="auto",
                                      random_state=0, **FAST), X, y)
    assert fit.span_rank_ == 19 and fit.coef_.shape == (60,)
    assert np.isfinite(fit.coef_).all()

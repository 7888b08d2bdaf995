"""Firefly Monte Carlo: the bounds and their collapsed sums, the bright/dark set, exactness
against a grid posterior and the exact chain, invariance, the bright fraction, the
classifier's scikit-learn citizenship, and bad input."""
import warnings

import numpy as np
import pytest
from scipy.special import log_expit, log_softmax, logsumexp, softmax
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from skbayes_mh import FireflySoftmaxClassifier, MinibatchMHLogisticRegression, sample
from skbayes_mh._kernels.firefly import firefly_pseudo_posterior, firefly_terms
from skbayes_mh.acceptance import Firefly
from skbayes_mh.models import LogisticModel, SoftmaxModel
from skbayes_mh.models.logistic import jaakkola_jordan_lambda
from skbayes_mh.models.softmax import SOFTMAX_BOUNDS, softmax_curvature

from _models import (STOCHASTIC_CHECKS, batch_means_standard_error, firefly_chain,
                     linear_loglik, linear_target, mh_chain)

FAST = dict(n_draws=60, n_warmup=60, n_chains=2)


# --- bounds ----------------------------------------------------------------------------

def jj_lambda(xi):
    return np.vectorize(jaakkola_jordan_lambda)(np.asarray(xi, dtype=float))


def curvatures(psi, kind):
    """``softmax_curvature`` for every row of ``psi`` (N, K)."""
    out = np.empty((psi.shape[0], psi.shape[1], psi.shape[1]))
    for n in range(psi.shape[0]):
        softmax_curvature(np.ascontiguousarray(psi[n]), SOFTMAX_BOUNDS[kind], out[n])
    return out


def test_jaakkola_jordan_bound_is_below_and_tight():
    s = np.linspace(-12, 12, 2001)
    for xi in (0.0, 1e-8, 0.3, 1.5, 6.0):
        lam = jj_lambda(xi)
        bound = log_expit(xi) + (s - xi) / 2 - lam * (s**2 - xi**2)
        assert np.all(bound <= log_expit(s) + 1e-12)
        for tight in (xi, -xi):
            assert log_expit(xi) + (tight - xi) / 2 - lam * (tight**2 - xi**2) == \
                pytest.approx(log_expit(tight), abs=1e-12)
    # The xi -> 0 limit: a(0) = -lambda(0) = -1/8.
    assert jj_lambda(0.0) == 0.125
    assert jj_lambda(1e-4) == pytest.approx(0.125, rel=1e-8)


def _logistic_setup(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (rng.random(n) < 0.5).astype(float)
    return X, y


def _softmax_setup(n=200, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = rng.integers(0, k, size=n).astype(float)
    return X, y


def _pointwise(target, bound, theta, inv_temperature=1.0):
    """Per-row (l, b) from the kernel."""
    values = np.empty((target.n_data, 2))
    firefly_terms(target.spec, tuple(bound), np.asarray(theta, dtype=float), inv_temperature,
                  values)
    return values


def _collapsed(bound, theta):
    return -0.5 * theta @ bound.quad @ theta + bound.lin @ theta + bound.const


@pytest.mark.parametrize("bound", ["map", "untuned"])
def test_logistic_bounds_collapse_and_match_the_likelihood(bound):
    X, y = _logistic_setup()
    design = np.column_stack([X, np.ones(len(y))])
    target = linear_target(LogisticModel(), X, y, np.ones(3))
    bounds = target.model.firefly_bound(target.data, target.mean, bound, 1.0)
    theta_map = target.mean
    for theta in (theta_map, theta_map + np.array([0.5, -1.0, 2.0])):
        values = _pointwise(target, bounds, theta)
        loglik = log_expit((2 * y - 1) * (design @ theta))
        np.testing.assert_allclose(values[:, 0], loglik, atol=1e-12)
        assert np.all(values[:, 1] <= values[:, 0] + 1e-12)
        assert _collapsed(bounds, theta) == pytest.approx(values[:, 1].sum(), rel=1e-10)
    if bound == "map":  # tight at the MAP
        np.testing.assert_allclose(_pointwise(target, bounds, theta_map)[:, 1],
                                   _pointwise(target, bounds, theta_map)[:, 0], atol=1e-10)


@pytest.mark.parametrize("curvature", ["jebara", "bohning"])
@pytest.mark.parametrize("bound", ["map", "untuned"])
def test_softmax_bounds_collapse_and_match_the_likelihood(bound, curvature):
    X, y = _softmax_setup()
    design = np.column_stack([X, np.ones(len(y))])
    target = linear_target(SoftmaxModel(3, curvature), X, y, np.ones(9))
    bounds = target.model.firefly_bound(target.data, target.mean, bound, 1.0)
    theta_map = target.mean
    rng = np.random.default_rng(1)
    for theta in (theta_map, theta_map + rng.normal(size=9)):
        values = _pointwise(target, bounds, theta)
        scores = design @ theta.reshape(3, 3).T
        loglik = log_softmax(scores, axis=1)[np.arange(len(y)), y.astype(int)]
        np.testing.assert_allclose(values[:, 0], loglik, atol=1e-12)
        assert np.all(values[:, 1] <= values[:, 0] + 1e-12)
        assert _collapsed(bounds, theta) == pytest.approx(values[:, 1].sum(), rel=1e-10)
    if bound == "map":
        values = _pointwise(target, bounds, theta_map)
        np.testing.assert_allclose(values[:, 1], values[:, 0], atol=1e-10)
    # The bound is not tight away from psi: some slack at a random point.
    values = _pointwise(target, bounds, theta_map + rng.normal(size=9))
    assert np.any(values[:, 0] - values[:, 1] > 1e-3)


@pytest.mark.parametrize("curvature", ["jebara", "bohning"])
def test_softmax_curvatures_bound_logsumexp_everywhere(curvature):
    # f(eta) <= f(psi) + (eta - psi) . softmax(psi) + (eta - psi)' C (eta - psi) / 2 at
    # random pairs, tangent points from nearly uniform to very confident, steps up to 100.
    rng = np.random.default_rng(11)
    for n_classes in (2, 3, 5):
        psi = rng.normal(size=(3000, n_classes)) * rng.choice([0.1, 3.0, 20.0], size=(3000, 1))
        step = rng.normal(size=psi.shape) * rng.choice([1e-3, 1.0, 100.0], size=(3000, 1))
        curv = curvatures(psi, curvature)
        np.testing.assert_allclose(curv, np.swapaxes(curv, 1, 2))
        upper = (logsumexp(psi, axis=1) + np.sum(step * softmax(psi, axis=1), axis=1)
                 + 0.5 * np.einsum("na,nab,nb->n", step, curv, step))
        slack = upper - logsumexp(psi + step, axis=1)
        assert slack.min() > -1e-9 * (1 + np.abs(upper).max())
        # Tight to second order at psi: the curvature dominates the Hessian there.
        p = softmax(psi, axis=1)
        hessian = np.einsum("na,ab->nab", p, np.eye(n_classes)) - p[:, :, None] * p[:, None, :]
        assert np.linalg.eigvalsh(curv - hessian).min() > -1e-12


def test_jebara_curvature_is_jaakkola_jordan_for_two_classes_and_shrinks():
    psi = np.array([[0.0, 0.0], [2.0, -1.0], [-4.0, 5.0]])
    difference = psi[:, 0] - psi[:, 1]
    expected = 2 * jj_lambda(difference)[:, None, None] * np.array([[1, -1], [-1, 1]])
    np.testing.assert_allclose(curvatures(psi, "jebara"), expected, atol=1e-15)
    # A confidently classified point: far below Bohning's fixed curvature.
    confident = curvatures(np.array([[12.0, 0.0, -1.0]]), "jebara")[0]
    assert np.trace(confident) < 0.2 * np.trace(curvatures(np.zeros((1, 3)), "bohning")[0])


@pytest.mark.parametrize("model", ["logistic", "softmax", "softmax-bohning"])
def test_pseudo_posterior_gradient_matches_finite_differences(model):
    if model == "logistic":
        X, y = _logistic_setup()
        target = linear_target(LogisticModel(), X, y, np.ones(3), inv_temperature=0.5)
    else:
        X, y = _softmax_setup()
        curvature = "bohning" if model.endswith("bohning") else "jebara"
        target = linear_target(SoftmaxModel(3, curvature), X, y, np.ones(9), inv_temperature=0.5)
    bounds = tuple(target.model.firefly_bound(target.data, target.mean, "untuned", 0.5))
    n = len(y)
    order = np.arange(n)

    def value(theta, gradient=None):
        out, status = firefly_pseudo_posterior(
            target.spec, target.prior.as_tuple(), bounds, theta, order, n // 2, 0.5,
            gradient is not None, np.zeros(theta.size) if gradient is None else gradient)
        assert status == 0
        return out

    theta = target.mean + 0.3
    gradient = np.zeros(theta.size)
    value(theta, gradient)
    h = 1e-6
    numeric = [(value(theta + h * e) - value(theta - h * e)) / (2 * h) for e in np.eye(theta.size)]
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6)


# --- exactness, invariance, bright fraction ---------------------------------------------

@pytest.fixture(scope="module")
def grid_posterior():
    """Logistic regression with a slope and an intercept, N(0, 1) priors: the posterior on a
    fine grid, and the Laplace approximation."""
    n_data = 1000
    rng = np.random.default_rng(3)
    x = rng.normal(size=n_data)
    y = (rng.random(n_data) < 1.0 / (1.0 + np.exp(-(1.0 * x - 0.5)))).astype(float)
    design = np.column_stack([x, np.ones(n_data)])
    target = linear_target(LogisticModel(), x[:, None], y, np.ones(2))
    theta_map, covariance = target.mean, target.covariance
    half_width = 7.0 * np.sqrt(np.diag(covariance))
    axes = [np.linspace(m - h, m + h, 201) for m, h in zip(theta_map, half_width)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 2)
    log_post = -0.5 * (grid**2).sum(axis=1)
    log_post += log_expit((grid @ design.T) * (2 * y - 1)).sum(axis=1)
    weights = np.exp(log_post - log_post.max())
    weights /= weights.sum()
    mean = weights @ grid
    sd = np.sqrt(weights @ (grid - mean) ** 2)
    spacing = np.array([a[1] - a[0] for a in axes])
    return dict(design=design, y=y, theta_map=theta_map, covariance=covariance, grid=grid,
                weights=weights, mean=mean, sd=sd, spacing=spacing, target=target)


#: The old names of the parameter updates.
PROPOSALS = {"mh": "random_walk", "mala": "mala", "slice": "slice"}


@pytest.mark.parametrize("bound", ["map", "untuned"])
@pytest.mark.parametrize("resample", ["implicit", "explicit"])
@pytest.mark.parametrize("update", ["mh", "mala", "slice"])
def test_chain_matches_the_grid_posterior(grid_posterior, update, resample, bound):
    out = firefly_chain(grid_posterior["target"], grid_posterior["theta_map"], 7, 2000, 60_000,
                        proposal=PROPOSALS[update], bound=bound, resample=resample)
    draws = out.draws
    mean, sd = grid_posterior["mean"], grid_posterior["sd"]
    # Within 0.1 posterior sd, and the Monte Carlo error of this chain is well below that.
    standard_error = batch_means_standard_error(draws)
    assert np.all(standard_error < 0.03 * sd), standard_error / sd
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 0.1 * sd), (draws.mean(axis=0) - mean) / sd
    assert np.all(np.abs(draws.std(axis=0) / sd - 1) < 0.1), draws.std(axis=0) / sd
    assert np.all(out.stats["n_data_read"] < len(grid_posterior["y"]))


def test_bright_fraction_matches_its_expectation(grid_posterior):
    # E[#bright] = sum_n E_posterior[1 - B_n / L_n], computed on the grid.
    target = grid_posterior["target"]
    grid, weights = grid_posterior["grid"], grid_posterior["weights"]
    keep = weights > 1e-12 * weights.max()
    s = (grid[keep] @ grid_posterior["design"].T) * (2 * grid_posterior["y"] - 1)
    xi = 1.5  # the untuned Jaakkola-Jordan parameter
    lam = jj_lambda(xi)
    constant = log_expit(xi) - xi / 2 + lam * xi**2
    gap = log_expit(s) - (constant + 0.5 * s - lam * s**2)
    expected = weights[keep] @ (-np.expm1(-gap)).sum(axis=1) / weights[keep].sum()
    out = firefly_chain(target, grid_posterior["theta_map"], 8, 1000, 40_000,
                        proposal="random_walk", bound="untuned")
    bright = out.stats["n_bright"].astype(float)
    error = batch_means_standard_error(bright[:, None])[0]
    assert abs(bright.mean() - expected) < 4 * error, (bright.mean(), expected, error)
    assert expected > 10  # a case with many bright points


def test_invariance_from_exact_draws(grid_posterior):
    # Chains started at exact posterior draws (z drawn from p(z | theta) at the start) must
    # stay distributed as the posterior after a few Firefly iterations.
    target = grid_posterior["target"]
    rng = np.random.default_rng(9)
    n_chains = 1000
    cells = rng.choice(len(grid_posterior["grid"]), size=n_chains, p=grid_posterior["weights"])
    starts = grid_posterior["grid"][cells] + (rng.random((n_chains, 2)) - 0.5) * grid_posterior["spacing"]
    finals = np.array([
        firefly_chain(target, start, 10_000 + k, 0, 10, proposal="random_walk", bound="untuned",
                      q_db=0.05, step_size=1.5).draws[-1]
        for k, start in enumerate(starts)])
    mean, sd = grid_posterior["mean"], grid_posterior["sd"]
    z = (finals.mean(axis=0) - mean) / (sd / np.sqrt(n_chains))
    assert np.all(np.abs(z) < 4), z
    ratio = finals.var(axis=0, ddof=1) / sd**2
    assert np.all(np.abs(ratio - 1) < 4 * np.sqrt(2.0 / n_chains)), ratio
    assert np.mean(np.abs(finals - starts) > grid_posterior["spacing"]) > 0.5  # they moved


# Bohning's fixed curvature is loose at confidently classified points: on the separated
# classes its chain keeps ~40 of 300 points bright and mixes too slowly for a 20,000-draw
# test (Monte Carlo error ~0.06 sd), so it is checked on overlapping classes.
@pytest.mark.parametrize("softmax_bound, class_sep", [("jebara", 1.0), ("bohning", 0.5)])
def test_softmax_firefly_matches_the_exact_chain(softmax_bound, class_sep):
    X, y = make_classification(n_samples=300, n_features=2, n_informative=2, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, class_sep=class_sep,
                               random_state=1)
    common = dict(n_warmup=2000, n_chains=2, random_state=0)
    # The exact reference with Hamiltonian paths: about 0.5 ESS per draw (the random walk
    # needed 40,000 x 5 iterations for the same precision).
    exact = FireflySoftmaxClassifier(acceptance="metropolis", proposal="hmc", n_draws=10_000,
                                     thin=1, **common).fit(X, y)
    # thin="auto": Firefly's MALA chain mixes slowly along the intercepts' prior-only ridge;
    # up to 10 iterations per draw keep its Monte Carlo error well inside the 0.1 sd below.
    firefly = FireflySoftmaxClassifier(acceptance=Firefly(softmax_bound=softmax_bound),
                                       n_draws=20_000, **common).fit(X, y)
    reference = np.concatenate([exact.posterior_.get("coef", flat=True).reshape(-1, 6),
                                exact.posterior_.get("intercept", flat=True)], axis=1)
    draws = np.concatenate([firefly.posterior_.get("coef", flat=True).reshape(-1, 6),
                            firefly.posterior_.get("intercept", flat=True)], axis=1)
    sd = reference.std(axis=0)
    assert np.all(np.abs(draws.mean(axis=0) - reference.mean(axis=0)) < 0.1 * sd)
    assert np.all(np.abs(draws.std(axis=0) / sd - 1) < 0.1)
    assert firefly.posterior_["n_data_read"].mean() < 300


# --- estimators ---------------------------------------------------------------------------

@parametrize_with_checks([FireflySoftmaxClassifier(**FAST),
                          FireflySoftmaxClassifier(acceptance="minibatch", **FAST)],
                         expected_failed_checks=lambda estimator: STOCHASTIC_CHECKS)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def three_classes():
    return make_classification(n_samples=400, n_features=4, n_informative=3, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, class_sep=2.0,
                               random_state=0)


def test_fitted_attributes_and_probabilities(three_classes):
    X, y = three_classes
    clf = FireflySoftmaxClassifier(acceptance="firefly", random_state=0, **FAST).fit(X, y)
    assert clf.coef_.shape == (3, 4) and clf.intercept_.shape == (3,)
    assert clf.posterior_["coef"].shape == (2, 60, 3, 4)
    assert clf.posterior_["n_bright"].shape == (2, 60)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[proba.argmax(axis=1)])
    np.testing.assert_array_equal(proba, clf.predict_proba(X))  # deterministic
    assert clf.score(X, y) > 0.8


def test_two_classes_and_string_labels(three_classes):
    X, y = three_classes
    keep = y < 2
    labels = np.array(["no", "yes"])[y[keep]]
    clf = FireflySoftmaxClassifier(random_state=0, **FAST).fit(X[keep], labels)
    assert list(clf.classes_) == ["no", "yes"]
    proba = clf.predict_proba(X[keep])
    assert proba.shape == (keep.sum(), 2)
    assert clf.score(X[keep], labels) > 0.8
    logistic = MinibatchMHLogisticRegression(acceptance="firefly", random_state=0,
                                             **FAST).fit(X[keep], labels)
    assert np.mean(logistic.predict(X[keep]) == clf.predict(X[keep])) > 0.95


def test_pipeline_grid_search_cross_validation(three_classes):
    X, y = three_classes
    pipeline = make_pipeline(StandardScaler(), FireflySoftmaxClassifier(random_state=0, **FAST))
    assert cross_val_score(pipeline, X, y, cv=3).mean() > 0.8
    search = GridSearchCV(pipeline, {"fireflysoftmaxclassifier__prior_scale": [0.1, 1.0]}, cv=3)
    assert search.fit(X, y).best_score_ > 0.8


# --- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("params, message", [
    (dict(q_db=0.0), "q_db"), (dict(q_db=1.5), "q_db"), (dict(bound="tight"), "bound"),
    (dict(resample="all"), "resample"),
    (dict(resample_fraction=0.0), "resample_fraction"), (dict(softmax_bound="exact"), "softmax_bound"),
])
def test_bad_parameters(params, message, three_classes):
    with pytest.raises(ValueError, match=message):
        Firefly(**params).validate()
    X, y = three_classes
    with pytest.raises(ValueError, match=message):
        FireflySoftmaxClassifier(acceptance=Firefly(**params), **FAST).fit(X, y)


def test_a_model_without_a_collapsible_bound_is_refused():
    x = np.random.default_rng(0).normal(size=(100, 1))
    with pytest.raises(ValueError, match="collapsible"):
        sample(linear_loglik, x, [0.0], step_size=0.1, acceptance="firefly")
    with pytest.raises(ValueError, match="collapsible"):
        sample(linear_loglik, x, [0.0], step_size=0.1, acceptance=Firefly())


@pytest.mark.parametrize("update", ["mh", "mala"])
def test_the_full_data_baseline_is_the_ordinary_sampler(grid_posterior, update):
    # The benchmarks' baseline: the same update, shape and tuning on the full-data
    # posterior, through the ordinary Metropolis-Hastings sampler.
    out = mh_chain(grid_posterior["target"], grid_posterior["theta_map"], 11, 2000, 20_000,
                      proposal=PROPOSALS[update])
    mean, sd = grid_posterior["mean"], grid_posterior["sd"]
    assert np.all(np.abs(out.draws.mean(axis=0) - mean) < 0.1 * sd)
    assert np.all(np.abs(out.draws.std(axis=0) / sd - 1) < 0.1)
    assert np.all(out.stats["n_data_read"] == len(grid_posterior["y"]))


def test_softmax_chains_start_inside_the_laplace_approximation_and_mix():
    """The over-parameterised softmax: per-coordinate jitter by the marginal Laplace sds put
    the starts hundreds of sds off along the class contrasts, where the minibatch test with
    control variates rejected every move (acceptance 0, R-hat inf). Starts drawn from the
    Laplace approximation mix, and the contrast's posterior agrees with the exact test's."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 4))
    y = rng.integers(0, 3, 2000)
    settings = dict(n_draws=500, n_warmup=500, random_state=0)
    subsampled = FireflySoftmaxClassifier(acceptance="minibatch", **settings).fit(X, y)
    assert subsampled.acceptance_rate_ > 0.1
    worst = max(float(np.max(v)) for v in subsampled.diagnostics_["r_hat"].values())
    assert worst < 1.02
    exact = FireflySoftmaxClassifier(acceptance="metropolis", **settings).fit(X, y)
    contrasts = []
    for fit in (subsampled, exact):
        coef = fit.posterior_["coef"]
        contrast = (coef[..., 0, :] - coef[..., 1, :]).reshape(-1, 4)
        ess = min(float(np.min(v)) for v in fit.diagnostics_["ess_bulk"].values())
        contrasts.append((contrast.mean(axis=0), contrast.std(axis=0), ess))
    (m1, s1, e1), (m2, s2, e2) = contrasts
    assert np.all(np.abs(m1 - m2) < 4 * np.sqrt(s1**2 / e1 + s2**2 / e2))


def test_firefly_warns_when_most_rows_stay_bright():
    from sklearn.exceptions import EfficiencyWarning

    X, y = make_classification(2000, 5, random_state=0)
    settings = dict(n_draws=200, n_warmup=200, random_state=0)
    with pytest.warns(EfficiencyWarning, match=r"Firefly kept \d+% of the rows bright"):
        loose = MinibatchMHLogisticRegression(acceptance=Firefly(bound="untuned"),
                                              **settings).fit(X, y)
    assert loose.bright_fraction_ > 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error", EfficiencyWarning)
        tight = MinibatchMHLogisticRegression(acceptance="firefly", **settings).fit(X, y)
    assert tight.bright_fraction_ < 0.5

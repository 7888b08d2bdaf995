"""Sampling in the rows' span (``skbayes_mh/_core/span.py``): with more features than rows
the chains sample the model reduced to the rows' span and each kept draw's complement is
drawn from the prior. The reduction must be exact: the same likelihood and prior at every
point, and the same posterior as the full-dimensional sampler within Monte Carlo error."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.exceptions import ConvergenceWarning

import skbayes_mh._core.fit as core_fit
from skbayes_mh import (FireflySoftmaxClassifier, MinibatchMHLogisticRegression,
                        MinibatchMHPoissonRegression, NegativeBinomialRegression,
                        RobustTRegression)
from skbayes_mh._core.span import row_span
from skbayes_mh.acceptance import resolve_acceptance

from _stats import assert_same_distribution


def short_wide(n_rows=30, n_features=70, n_classes=2, seed=0, offset=1.5):
    """Rows of features on several scales away from 0 (so that centring and autoscaling
    matter) and labels from a few of them; with ``n_classes=0`` a real outcome."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features)) * rng.uniform(0.3, 3.0, n_features) + offset
    signal = (X[:, :3] - offset) @ np.array([1.0, -0.8, 0.5])
    if n_classes == 0:
        return X, signal + 0.5 * rng.standard_t(4, size=n_rows)
    if n_classes == -1:  # counts
        return X, rng.negative_binomial(3, 3 / (3 + np.exp(0.5 * signal + 1.0)))
    if n_classes == 2:
        return X, (rng.random(n_rows) < 1 / (1 + np.exp(-signal))).astype(int)
    return X, np.digitize(signal + rng.logistic(size=n_rows), [-1.0, 1.0])[:n_rows] % n_classes


def problem(estimator, X, y):
    """The likelihood family, data and prior ``estimator.fit`` would sample."""
    estimator._validate_params()
    classes = is_classifier(estimator)
    X, y, weights, summary = estimator._fit_data(X, y, None, classes)
    if classes:
        estimator.classes_ = summary["classes"]
    return estimator._problem(X, y, weights, summary, resolve_acceptance("metropolis"))


#: Each family the reduction serves, with its outcome (``short_wide``'s ``n_classes``): a
#: Student-t regression with its scale given (with its scale sampled, more weights than
#: rows can fit the data exactly and RobustTRegression refuses them), and a negative
#: binomial one, whose dispersion is sampled beside the reduced weights.
ESTIMATORS = {
    "logistic": (MinibatchMHLogisticRegression, 2),
    "softmax": (FireflySoftmaxClassifier, 3),
    "robust": (lambda **kw: RobustTRegression(prior="gaussian", scale=1.0, **kw), 0),
    "negative_binomial": (NegativeBinomialRegression, -1),
}


def rank_deficient(n_classes, seed=1):
    """More rows (80) than features (20), of rank 15: the last five features are the first
    five times 2 (the columns' Gram matrix finds the span, and the complement is applied
    through its basis ``V`` rather than through the rows)."""
    X, y = short_wide(n_rows=80, n_features=15, n_classes=n_classes, seed=seed)
    return np.hstack([X, 2.0 * X[:, :5]]), y


@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("autoscale", [True, False])
@pytest.mark.parametrize("shape", ["short_wide", "rank_deficient"])
def test_the_reduced_model_has_the_same_likelihood_and_prior(name, autoscale, shape):
    """At any reduced point and complement, the completed theta has the reduced point's
    log-likelihood, its complement is orthogonal to the rows, and its log prior is the
    reduced one plus the complement's own Gaussian term."""
    make, n_classes = ESTIMATORS[name]
    if shape == "short_wide":
        X, y = short_wide(n_classes=n_classes, seed=1)
        rank = X.shape[0] - int(autoscale)
    else:
        X, y = rank_deficient(n_classes)
        rank = 15
    family, data, prior = problem(make(autoscale=autoscale), X, y)
    span = row_span(data, prior)
    assert span is not None and span.rank == rank
    assert (span.basis is None) == (shape == "short_wide")
    rng = np.random.default_rng(2)
    d_reduced = family.n_params(span.data)
    reduced = rng.normal(size=(5, d_reduced))
    if family.n_extra:  # a log-dispersion near 0
        reduced[:, -1] = 0.1 * reduced[:, -1]
    normals = rng.standard_normal((5, span.n_outputs, span.n_features))
    full = np.empty((5, family.n_params(data)))
    full[:, full.shape[1] - family.n_extra:] = reduced[:, d_reduced - family.n_extra:]
    span.complete(reduced, normals, full)
    for theta_r, theta, e in zip(reduced, full, normals):
        loglik = family.loglik_derivatives(data, theta, 0)[0]
        reduced_loglik = family.loglik_derivatives(span.data, theta_r, 0)[0]
        np.testing.assert_allclose(loglik, reduced_loglik, rtol=1e-9, atol=1e-9)
        # The complement: e less its projection on the rows' span, whitened.
        if span.basis is None:
            projection = span._z_transpose_times(span._z_times(e) @ span.left @ span.left.T)
        else:
            projection = e @ span.basis @ span.basis.T
        perpendicular = e - projection
        np.testing.assert_allclose(span._z_times(perpendicular), 0.0, atol=1e-8)
        expected = (span.prior.log_density(theta_r)[0]
                    - 0.5 * float(np.sum(perpendicular**2)))
        np.testing.assert_allclose(prior.log_density(theta)[0], expected, rtol=1e-9)


def _fit(make, X, y, span, **settings):
    original = core_fit.row_span
    if not span:
        core_fit.row_span = lambda data, prior: None
    try:
        return make(**settings).fit(X, y)
    finally:
        core_fit.row_span = original


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_the_reduced_sampler_agrees_with_the_full_dimensional_one(name):
    """The same posterior (every weight's, intercept's and scale's mean and sd) as the exact
    sampler on all coordinates, each side with several thousand effective draws: enough to
    see a 0.1 sd shift or a 10% sd error in any coordinate."""
    make, n_classes = ESTIMATORS[name]
    X, y = short_wide(n_rows=25, n_features=40, n_classes=n_classes, seed=3)
    # The negative binomial's dispersion, wide on 25 rows, mixes slowly in both samplers,
    # and the weights with it: a chain of either can sit in one region for thousands of
    # draws (one of four took 10,000 draws to an effective 12 for the dispersion and 51 for
    # a weight), so it runs eight chains, whose pooled draws see its 10% sd errors.
    settings = dict(acceptance="metropolis", proposal="hmc", random_state=0, thin=1,
                    n_chains=8 if name == "negative_binomial" else 4,
                    n_draws={"softmax": 10000, "negative_binomial": 12000}.get(name, 4000))
    reduced = _fit(make, X, y, True, **settings)
    full = _fit(make, X, y, False, **settings)
    theta_r, theta_f = reduced._theta_draws(), full._theta_draws()
    # The weights' and intercepts' (the negative binomial's dispersion, some hundreds of
    # effective draws in each sampler, is compared at that power).
    linear = theta_f.shape[-1] - reduced._family().n_extra
    assert_same_distribution(theta_r[..., :linear], theta_f[..., :linear], label=name)
    if linear < theta_f.shape[-1]:
        assert_same_distribution(theta_r[..., linear:], theta_f[..., linear:], label=name,
                                 detect=None)


def test_a_continued_fit_completes_its_draws_as_one_longer_fit():
    X, y = short_wide(seed=4)
    settings = dict(n_chains=2, n_warmup=50, random_state=0)
    longer = MinibatchMHLogisticRegression(n_draws=130, **settings).fit(X, y)
    resumed = MinibatchMHLogisticRegression(n_draws=60, warm_start=True, **settings).fit(X, y)
    resumed.set_params(n_draws=130).fit(X, y)
    np.testing.assert_array_equal(resumed.posterior_["coef"], longer.posterior_["coef"])
    one_job = MinibatchMHLogisticRegression(n_draws=130, n_jobs=1, **settings).fit(X, y)
    np.testing.assert_array_equal(one_job.posterior_["coef"], longer.posterior_["coef"])


def test_a_sparse_x_samples_as_its_dense_twin():
    """A CSR ``X`` reduces through sparse products (never densified): the same reduced rows
    and, with the same seed, the same draws up to rounding."""
    X, y = short_wide(seed=5, offset=0.0)
    X[np.abs(X) < 1.0] = 0.0
    settings = dict(n_draws=100, n_chains=2, n_warmup=100, random_state=0)
    dense = MinibatchMHLogisticRegression(**settings).fit(X, y)
    sparse = MinibatchMHLogisticRegression(**settings).fit(sp.csr_array(X), y)
    np.testing.assert_allclose(sparse.posterior_["coef"], dense.posterior_["coef"],
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", ["constant", "duplicated", "zero_sparse_column",
                                  "one_row_per_class", "two_rows"])
def test_degenerate_rows_and_columns_fit(case):
    """Constant and duplicated columns, a sparse column of zeros, one row per class and two
    rows: each fits, its posterior finite, a constant column's weight its prior's (a
    posterior sd of its prior scale over its spread, 1 for a constant feature)."""
    X, y = short_wide(seed=6)
    estimator = MinibatchMHLogisticRegression(n_draws=400, n_chains=2, random_state=0)
    if case == "constant":
        X[:, 5] = 3.0
    elif case == "duplicated":
        X[:, 6] = X[:, 7]
    elif case == "zero_sparse_column":
        X[:, 8] = 0.0
        X = sp.csr_array(X)
    elif case == "one_row_per_class":
        X, y = X[:3], np.array([0, 1, 2])
        estimator = FireflySoftmaxClassifier(n_draws=400, n_chains=2, random_state=0)
    else:
        X, y = X[:2], np.array([0, 1])
    estimator.fit(X, y)
    coef = estimator.posterior_["coef"]
    assert np.all(np.isfinite(coef)) and np.all(np.isfinite(estimator.predict_proba(X)))
    if case == "constant":
        assert abs(coef[..., 5].std() - 1.0) < 0.1


def _laplace_log_evidence(family, data, prior):
    """The Laplace approximation of the log evidence (up to a constant that does not depend
    on the weights' scale): log-likelihood and normalised Gaussian prior at the MAP, plus
    half the log determinant of the Laplace covariance."""
    theta, covariance, _, _ = family.laplace(data, prior, 1.0, True)
    loglik = family.loglik_derivatives(data, theta, 0, False)[0]
    log_prior = prior.log_density(theta)[0] - np.sum(np.log(prior.scales[prior.weight_mask()]))
    return loglik + log_prior + 0.5 * np.linalg.slogdet(covariance)[1]


@pytest.mark.parametrize("n_rows, n_features", [(30, 70), (300, 5)])
def test_the_learned_prior_scale_maximises_the_laplace_evidence(n_rows, n_features):
    """``prior_scale="auto"``: MacKay's fixed point lands where the Laplace evidence is
    within half a nat of its largest value on a grid of scales (it leaves out how the
    likelihood's curvature moves with the scale; on few rows the evidence is that flat over
    a decade of scales), with more features than rows (sampled in the rows' span) and
    with fewer."""
    from skbayes_mh.models._evidence import evidence_scale

    X, y = short_wide(n_rows=n_rows, n_features=n_features, seed=7)
    estimator = MinibatchMHLogisticRegression(prior_scale="auto")
    family, data, prior = problem(estimator, X, y)
    span = row_span(data, prior)
    if span is not None:
        data, prior = span.data, span.prior
    assert prior.learn_scale
    scale, _ = evidence_scale(family, data, prior)
    grid = np.exp(np.linspace(-4.0, 2.0, 61))
    evidence = [_laplace_log_evidence(family, data, prior.with_weight_scale(t)) for t in grid]
    at_scale = _laplace_log_evidence(family, data, prior.with_weight_scale(scale))
    assert at_scale > max(evidence) - 0.5, (scale, grid[int(np.argmax(evidence))])
    fitted = estimator.set_params(n_draws=50, n_chains=2, n_warmup=50,
                                  random_state=0).fit(X, y)
    np.testing.assert_allclose(fitted.prior_scale_, scale, rtol=1e-12)


def short_wide_counts(n_rows=100, n_features=2000, seed=0):
    """Counts from 10 of ``n_features`` standard normal features (weights 0.3, intercept
    0.5), with three quarters of the rows for training: ``X, y, X_test, y_test``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    y = rng.poisson(np.exp(X[:, :10] @ np.full(10, 0.3) + 0.5))
    cut = 3 * n_rows // 4
    return X[:cut], y[:cut], X[cut:], y[cut:]


@pytest.mark.parametrize("make", [MinibatchMHPoissonRegression, NegativeBinomialRegression])
def test_log_link_defaults_learn_the_prior_scale_and_predict_short_wide_counts(make):
    """The log-link regressions' default ``prior_scale="auto"``: with 75 rows and 2,000
    features the weights the rows do not inform keep their prior's spread, and under a
    scale of 1 the predictive mean ``exp(x . w + b)`` of a new row reached 10^86 (test D^2
    about -10^85, chains unconverged after 10 to 100 s). The learned scale (about 0.02)
    gives a converged fit whose predicted means stay near the counts' level (75 rows say
    little of 10 weak weights among 2,000: its test D^2 is near a constant prediction's)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, X_test, _ = short_wide_counts()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fitted = make_pipeline(StandardScaler(), make(random_state=0)).fit(X, y)
    model = fitted[-1]
    assert model.span_rank_ is not None and model.prior_scale_ < 0.2
    predicted = fitted.predict(X_test)
    assert np.all(np.isfinite(predicted)) and predicted.max() < 3 * y.max()
    assert 0.5 < predicted.mean() / y.mean() < 2.0


def test_a_learned_scale_under_laplace_priors_is_one():
    """``prior_scale="auto"`` (the count regressions' default) with Laplace priors, whose
    evidence is not computed, is the scale 1: the same draws as ``prior_scale=1.0``."""
    X, y = short_wide(n_rows=200, n_features=4, n_classes=-1)
    settings = dict(prior="laplace", n_draws=50, n_warmup=50, n_chains=2, random_state=0)
    auto = NegativeBinomialRegression(**settings).fit(X, y)
    one = NegativeBinomialRegression(prior_scale=1.0, **settings).fit(X, y)
    assert not hasattr(auto, "prior_scale_")
    np.testing.assert_array_equal(auto.posterior_.get("coef"), one.posterior_.get("coef"))

def test_the_convergence_check_judges_the_sampled_coordinates():
    """A default fit of 100 rows x 2,000 features: the rounds stop on the span's sampled
    coordinates, and the check judges those too, not the prior's exact independent draws
    of the other weights (whose largest R-hat over 2,000 coefficients passes 1.01 by chance
    at a few hundred draws). Chains too short for the sampled coordinates still warn, and
    name one."""

    from sklearn.datasets import make_classification
    from sklearn.exceptions import ConvergenceWarning

    X, y = make_classification(n_samples=100, n_features=2000, n_informative=20,
                               random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = MinibatchMHLogisticRegression(random_state=0).fit(X, y)
    assert fit.span_rank_ is not None
    assert fit.posterior_.n_draws <= 1000  # a few hundred a chain (the rounds' cap: 4,000)
    sampled = fit.diagnostics_.sampled  # what the check judged, as diagnostics_ reports it
    assert sampled.r_hat.shape == (fit.span_rank_ + 1,)  # the span's weights, the intercept
    assert sampled.r_hat.max() <= 1.01
    assert sampled.ess_bulk.min() >= 100 * fit.posterior_.n_chains
    with pytest.warns(ConvergenceWarning, match=r"span coordinate\[\d+\]"):
        short = MinibatchMHLogisticRegression(n_draws=5, n_warmup=20, random_state=0)
        short.fit(X, y)
    assert (short.diagnostics_.sampled.r_hat.max() > 1.01
            or short.diagnostics_.sampled.ess_bulk.min() < 100 * short.posterior_.n_chains)


def test_a_span_chain_that_never_moved_is_named():
    """A chain stuck in the sampled coordinates is named as stuck although its completed
    weights change at every draw (each gets a fresh prior draw of the complement)."""

    from sklearn.exceptions import ConvergenceWarning

    from skbayes_mh._core.convergence import diagnose
    from skbayes_mh.posterior import Posterior

    rng = np.random.default_rng(0)
    sampled = rng.standard_normal((3, 400, 5))
    sampled[1] = sampled[1, 0]  # chain 1 never moved
    completed = {"coef": np.concatenate([sampled, rng.standard_normal((3, 400, 20))], axis=2)}
    with pytest.warns(ConvergenceWarning, match="chain 1 never moved"):
        found = diagnose(Posterior(completed, {}), "fit", 2, checked=sampled)
    assert found.sampled.r_hat.shape == (5,)
    with warnings.catch_warnings():  # three moving chains of independent draws: no warning
        warnings.simplefilter("error", ConvergenceWarning)
        diagnose(Posterior(completed, {}), "fit", 2, checked=rng.standard_normal((3, 400, 5)))

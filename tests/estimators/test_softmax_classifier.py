"""FireflySoftmaxClassifier as a scikit-learn classifier: fitted attributes and
probabilities, two classes and string labels, pipelines and searches, bad parameters, the
starts of its chains, and Firefly's efficiency warning."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skbayes_mh import FireflySoftmaxClassifier, MinibatchMHLogisticRegression
from skbayes_mh.acceptance import Firefly
from skbayes_mh.diagnostics import ess_bulk

from _models import FAST, min_ess


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


@pytest.mark.slow
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
        contrasts.append((contrast.mean(axis=0), contrast.std(axis=0), min_ess(fit)))
    (m1, s1, e1), (m2, s2, e2) = contrasts
    assert np.all(np.abs(m1 - m2) < 4 * np.sqrt(s1**2 / e1 + s2**2 / e2))


@pytest.mark.slow
def test_firefly_warns_when_most_rows_stay_bright():
    from sklearn.exceptions import EfficiencyWarning

    X, y = make_classification(2000, 5, random_state=0)
    # What is tested is the warning and the share of bright rows, not the draws: thin=1
    # (the default's thinning of poorly mixing chains took 40 times the iterations).
    settings = dict(n_draws=200, n_warmup=200, thin=1, random_state=0)
    with pytest.warns(EfficiencyWarning, match=r"Firefly kept \d+% of the rows bright"):
        loose = MinibatchMHLogisticRegression(acceptance=Firefly(bound="untuned"),
                                              **settings).fit(X, y)
    assert loose.bright_fraction_ > 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error", EfficiencyWarning)
        tight = MinibatchMHLogisticRegression(acceptance="firefly", **settings).fit(X, y)
    assert tight.bright_fraction_ < 0.5


@pytest.mark.slow
def test_centred_and_over_parameterised_samplers_agree(three_classes):
    """Metropolis samples the centred family (K - 1 blocks in a sum-to-zero basis), Firefly
    the K class blocks: both report centred coefficients (summing to zero over the classes,
    scikit-learn's layout), whose posterior and the predictive probabilities they give must
    agree within Monte Carlo error."""
    X, y = three_classes
    X, y = X[:150], y[:150]
    settings = dict(n_draws=1500, n_warmup=500, random_state=1)
    fits = [FireflySoftmaxClassifier(acceptance=name, **settings).fit(X, y)
            for name in ("metropolis", "firefly")]
    assert fits[0].posterior_["coef"].shape == fits[1].posterior_["coef"].shape
    summaries = []
    for fit in fits:
        coef = fit.posterior_["coef"]
        np.testing.assert_allclose(coef.sum(axis=-2), 0.0, atol=1e-10)
        np.testing.assert_allclose(fit.posterior_["intercept"].sum(axis=-1), 0.0, atol=1e-10)
        flat = coef.reshape(-1, coef[0, 0].size)
        ess = fit.diagnostics_["ess_bulk"]["coef"].ravel()
        summaries.append((flat.mean(axis=0), flat.std(axis=0) / np.sqrt(ess)))
    (m1, e1), (m2, e2) = summaries
    assert np.all(np.abs(m1 - m2) < 4.5 * np.hypot(e1, e2))
    # Predictive probabilities: posterior means of each draw's probabilities, equal within
    # their Monte Carlo errors at every row.
    means, errors = [], []
    for fit in fits:
        _, eta = fit._eta_draws(X)
        per_draw = fit._per_draw(fit._family().class_probabilities(eta, {}))
        means.append(per_draw.mean(axis=(0, 1)))
        errors.append(per_draw.std(axis=(0, 1)) / np.sqrt(ess_bulk(per_draw)))
        np.testing.assert_allclose(fit.set_params(predict_tol=None).predict_proba(X),
                                   means[-1], atol=1e-12)
    assert np.all(np.abs(means[0] - means[1]) < 4.5 * np.hypot(*errors) + 1e-9)


@pytest.mark.slow
def test_firefly_on_iris_converges_with_the_other_settings_default():
    # Firefly's chains on iris mix slowly (an autocorrelation time near 190 iterations):
    # thin="auto" thins them past 10, as far as a bulk ESS of 250 a chain needs, so that
    # the fit converges (it warned at R-hat 1.017 and ESS 208 with thin 10).
    from sklearn.datasets import load_iris
    from sklearn.exceptions import ConvergenceWarning

    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = FireflySoftmaxClassifier(acceptance="firefly", random_state=0).fit(X, y)
    assert clf.thin_.max() > 10
    assert clf.score(X, y) > 0.95

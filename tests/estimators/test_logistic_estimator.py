"""MinibatchMHLogisticRegression: scikit-learn citizenship, the posterior it samples,
parallel chains, and bad input."""
import os
import pickle
import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh.acceptance import MinibatchBarker

from _models import FAST, min_ess, slope_intercept_problem
from _stats import Moments, assert_same_distribution


@pytest.fixture(scope="module")
def binary():
    return make_classification(n_samples=400, n_features=4, n_informative=2, n_redundant=0,
                               class_sep=2.0, random_state=0)


def small(**kwargs):
    return MinibatchMHLogisticRegression(**{**FAST, "random_state": 0, **kwargs})


def test_fitted_attributes(binary):
    X, y = binary
    clf = small(n_chains=3).fit(X, y)
    assert clf.coef_.shape == (1, 4) and clf.intercept_.shape == (1,)
    assert clf.posterior_["coef"].shape == (3, 60, 4)
    assert clf.posterior_["intercept"].shape == (3, 60)
    for stat in ("lp", "acceptance_rate", "n_data_read", "rows_per_iteration", "seconds"):
        assert clf.posterior_[stat].shape == (3, 60)
    # n_data_read sums a draw's thin_ iterations; rows_per_iteration is their mean.
    np.testing.assert_allclose(clf.posterior_["rows_per_iteration"] * clf.thin_[:, None],
                               clf.posterior_["n_data_read"], rtol=1e-12)
    assert np.all(np.diff(clf.posterior_["seconds"], axis=1) >= 0)
    assert clf.step_size_.shape == (3, 5)
    # Iterations per chain: warm-up plus draws times each chain's thinning.
    np.testing.assert_array_equal(clf.n_iter_, 60 + 60 * clf.thin_)
    assert clf.thin_.shape == (3,) and 0 < clf.acceptance_rate_ < 1
    np.testing.assert_allclose(clf.coef_[0], clf.posterior_["coef"].mean(axis=(0, 1)))
    no_intercept = small(fit_intercept=False).fit(X, y)
    assert no_intercept.intercept_[0] == 0 and no_intercept.step_size_.shape == (2, 4)


def test_rows_read_per_draw_sum_the_thinned_iterations(binary):
    X, y = binary
    clf = small(acceptance="minibatch", thin=3).fit(X, y)
    per_draw, per_iteration = clf.posterior_["n_data_read"], clf.posterior_["rows_per_iteration"]
    np.testing.assert_allclose(3 * per_iteration, per_draw, rtol=1e-12)
    # A test reads at least one row and at most every row, so only the mean is bounded
    # by N; the sum over three iterations exceeds it whenever the tests read most rows.
    assert np.all((per_iteration >= 1) & (per_iteration <= len(y)))


def test_predictions_are_posterior_predictive_means(binary):
    X, y = binary
    clf = small().fit(X, y)
    coef = clf.posterior_.get("coef", flat=True)
    intercept = clf.posterior_.get("intercept", flat=True)
    expected = expit(X[:7] @ coef.T + intercept).mean(axis=1)
    np.testing.assert_allclose(clf.set_params(predict_tol=None).predict_proba(X[:7])[:, 1],
                               expected, rtol=1e-12)
    proba = clf.set_params(predict_tol=1e-4).predict_proba(X[:7])  # from a subset of draws
    np.testing.assert_allclose(proba[:, 1], expected, atol=5e-4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict_proba(X[:7]), proba)  # deterministic
    np.testing.assert_array_equal(clf.predict(X) == clf.classes_[1], clf.decision_function(X) > 0)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X[:7])), proba)
    assert clf.score(X, y) > 0.8


def test_string_labels_and_feature_names(binary):
    pandas = pytest.importorskip("pandas")
    X, y = binary
    frame = pandas.DataFrame(X, columns=["a", "b", "c", "d"])
    labels = np.where(y == 1, "yes", "no")
    clf = small().fit(frame, labels)
    assert list(clf.classes_) == ["no", "yes"]
    assert list(clf.feature_names_in_) == ["a", "b", "c", "d"]
    assert set(clf.predict(frame)) <= {"no", "yes"}


def test_same_draws_for_any_n_jobs(binary):
    X, y = binary
    one = small(n_chains=3, n_jobs=1).fit(X, y)
    two = small(n_chains=3, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(one.posterior_["coef"], two.posterior_["coef"])
    other_seed = small(n_chains=3, random_state=1).fit(X, y)
    assert not np.array_equal(one.posterior_["coef"], other_seed.posterior_["coef"])


def test_pipeline_grid_search_cross_validation_clone_and_pickle(binary):
    X, y = binary
    pipeline = make_pipeline(StandardScaler(), small())
    search = GridSearchCV(pipeline, {
        "minibatchmhlogisticregression__prior_scale": [0.1, 10.0],
        "minibatchmhlogisticregression__acceptance": ["metropolis", "minibatch"],
        "minibatchmhlogisticregression__temperature": [1.0, 5.0],
    }, cv=2).fit(X, y)
    assert search.best_score_ > 0.8
    assert cross_val_score(small(), X, y, cv=3).mean() > 0.8
    clf = small().fit(X, y)
    fresh = clone(clf)
    assert fresh.get_params() == clf.get_params() and not hasattr(fresh, "posterior_")
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict_proba(X), clf.predict_proba(X))


def test_verbose_prints_progress(binary, capsys):
    X, y = binary
    small(verbose=1).fit(X, y)
    captured = capsys.readouterr()
    assert "MinibatchMHLogisticRegression" in captured.out + captured.err


def test_to_arviz_summary(binary):
    arviz = pytest.importorskip("arviz")
    X, y = binary
    clf = small(n_chains=2).fit(X, y)
    summary = arviz.summary(clf.posterior_.to_arviz(), var_names=["coef", "intercept"])
    assert {"r_hat", "ess_bulk"} <= set(summary.columns)
    assert len(summary) == 5


def test_predictive_mean_risk(binary):
    X, y = binary
    clf = small(n_chains=2, n_draws=200).fit(X, y)
    reference = clf.predict_proba(X)  # the chains' own final predictive mean
    curve = clf.predictive_mean_risk(X, reference)
    assert curve.risk.shape == curve.n_data_read.shape == curve.seconds.shape == (2, 200)
    np.testing.assert_array_equal(curve.n_draws, np.arange(1, 201))
    assert np.all(np.diff(curve.n_data_read, axis=1) >= 0)
    # The running mean converges toward the pooled mean: the risk falls.
    assert np.all(curve.risk[:, -1] < curve.risk[:, 0])
    with pytest.raises(ValueError, match="reference_proba"):
        clf.predictive_mean_risk(X, reference[:10])


@pytest.mark.parametrize("params, message", [
    (dict(acceptance="nope"), "acceptance"),
    (dict(step_size=-1.0), "step_size"),
    (dict(step_size="big"), "step_size"),
    (dict(prior_scale=0.0), "prior_scale"),
    (dict(temperature=-2.0), "temperature"),
    (dict(n_chains=0), "n_chains"),
    (dict(thin=0), "thin"),
    (dict(acceptance=MinibatchBarker(batch_size=0)), "batch_size"),
])
def test_bad_parameters(binary, params, message):
    X, y = binary
    with pytest.raises(ValueError, match=message):
        small(**params).fit(X, y)


def test_bad_data(binary):
    X, y = binary
    with pytest.raises(ValueError, match="FireflySoftmaxClassifier"):
        small().fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="one class"):
        small().fit(X, np.zeros(len(y)))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        small().fit(bad, y)
    with pytest.raises(ValueError):
        small().fit(X[:, 0], y)
    with pytest.raises(ValueError):
        small().fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="features"):
        small().fit(X, y).predict(X[:, :3])


def test_read_only_memmap(binary, tmp_path):
    X, y = binary
    np.save(tmp_path / "X.npy", X)
    read_only = np.load(tmp_path / "X.npy", mmap_mode="r")
    np.testing.assert_array_equal(small().fit(read_only, y).posterior_["coef"],
                                  small().fit(X, y).posterior_["coef"])


@pytest.mark.parametrize("acceptance, n_draws", [
    ("metropolis", 5000), ("barker", 5000),
    # delta = 0.1 grows every batch to all 600 rows here: this checks the minibatch path
    # at its exact limit (its fits thin by 3 to 5, so fewer draws see as much).
    (MinibatchBarker(batch_size=50, delta=0.1), 2000)],
    ids=["metropolis", "barker", "minibatch-delta"])
@pytest.mark.slow
def test_posterior_matches_numerical_integration(acceptance, n_draws):
    """One feature and an intercept: the draws' means and sds against the posterior
    integrated on a fine grid, within their Monte Carlo error, with enough draws to see a
    0.1 sd shift or a 10% sd error (at these seeds: a 0.04 to 0.07 sd shift, a 3% to 5%
    sd error)."""
    x, y, exact_mean, exact_sd = slope_intercept_problem()
    clf = MinibatchMHLogisticRegression(acceptance=acceptance, prior_scale=2.0, n_draws=n_draws,
                                        n_warmup=1000, n_chains=4, n_jobs=2, random_state=0)
    clf.fit(x[:, None], y)
    draws = np.stack([clf.posterior_["coef"][..., 0], clf.posterior_["intercept"]], axis=-1)
    assert_same_distribution(draws, Moments(exact_mean, exact_sd))


@pytest.mark.slow
def test_default_fit_on_breast_cancer_thins_and_converges():
    """With a fixed ``n_draws`` the exact test on small data thins by the autocorrelation
    time as far as an ESS of 250 a chain needs (at most 10 and at most 2,000,000
    row-parameter products a draw), so that a fit of scikit-learn's breast cancer data with
    1,000 draws a chain converges; on data too large for that it keeps every iteration."""
    from sklearn.datasets import load_breast_cancer

    from skbayes_mh._core.auto import AUTO_FULL_DATA_WORK, AUTO_MAX_THIN

    X, y = load_breast_cancer(return_X_y=True)
    allowed = min(AUTO_MAX_THIN, AUTO_FULL_DATA_WORK // (X.shape[0] * (X.shape[1] + 1)))
    # Hamiltonian paths in the Laplace shape (the default) reach the goal with thin 1 or 2
    # (the slowest chain's thinning is the fit's time: the largest of 31 parameters'
    # estimates over a warm-up quarter thinned one chain of four by 6 to 10 for some
    # seeds, and by 2 with a Laplace shape narrowed by the eigenvalue floor in raw units);
    # MALA's steps mix more slowly and are thinned by 5 or 6.
    for proposal, thin in (("auto", (1, 3)), ("mala", (2, allowed))):
        clf = MinibatchMHLogisticRegression(proposal=proposal, n_draws=1000,
                                            random_state=1).fit(X, y)
        assert clf.acceptance_.name == "metropolis"
        assert np.all((clf.thin_ >= 1) & (clf.thin_ <= allowed))
        assert thin[0] <= clf.thin_.max() <= thin[1], (proposal, clf.thin_)
        assert max(float(np.max(v)) for v in clf.diagnostics_.r_hat.values()) <= 1.01
        assert min_ess(clf) >= 400
    # 4,552 x 480: a kept draw would read too much to thin
    wide = np.repeat(np.repeat(X, 16, axis=1), 8, axis=0)
    wide += np.random.default_rng(0).normal(scale=1e-3 * X.std(axis=0).max(), size=wide.shape)
    assert wide.shape[0] * (wide.shape[1] + 1) > AUTO_FULL_DATA_WORK
    clf = MinibatchMHLogisticRegression(n_draws=20, n_warmup=400, n_chains=1,
                                        random_state=0)
    with warnings.catch_warnings():  # 20 draws of one chain, for the rule only
        warnings.simplefilter("ignore")
        clf.fit(wide, np.tile(y, 8))
    assert clf.thin_.tolist() == [1]


@pytest.mark.parametrize("change", ["rewritten", "truncated", "removed"])
def test_a_memmap_whose_file_changes_during_the_fit_is_an_error(binary, tmp_path, monkeypatch,
                                                                change):
    # The file under X changes after the validation pass, before the chains read it: the
    # draws may mix old and new data, so fit raises and keeps nothing of them. (A truncation
    # while the chains read the pages beyond the new end is the OS's SIGBUS, which ends the
    # process: no draws either.)
    import skbayes_mh._core.fit as fit_module

    X, y = binary
    path = tmp_path / "X.npy"
    np.save(path, X)
    on_disk = np.load(path, mmap_mode="r")
    run = fit_module.run_in_parallel

    def change_then_run(*args):
        if change == "rewritten":  # same size, new values
            np.save(path, X[::-1])
        elif change == "truncated":  # the last value, within the last page (read as 0)
            size = path.stat().st_size
            assert (size - 8) // 4096 == (size - 1) // 4096
            os.truncate(path, size - 8)
        else:
            os.replace(path, tmp_path / "elsewhere.npy")
        return run(*args)

    monkeypatch.setattr(fit_module, "run_in_parallel", change_then_run)
    estimator = small()
    with pytest.raises(ValueError, match=f"{'removed' if change == 'removed' else 'changed'} "
                                         "during the fit"):
        estimator.fit(on_disk, y)
    assert not hasattr(estimator, "posterior_")


#: Draws a chain for the separable classes' agreement (four chains).
LONG_DRAWS = 2500


@pytest.mark.slow
def test_separable_classes_give_the_exact_tests_posterior_without_warning():
    # Classes a line separates: the likelihood grows without end along the separating
    # direction and the prior alone stops it, so the posterior sits far out (weights near
    # 14 and 7 for a N(0, 1) prior) and is skewed there. The default fit (6,000 rows: the
    # minibatch test with control variates) warns of nothing, and (with draws enough to see
    # a 0.1 sd shift or a 10% sd error) agrees with the exact test's within Monte Carlo error.
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(6000, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        default = MinibatchMHLogisticRegression(random_state=1, n_jobs=2).fit(X, y)
    assert default.acceptance_.name == "minibatch"
    draws = {}
    for acceptance in ("minibatch", "metropolis"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            fit = MinibatchMHLogisticRegression(acceptance=acceptance, n_draws=LONG_DRAWS,
                                                random_state=1, n_jobs=2).fit(X, y)
        draws[acceptance] = fit._theta_draws()
    sampled, exact = draws["minibatch"], draws["metropolis"]
    assert exact.mean(axis=(0, 1))[0] > 10  # far out, where the prior stops it
    assert_same_distribution(sampled, exact)

"""``summary()``: the per-parameter table of a posterior and of every fitted estimator.

The statistics are checked against what they estimate: the moments and quantiles of known
draws, and Monte Carlo standard errors against ``sd * sqrt(tau / n)`` for chains of known
autocorrelation time ``tau``.
"""
import sys

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_classification, make_regression

from skbayes_mh import (FireflySoftmaxClassifier, MinibatchMHLogisticRegression,
                        MinibatchMHPoissonRegression, RobustTRegression)
from skbayes_mh.posterior import Posterior, PosteriorSummary

from _models import quiet_fit

SHORT = dict(n_draws=150, n_warmup=150, n_chains=2, random_state=0)


def ar1(rho, shape, seed):
    """Chains ``(chain, draw, p)`` of a stationary AR(1) with unit marginal variance,
    started at stationarity: autocorrelation time ``(1 + rho) / (1 - rho)``."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(size=shape) * np.sqrt(1 - rho**2)
    x = np.empty(shape)
    x[:, 0] = rng.normal(size=(shape[0], *shape[2:]))
    for t in range(1, shape[1]):
        x[:, t] = rho * x[:, t - 1] + noise[:, t]
    return x


def test_statistics_of_independent_draws():
    n_chains, n_draws = 4, 2_000
    draws = np.random.default_rng(0).normal(loc=[1.0, -2.0], scale=[0.5, 3.0],
                                            size=(n_chains, n_draws, 2))
    table = Posterior({"beta": draws}, {}).summary(as_frame=False)
    n = n_chains * n_draws
    flat = draws.reshape(n, 2)
    # The moments and quantiles are those of the pooled draws.
    np.testing.assert_allclose(table["mean"], flat.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(table["sd"], flat.std(axis=0), rtol=1e-12)
    for q in (0.05, 0.5, 0.95):
        np.testing.assert_allclose(table[f"{100 * q:g}%"], np.quantile(flat, q, axis=0))
    # And they estimate the truth within Monte Carlo error (4 standard errors).
    assert np.all(np.abs(table["mean"] - [1.0, -2.0]) < 4 * np.array([0.5, 3.0]) / np.sqrt(n))
    assert np.all(np.abs(table["sd"] / [0.5, 3.0] - 1) < 4 / np.sqrt(2 * n))
    # Independent draws: ESS near n (its relative sd is about sqrt(2 / n_chains / ...)
    # small here), R-hat near 1, MCSE of the mean sd / sqrt(n).
    assert np.all((table["ess_bulk"] > 0.85 * n) & (table["ess_bulk"] < 1.15 * n))
    assert np.all(table["ess_tail"] > 0.7 * n)
    assert np.all(table["r_hat"] < 1.01)
    np.testing.assert_allclose(table["mcse_mean"], table["sd"] / np.sqrt(n), rtol=0.15)
    # The sd's MCSE for normal draws: sd / sqrt(2 n).
    np.testing.assert_allclose(table["mcse_sd"], table["sd"] / np.sqrt(2 * n), rtol=0.2)


def test_mcse_of_autocorrelated_chains_follows_their_autocorrelation_time():
    rho, shape = 0.8, (4, 5_000, 3)
    tau = (1 + rho) / (1 - rho)  # 9
    table = Posterior({"x": ar1(rho, shape, seed=1)}, {}).summary(as_frame=False)
    n = shape[0] * shape[1]
    # ESS estimates of a long AR(1) chain err by about 10%; the MCSE by half of that.
    np.testing.assert_allclose(table["ess_bulk"], n / tau, rtol=0.2)
    np.testing.assert_allclose(table["mcse_mean"], table["sd"] * np.sqrt(tau / n), rtol=0.15)


def test_chains_in_different_places_get_a_large_r_hat():
    draws = np.random.default_rng(2).normal(size=(4, 500, 1))
    draws[0] += 3.0
    table = Posterior({"x": draws}, {}).summary(as_frame=False)
    assert table["r_hat"][0] > 1.2  # about 1.5 (ranks bound it); converged: below 1.01


def test_labels_coords_and_exclusion():
    posterior = Posterior({"coef": np.zeros((2, 10, 2, 3)) + np.arange(3),
                           "intercept": np.zeros((2, 10, 2)), "scale": np.ones((2, 10))}, {})
    table = posterior.summary(coords={"coef": [["a", "b"], ["x", "y", "z"]]},
                              exclude=("intercept",), quantiles=(0.25,), as_frame=False)
    assert table.index == ["coef[a, x]", "coef[a, y]", "coef[a, z]", "coef[b, x]",
                           "coef[b, y]", "coef[b, z]", "scale"]
    assert table.columns == ["mean", "sd", "25%", "mcse_mean", "mcse_sd", "ess_bulk",
                             "ess_tail", "r_hat"]
    np.testing.assert_array_equal(table["mean"], [0, 1, 2, 0, 1, 2, 1])
    assert len(table) == 7
    # Labels may be arrays; unlabelled axes are numbered.
    assert posterior.summary(coords={"coef": [np.array(["a", "b"])]}, as_frame=False).index[
        0] == "coef[a, 0]"
    assert posterior.summary(as_frame=False).index[:3] == ["coef[0, 0]", "coef[0, 1]",
                                                          "coef[0, 2]"]
    text = str(table)
    assert text.splitlines()[0].split() == table.columns
    assert text.splitlines()[1].startswith("coef[a, x]")
    # Group-level effects and their sds are named as brms names them, where labelled.
    grouped = Posterior({"group_effects": np.zeros((2, 10, 2)), "group_sd": np.ones((2, 10, 1))},
                        {})
    labelled = grouped.summary(coords={"group_effects": [["intercept|g[a]", "intercept|g[b]"]],
                                       "group_sd": [["intercept|g"]]}, as_frame=False)
    assert labelled.index == ["intercept|g[a]", "intercept|g[b]", "sd(intercept|g)"]
    assert grouped.summary(as_frame=False).index == ["group_effects[0]", "group_effects[1]",
                                                     "group_sd[0]"]


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(coords={"weights": [["a"]]}), ValueError, "no posterior variable named.*weights"),
    (dict(exclude=("slope",)), ValueError, "no posterior variable named.*slope"),
    (dict(coords={"coef": [["a", "b"]]}), ValueError, "coef: 2 labels for an axis of 3"),
    (dict(quantiles=(0.5, 1.5)), ValueError, "quantiles must be numbers in"),
    (dict(quantiles=(0.1, 0.1)), ValueError, "quantiles must differ"),
    (dict(as_frame="yes"), ValueError, "as_frame must be 'auto', True or False"),
])
def test_bad_arguments_are_named(kwargs, error, match):
    posterior = Posterior({"coef": np.zeros((2, 10, 3))}, {})
    with pytest.raises(error, match=match):
        posterior.summary(**kwargs)


def test_without_pandas_auto_gives_the_plain_table(monkeypatch):
    posterior = Posterior({"coef": np.random.default_rng(3).normal(size=(2, 50, 2))}, {})
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now fails
    assert isinstance(posterior.summary(), PosteriorSummary)
    with pytest.raises(ImportError, match="needs pandas; as_frame=False"):
        posterior.summary(as_frame=True)


def test_data_frame_holds_the_same_table():
    pandas = pytest.importorskip("pandas")
    posterior = Posterior({"coef": np.random.default_rng(4).normal(size=(2, 50, 2))}, {})
    frame = posterior.summary(as_frame=True)
    table = posterior.summary(as_frame=False)
    assert isinstance(frame, pandas.DataFrame) and frame.index.name == "parameter"
    assert list(frame.index) == table.index and list(frame.columns) == table.columns
    np.testing.assert_array_equal(frame.to_numpy(), table.values)
    with pytest.raises(KeyError, match="no column 'median'"):
        table["median"]


def test_logistic_summary_names_features_and_reuses_the_fits_diagnostics():
    pandas = pytest.importorskip("pandas")
    X, y = make_classification(n_samples=300, n_features=3, n_informative=3, n_redundant=0,
                               random_state=0)
    frame = pandas.DataFrame(X, columns=["age", "dose", "weight"])
    clf = quiet_fit(MinibatchMHLogisticRegression(**SHORT), frame, y)
    table = clf.summary(as_frame=False)
    assert table.index == ["coef[age]", "coef[dose]", "coef[weight]", "intercept"]
    np.testing.assert_allclose(table["mean"][:3], clf.coef_[0], rtol=1e-12)
    np.testing.assert_allclose(table["mean"][3], clf.intercept_[0], rtol=1e-12)
    np.testing.assert_array_equal(table["r_hat"][:3], clf.diagnostics_.r_hat["coef"])
    np.testing.assert_array_equal(table["ess_bulk"][3], clf.diagnostics_.ess_bulk["intercept"])
    # Without names, scikit-learn's x0, x1, ...; without an intercept, no intercept row.
    bare = quiet_fit(MinibatchMHLogisticRegression(fit_intercept=False, **SHORT), X, y)
    assert bare.summary(as_frame=False).index == ["coef[x0]", "coef[x1]", "coef[x2]"]


def test_softmax_rows_are_class_and_feature():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = quiet_fit(FireflySoftmaxClassifier(**SHORT), X, names)
    table = clf.summary(as_frame=False)
    assert table.index[:5] == ["coef[setosa, x0]", "coef[setosa, x1]", "coef[setosa, x2]",
                               "coef[setosa, x3]", "coef[versicolor, x0]"]
    assert table.index[-3:] == ["intercept[setosa]", "intercept[versicolor]",
                                "intercept[virginica]"]
    np.testing.assert_allclose(table["mean"][:12], clf.coef_.ravel(), rtol=1e-12)


def test_parameters_held_fixed_have_no_row():
    X, y = make_regression(n_samples=200, n_features=2, noise=5.0, random_state=0)
    reg = quiet_fit(RobustTRegression(scale=5.0, fit_intercept=False, **SHORT), X, y)
    assert reg.summary(as_frame=False).index == ["coef[x0]", "coef[x1]"]


@pytest.mark.parametrize("estimator, extra", [(RobustTRegression, "scale"),
                                              (MinibatchMHPoissonRegression, None)])
def test_regressors_list_their_own_parameters(estimator, extra):
    X, y = make_regression(n_samples=200, n_features=2, noise=5.0, random_state=0)
    if extra is None:
        y = np.random.default_rng(0).poisson(np.exp(0.01 * (y - y.mean())))
    reg = quiet_fit(estimator(**SHORT), X, y)
    index = reg.summary(as_frame=False).index
    assert index[:3] == ["coef[x0]", "coef[x1]", "intercept"]
    assert index[3:] == ([] if extra is None else [extra])
    assert np.isclose(reg.summary(as_frame=False)["mean"][-1],
                      getattr(reg, f"{extra or 'intercept'}_"), rtol=1e-12)


def test_summary_needs_a_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        MinibatchMHLogisticRegression().summary()


def test_the_convergence_warning_names_parameters_as_the_summary_does():
    from sklearn.exceptions import ConvergenceWarning

    pandas = pytest.importorskip("pandas")
    X, y = make_classification(n_samples=300, n_features=3, n_informative=3, n_redundant=0,
                               random_state=0)
    frame = pandas.DataFrame(X, columns=["age", "dose", "weight"])
    hasty = MinibatchMHLogisticRegression(proposal="random_walk", step_size=1e-4, n_draws=50,
                                          n_warmup=10, random_state=0)
    with pytest.warns(ConvergenceWarning,
                      match=r"largest R-hat [\d.]+ \((coef\[(age|dose|weight)\]|intercept)\)"):
        hasty.fit(frame, y)

"""skbayes_mh.plotting: each figure draws the numbers it claims (checked against the
estimator's own methods), refuses what it cannot draw, and says what to install."""
import sys
import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from skbayes_mh import FireflySoftmaxClassifier, MinibatchMHLogisticRegression, sample
from skbayes_mh import plotting
from _models import gaussian_mean_loglik
from _user_models import logistic_loglik

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SMALL = dict(n_draws=80, n_warmup=100, thin=1, random_state=0)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(n_samples=400, n_features=3, n_informative=3, n_redundant=0,
                               random_state=1)
    return X[:300], y[:300], X[300:], y[300:]


@pytest.fixture(scope="module")
def minibatch_fit(binary):
    X, y, _, _ = binary
    with warnings.catch_warnings():  # a single short chain, for drawing only
        warnings.simplefilter("ignore", ConvergenceWarning)
        return MinibatchMHLogisticRegression(acceptance="minibatch", n_chains=1,
                                             **SMALL).fit(X, y)


@pytest.fixture(scope="module")
def firefly_fit():
    X, y = make_classification(n_samples=300, n_features=3, n_informative=3, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=2)
    with warnings.catch_warnings():  # short chains, for drawing only
        warnings.simplefilter("ignore", ConvergenceWarning)
        return FireflySoftmaxClassifier(acceptance="firefly", n_chains=2, **SMALL).fit(X, y)


def test_minibatch_sizes_bins_every_test_on_log_log_axes():
    result = sample(gaussian_mean_loglik, np.random.default_rng(0).normal(size=(2000, 1)),
                    np.zeros(1),
                    step_size=0.05, acceptance="minibatch", n_draws=300, random_state=0)
    ax = plotting.plot_minibatch_sizes({"minibatch": result,
                                        "full": np.full(300, 2000)}, bins=12)
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["minibatch", "full"]
    low, high = ax.get_xlim()
    assert low <= result.n_data_read.min() and high >= 2000


def test_minibatch_sizes_of_an_estimator_are_rows_per_iteration(minibatch_fit):
    from_fit = plotting.plot_minibatch_sizes(minibatch_fit, bins=5).patches[0].get_xy()
    per_iteration = minibatch_fit.posterior_["n_data_read"] / minibatch_fit.thin_[:, None]
    _, ax = plt.subplots()
    from_array = plotting.plot_minibatch_sizes(per_iteration, bins=5).patches[0].get_xy()
    np.testing.assert_allclose(from_fit, from_array)
    # The outline's tallest bin holds at most every draw.
    assert 0 < from_fit[:, 1].max() <= minibatch_fit.posterior_.n_draws


def test_accuracy_against_data_read_ends_at_the_estimators_accuracy(minibatch_fit, binary):
    _, _, X_test, y_test = binary
    ax = plotting.plot_data_read(minibatch_fit, X_test, y_test)
    x, accuracy = ax.lines[0].get_data()
    # One chain: after its last draw, the running mean is the posterior-predictive mean
    # predict uses, and the data read are everything the chain's tests read.
    assert accuracy[-1] == pytest.approx(np.mean(minibatch_fit.predict(X_test) == y_test))
    assert x[-1] == minibatch_fit.posterior_["n_data_read"].sum()
    assert np.all(np.diff(x) > 0) and ax.get_xscale() == "log"


def test_accuracy_of_a_softmax_fit_is_the_mean_over_chains(firefly_fit):
    X, y = make_classification(n_samples=300, n_features=3, n_informative=3, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=2)
    ax = plotting.plot_data_read({"firefly": firefly_fit}, X, y)
    _, accuracy = ax.lines[0].get_data()
    per_chain = []
    for chain in range(2):
        single = FireflySoftmaxClassifier()
        single.__dict__.update(firefly_fit.__dict__)
        single.posterior_ = type(firefly_fit.posterior_)(
            {k: v[chain:chain + 1] for k, v in firefly_fit.posterior_.draws.items()},
            {k: v[chain:chain + 1] for k, v in firefly_fit.posterior_.sample_stats.items()})
        per_chain.append(np.mean(single.predict(X) == y))
    assert accuracy[-1] == pytest.approx(np.mean(per_chain))
    assert ax.lines[0].get_label() == "firefly"


def test_risk_against_data_read_is_predictive_mean_risk(minibatch_fit, binary):
    _, _, X_test, _ = binary
    # The mean over every draw (predict_proba's is within predict_tol of it).
    reference = minibatch_fit.predict_proba_draws(X_test)[..., 1].mean(axis=(0, 1))
    ax = plotting.plot_data_read(minibatch_fit, X_test, reference_proba=reference)
    _, risk = ax.lines[0].get_data()
    expected = minibatch_fit.predictive_mean_risk(X_test, reference).risk.mean(axis=0)
    np.testing.assert_allclose(risk, expected)
    assert risk[-1] == pytest.approx(0.0, abs=1e-24) and ax.get_yscale() == "log"


def test_a_sample_result_plots_through_its_draw_probabilities(binary):
    X, y, X_test, y_test = binary
    result = sample(logistic_loglik, np.column_stack([X, y]).astype(np.float64), np.zeros(3),
                    step_size=0.1, acceptance="minibatch", n_draws=200, random_state=0)

    def draw_proba(draws, rows):
        return expit(draws @ rows.T)

    ax = plotting.plot_data_read({"minibatch": result}, X_test, y_test, draw_proba=draw_proba)
    x, accuracy = ax.lines[0].get_data()
    mean_proba = draw_proba(result.draws, X_test).mean(axis=0)
    assert accuracy[-1] == pytest.approx(np.mean((mean_proba > 0.5) == y_test))
    assert x[-1] == result.n_data_read.sum()
    reference = draw_proba(result.draws[:100], X_test).mean(axis=0)
    _, ax = plt.subplots()
    ax = plotting.plot_data_read(result, X_test, reference_proba=reference,
                                 draw_proba=draw_proba, ax=ax)
    risk = ax.lines[0].get_ydata()
    assert risk[99] == pytest.approx(0.0, abs=1e-24)
    assert risk[0] == pytest.approx(np.mean((draw_proba(result.draws[:1], X_test)[0]
                                              - reference) ** 2))
    with pytest.raises(TypeError, match="draw_proba"):
        plotting.plot_data_read(result, X_test, y_test)
    with pytest.raises(ValueError, match="n_draws, n_rows"):
        plotting.plot_data_read(result, X_test, y_test, draw_proba=lambda d, r: d)
    reference[2] = np.nan
    with pytest.raises(ValueError, match="row 2 is nan"):
        plotting.plot_data_read(result, X_test, reference_proba=reference,
                                draw_proba=draw_proba)


def test_bright_counts_are_firefly_statistics(firefly_fit):
    ax = plotting.plot_bright_counts(firefly_fit, n_rows=300)
    assert len(ax.lines) == 2
    for chain, line in enumerate(ax.lines):
        np.testing.assert_allclose(line.get_ydata(),
                                   firefly_fit.posterior_["n_bright"][chain] / 300)


def test_trace_and_rank_plots_come_from_arviz(minibatch_fit):
    pytest.importorskip("arviz")
    axes = plotting.plot_trace(minibatch_fit, var_names=["intercept"])
    assert np.asarray(axes).size >= 1
    axes = plotting.plot_rank(minibatch_fit, var_names=["intercept"])
    assert np.asarray(axes).size >= 1


@pytest.mark.parametrize("call, error, message", [
    (lambda fit, X, y: plotting.plot_minibatch_sizes(fit, bins=0), ValueError, "bins"),
    (lambda fit, X, y: plotting.plot_minibatch_sizes({}), ValueError, "empty"),
    (lambda fit, X, y: plotting.plot_minibatch_sizes(["a", "b"]), TypeError, "rows read"),
    (lambda fit, X, y: plotting.plot_minibatch_sizes(np.array([0, 5])), ValueError, "at least 1"),
    (lambda fit, X, y: plotting.plot_data_read(fit, X), ValueError, "exactly one"),
    (lambda fit, X, y: plotting.plot_data_read(fit, X, y, reference_proba=y), ValueError,
     "exactly one"),
    (lambda fit, X, y: plotting.plot_data_read(MinibatchMHLogisticRegression(), X, y),
     TypeError, "fitted"),
    (lambda fit, X, y: plotting.plot_data_read(fit, X, y[:-1]), ValueError, "shape"),
    (lambda fit, X, y: plotting.plot_data_read(fit, X, y + 5), ValueError, "labels"),
    (lambda fit, X, y: plotting.plot_bright_counts(fit), ValueError, "firefly"),
    (lambda fit, X, y: plotting.plot_bright_counts(fit, n_rows=0), ValueError, "n_rows"),
])
def test_bad_input_is_named(minibatch_fit, binary, call, error, message):
    _, _, X_test, y_test = binary
    with pytest.raises(error, match=message):
        call(minibatch_fit, X_test, y_test)


def test_without_matplotlib_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"skbayes-mh\[plot\]"):
        plotting.plot_minibatch_sizes(np.array([1, 2, 3]))


def test_without_arviz_the_error_says_what_to_install(monkeypatch, minibatch_fit):
    monkeypatch.setitem(sys.modules, "arviz", None)
    with pytest.raises(ImportError, match=r"skbayes-mh\[arviz\]"):
        plotting.plot_trace(minibatch_fit)

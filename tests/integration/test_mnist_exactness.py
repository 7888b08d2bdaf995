"""Exactness on real data: MNIST 7 vs 9, 50 principal components plus a bias (12,214 rows,
Gaussian prior with precision 10), against a long exact reference run built by
``benchmarks/mnist79_reference.py`` (4 x 500,000 Metropolis iterations, summarised in
``tests/integration/data/mnist79_pca50_reference.npz``).

The requirement is that every weight's posterior mean lies within 0.1 posterior sd of the
reference. A chain of finite length also carries Monte Carlo error, so the tolerance is
0.1 sd plus three Monte Carlo standard errors, both runs' MCSE combined (ArviZ's mcse_mean)."""
from pathlib import Path

import numpy as np
import pytest

from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh.datasets import mnist_pca_pair

REFERENCE = Path(__file__).with_name("data") / "mnist79_pca50_reference.npz"
PRIOR_SCALE = 1 / np.sqrt(10)

pytestmark = pytest.mark.slow
#: Checked before any fixture runs, so that a missing ArviZ skips at once.
arviz = pytest.importorskip("arviz")


@pytest.fixture(scope="module")
def mnist79(shared_data):
    return mnist_pca_pair(shared_data / "mnist", (7, 9), 50)


@pytest.fixture(scope="module")
def reference():
    with np.load(REFERENCE) as saved:
        return {key: saved[key] for key in saved.files}


def weights(clf):
    return np.concatenate([clf.posterior_["coef"], clf.posterior_["intercept"][..., None]], axis=-1)


#: (acceptance, proposal): the exact tests with Hamiltonian paths and pCN, and the
#: subsampling tests with control variates and their default proposal (Hamiltonian paths
#: on the proxies).
RUNS = {"metropolis": ("metropolis", "hmc"), "barker": ("barker", "hmc"),
        "metropolis-pcn": ("metropolis", "pcn"), "minibatch": ("minibatch", "auto"),
        "austerity": ("austerity", "auto")}


def run(acceptance, proposal, X, y):
    clf = MinibatchMHLogisticRegression(
        acceptance=acceptance, proposal=proposal, prior_scale=PRIOR_SCALE, autoscale=False,
        intercept_prior_scale=PRIOR_SCALE, n_draws=1500, n_warmup=1000, n_chains=2,
        thin=1, n_jobs=2, random_state=7)  # every iteration: the agreement is what is tested
    return clf.fit(X, y)


def diagnostics(draws):
    """Per weight: mean, Monte Carlo standard error of the mean, bulk ESS (ArviZ)."""
    summary = arviz.summary(arviz.from_dict(posterior={"w": draws}), kind="diagnostics")
    return (draws.mean(axis=(0, 1)), summary["mcse_mean"].to_numpy(),
            summary["ess_bulk"].to_numpy())


@pytest.fixture(scope="module")
def exact_runs(mnist79):
    X, y = mnist79
    fits = {name: run(*settings, X, y) for name, settings in RUNS.items()}
    # The subsampling tests read residuals against Taylor proxies at temperature 1: the
    # minibatch test about 240 of the 12,214 rows per test, Austerity (batches of 500,
    # t-test at epsilon 0.05) about 1,800; without control variates both read most rows.
    for name, most in (("minibatch", 0.05), ("austerity", 0.25)):
        assert fits[name].control_variates_
        per_iteration = fits[name].posterior_["n_data_read"] / fits[name].thin_[:, None]
        assert per_iteration.mean() < most * X.shape[0], (name, per_iteration.mean())
    return {name: weights(fit) for name, fit in fits.items()}


# The approximate subsampling tests with control variates are held to the same
# requirement as the exact tests.
@pytest.mark.parametrize("name", list(RUNS))
def test_agreement_with_the_long_reference(exact_runs, reference, name):
    mean, mcse, ess = diagnostics(exact_runs[name])
    tolerance = 0.1 * reference["sd"] + 3 * np.sqrt(mcse**2 + reference["mcse"] ** 2)
    assert np.all(np.abs(mean - reference["mean"]) <= tolerance), \
        np.max(np.abs(mean - reference["mean"]) / reference["sd"])
    # The spread: sds within 10%, plus the error of an sd estimated from ESS draws,
    # about 1 / sqrt(2 ESS) relative.
    sd = exact_runs[name].std(axis=(0, 1))
    assert np.all(np.abs(sd / reference["sd"] - 1) < 0.1 + 3 / np.sqrt(2 * ess))


def test_metropolis_and_barker_agree(exact_runs, reference):
    mean_m, mcse_m, _ = diagnostics(exact_runs["metropolis"])
    mean_b, mcse_b, _ = diagnostics(exact_runs["barker"])
    tolerance = 0.1 * reference["sd"] + 3 * np.sqrt(mcse_m**2 + mcse_b**2)
    assert np.all(np.abs(mean_m - mean_b) <= tolerance)

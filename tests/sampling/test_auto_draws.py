"""``n_draws="auto"``: the chains run in rounds until every sampled coordinate's R-hat is at
most 1.01 and its bulk and tail ESS at least 100 a chain; the rounds depend on the draws
only (the same draws for a seed whatever ``n_jobs``), a ``warm_start`` fit continues them,
``max_time`` stops them with a warning that says so, and stopping on the diagnostics leaves
the posterior calibrated (simulation-based calibration)."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh._core.auto import AUTO_SHORT_WARMUP
from skbayes_mh._core.convergence import (AUTO_FIRST_DRAWS, MAX_RHAT, MIN_ESS_PER_CHAIN,
                                          draws_needed)
from skbayes_mh.diagnostics import convergence_statistics
from skbayes_mh.models import LogisticModel

from _models import linear_target
from test_calibration import N_RANK_DRAWS, SCALE, assert_uniform_ranks, detectable_variance_error


def logistic_rows(n_rows=300, n_features=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features)) * np.linspace(0.5, 3.0, n_features) + 1.0
    eta = (X - 1.0) @ np.linspace(-1.0, 1.0, n_features) + 0.3
    return X, (rng.random(n_rows) < 1 / (1 + np.exp(-eta))).astype(int)


def _ar1(n_chains, n_draws, d, rho, seed):
    rng = np.random.default_rng(seed)
    x = np.empty((n_chains, n_draws, d))
    x[:, 0] = rng.standard_normal((n_chains, d))
    for t in range(1, n_draws):
        x[:, t] = rho * x[:, t - 1] + np.sqrt(1 - rho**2) * rng.standard_normal((n_chains, d))
    return x


def test_the_rule_stops_at_its_targets_and_sizes_the_next_round():
    assert draws_needed(_ar1(4, 200, 5, 0.0, seed=0), 4) is None
    slow = _ar1(4, 200, 5, 0.95, seed=1)  # ESS about 200 * 4 * 0.05 / 1.95 = 20
    wanted = draws_needed(slow, 4)
    assert wanted == 600  # grown by the largest factor, 3
    middling = _ar1(4, 200, 5, 0.5, seed=2)  # ESS about 270 of the 400 wanted
    r_hat, bulk, tail = convergence_statistics(middling)
    wanted = draws_needed(middling, 4)
    expected = 200 * 1.2 * 400 / min(bulk.min(), tail.min())
    assert abs(wanted - expected) <= 1



@pytest.mark.parametrize("shape", ["tall", "wide"])
def test_the_diagnostics_reuse_the_last_rounds_statistics(monkeypatch, shape):
    """A fit whose rounds met the targets reports the statistics its last round computed
    (of the same draws: the posterior's variables side by side, or a span fit's sampled
    coordinates) instead of computing them again, and they are what computing them from
    the posterior's variables gives."""
    from skbayes_mh._core import convergence

    X, y = logistic_rows()
    if shape == "wide":
        X = np.column_stack([X[:40], np.random.default_rng(1).normal(size=(40, 60))])
        y = y[:40]
    computed = []
    statistics = convergence._statistics

    def recorded(draws):
        values = statistics(draws)
        computed.append((np.array(draws), values))
        return values

    monkeypatch.setattr(convergence, "_statistics", recorded)
    fit = MinibatchMHLogisticRegression(random_state=0).fit(X, y)
    assert (fit.span_rank_ is not None) == (shape == "wide")
    # The rounds judged the sampled coordinates; after the last, only a span fit's
    # variables in the original layout (other draws) were computed, each once.
    width = (fit.span_rank_ if shape == "wide" else X.shape[1]) + 1
    last = max(k for k, (draws, _) in enumerate(computed)
               if draws.ndim == 3 and draws.shape[2] == width)
    after = sorted(draws.shape for draws, _ in computed[last + 1:])
    variables = sorted(np.shape(fit.posterior_[name]) for name in ("coef", "intercept"))
    assert after == (variables if shape == "wide" else [])
    found, names = fit.diagnostics_, ("r_hat", "ess_bulk", "ess_tail")
    if shape == "wide":
        for name, values in zip(names, computed[last][1]):
            np.testing.assert_array_equal(found.sampled[name], values)
    else:  # split by variable: as computing each variable's gives
        for variable in ("coef", "intercept"):
            for name, expected in zip(names, statistics(fit.posterior_[variable])):
                assert np.shape(found[name][variable]) == np.shape(expected)
                np.testing.assert_allclose(found[name][variable], expected, rtol=1e-12)


def test_a_fit_stops_when_its_chains_meet_the_targets_whatever_n_jobs():
    X, y = logistic_rows()
    fit = MinibatchMHLogisticRegression(n_draws="auto", random_state=0).fit(X, y)
    draws = fit._theta_draws()
    r_hat, bulk, tail = convergence_statistics(draws)
    assert r_hat.max() <= MAX_RHAT and min(bulk.min(), tail.min()) >= 4 * MIN_ESS_PER_CHAIN
    assert AUTO_FIRST_DRAWS <= draws.shape[1] < 1000
    one_job = MinibatchMHLogisticRegression(n_draws="auto", n_jobs=1, random_state=0).fit(X, y)
    np.testing.assert_array_equal(one_job.posterior_["coef"], fit.posterior_["coef"])
    # Each chain's warm-up ended once settled (from 30% of the cap on), within the cap,
    # the same whatever n_jobs, and counted in n_iter_.
    np.testing.assert_array_equal(one_job.n_warmup_, fit.n_warmup_)
    assert np.all((fit.n_warmup_ >= 0.3 * AUTO_SHORT_WARMUP)
                  & (fit.n_warmup_ <= AUTO_SHORT_WARMUP)), fit.n_warmup_
    np.testing.assert_array_equal(fit.n_iter_, fit.n_warmup_ + draws.shape[1] * fit.thin_)


def test_a_warm_start_fit_continues_the_chains_to_the_targets():
    X, y = logistic_rows(seed=1)
    settings = dict(random_state=0, n_warmup=300, proposal="random_walk")
    short = MinibatchMHLogisticRegression(n_draws=40, **settings).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 40 draws: short of the ESS
        resumed = MinibatchMHLogisticRegression(n_draws=40, warm_start=True,
                                                **settings).fit(X, y)
    resumed.set_params(n_draws="auto").fit(X, y)
    coef = resumed.posterior_["coef"]
    np.testing.assert_array_equal(coef[:, :40], short.posterior_["coef"])
    r_hat, bulk, tail = convergence_statistics(resumed._theta_draws())
    assert r_hat.max() <= MAX_RHAT and min(bulk.min(), tail.min()) >= 4 * MIN_ESS_PER_CHAIN


def test_the_time_budget_stops_the_rounds_with_a_warning_that_says_so():
    """A random walk on 20 features needs thousands of draws; a budget of a millisecond
    lets no round follow the first, and the warning names the budget."""
    X, y = logistic_rows(n_rows=400, n_features=20, seed=2)
    with pytest.warns(ConvergenceWarning, match="max_time=0.001"):
        fit = MinibatchMHLogisticRegression(n_draws="auto", max_time=1e-3, n_warmup=100,
                                            proposal="random_walk", random_state=0).fit(X, y)
    assert fit.posterior_.n_draws == AUTO_FIRST_DRAWS


@pytest.mark.slow
def test_stopping_on_the_diagnostics_leaves_the_posterior_calibrated():
    """Simulation-based calibration of ``n_draws="auto"`` fits (four chains, exact test,
    Hamiltonian paths, their own MAP, warm-up and thinning; 200 rows, N(0, 1) priors on
    three weights and the intercept): a stopping time that depended on the draws in a way
    that biased them would show in the ranks of the true parameters among the draws: 500
    replications detect a 16% posterior-variance error."""
    n_replications, n_params, n_rows = int(round(500 * SCALE)), 4, 200
    detectable = detectable_variance_error(n_replications, n_params)
    assert detectable <= 0.16 / np.sqrt(SCALE) + 1e-12
    rng = np.random.default_rng(29)
    X = rng.normal(size=(n_rows, n_params - 1))
    ranks, lengths = [], []
    for replication in range(n_replications):
        generator = np.random.default_rng([29, replication])
        theta_star = generator.normal(size=n_params)
        eta = X @ theta_star[:-1] + theta_star[-1]
        y = (generator.random(n_rows) < 1.0 / (1.0 + np.exp(-eta))).astype(int)
        if y.min() == y.max():
            continue
        # n_jobs=1: the draws of any n_jobs (tested above), without a pool of threads for
        # each round of four short chains (15% faster beside the other test worker).
        fit = MinibatchMHLogisticRegression(
            n_draws="auto", autoscale=False, intercept_prior_scale=1.0, n_jobs=1,
            random_state=replication).fit(X, y)
        lengths.append(fit.posterior_.n_draws)
        draws = np.concatenate([fit.posterior_.get("coef", flat=True),
                                fit.posterior_.get("intercept", flat=True)[:, None]], axis=1)
        draws = draws[np.linspace(0, len(draws) - 1, N_RANK_DRAWS).round().astype(int)]
        laplace = linear_target(LogisticModel(), X, y, np.ones(n_params))
        precision = np.linalg.inv(laplace.covariance)

        def quantity(theta):
            centred = theta - laplace.mean
            return np.einsum("...i,ij,...j->...", centred, precision, centred)

        ranks.append(int(np.sum(quantity(draws) < quantity(theta_star))))
    assert len(set(lengths)) > 1  # the rule stopped at different lengths
    assert_uniform_ranks(np.array(ranks), detectable)

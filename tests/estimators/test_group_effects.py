"""Group-level effects (``group_effects``): the hierarchical prior's density against SciPy,
the sampled posterior against a long exact chain of the same model written independently
(a user's row model through :func:`skbayes_mh.sample`), and the API's promises (pipelines,
unseen levels, names, clear errors)."""
import importlib.util
from pathlib import Path

import numba
import numpy as np
import pytest
from scipy import stats

from skbayes_mh import MinibatchMHLogisticRegression, MinibatchMHPoissonRegression
from skbayes_mh.sampling import _target as target_module
from skbayes_mh.linear_model._groups import cholesky_factor
from skbayes_mh.models._base import GROUP_RESCALE_MIN_EVIDENCE, group_evidence
from skbayes_mh.models._prior import (BASE, GAUSSIAN, GROUP_CORRELATION, GROUP_SD,
                                      GROUP_SD_INTERWOVEN, GROUP_SD_RESCALED, LOG_SCALE,
                                      BuiltinPrior)

from _models import long_metropolis_chain, quiet_fit, stored_reference
from _stats import Moments, assert_same_distribution

N_GROUPS = 6


def grouped_logistic(n=300, sd=0.8, seed=0):
    """``n`` rows, one feature and ``N_GROUPS`` groups of equal size with intercepts of
    ``sd``: ``(X, y, X_reference)``, ``X`` with the group label as its last column and
    ``X_reference`` the rows as the reference model reads them, ``[x, group, y]``."""
    rng = np.random.default_rng(seed)
    group = np.arange(n) % N_GROUPS
    x = rng.normal(size=n)
    effects = rng.normal(0.0, sd, N_GROUPS)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(0.8 * x - 0.3 + effects[group])))).astype(float)
    X = np.column_stack([x, group])
    return X, y, np.column_stack([x, group, y])


@numba.njit(cache=True)
def grouped_logistic_loglik(theta, data, i):
    """The reference's row log-likelihood, ``theta = [w, u_1..u_G, log sd]`` (the
    estimator's layout without an intercept: its ``_theta_draws``)."""
    eta = theta[0] * data[i, 0] + theta[1 + int(data[i, 1])]
    return data[i, 2] * eta - max(eta, 0.0) - np.log1p(np.exp(-abs(eta)))


@numba.njit(cache=True)
def grouped_logistic_log_prior(theta):
    """``w ~ N(0, 1)``, ``u_g ~ N(0, sd^2)``, ``sd ~ HalfNormal(1)`` sampled as ``log sd``
    (the estimator's prior with ``autoscale=False``)."""
    log_sd = theta[-1]
    sd = np.exp(log_sd)
    total = -0.5 * theta[0] ** 2 + log_sd - 0.5 * sd * sd
    for k in range(1, theta.size - 1):
        total += -0.5 * (theta[k] / sd) ** 2 - log_sd
    return total


@pytest.mark.parametrize("marking", [GROUP_SD, GROUP_SD_RESCALED, GROUP_SD_INTERWOVEN])
def test_group_prior_matches_scipy(marking):
    """The kernel's hierarchical prior (``scale_of``) and its gradient: effects normal of
    their term's sd, the sd half-normal (sampled as its log, Jacobian included), beside a
    base Gaussian prior and a family's log-scale coordinate; the same density whichever
    moves the sd's marking gives the chains."""
    scale_of = np.array([BASE, BASE, 7, 7, 7, BASE, BASE, marking])
    scales = np.array([1.5, 2.0, 1.0, 1.0, 1.0, 3.0, 2.0, 0.7])
    rng = np.random.default_rng(0)
    for kind in (GAUSSIAN, GAUSSIAN | LOG_SCALE):
        prior = BuiltinPrior(kind, scales, block=6, intercept=True, scale_of=scale_of)

        def reference(t):
            sd = np.exp(t[7])
            value = (stats.norm.logpdf(t[:2], 0, scales[:2]).sum()
                     + stats.norm.logpdf(t[5], 0, 3.0) + stats.norm.logpdf(t[2:5], 0, sd).sum()
                     + stats.halfnorm.logpdf(sd, scale=0.7) + t[7])
            if kind & LOG_SCALE:
                return value + stats.expon.logpdf(np.exp(t[6]), scale=2.0) + t[6]
            return value + stats.norm.logpdf(t[6], 0, 2.0)

        for _ in range(5):
            theta, step = rng.normal(size=8), rng.normal(size=8)
            value, gradient = prior.log_density(theta, want_grad=True)
            moved, _ = prior.log_density(theta + step)
            np.testing.assert_allclose(moved - value, reference(theta + step) - reference(theta),
                                       rtol=1e-10, atol=1e-10)
            numeric = [(reference(theta + 1e-6 * e) - reference(theta - 1e-6 * e)) / 2e-6
                       for e in np.eye(8)]
            np.testing.assert_allclose(gradient, numeric, rtol=1e-6, atol=1e-6)


def correlated_prior(k, n_levels, rng):
    """A prior over ``[w, the k terms' effects (n_levels each), k log sds, k (k - 1) / 2
    correlation coordinates]`` with the terms' effects correlated, and its log density
    written with SciPy: ``u_g ~ N(loc_g, diag(sd) R diag(sd))``, ``sd`` half-normal
    (sampled as its log), ``R`` under LKJ(2) (``det(R)``), and the Jacobian of the map
    from the coordinates to ``R``'s lower triangle by finite differences."""
    n_pairs = k * (k - 1) // 2
    d = 1 + k * n_levels + k + n_pairs
    sds, first = 1 + k * n_levels + np.arange(k), 1 + k * n_levels + k
    scale_of = np.full(d, BASE)
    for t in range(k):
        scale_of[1 + t * n_levels:1 + (t + 1) * n_levels] = sds[t]
    scale_of[sds], scale_of[first:] = GROUP_SD, GROUP_CORRELATION
    scales = np.ones(d)
    scales[sds] = rng.uniform(0.5, 2.0, k)
    locations = np.zeros(d)
    locations[1:first - k] = 0.1 * rng.normal(size=k * n_levels)
    table = [k, n_levels, first, *sds, *(1 + np.arange(k) * n_levels)]
    prior = BuiltinPrior(GAUSSIAN, scales, locations, scale_of=scale_of, correlations=table)

    def lower(x):
        R = cholesky_factor(x, k) @ cholesky_factor(x, k).T
        return np.array([R[i, j] for i in range(1, k) for j in range(i)])

    def reference(t):
        x, sd = t[first:], np.exp(t[sds])
        R = cholesky_factor(x, k) @ cholesky_factor(x, k).T
        effects = (t[1:first - k] - locations[1:first - k]).reshape(k, n_levels).T
        jacobian = np.array([(lower(x + 1e-6 * e) - lower(x - 1e-6 * e)) / 2e-6
                             for e in np.eye(n_pairs)])
        return (stats.multivariate_normal(np.zeros(k), np.outer(sd, sd) * R).logpdf(
                    effects).sum() + stats.norm.logpdf(t[0])
                + np.sum(stats.halfnorm.logpdf(sd, scale=scales[sds]) + t[sds])
                + np.linalg.slogdet(R)[1] + np.linalg.slogdet(jacobian)[1])

    return prior, reference, d


@pytest.mark.parametrize("k, n_levels", [(2, 5), (3, 4), (4, 3)])
def test_correlated_group_prior_matches_scipy(k, n_levels):
    """The kernel's prior of correlated terms (``correlations``) and its gradient: the
    effects' multivariate normal, the sds' half-normals, the LKJ prior and both maps'
    Jacobians, against SciPy's densities and finite differences."""
    rng = np.random.default_rng(k)
    prior, reference, d = correlated_prior(k, n_levels, rng)
    for _ in range(3):
        theta, step = 0.7 * rng.normal(size=d), 0.3 * rng.normal(size=d)
        value, gradient = prior.log_density(theta, want_grad=True)
        moved, _ = prior.log_density(theta + step)
        np.testing.assert_allclose(moved - value, reference(theta + step) - reference(theta),
                                   rtol=1e-8, atol=1e-8)
        numeric = [(reference(theta + 1e-5 * e) - reference(theta - 1e-5 * e)) / 2e-5
                   for e in np.eye(d)]
        np.testing.assert_allclose(gradient, numeric, rtol=1e-4, atol=1e-4)


#: The estimator's settings for the posterior of :func:`grouped_logistic_log_prior`: no
#: intercept, which the effects then carry (with one, it moves with every effect, and a
#: random-walk reference needs ten times the steps to resolve the same errors).
REFERENCE_SETTINGS = dict(group_effects=[1], autoscale=False, fit_intercept=False)


def independent_chain(n_steps):
    """The data and every tenth of ``n_steps`` random-walk Metropolis steps on the reference
    model (``benchmarks/paper/family_references.py`` stores its summary as
    ``grouped_intercepts``), started at and scaled by a short fit."""
    X, y, rows = grouped_logistic()
    pilot = quiet_fit(MinibatchMHLogisticRegression(
        **REFERENCE_SETTINGS, n_draws=500, n_chains=2, random_state=2), X, y)
    draws = pilot._theta_draws().reshape(-1, N_GROUPS + 2)
    return X, y, long_metropolis_chain(grouped_logistic_loglik, grouped_logistic_log_prior,
                                       rows, draws.mean(axis=0), 0.8 * draws.std(axis=0),
                                       n_steps)


@pytest.fixture(scope="module")
def long_chain():
    """The stored summary of :func:`independent_chain` (5,000,000 steps: bulk ESS 130,755
    or more a coordinate, its errors under 0.3 of a 4 x 5,000-draw fit's; the 400,000 steps
    the suite ran before had a fit's own error)."""
    X, y, _ = grouped_logistic()
    return stored_reference("grouped_intercepts", X, y)


#: A sampling scheme of a group-level sd, forced by the thresholds its choice reads.
SCHEMES = {"centred": (-1.0, -np.inf, 0.0), "rescaled": (2.0, -np.inf, 0.0),
           "interwoven": (-1.0, np.inf, -1.0)}


def force_scheme(monkeypatch, scheme):
    """Every group-level sd sampled by ``scheme`` (a key of :data:`SCHEMES`)."""
    for name, value in zip(("GROUP_RESCALE_MAX_DETERMINED", "GROUP_RESCALE_MIN_EVIDENCE",
                            "GROUP_INTERWEAVE_MIN_DETERMINED"), SCHEMES[scheme]):
        monkeypatch.setattr(target_module, name, value)


@pytest.mark.slow
@pytest.mark.parametrize("acceptance, n_draws, scheme", [
    ("auto", 5000, "centred"), ("barker", 12000, "centred"), ("auto", 5000, "rescaled"),
    ("minibatch", 5000, "rescaled"), ("auto", 5000, "interwoven")])
def test_random_intercepts_match_an_independent_long_chain(acceptance, n_draws, scheme,
                                                           long_chain, monkeypatch):
    """Each group's effect, the group sd and the weight: the estimator's draws against a
    long random-walk Metropolis chain of the same posterior written as a user's row model
    (another path through the kernels, and a prior written here), every mean and sd within
    Monte Carlo error, at a size that sees a 0.1 sd shift or a 10% sd error (Barker's test
    accepts about half as often as Metropolis's: twice the draws). The sd's scheme is
    forced: centred paths; non-centred paths and the chains' rescaling moves (which these
    data, 50 rows a group, do not need), decided by the full data and by the minibatch test
    with its proxies; centred paths with the rescaling moves (interwoven)."""
    force_scheme(monkeypatch, scheme)
    X, y, _ = grouped_logistic()
    fit = quiet_fit(MinibatchMHLogisticRegression(
        **REFERENCE_SETTINGS, acceptance=acceptance, n_draws=n_draws, n_chains=4,
        random_state=0), X, y)
    assert_same_distribution(fit._theta_draws(), long_chain,
                             label=f"{acceptance}, {scheme}")


@pytest.mark.parametrize("m", [5, 40])
def test_group_evidence_is_the_normal_evidence_ratio_at_the_empirical_bayes_sd(m):
    """``group_evidence`` (which chooses the interwoven scheme) against the log ratio of
    the evidences ``N(e_hat; 0, sd^2 + 1 / lam)`` and ``N(e_hat; 0, 1 / lam)`` written with
    SciPy, for ``m`` normal estimates ``e_hat`` of one precision ``lam``, at the sd that
    maximises the first; and the five groups of 66 rows that stalled centred chains fall
    below the threshold, forty such groups above it."""
    rng = np.random.default_rng(m)
    lam = 0.03
    estimates = rng.normal(0.0, np.sqrt(2.0 / lam), m)
    sd2 = np.mean(estimates**2) - 1.0 / lam
    assert sd2 > 0
    expected = (stats.norm.logpdf(estimates, 0.0, np.sqrt(sd2 + 1.0 / lam)).sum()
                - stats.norm.logpdf(estimates, 0.0, np.sqrt(1.0 / lam)).sum())
    determined = sd2 * lam / (1.0 + sd2 * lam)
    np.testing.assert_allclose(group_evidence(np.array([determined]), np.array([m])),
                               expected, rtol=1e-10)
    below = group_evidence(np.array([0.52]), np.array([m]))[0] < GROUP_RESCALE_MIN_EVIDENCE
    assert below == (m == 5)


def undiffering_groups(n=300, seed=1):
    """``n`` rows, one feature and ``N_GROUPS`` groups that do not differ (no intercept,
    no group effects): ``(X, y, X_reference)`` as :func:`grouped_logistic`. The
    empirical-Bayes sd of these data is at its floor (the evidence is flat toward 0)."""
    rng = np.random.default_rng(seed)
    group = np.arange(n) % N_GROUPS
    x = rng.normal(size=n)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-0.8 * x))).astype(float)
    return np.column_stack([x, group]), y, np.column_stack([x, group, y])


@numba.njit(cache=True)
def non_centred_loglik(theta, data, i):
    """:func:`grouped_logistic_loglik` in the non-centred coordinates ``[w, z_1..z_G, log
    sd]``, each effect ``u_g = sd z_g``."""
    eta = theta[0] * data[i, 0] + np.exp(theta[-1]) * theta[1 + int(data[i, 1])]
    return data[i, 2] * eta - max(eta, 0.0) - np.log1p(np.exp(-abs(eta)))


@numba.njit(cache=True)
def non_centred_log_prior(theta):
    """:func:`grouped_logistic_log_prior` in the coordinates of :func:`non_centred_loglik`:
    ``z_g ~ N(0, 1)`` (the Jacobian ``sd^G`` of ``u = sd z`` cancels the effects'
    ``-log sd`` each)."""
    log_sd = theta[-1]
    sd = np.exp(log_sd)
    total = -0.5 * theta[0] ** 2 + log_sd - 0.5 * sd * sd
    for k in range(1, theta.size - 1):
        total += -0.5 * theta[k] ** 2
    return total


@pytest.mark.slow
def test_groups_that_do_not_differ_match_an_independent_long_chain():
    """Groups that do not differ, whose sd's posterior piles toward 0 (its empirical-Bayes
    point at the floor, the data determining none of the effects): a default fit against
    a long random-walk chain in the non-centred coordinates, which has no funnel to enter,
    its draws mapped back to the effects (the effects' heavy tails, an sd's spread of
    e^1.2, need twice the draws of ``test_random_intercepts_match...`` to see a 10% sd
    error). Before the start's and shape's variance of a log
    sd was capped (``GROUP_LOG_SD_MAX_VARIANCE``), chains started with the sd 10^-30 of its
    floor and stuck there, or ran off to weights of 10^7. The reference
    (:func:`undiffering_chain`, 10,000,000 steps) is stored: bulk ESS 194,303 or more a
    coordinate, its errors under 0.3 of the fit's."""
    X, y, _ = undiffering_groups()
    fit = quiet_fit(MinibatchMHLogisticRegression(**REFERENCE_SETTINGS, n_draws=10_000,
                                                  n_chains=4, random_state=0), X, y)
    assert_same_distribution(fit._theta_draws(), stored_reference("undiffering_groups", X, y),
                             label="undiffering")


def undiffering_chain(n_steps):
    """The data of :func:`undiffering_groups` and every tenth of ``n_steps`` random-walk
    Metropolis steps in the non-centred coordinates, mapped back to the effects
    (``benchmarks/paper/family_references.py`` stores their summary as
    ``undiffering_groups``)."""
    X, y, rows = undiffering_groups()
    start = np.zeros(N_GROUPS + 2)
    start[-1] = np.log(0.3)
    steps = np.full(N_GROUPS + 2, 0.8)
    steps[0] = 0.12
    chain = long_metropolis_chain(non_centred_loglik, non_centred_log_prior, rows, start,
                                  steps, n_steps)
    chain[:, 1:-1] *= np.exp(chain[:, -1:])  # u = sd z
    return X, y, chain


def grouped_slopes(n=360, rho=0.6, seed=5):
    """``n`` rows, one feature and ``N_GROUPS`` groups whose intercepts (sd 0.8) and
    slopes (sd 0.5) correlate ``rho``: ``(X, y, X_reference)`` as :func:`grouped_logistic`."""
    rng = np.random.default_rng(seed)
    group = np.arange(n) % N_GROUPS
    x = rng.normal(size=n)
    factor = np.linalg.cholesky([[0.64, rho * 0.4], [rho * 0.4, 0.25]])
    effects = rng.standard_normal((N_GROUPS, 2)) @ factor.T
    eta = 0.5 * x + effects[group, 0] + effects[group, 1] * x
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(float)
    return np.column_stack([x, group]), y, np.column_stack([x, group, y])


#: The long reference run of :func:`grouped_slopes`' posterior (mean, sd, Monte Carlo
#: error and bulk ESS per coordinate), built by ``benchmarks/paper/grouped_slopes_reference.py``
#: with the model and a random-walk sampler written there, apart from the library. A
#: random walk of fixed Gaussian steps cannot enter a funnel's neck: on the data of seed 4
#: the slope sd's posterior is one, and the reference gave its log an sd 10% smaller than
#: three runs of the library's samplers (which agreed with one another); seed 5's posterior
#: is not, and there the two agree.
SLOPES_REFERENCE = Path(__file__).with_name("data") / "grouped_slopes_reference.npz"


@pytest.mark.slow
def test_correlated_intercepts_and_slopes_match_an_independent_long_chain(monkeypatch):
    """Correlated group intercepts and slopes (the default ``group_correlation``): every
    effect, both sds, the correlation (as ``atanh``) and the weight against a long
    reference run of the same posterior written independently with the bivariate normal's
    formula (:data:`SLOPES_REFERENCE`, bulk ESS 40,000 or more), the chains taking every
    update a correlated grouping can have: Hamiltonian paths with both terms non-centred,
    rescaling moves of both sds and moves of the correlation that carry the effects. With
    the correlation move's Jacobian off by a fifth this test fails. Centred paths (groups
    of many rows) run the same prior, tested against SciPy above."""
    force_scheme(monkeypatch, "rescaled")
    X, y, _ = grouped_slopes()
    fit = quiet_fit(MinibatchMHLogisticRegression(
        group_effects={1: [0]}, autoscale=False, fit_intercept=False, n_draws=6000,
        n_chains=4, random_state=0), X, y)
    assert fit.posterior_["group_correlation"].shape == (4, 6000, 1)
    with np.load(SLOPES_REFERENCE) as reference:
        assert_same_distribution(fit._theta_draws(), Moments(
            reference["mean"], reference["sd"], reference["mcse"],
            reference["sd"] / np.sqrt(2 * reference["ess"])))


@pytest.mark.slow
def test_grouped_fit_in_a_pipeline_names_effects_and_predicts_unseen_groups():
    """Default settings in a pipeline whose ColumnTransformer scales the numeric column and
    passes the group labels (strings) through: converged, effects and sd named, a level
    unseen in fit predicted at the population level averaged over a new group's effect
    (between the extreme groups' predictions, and not the population's own), and a missing
    label likewise."""
    pd = pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, _ = grouped_logistic(n=3000, sd=1.0, seed=1)
    frame = pd.DataFrame({"x": X[:, 0], "carrier": [f"c{int(g)}" for g in X[:, 1]]})
    columns = ColumnTransformer([("scale", StandardScaler(), ["x"])], remainder="passthrough",
                                verbose_feature_names_out=False).set_output(transform="pandas")
    model = make_pipeline(columns, MinibatchMHLogisticRegression(group_effects=["carrier"],
                                                                 random_state=0))
    quiet_fit(model, frame, y)
    clf = model[-1]
    assert max(np.max(v) for v in clf.diagnostics_["r_hat"].values()) <= 1.01
    table = clf.summary(as_frame=False)
    assert "intercept|carrier[c0]" in table.index
    assert "sd(intercept|carrier)" in table.index
    if importlib.util.find_spec("arviz") is not None:
        data = clf.to_arviz(model[0].transform(frame), y)
        assert list(data.posterior["group_sd"].coords["group_term"].values) == [
            "intercept|carrier"]
        assert data.posterior["group_effects"].coords["group_effect"].values[0] == (
            "intercept|carrier[c0]")
        np.testing.assert_array_equal(data.constant_data["carrier"].values, frame["carrier"])
        assert data.constant_data["X"].shape == (len(frame), 1)
    assert clf.group_effects_.shape == (N_GROUPS,) and clf.coef_.shape == (1, 1)
    unseen = frame.iloc[:1].assign(carrier="new", x=0.0)
    seen = pd.concat([frame.iloc[:1].assign(carrier=f"c{g}", x=0.0) for g in range(N_GROUPS)])
    p_new = model.predict_proba(unseen)[0, 1]
    p_seen = model.predict_proba(seen)[:, 1]
    assert p_seen.min() < p_new < p_seen.max()
    population = 1.0 / (1.0 + np.exp(-clf.intercept_[0]))
    # A new group's effect spreads the log-odds: the mean probability moves toward 1/2.
    assert abs(p_new - 0.5) < abs(population - 0.5)
    np.testing.assert_array_equal(model.predict_proba(unseen), model.predict_proba(unseen))
    # A missing label at predict (refused in fit) is a group the fit has not seen.
    for missing in (None, np.nan):
        np.testing.assert_array_equal(
            model.predict_proba(unseen.assign(carrier=missing)), model.predict_proba(unseen))


def test_group_effects_refuse_bad_input():
    """A missing label, a single group, a grouping column that is not there, a sparse X
    and a consensus-style summary each get an error that names the problem."""
    X, y, _ = grouped_logistic(n=60)
    fast = dict(n_draws=20, n_warmup=20, n_chains=1)
    labels = X[:, 1].astype(object)
    labels[3] = None
    X_missing = np.column_stack([X[:, 0], labels])
    with pytest.raises(ValueError, match="missing label .* row 3"):
        MinibatchMHLogisticRegression(group_effects=[1], **fast).fit(X_missing, y)
    with pytest.raises(ValueError, match="single group"):
        MinibatchMHLogisticRegression(group_effects=[1], **fast).fit(
            np.column_stack([X[:, 0], np.zeros(60)]), y)
    with pytest.raises(ValueError, match="out of range"):
        MinibatchMHLogisticRegression(group_effects=[5], **fast).fit(X, y)
    with pytest.raises(ValueError, match="no column names"):
        MinibatchMHLogisticRegression(group_effects=["carrier"], **fast).fit(X, y)
    with pytest.raises(TypeError, match="sparse"):
        import scipy.sparse as sp
        MinibatchMHLogisticRegression(group_effects=[1], **fast).fit(sp.csr_array(X), y)
    with pytest.raises(ValueError, match="must be numeric"):
        MinibatchMHPoissonRegression(group_effects=[1], **fast).fit(
            np.column_stack([np.array(["a"] * 60, dtype=object), X[:, 1]]), y)


def test_many_groups_proxies_read_the_sparse_hessian_and_take_the_same_draws(monkeypatch):
    """300 groups' intercepts and slopes (605 parameters with their correlation, 0.7% of
    the Hessian's entries
    nonzero: two groups' effects share no row): the minibatch test's proxies multiply by
    the Hessian's CSR form, and the chains take the draws of its dense form, draw for
    draw (the same products, in the same order, less the zeros)."""
    rng = np.random.default_rng(3)
    n, groups = 30_000, 300
    group = rng.integers(0, groups, n)
    x = rng.normal(size=(n, 1))
    eta = 0.5 * x[:, 0] - 0.3 + rng.normal(0, 0.8, groups)[group] + (
        rng.normal(0, 0.4, groups)[group] * x[:, 0])
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    X = np.column_stack([x, group])
    settings = dict(group_effects={1: [0]}, acceptance="minibatch", n_draws=10, n_warmup=20,
                    n_chains=2, random_state=0)  # draws to compare, not to converge
    forms = []
    sparse_hessian = target_module.sparse_hessian
    monkeypatch.setattr(target_module, "sparse_hessian",
                        lambda hessian: forms.append(sparse_hessian(hessian)) or forms[-1])
    sparse = quiet_fit(MinibatchMHLogisticRegression(**settings), X, y)
    assert sparse.control_variates_ and forms[-1][0].size == 605 + 1
    assert forms[-1][2].size < 0.01 * 605**2
    monkeypatch.setattr(target_module, "SPARSE_HESSIAN_MIN_PARAMS", 10**9)
    dense = quiet_fit(MinibatchMHLogisticRegression(**settings), X, y)
    assert forms[-1][0].size == 0
    for name in ("coef", "group_effects", "group_sd", "group_correlation"):
        np.testing.assert_array_equal(sparse.posterior_[name], dense.posterior_[name])


def test_correlations_are_named_stored_and_drawn_for_new_groups():
    """``group_correlation``: the correlation's name in ``summary()`` and ArviZ, its
    posterior mean as ``group_correlation_``, the sampled coordinates' round trip, new
    groups' effects drawn with each draw's correlation, and independent terms without."""
    pd = pytest.importorskip("pandas")
    X, y, _ = grouped_slopes(n=600)
    frame = pd.DataFrame({"x": X[:, 0], "carrier": [f"c{int(g)}" for g in X[:, 1]]})
    fast = dict(group_effects={"carrier": ["x"]}, n_draws=100, n_warmup=100, n_chains=2,
                random_state=0)
    clf = quiet_fit(MinibatchMHLogisticRegression(**fast), frame, y)
    assert "cor(intercept,x|carrier)" in clf.summary(as_frame=False).index
    assert clf.group_correlation_.shape == (1,) and -1 < clf.group_correlation_[0] < 1
    if importlib.util.find_spec("arviz") is not None:
        data = clf.to_arviz()
        assert list(data.posterior["group_correlation"].coords["group_term_pair"].values) == [
            "intercept,x|carrier"]
    terms = clf._group_terms
    lower = np.array([[0.3], [-0.9], [0.95]])
    np.testing.assert_allclose(terms.correlations_from(terms.unconstrained_from(lower)), lower,
                               atol=1e-12)
    sd = np.tile([0.5, 2.0], (20_000, 1))
    new = terms.new_group_effects(sd, np.full((20_000, 1), 0.8))
    np.testing.assert_allclose(new.std(axis=0), [0.5, 2.0], rtol=0.03)
    assert abs(np.corrcoef(new.T)[0, 1] - 0.8) < 0.02
    independent = quiet_fit(MinibatchMHLogisticRegression(**fast, group_correlation=False),
                            frame, y)
    assert "group_correlation" not in independent.posterior_.draws
    assert not hasattr(independent, "group_correlation_")
    assert independent.posterior_["coef"].shape == clf.posterior_["coef"].shape
    clf.set_params(group_correlation=False).fit(frame, y)  # a refit forgets the correlation
    assert not hasattr(clf, "group_correlation_")

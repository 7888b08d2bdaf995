"""Data across machines: fits from a ``dask.array`` (full-data passes as Dask tasks on a
``distributed.LocalCluster``'s workers), consensus Monte Carlo over shards, the prior
raised to ``1 / S``. Chains on every joblib backend (Ray included) are in
``test_backends.py``.

Statistical checks compare with exact Gaussian posteriors where one exists (Student-t
regression with nu = 10^6 and a fixed scale has a Gaussian likelihood to ~1e-6, so each
shard's sub-posterior and the product are Gaussian and consensus Monte Carlo is exact),
with tolerances from the draws' effective sample sizes.
"""

import numpy as np
import pytest

from skbayes_mh import ConsensusMonteCarlo, MinibatchMHLogisticRegression, RobustTRegression
from skbayes_mh.consensus import consensus_combine, consensus_mean_error
from skbayes_mh.models._prior import GAUSSIAN, LAPLACE, LOG_SCALE, BuiltinPrior

from _models import min_ess
from _stats import Z_LIMIT

#: Fits on local Dask clusters (an optional extra).
pytestmark = pytest.mark.slow

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def client():
    """A two-worker process cluster, started and stopped by this module."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def gaussian_regression(n_rows=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, 2))
    y = X @ np.array([0.7, -0.4]) + 0.3 + rng.standard_normal(n_rows)
    return X, y


def gaussian_estimator(**kwargs):
    """Student-t regression that is Gaussian regression: nu = 10^6, scale fixed at 1."""
    return RobustTRegression(nu=1e6, scale=1.0, prior="gaussian", prior_scale=1.0,
                             autoscale=False, n_draws=1500, n_warmup=500, **kwargs)


def exact_posterior(X, y, prior_scale=1.0, weights=None):
    """Mean and covariance of [w, b] for noise sd 1 and the estimator's priors (weights
    N(0, prior_scale^2), intercept N(mean(y), (10 sd(y))^2)), with each row's log-likelihood
    times its ``weights`` (the mean and sd of y then weighted too)."""
    weights = np.ones(len(y)) if weights is None else weights
    centre = np.average(y, weights=weights)
    spread = np.sqrt(np.average((y - centre) ** 2, weights=weights))
    design = np.column_stack([X, np.ones(len(y))])
    precision_prior = np.diag([prior_scale**-2.0] * X.shape[1] + [(10 * spread)**-2.0])
    location = np.r_[np.zeros(X.shape[1]), centre]
    precision = design.T @ (weights[:, None] * design) + precision_prior
    covariance = np.linalg.inv(precision)
    return covariance @ (design.T @ (weights * y) + precision_prior @ location), covariance


def assert_matches(draws, ess, mean, covariance, mean_error=None):
    """Draws (n, d) against a Gaussian (mean, covariance): each mean within Z_LIMIT Monte
    Carlo errors (``mean_error``, or sd / sqrt(ESS)), each sd within Z_LIMIT relative
    errors 1 / sqrt(2 ESS)."""
    sd = np.sqrt(np.diag(covariance))
    mean_error = sd / np.sqrt(ess) if mean_error is None else mean_error
    z = (draws.mean(axis=0) - mean) / mean_error
    assert np.all(np.abs(z) < Z_LIMIT), z
    ratio = draws.std(axis=0) / sd
    assert np.all(np.abs(ratio - 1) < Z_LIMIT / np.sqrt(2 * ess)), ratio


def test_prior_power_scales_density_gradient_and_precision():
    theta = np.array([0.3, -1.2, 0.5, 0.2])
    for kind in (GAUSSIAN, LAPLACE | LOG_SCALE):
        whole = BuiltinPrior(kind, [1.5, 2.0, 3.0, 0.7], locations=[0.1, 0, 0, 0])
        shard = BuiltinPrior(kind, [1.5, 2.0, 3.0, 0.7], locations=[0.1, 0, 0, 0],
                             power=0.25)
        value, gradient = whole.log_density(theta, want_grad=True)
        shard_value, shard_gradient = shard.log_density(theta, want_grad=True)
        np.testing.assert_allclose(shard_value, 0.25 * value, rtol=1e-12)
        np.testing.assert_allclose(shard_gradient, 0.25 * gradient, rtol=1e-12)
        np.testing.assert_allclose(shard.precision(theta), 0.25 * whole.precision(theta),
                                   rtol=1e-12)
    # A Gaussian prior to the power 1/S is the Gaussian with sd scale * sqrt(S).
    wide = BuiltinPrior(GAUSSIAN, [1.5 * 2.0, 2.0 * 2.0, 3.0 * 2.0, 0.7 * 2.0])
    narrow = BuiltinPrior(GAUSSIAN, [1.5, 2.0, 3.0, 0.7], power=0.25)
    np.testing.assert_allclose(narrow.log_density(theta)[0], wide.log_density(theta)[0])


def fit_mean_error(fit):
    """:func:`consensus_mean_error` of a fitted ConsensusMonteCarlo."""
    shard_means = [shard._theta_draws().reshape(-1, fit.weights_.shape[1]).mean(axis=0)
                   for shard in fit.shards_]
    return consensus_mean_error(shard_means, fit.weights_,
                                [min_ess(shard) for shard in fit.shards_],
                                min_ess(fit.estimator_))


def test_consensus_combine_is_exact_for_gaussian_sub_posteriors():
    """Independent draws from S Gaussian sub-posteriors combine into their product."""
    rng = np.random.default_rng(3)
    d, n_shards, shape = 3, 4, (4, 5000)
    means, precisions = [], []
    draws = []
    centre = rng.standard_normal(d)
    for _ in range(n_shards):
        factor = rng.standard_normal((d, d))
        precision = factor @ factor.T + d * np.eye(d)
        # Shards of one data set: sub-posterior means about one sub-posterior sd apart.
        mean = centre + np.linalg.cholesky(np.linalg.inv(precision)) @ rng.standard_normal(d)
        means.append(mean)
        precisions.append(precision)
        draws.append(rng.multivariate_normal(mean, np.linalg.inv(precision), size=shape))
    combined, weights = consensus_combine(draws)
    precision = np.sum(precisions, axis=0)
    covariance = np.linalg.inv(precision)
    mean = covariance @ np.sum([p @ m for p, m in zip(precisions, means)], axis=0)
    assert combined.shape == (4, 5000, d) and weights.shape == (n_shards, d, d)
    n = 4 * 5000
    assert_matches(combined.reshape(-1, d), n, mean, covariance,
                   consensus_mean_error(means, precisions, [n] * n_shards, n))
    # Weights are the inverse sample covariances (within sampling error of the truth).
    np.testing.assert_allclose(weights[0], precisions[0], rtol=0.1, atol=0.1)
    with pytest.raises(ValueError, match="same shape"):
        consensus_combine([draws[0], draws[1][:, :10]])
    stuck = np.zeros(shape + (d,))
    with pytest.raises(ValueError, match="shard 1's draws have a singular covariance"):
        consensus_combine([draws[0], stuck])


def test_consensus_on_array_shards_matches_the_exact_posterior():
    X, y = gaussian_regression()
    mean, covariance = exact_posterior(X, y)
    fit = ConsensusMonteCarlo(gaussian_estimator(random_state=0), n_shards=4,
                              random_state=0).fit(X, y)
    assert fit.n_shards_ == 4 and len(fit.shards_) == 4
    assert sum(shard.shard_rows_ for shard in fit.shards_) == len(y)
    draws = fit.estimator_._theta_draws().reshape(-1, 3)
    assert_matches(draws, min_ess(fit.estimator_), mean, covariance, fit_mean_error(fit))
    # A shard alone samples the wider sub-posterior (its prior to the power 1/4).
    shard = fit.shards_[0]
    assert np.all(shard._theta_draws().reshape(-1, 3).std(axis=0)
                  > 1.5 * np.sqrt(np.diag(covariance)))
    np.testing.assert_array_equal(fit.predict(X[:5]), fit.estimator_.predict(X[:5]))
    assert fit.score(X, y) > 0.3 and fit.coef_.shape == (2,)
    # The summary is the consensus draws', with their mean as coef_.
    table = fit.summary(as_frame=False)
    assert table.index[:3] == ["coef[x0]", "coef[x1]", "intercept"]
    np.testing.assert_allclose(table["mean"][:2], fit.coef_, rtol=1e-12)


def test_consensus_needs_shards_for_arrays_and_a_library_estimator():
    X, y = gaussian_regression(200)
    with pytest.raises(ValueError, match="needs n_shards for in-memory data"):
        ConsensusMonteCarlo(gaussian_estimator()).fit(X, y)
    with pytest.raises(ValueError, match="n_shards must be a positive int"):
        ConsensusMonteCarlo(gaussian_estimator(), n_shards=0).fit(X, y)
    from sklearn.linear_model import LinearRegression
    with pytest.raises(TypeError, match="needs an estimator of skbayes_mh"):
        ConsensusMonteCarlo(LinearRegression(), n_shards=2).fit(X, y)


def test_dask_array_fit_on_a_local_cluster_matches_the_in_memory_fit(client):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20_000, 3))
    y = (rng.random(20_000) < 1 / (1 + np.exp(-X @ [1.0, -1.0, 0.5] - 0.3))).astype(int)
    X_dask, y_dask = da.from_array(X, chunks=5000), da.from_array(y, chunks=5000)
    local = MinibatchMHLogisticRegression(random_state=0).fit(X, y)
    with distributed.get_task_stream(client) as stream:
        remote = MinibatchMHLogisticRegression(random_state=1).fit(X_dask, y_dask)
    # The passes ran as tasks on the workers: the validation scan and the model's passes.
    names = {str(task["key"][0] if isinstance(task["key"], tuple) else task["key"])
             for task in stream.data}
    assert any(name.startswith("_scan_block") for name in names)
    assert any(name.startswith("_run_on_block") for name in names)
    assert {task["worker"] for task in stream.data} <= set(client.scheduler_info()["workers"])
    assert remote.data_passes_.total == local.data_passes_.total
    a = local._theta_draws().reshape(-1, 4)
    b = remote._theta_draws().reshape(-1, 4)
    error = np.sqrt(a.var(axis=0) / min_ess(local) + b.var(axis=0) / min_ess(remote))
    assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) < Z_LIMIT * error)
    ess = min(min_ess(local), min_ess(remote))
    assert np.all(np.abs(b.std(axis=0) / a.std(axis=0) - 1) < Z_LIMIT / np.sqrt(ess))
    np.testing.assert_array_equal(remote.classes_, [0, 1])


def test_rows_above_the_memory_share_are_gathered_on_disk_and_the_file_removed(
        client, monkeypatch, tmp_path):
    """A ``dask.array`` whose rows would take more than the memory share allowed is written
    block by block into memmaps in the folder ``SKBAYES_MH_TEMP_FOLDER`` names; the chains
    read them in place and take the draws of the same fit gathered into memory, and the
    files go when the fit's arrays are freed (the share is forced to 0 here, and the
    blocks are gathered a few at a time)."""
    import gc

    from skbayes_mh import _dask, _data

    rng = np.random.default_rng(2)
    X = rng.standard_normal((20_000, 3))
    y = (rng.random(20_000) < 1 / (1 + np.exp(-X @ [1.0, -1.0, 0.5] - 0.3))).astype(int)
    X_dask, y_dask = da.from_array(X, chunks=3000), da.from_array(y, chunks=3000)
    settings = dict(n_draws=200, n_warmup=200, n_chains=2, random_state=0)
    in_memory = MinibatchMHLogisticRegression(**settings).fit(X_dask, y_dask)
    monkeypatch.setattr(_dask, "GATHER_IN_MEMORY_MAX_SHARE", 0.0)
    monkeypatch.setattr(_dask, "GATHER_BATCH_BYTES", 7000 * X.shape[1] * X.itemsize)
    monkeypatch.setenv(_dask.TEMP_FOLDER_VARIABLE, str(tmp_path))
    gathered = []
    gather = _dask.gather

    def spy(data):
        gathered.append(gather(data))
        files = sorted(path.name for path in tmp_path.iterdir())
        assert len(files) == 2 and all(name.endswith(".npy") for name in files)
        return gathered[-1]

    monkeypatch.setattr(_data, "gather", spy)
    on_disk = MinibatchMHLogisticRegression(**settings).fit(X_dask, y_dask)
    rows = gathered[0]
    bases = [rows.X]
    while getattr(bases[-1], "base", None) is not None:
        bases.append(bases[-1].base)
    assert any(isinstance(base, np.memmap) for base in bases)
    np.testing.assert_array_equal(np.asarray(rows.X), X)
    np.testing.assert_array_equal(np.asarray(rows.y), y)
    # The same chains up to rounding: the kernels' vectorised sums peel by the rows'
    # address alignment, which differs between the file's pages and a fresh allocation.
    np.testing.assert_allclose(on_disk.posterior_["coef"], in_memory.posterior_["coef"],
                               rtol=1e-12, atol=1e-12)
    del on_disk, rows, bases, gathered[:]
    gc.collect()
    assert list(tmp_path.iterdir()) == []


def test_weights_and_exposures_beside_a_dask_array_sample_their_posteriors(client):
    """``sample_weight`` and ``exposure`` (NumPy or Dask, one value a row) beside a
    ``dask.array`` ``X``: the weighted Gaussian regression samples its exact weighted
    posterior (the weights move it by 17 sds: ignored weights would fail), and the
    Poisson fit with exposures the in-memory fit's posterior (the exposures grow with the
    first feature: an ignored offset would move its weight by 0.8, dozens of sds)."""
    from skbayes_mh import MinibatchMHPoissonRegression

    X, y = gaussian_regression(6000, seed=3)
    y += 0.8 * np.maximum(X[:, 0], 0.0)  # a kink: the weights move the fitted slope
    weights = np.where(X[:, 0] > 0, 3.0, 0.25)
    mean, covariance = exact_posterior(X, y, weights=weights)
    unweighted, _ = exact_posterior(X, y)
    assert np.max(np.abs(unweighted - mean) / np.sqrt(np.diag(covariance))) > 10
    fit = gaussian_estimator(random_state=0).fit(
        da.from_array(X, chunks=2000), da.from_array(y, chunks=2000),
        sample_weight=da.from_array(weights, chunks=1500))
    assert_matches(fit._theta_draws().reshape(-1, 3), min_ess(fit), mean, covariance)

    rng = np.random.default_rng(4)
    X = rng.standard_normal((4000, 2))
    exposure = np.exp(0.8 * X[:, 0] + rng.uniform(-0.5, 0.5, 4000))
    counts = rng.poisson(exposure * np.exp(0.2 + X @ [0.3, -0.2]))
    local = MinibatchMHPoissonRegression(random_state=0).fit(X, counts, exposure=exposure)
    remote = MinibatchMHPoissonRegression(random_state=1).fit(
        da.from_array(X, chunks=1000), da.from_array(counts, chunks=1000), exposure=exposure)
    a = local._theta_draws().reshape(-1, 3)
    b = remote._theta_draws().reshape(-1, 3)
    error = np.sqrt(a.var(axis=0) / min_ess(local) + b.var(axis=0) / min_ess(remote))
    assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) < Z_LIMIT * error)
    # The generating weight within 5 posterior sds (about 0.015 each): an ignored offset
    # would put it near 1.1.
    assert abs(b.mean(axis=0)[0] - 0.3) < 5 * b.std(axis=0)[0] < 0.2
    with pytest.raises(ValueError, match="exposure must be positive and finite; row 7"):
        bad = exposure.copy()
        bad[7] = -1.0
        MinibatchMHPoissonRegression().fit(da.from_array(X, chunks=1000), counts, exposure=bad)
    with pytest.raises(ValueError, match="sample_weight"):
        gaussian_estimator().fit(da.from_array(X, chunks=1000), counts, sample_weight=[1.0])


def test_dask_errors_name_the_row_and_the_problem(client):
    X, y = gaussian_regression(1000)
    X[617, 1] = np.nan
    with pytest.raises(ValueError, match=r"Input X contains NaN or infinity \(first in row 617\)"):
        gaussian_estimator().fit(da.from_array(X, chunks=300), da.from_array(y, chunks=300))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        gaussian_estimator().fit(da.from_array(X, chunks=300), y[:-1])
    with pytest.raises(ValueError, match="unknown block sizes"):
        X_dask = da.from_array(np.nan_to_num(X), chunks=300)
        gaussian_estimator().fit(X_dask[X_dask[:, 0] > 0], y[:10])


def test_sharded_consensus_on_a_local_cluster_matches_the_exact_posterior(client):
    X, y = gaussian_regression(6000, seed=2)
    mean, covariance = exact_posterior(X, y)
    X_dask, y_dask = da.from_array(X, chunks=2000), da.from_array(y, chunks=2000)
    with distributed.get_task_stream(client) as stream:
        fit = ConsensusMonteCarlo(gaussian_estimator(random_state=0)).fit(X_dask, y_dask)
    assert fit.n_shards_ == 3
    shard_tasks = [task for task in stream.data
                   if str(task["key"][0] if isinstance(task["key"], tuple)
                          else task["key"]).startswith("_fit_shard")]
    assert len(shard_tasks) == 3
    assert_matches(fit.estimator_._theta_draws().reshape(-1, 3), min_ess(fit.estimator_),
                   mean, covariance, fit_mean_error(fit))

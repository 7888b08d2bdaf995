"""Each row's offset ``o_i`` in its linear predictors (``LinearData.offset``: the log of a
count's exposure): in every data layout the kernels' passes read ``x_i . w + b + o_i``, and
the count regressions' ``exposure`` fits statsmodels' maximum-likelihood fit with that
exposure on small data (the exact test, dense and sparse rows: the chains' full-data
passes) and on tall data (the minibatch test with control variates: the per-row terms)."""
import numpy as np
import pytest
import scipy.sparse as sp

from skbayes_mh import MinibatchMHPoissonRegression, NegativeBinomialRegression
from skbayes_mh.models import LinearData, PoissonModel

from _models import min_ess
from _stats import Z_LIMIT


@pytest.mark.parametrize("layout", ["dense", "float32", "sparse"])
def test_every_layout_reads_the_offset_in_the_linear_predictor(layout):
    """The Poisson log-likelihood, gradient and Hessian of the kernels' pass with offsets
    are the NumPy ones of ``eta = x . w + b + o``."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)) * (rng.random((500, 3)) < 0.5)
    y = rng.poisson(2.0, size=500).astype(np.float64)
    offset = rng.normal(size=500)
    if layout == "float32":
        X = X.astype(np.float32)
    stored = sp.csr_array(X) if layout == "sparse" else X
    from skbayes_mh._data import kernel_csr
    from skbayes_mh._validation import read_only
    stored = kernel_csr(stored) if layout == "sparse" else read_only(stored)
    data = LinearData(stored, read_only(y), read_only(np.zeros(0)), True,
                      offset=read_only(offset))
    theta = np.array([0.2, -0.1, 0.3, 0.4])
    value, gradient, hessian = PoissonModel().loglik_derivatives(data, theta, 2)
    design = np.column_stack([np.asarray(X, dtype=np.float64), np.ones(500)])
    eta = design @ theta + offset
    rate = np.exp(eta)
    tol = 1e-6 if layout == "float32" else 1e-10
    assert value == pytest.approx(np.sum(y * eta - rate), rel=tol)
    np.testing.assert_allclose(gradient, design.T @ (y - rate), rtol=tol)
    np.testing.assert_allclose(hessian, -(design * rate[:, None]).T @ design, rtol=tol)
    half = data.subsample(250, random_state=1)
    assert half.offset.size == 250 and set(half.offset) <= set(offset)


def counts_over_exposure(n, seed, negative_binomial, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    exposure = rng.uniform(0.1, 5.0, size=n)
    mean = exposure * np.exp(X @ [0.3, -0.2] + 0.5)
    if negative_binomial:  # dispersion 0.5: a Gamma mixture of Poissons
        mean = mean * rng.gamma(2.0, 0.5, size=n)
    return (sp.csr_array(X) if sparse else X), rng.poisson(mean), exposure


def statsmodels_fit(X, y, exposure, negative_binomial):
    sm = pytest.importorskip("statsmodels.api", reason="statsmodels is a test dependency")
    design = sm.add_constant(X.toarray() if sp.issparse(X) else X)
    if negative_binomial:
        fit = sm.NegativeBinomial(y, design, exposure=exposure).fit(disp=False, maxiter=500)
        return fit.params, fit.bse
    fit = sm.GLM(y, design, family=sm.families.Poisson(), exposure=exposure).fit()
    return fit.params, fit.bse


@pytest.mark.slow
@pytest.mark.parametrize("estimator, n_rows, sparse, test", [
    (MinibatchMHPoissonRegression, 2000, False, "metropolis"),
    (MinibatchMHPoissonRegression, 2000, True, "metropolis"),
    (NegativeBinomialRegression, 3000, False, "metropolis"),
    (NegativeBinomialRegression, 100_000, False, "minibatch")])
def test_exposure_fits_the_maximum_likelihood_fit_with_that_exposure(estimator, n_rows,
                                                                       sparse, test):
    """The posterior means are statsmodels' estimates with the same ``exposure`` (``GLM``
    Poisson; ``NegativeBinomial``, NB2, with its dispersion ``alpha``) within Monte Carlo
    error plus the O(1/N) of a mean from a mode (0.1 sd at 2,000 rows), and the sds its
    standard errors within the error of an sd estimate and 5% (the same O(1/N))."""
    negative_binomial = estimator is NegativeBinomialRegression
    X, y, exposure = counts_over_exposure(n_rows, 3, negative_binomial, sparse)
    reg = estimator(random_state=0).fit(X, y, exposure=exposure)
    assert reg.acceptance_.name == test
    params, se = statsmodels_fit(X, y, exposure, negative_binomial)
    columns = [reg.posterior_.get("intercept", flat=True)[:, None],
               reg.posterior_.get("coef", flat=True)]
    if negative_binomial:
        columns.append(reg.posterior_.get("dispersion", flat=True)[:, None])
    draws = np.column_stack(columns)
    ess = min_ess(reg)
    sd = draws.std(axis=0)
    z = np.abs(draws.mean(axis=0) - params) / (sd / np.sqrt(ess) + 0.1 * sd * 2000 / n_rows)
    assert np.all(z < Z_LIMIT), z
    ratio = sd / se
    assert np.all(np.abs(ratio - 1) < Z_LIMIT * np.sqrt(0.5 / ess) + 0.05), ratio
    # A row's expected count is its exposure times the predicted mean per unit.
    assert reg.predict(X[:3]) == pytest.approx(
        np.exp(np.asarray(X[:3] @ reg.coef_).ravel() + reg.intercept_), rel=0.01)


def test_bad_exposure_is_refused_by_name():
    X, y, exposure = counts_over_exposure(100, 4, False)
    exposure[7] = 0.0
    with pytest.raises(ValueError, match=r"exposure must be positive and finite; row 7 has "
                                         r"0\.0 \(1 such rows\)"):
        MinibatchMHPoissonRegression(n_draws=20, n_warmup=20).fit(X, y, exposure=exposure)
    exposure[7] = -1.0
    with pytest.raises(ValueError, match="row 7 has -1.0"):
        NegativeBinomialRegression(n_draws=20, n_warmup=20).fit(X, y, exposure=exposure)
    with pytest.raises(ValueError, match=r"exposure must have shape \(100,\)"):
        NegativeBinomialRegression(n_draws=20, n_warmup=20).fit(X, y, exposure=exposure[:50])

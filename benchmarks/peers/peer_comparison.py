"""Bayesian logistic regression at temperature 1: our estimator with its defaults (but the
peers' raw-scale priors, ``autoscale=False``: the same posterior) against
NumPyro's NUTS (diagonal and dense mass matrix) and HMCECS (Taylor proxy, 1,000-row
subsample), on the same data in the same run.

    python benchmarks/peers/peer_comparison.py [--sizes 1e5,1e6,1e7] [--mnist]
        [--peer-python PATH] [--nuts-max-rows 1e6]

Data: synthetic logistic regression, N rows x D = 20 (X standard normal with the last
column 1, true weights 0.5 N(0, 1), prior N(0, 1), no intercept), and MNIST 7 vs 9 (50
principal components plus a bias, prior precision 10) when ``../shared/data`` is present.

The peers run in their own environment, never this project's: ``--peer-python`` (or the
environment variable ``SKBAYES_MH_PEER_PYTHON``) is a Python with NumPyro and ArviZ, e.g.
made with ``python -m venv peer && peer/bin/pip install numpyro arviz``; without it only our
rows are printed. Each peer run is ``benchmarks/_numpyro_peer.py`` in a subprocess (4 chains,
500 warm-up + 1,000 draws); its wall time runs from the arrays in memory to the last draw,
JAX compilation included, and ``wall - compile`` is shown too (the peer at its best, as if
its compilation were cached like our numba kernels).

Our wall time is the whole ``fit`` (validation, MAP and Laplace, control variates, warm-up,
sampling, diagnostics), chains on both cores (``n_jobs=-1``), numba kernels loaded from
their on-disk cache by a small fit before.

Columns: fit wall time, min bulk ESS over the weights, min-ESS per second, max R-hat, data
rows read per iteration (ours: per kept-chain iteration; NUTS: N x leapfrog steps), and the
posterior error against the reference: NUTS (dense if run, else diagonal) where it ran, the
Laplace approximation at the MAP above ``--nuts-max-rows`` (at N / D >= 5 x 10^5 its error is
far below the Monte Carlo error). ``|z| max`` is the largest over the weights of
``|mean - mean_ref| / sqrt(mcse^2 + mcse_ref^2)`` (about 3 for 20 weights when the
means agree), ``sd err`` the largest relative error of the posterior sd.
"""
import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh.diagnostics import summarize

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import run_numpyro_peer, shared_data, table

D = 20


def synthetic(n_rows, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, D))
    X[:, -1] = 1.0
    weights = 0.5 * rng.standard_normal(D)
    y = (rng.random(n_rows) < 1.0 / (1.0 + np.exp(-X @ weights))).astype(np.int64)
    return X, y


def mnist79():
    from skbayes_mh.datasets import mnist_pca_pair

    mnist = shared_data("mnist")
    if mnist is None:
        return None
    X, y = mnist_pca_pair(mnist, (7, 9), 50)
    return X, y


def ours(X, y, prior_scale, intercept):
    """Our estimator with default settings; returns a result row dict and the draws."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # The peers' raw-scale priors (our default, autoscale=True, puts the prior on the
        # standardised features: a different posterior wherever a feature's sd is not 1).
        clf = MinibatchMHLogisticRegression(
            prior_scale=prior_scale, intercept_prior_scale=prior_scale, fit_intercept=intercept,
            autoscale=False, n_jobs=-1, random_state=0).fit(X, y)
    wall = time.perf_counter() - start
    draws = clf.posterior_["coef"]
    if intercept:
        draws = np.concatenate([draws, clf.posterior_["intercept"][..., None]], axis=-1)
    rows = float(clf.posterior_["rows_per_iteration"].mean())
    name = (f"ours ({clf.acceptance_.name}, {clf.proposal_.name}"
            f"{', CV' if clf.control_variates_ else ''}, thin {int(clf.thin_.max())})")
    warned = any("converged" in str(w.message) for w in caught)
    return dict(method=name + (" [warned]" if warned else ""), wall=wall, draws=draws,
                rows=rows), clf


def peer(python, X, y, prior_scale, intercept, method, dense, workdir):
    """One NumPyro run through ``_numpyro_peer.py``; its JSON result with the draws."""
    data = Path(workdir) / "data.npz"
    if not data.exists():
        np.savez(data, X=X, y=y.astype(np.float64), prior_scale=prior_scale,
                 intercept=int(intercept), intercept_prior_scale=prior_scale)
    found = run_numpyro_peer(python, data, method, dense)
    if found is None:
        return None
    result, draws = found
    return dict(method=f"NumPyro {method}" + (" dense" if method == "nuts" and dense else
                                              " diag" if method == "nuts" else ""),
                wall=result["wall_seconds"], compile=result.get("compile_seconds") or 0.0,
                draws=draws, rows=result.get("rows_per_iteration"))


def errors(draws, reference):
    """``(max |z|, max relative sd error)`` of ``draws`` against a reference summary."""
    summary = summarize(draws)
    mcse = np.sqrt(summary["mcse_mean"] ** 2 + reference["mcse_mean"] ** 2)
    z = np.abs(summary["mean"] - reference["mean"]) / mcse
    sd_error = np.abs(summary["sd"] / reference["sd"] - 1.0)
    return float(z.max()), float(sd_error.max())


def laplace_summary(X, y, prior_scale, intercept):
    """The Laplace approximation at the MAP: exact Newton on the full data."""
    from scipy.special import expit

    if intercept:
        X = np.column_stack([X, np.ones(X.shape[0])])
    theta = np.zeros(X.shape[1])
    precision_prior = np.full(X.shape[1], 1.0 / prior_scale ** 2)
    for _ in range(50):
        p = expit(X @ theta)
        gradient = X.T @ (y - p) - precision_prior * theta
        hessian = (X * (p * (1 - p))[:, None]).T @ X + np.diag(precision_prior)
        step = np.linalg.solve(hessian, gradient)
        theta += step
        if np.max(np.abs(step)) < 1e-12:
            break
    covariance = np.linalg.inv(hessian)
    return {"mean": theta, "sd": np.sqrt(np.diag(covariance)), "mcse_mean": np.zeros_like(theta)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1e5,1e6,1e7")
    parser.add_argument("--mnist", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--peer-python", default=os.environ.get("SKBAYES_MH_PEER_PYTHON"))
    parser.add_argument("--nuts-max-rows", type=float, default=1e6,
                        help="run NUTS only up to this many rows (10^7 rows take ~20 min each)")
    parser.add_argument("--peers", default="nuts-diag,nuts-dense,hmcecs")
    args = parser.parse_args()
    if args.peer_python is None:
        print("[no --peer-python: NumPyro rows skipped]", file=sys.stderr)

    # Load the numba kernels from their cache (compiled on the first run after install).
    X, y = synthetic(2000, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        MinibatchMHLogisticRegression(n_draws=50, n_warmup=50, random_state=0).fit(X, y)
        MinibatchMHLogisticRegression(acceptance="minibatch", n_draws=50, n_warmup=50,
                                      random_state=0).fit(X, y)

    data_sets = [(f"synthetic N={float(n):.0e}", int(float(n)), 1.0, False)
                 for n in args.sizes.split(",") if n]
    if args.mnist:
        data_sets.append(("MNIST 7 vs 9", None, 1.0 / np.sqrt(10.0), True))
    for title, n_rows, prior_scale, intercept in data_sets:
        data = synthetic(n_rows) if n_rows else mnist79()
        if data is None:
            continue
        X, y = data
        print(f"\n## {title}: {X.shape[0]:,} rows x {X.shape[1] + int(intercept)} weights",
              flush=True)
        results = []
        mine, clf = ours(X, y, prior_scale, intercept)
        results.append(mine)
        print(f"[{mine['method']}: {mine['wall']:.2f} s]", file=sys.stderr, flush=True)
        if args.peer_python:
            with tempfile.TemporaryDirectory() as workdir:
                for name in args.peers.split(","):
                    method, _, mass = name.partition("-")
                    if method == "nuts" and X.shape[0] > args.nuts_max_rows:
                        continue
                    row = peer(args.peer_python, X, y, prior_scale, intercept, method,
                               mass == "dense", workdir)
                    if row is not None:
                        results.append(row)
                        print(f"[{row['method']}: {row['wall']:.1f} s]", file=sys.stderr,
                              flush=True)
        nuts = [r for r in results if r["method"].startswith("NumPyro nuts")]
        if nuts:
            reference = summarize(nuts[-1]["draws"])
            reference_name = nuts[-1]["method"]
        else:
            reference = laplace_summary(X, y, prior_scale, intercept)
            reference_name = "Laplace at the MAP"
        rows = []
        for r in results:
            summary = summarize(r["draws"])
            ess = float(summary["ess_bulk"].min())
            z, sd_error = errors(r["draws"], reference)
            compile_seconds = r.get("compile", 0.0)
            rows.append([r["method"], f"{r['wall']:.2f}",
                         f"{r['wall'] - compile_seconds:.2f}" if compile_seconds else "-",
                         f"{ess:.0f}", f"{ess / r['wall']:.1f}",
                         f"{ess / (r['wall'] - compile_seconds):.1f}" if compile_seconds else "-",
                         f"{summary['r_hat'].max():.3f}",
                         "-" if r["rows"] is None else f"{r['rows']:,.0f}",
                         f"{z:.1f}", f"{100 * sd_error:.1f}%"])
        table(rows, ["method", "wall s", "wall-compile", "min ESS", "ESS/s",
                     "ESS/s ex-compile", "R-hat", "rows/iter", "|z| max", "sd err"])
        print(f"(reference: {reference_name})")
        hmcecs = [r for r in results if r["method"] == "NumPyro hmcecs"]
        if hmcecs:
            ours_rate = float(summarize(mine["draws"])["ess_bulk"].min()) / mine["wall"]
            peer_rate = float(summarize(hmcecs[0]["draws"])["ess_bulk"].min()) / hmcecs[0]["wall"]
            print(f"min-ESS/s ours / HMCECS: {ours_rate / peer_rate:.1f}x")
        if nuts:
            ours_rate = float(summarize(mine["draws"])["ess_bulk"].min()) / mine["wall"]
            best = max(float(summarize(r["draws"])["ess_bulk"].min()) / r["wall"] for r in nuts)
            print(f"min-ESS/s ours / best NUTS: {ours_rate / best:.1f}x")


if __name__ == "__main__":
    main()

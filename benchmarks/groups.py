"""Group-level effects on tall data: a random-intercept-and-slope logistic regression
(``MinibatchMHLogisticRegression(group_effects={"group": ["x0"]})``), default settings:
the intercepts and slopes correlated (``--independent``: ``group_correlation=False``).

Prints, per size: the fit's wall time (setup included), the test and proposal chosen,
iterations and rows read a chain iteration, the largest R-hat and smallest bulk ESS over
every parameter (the group sds included), the smallest bulk ESS a second, and each group
sd's (and the correlation's) posterior mean and 90% interval beside the value the effects
were drawn with; then how
far the posterior means of the effects are from the effects drawn (their correlation, and
the root mean square of the difference over the posterior sds).

With ``--peer-python`` (or ``SKBAYES_MH_PEER_PYTHON``: a Python with NumPyro and ArviZ, as
for ``peers/peer_comparison.py``), each size up to ``--peer-max-rows`` also runs NumPyro's
NUTS on the same posterior (the same priors: each weight's autoscaled normal, the
intercept's on the intercept at the features' means, each sd's half-normal, the
correlation's LKJ(2)), non-centred
(``effects = sd * z``) as Stan's and NumPyro's manuals write it (``--peer-centred``:
centred, which suits groups of many rows), diagonal mass matrix (``--peer-dense``: dense), 4
chains of 500 warm-up and 1,000 draws, in its own process; its wall time includes JAX's
compilation (shown apart). The last table compares the two: min-ESS a second and its
ratio, and how far the posterior means of the sds and effects are apart in Monte Carlo
errors, ``|mean - mean_peer| / sqrt(mcse^2 + mcse_peer^2)`` (its largest over the 2 + 2G
sds and effects and the correlation is about 3.5 when they agree; the share above 2 about
5%).

Data: two standard-normal features with weights 0.5 and -0.3, intercept -0.5, groups of
equal expected size (labels ``g00017``), intercepts of sd 0.8 and slopes of ``x0`` of sd
0.4, correlated 0.5 (independent with ``--independent``). Two cores, ``random_state`` 0.

    python benchmarks/groups.py [--sizes 100000:200,1000000:1000] [--peer-python PATH]
                                [--independent] [--n-warmup N] [--n-draws N]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/: the shared helpers
from _common import run_numpyro_peer, table

SD_INTERCEPT, SD_SLOPE, CORRELATION = 0.8, 0.4, 0.5


def grouped_rows(n_rows, n_groups, correlated=True, seed=0):
    """``(X, y, intercepts, slopes)``: ``X`` a DataFrame with ``x0``, ``x1`` and ``group``;
    the intercepts and slopes correlated :data:`CORRELATION`, or independent."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    group = rng.integers(0, n_groups, n_rows)
    x = rng.normal(size=(n_rows, 2))
    intercepts = rng.normal(0.0, SD_INTERCEPT, n_groups)
    slopes = rng.normal(0.0, SD_SLOPE, n_groups)
    if correlated:  # the same draws, mixed: corr(intercepts, slopes) = CORRELATION
        slopes = CORRELATION * SD_SLOPE / SD_INTERCEPT * intercepts + np.sqrt(
            1.0 - CORRELATION**2) * slopes
    eta = x @ [0.5, -0.3] - 0.5 + intercepts[group] + slopes[group] * x[:, 0]
    y = (rng.random(n_rows) < 1.0 / (1.0 + np.exp(-eta))).astype(np.int8)
    labels = np.array([f"g{k:05d}" for k in range(n_groups)])
    X = pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "group": labels[group]})
    return X, y, intercepts, slopes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000:200,1000000:1000",
                        help="rows:groups, comma-separated")
    parser.add_argument("--peer-python", default=os.environ.get("SKBAYES_MH_PEER_PYTHON"))
    parser.add_argument("--peer-max-rows", type=float, default=1e6)
    parser.add_argument("--peer-centred", action="store_true",
                        help="NUTS on centred effects (default: non-centred)")
    parser.add_argument("--peer-dense", action="store_true",
                        help="NUTS with a dense mass matrix (default: diagonal)")
    parser.add_argument("--independent", action="store_true",
                        help="independent intercepts and slopes (group_correlation=False)")
    parser.add_argument("--n-warmup", default="auto",
                        help="warm-up iterations a chain (default: the estimator's)")
    parser.add_argument("--n-draws", default="auto",
                        help="draws a chain, every iteration kept (default: the estimator's "
                             "n_draws=\"auto\" and thin=\"auto\"): short runs measure the rows "
                             "read an iteration where a default fit would take too long")
    args = parser.parse_args()
    lengths = {}
    if args.n_warmup != "auto":
        lengths["n_warmup"] = int(args.n_warmup)
    if args.n_draws != "auto":
        lengths.update(n_draws=int(args.n_draws), thin=1)
    fits, sds, effects, peers = [], [], [], []
    for size in args.sizes.split(","):
        n_rows, n_groups = (int(float(v)) for v in size.split(":"))
        X, y, intercepts, slopes = grouped_rows(n_rows, n_groups, not args.independent)
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = MinibatchMHLogisticRegression(
                group_effects={"group": ["x0"]}, group_correlation=not args.independent,
                random_state=0, **lengths).fit(X, y)
        seconds = time.perf_counter() - start
        diagnostics = model.diagnostics_
        bulk = min(float(np.min(v)) for v in diagnostics["ess_bulk"].values())
        r_hat = max(float(np.max(v)) for v in diagnostics["r_hat"].values())
        read = float(np.mean(model.posterior_.sample_stats["rows_per_iteration"]))
        warned = any("converge" in str(w.message) for w in caught)
        name = f"{n_rows:,} x {n_groups:,}"
        fits.append([name, f"{model.acceptance_}", f"{model.proposal_}", f"{seconds:.1f}",
                     f"{model.setup_time_:.1f}", f"{float(np.mean(model.n_iter_)):.0f}",
                     f"{read:,.0f}", f"{r_hat:.3f}", f"{bulk:.0f}", f"{bulk / seconds:.0f}",
                     "yes" if warned else "no"])
        sd_draws = model.posterior_.get("group_sd", flat=True)
        for t, truth in enumerate((SD_INTERCEPT, SD_SLOPE)):
            low, high = np.quantile(sd_draws[:, t], [0.05, 0.95])
            sds.append([name, ("intercept", "slope of x0")[t], f"{truth}",
                        f"{sd_draws[:, t].mean():.3f}", f"[{low:.3f}, {high:.3f}]"])
        if not args.independent:
            rho = model.posterior_.get("group_correlation", flat=True)[:, 0]
            low, high = np.quantile(rho, [0.05, 0.95])
            sds.append([name, "correlation", f"{CORRELATION}", f"{rho.mean():.3f}",
                        f"[{low:.3f}, {high:.3f}]"])
        draws = model.posterior_.get("group_effects", flat=True)
        mean, sd = draws.mean(axis=0), draws.std(axis=0)
        # The levels sort as their zero-padded labels: in the order the effects were drawn,
        # and a level no row drew has no effect.
        seen = np.isin(np.arange(n_groups), [int(g[1:]) for g in model.group_levels_["group"]])
        for t, truth in enumerate((intercepts[seen], slopes[seen])):
            part = slice(t * truth.size, (t + 1) * truth.size)
            effects.append([name, ("intercepts", "slopes of x0")[t],
                            f"{np.corrcoef(mean[part], truth)[0, 1]:.3f}",
                            f"{np.sqrt(np.mean(((mean[part] - truth) / sd[part]) ** 2)):.2f}"])
        if args.peer_python and n_rows <= args.peer_max_rows:
            peer = _peer_row(args.peer_python, X, y, model, name, bulk / seconds,
                             args.peer_centred, args.peer_dense)
            if peer is not None:
                peers.append(peer)
    table(fits, ["rows x groups", "test", "proposal", "seconds", "setup s", "iterations",
                 "rows read/iter", "max R-hat", "min bulk ESS", "min ESS/s", "warned"])
    print()
    table(sds, ["rows x groups", "group sd or correlation", "drawn with", "posterior mean",
                "90% interval"])
    print()
    table(effects, ["rows x groups", "effects", "corr(mean, drawn)",
                    "rms (mean - drawn) / sd"])
    if peers:
        print()
        table(peers, ["rows x groups", "NUTS s", "compile s", "NUTS max R-hat",
                      "NUTS min ESS", "NUTS ESS/s", "ours ESS/s", "ours / NUTS",
                      "NUTS leapfrog/iter", "divergent", "|z| max", "|z| > 2"])


def _peer_row(python, X, y, model, name, ours_per_second, centred=False, dense=False):
    """NumPyro NUTS (non-centred, or ``centred``; a diagonal mass matrix, or ``dense``) on
    the posterior ``model`` sampled: its row of the last table, or None when the peer
    failed."""
    from skbayes_mh.linear_model._priors import AUTOSCALE_REACH

    numeric = X[["x0", "x1"]].to_numpy()
    mean = numeric.mean(axis=0)
    reach = np.maximum(numeric.max(axis=0) - mean, mean - numeric.min(axis=0))
    spread = np.maximum(numeric.std(axis=0), reach / AUTOSCALE_REACH)  # autoscaled priors
    levels = list(model.group_levels_["group"])
    codes = np.searchsorted(levels, X["group"].to_numpy())
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "groups.npz"
        np.savez(data, X=numeric, y=y, prior_scale=model.prior_scale,
                 intercept=1, intercept_prior_scale=model.intercept_prior_scale,
                 group=codes, n_groups=len(levels), term_columns=[-1, 0],
                 group_sd_scales=[model.prior_scale, model.prior_scale / spread[0]],
                 weight_scales=model.prior_scale / spread, x_mean=mean, centred=int(centred),
                 correlated=int(model.group_correlation))
        found = run_numpyro_peer(python, data, "nuts", dense=dense)
    if found is None:
        return None
    result, _ = found
    # Ours in the peer's order: weights, intercept, effects (term-major), sds, correlation.
    names = ["coef", "intercept", "group_effects", "group_sd"] + (
        ["group_correlation"] if model.group_correlation else [])
    draws = np.concatenate([model.posterior_.get(k, flat=True).reshape(
        len(model.posterior_.get("intercept", flat=True)), -1) for k in names], axis=1)
    diagnostics = model.diagnostics_
    ess = np.concatenate([np.ravel(diagnostics["ess_bulk"][k]) for k in names])
    mcse = draws.std(axis=0) / np.sqrt(ess)
    peer_mcse = np.asarray(result["sd"]) / np.sqrt(np.asarray(result["ess_bulk"]))
    z = np.abs(draws.mean(axis=0) - np.asarray(result["mean"])) / np.hypot(mcse, peer_mcse)
    z = z[3:]  # the sds, effects and correlation
    peer_per_second = result["min_ess_bulk_per_second"]
    return [name, f"{result['wall_seconds']:.1f}", f"{result['compile_seconds']:.1f}",
            f"{result['max_rhat']:.3f}", f"{result['min_ess_bulk']:.0f}",
            f"{peer_per_second:.2f}", f"{ours_per_second:.1f}",
            f"{ours_per_second / peer_per_second:.1f}", f"{result['mean_num_steps']:.1f}",
            f"{result['num_divergent']}", f"{z.max():.2f}", f"{np.mean(z > 2):.1%}"]


if __name__ == "__main__":
    main()

"""Consensus Monte Carlo against the single-machine posterior, as N and the number of
shards S vary.

Logistic regression (D = 5 features plus an intercept, correlated features, true
coefficients of order 1) at temperature 1 with the estimator's defaults. For each N, one
single-machine fit is the reference; for each S, ``ConsensusMonteCarlo`` fits S random
shards of N / S rows (their priors raised to 1/S) and combines them. Printed per row, in
units of the reference posterior sd, over the six parameters:

* ``max |mean err| / sd``: the largest error of a posterior mean, and ``MC error``, the
  Monte Carlo sd of that difference (both fits' errors; the consensus one includes its
  weights', see ``consensus_mean_error``): an error well above it is the method's;
* ``sd ratio``: the range of consensus sd / reference sd;
* seconds for the reference fit and for all S shard fits (run one after another).

Usage: ``python benchmarks/studies/consensus.py [--rows 1e4,1e5,1e6] [--shards 2,4,8,16]``
"""
import argparse
import time
import warnings

import numpy as np

from skbayes_mh import ConsensusMonteCarlo, MinibatchMHLogisticRegression
from skbayes_mh.consensus import consensus_mean_error

N_FEATURES = 5


def logistic_data(n_rows, seed=0):
    rng = np.random.default_rng(seed)
    mixing = np.eye(N_FEATURES) + 0.3 * rng.standard_normal((N_FEATURES, N_FEATURES))
    X = rng.standard_normal((n_rows, N_FEATURES)) @ mixing
    coef = np.array([1.0, -0.5, 0.25, 0.0, 0.75])
    y = (rng.random(n_rows) < 1 / (1 + np.exp(-(X @ coef - 1.0)))).astype(np.int64)
    return X, y


def min_ess(estimator):
    return min(float(np.min(v)) for v in estimator.diagnostics_["ess_bulk"].values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1e4,1e5,1e6")
    parser.add_argument("--shards", default="2,4,8,16")
    args = parser.parse_args()
    rows = [int(float(n)) for n in args.rows.split(",")]
    shards = [int(s) for s in args.shards.split(",")]
    print(f"{'N':>10} {'S':>3} {'rows/shard':>10} {'max |mean err| / sd':>20} {'MC error':>9} "
          f"{'sd ratio':>12} {'ref s':>6} {'shards s':>8}")
    for n_rows in rows:
        X, y = logistic_data(n_rows)
        started = time.perf_counter()
        reference = MinibatchMHLogisticRegression(random_state=0).fit(X, y)
        reference_seconds = time.perf_counter() - started
        ref = reference._theta_draws().reshape(-1, N_FEATURES + 1)
        ref_mean, ref_sd = ref.mean(axis=0), ref.std(axis=0)
        for n_shards in shards:
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # shards' warnings are reported below
                fit = ConsensusMonteCarlo(MinibatchMHLogisticRegression(random_state=0),
                                          n_shards=n_shards, n_jobs=1,
                                          random_state=0).fit(X, y)
            seconds = time.perf_counter() - started
            draws = fit.estimator_._theta_draws().reshape(-1, N_FEATURES + 1)
            shard_means = [s._theta_draws().reshape(-1, N_FEATURES + 1).mean(axis=0)
                           for s in fit.shards_]
            consensus_error = consensus_mean_error(
                shard_means, fit.weights_, [min_ess(s) for s in fit.shards_],
                min_ess(fit.estimator_))
            mc_error = np.sqrt(ref_sd**2 / min_ess(reference) + consensus_error**2) / ref_sd
            error = np.abs(draws.mean(axis=0) - ref_mean) / ref_sd
            worst = int(np.argmax(error))
            ratio = draws.std(axis=0) / ref_sd
            unconverged = sum(max(float(np.max(v)) for v in s.diagnostics_["r_hat"].values())
                              > 1.01 for s in fit.shards_)
            note = f"  ({unconverged} shard(s) R-hat > 1.01)" if unconverged else ""
            print(f"{n_rows:>10,} {n_shards:>3} {n_rows // n_shards:>10,} "
                  f"{error[worst]:>20.3f} {mc_error[worst]:>9.3f} "
                  f"{ratio.min():>5.3f}-{ratio.max():<6.3f} {reference_seconds:>6.1f} "
                  f"{seconds:>8.1f}{note}", flush=True)


if __name__ == "__main__":
    main()

"""MNIST-13k (1s vs 7s, 784 raw pixels in [0, 1], no intercept) at temperature 1, the real
posterior: rows read per test by the three subsampling tests with and without control
variates, with the same adaptive random walk, and with the estimator's default proposal.

A N(0, 1) prior on every weight (the paper's flat prior gives an improper posterior at
temperature 1 on separable pixels). Two chains x (``--samples`` warm-up + ``--samples``
kept iterations) per row, ``thin=1``; test accuracy of the posterior-predictive mean.

    python benchmarks/studies/mnist13k_temperature1.py [--samples 500]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from skbayes_mh import MinibatchMHLogisticRegression
from skbayes_mh.acceptance import Austerity, ConfidenceSampler, MinibatchBarker

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import mnist13k, table


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=500)
    args = parser.parse_args()
    loaded = mnist13k()
    if loaded is None:
        return
    data, X_test, y_test = loaded
    X, y = data[:, :-1], data[:, -1].astype(int)
    print(f"MNIST 1 vs 7: {X.shape[0]:,} rows x {X.shape[1]} pixels, temperature 1, "
          f"N(0, 1) prior; 2 chains x {args.samples} warm-up + {args.samples} draws\n")
    rows = []
    for name, test in (("minibatch", MinibatchBarker), ("austerity", Austerity),
                       ("confidence", ConfidenceSampler)):
        for proposal, control_variates in (("random_walk", False), ("random_walk", True),
                                           ("auto", True)):
            start = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                clf = MinibatchMHLogisticRegression(
                    acceptance=test(control_variates=control_variates), proposal=proposal,
                    fit_intercept=False, n_draws=args.samples, n_warmup=args.samples,
                    thin=1, n_chains=2, n_jobs=-1, random_state=0).fit(X, y)
            seconds = time.perf_counter() - start
            diagnostics = clf.diagnostics_
            rows.append([name, clf.proposal_.name, "yes" if clf.control_variates_ else "no",
                         f"{clf.posterior_['n_data_read'].mean():,.1f}",
                         f"{clf.acceptance_rate_:.3f}",
                         f"{np.nanmax(diagnostics.r_hat['coef']):.3f}",
                         f"{np.nanmin(diagnostics.ess_bulk['coef']):.0f}",
                         f"{clf.score(X_test, y_test):.4f}", f"{seconds:.1f}",
                         "yes" if any("converged" in str(w.message) for w in caught) else ""])
            print(f"[{name} {clf.proposal_.name} cv={clf.control_variates_}: {seconds:.1f} s]",
                  flush=True)
    table(rows, ["test", "proposal", "CV", "rows/test", "accept", "max R-hat", "min ESS",
                 "test acc.", "seconds", "warned"])
    print(f"\nN = {X.shape[0]:,}: without control variates the tests at temperature 1 read "
          f"most rows (the confidence sampler all of them).")


if __name__ == "__main__":
    main()

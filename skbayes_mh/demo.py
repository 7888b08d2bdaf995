"""The README's main job: Bayesian logistic regression on a tall synthetic data set, fitted
with every acceptance test and compared with the exact Metropolis test's posterior, each
figure with its Monte Carlo error."""
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from . import diagnostics
from .acceptance import ACCEPTANCE_TESTS
from .linear_model import MinibatchMHLogisticRegression

#: True weights of the synthetic problem (the intercept last).
TRUE_WEIGHTS = (1.0, -0.5, 0.25, 0.0, 2.0)
TRUE_INTERCEPT = -0.3


def make_data(n_data, seed):
    """Standard normal features and labels drawn from the logistic model."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_data, len(TRUE_WEIGHTS)))
    probability = 1.0 / (1.0 + np.exp(-(X @ np.array(TRUE_WEIGHTS) + TRUE_INTERCEPT)))
    return X, (rng.random(n_data) < probability).astype(int)


def _weights(clf):
    return np.concatenate([clf.posterior_["coef"], clf.posterior_["intercept"][..., None]],
                          axis=-1)


def compare(n_data=20_000, n_draws=1000, seed=0):
    """Fit every acceptance test and compare each posterior with the exact test's.

    Returns
    -------
    rows : list of dict
        Per test: ``name``, ``proposal`` (the one ``proposal="auto"`` chose, with ``+CV``
        when the test read control-variate residuals), ``rows_per_iteration``, ``acceptance_rate``, ``r_hat`` (the
        largest), ``ess`` (the smallest bulk ESS), ``shift`` (the largest ``|mean - exact
        mean| / exact sd``) and ``shift_error`` (its Monte Carlo standard error in the same
        units), ``sd_ratio`` (range over the weights), ``sd_ratio_worst`` (the ratio
        farthest from 1) and ``sd_ratio_error`` (its Monte Carlo standard error),
        ``seconds``.
    """
    X, y = make_data(n_data, seed)
    fits = {}
    for name in ACCEPTANCE_TESTS:
        start = time.perf_counter()
        with warnings.catch_warnings():  # the table shows R-hat and ESS itself
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf = MinibatchMHLogisticRegression(acceptance=name, n_draws=n_draws,
                                                n_warmup=n_draws, random_state=seed).fit(X, y)
        fits[name] = (clf, time.perf_counter() - start)
    reference = _weights(fits["metropolis"][0])
    ref_mean, ref_sd = reference.mean(axis=(0, 1)), reference.std(axis=(0, 1))
    ref_mcse = diagnostics.mcse_mean(reference)
    ref_mcse_sd = diagnostics.mcse_sd(reference)
    rows = []
    for name, (clf, seconds) in fits.items():
        draws = _weights(clf)
        summary = diagnostics.summarize(draws)
        shift = np.abs(summary["mean"] - ref_mean) / ref_sd
        error = np.sqrt(summary["mcse_mean"] ** 2 + ref_mcse**2) / ref_sd
        worst = int(np.argmax(shift))
        ratio = summary["sd"] / ref_sd
        far = int(np.argmax(np.abs(ratio - 1.0)))
        ratio_error = ratio[far] * np.hypot(summary["mcse_sd"][far] / summary["sd"][far],
                                            ref_mcse_sd[far] / ref_sd[far])
        proposal = clf.proposal_.name + ("+CV" if clf.control_variates_ else "")
        rows.append(dict(name=name, proposal=proposal,
                         rows_per_iteration=float(clf.posterior_["rows_per_iteration"].mean()),
                         acceptance_rate=clf.acceptance_rate_, r_hat=float(summary["r_hat"].max()),
                         ess=float(summary["ess_bulk"].min()), shift=float(shift[worst]),
                         shift_error=float(error[worst]), sd_ratio=(float(ratio.min()),
                                                                    float(ratio.max())),
                         sd_ratio_worst=float(ratio[far]), sd_ratio_error=float(ratio_error),
                         seconds=seconds))
    return rows


def run_demo(n_data=20_000, n_draws=1000, seed=0, out=print):
    """Print :func:`compare`'s table."""
    out(f"Bayesian logistic regression on {n_data:,} synthetic rows, {len(TRUE_WEIGHTS)} "
        f"features and an intercept: every acceptance test with MinibatchMHLogisticRegression's "
        f"defaults (4 chains x {n_draws:,} draws after {n_draws:,} warm-up iterations), "
        f"against the exact Metropolis test's posterior.\n")
    header = (f"{'test':<11} {'proposal':<9} {'rows/iter':>10} {'accept':>7} {'max R-hat':>9} {'min ESS':>8} "
              f"{'max |mean - exact| / sd':>24} {'worst sd / exact sd':>20} {'seconds':>8}")
    out(header)
    out("-" * len(header))
    for row in compare(n_data, n_draws, seed):
        reference = row["name"] == "metropolis"
        shift = "(reference)" if reference else f"{row['shift']:.3f} +- {row['shift_error']:.3f}"
        ratio = ("(reference)" if reference
                 else f"{row['sd_ratio_worst']:.3f} +- {row['sd_ratio_error']:.3f}")
        out(f"{row['name']:<11} {row['proposal']:<9} {row['rows_per_iteration']:>10,.1f} "
            f"{row['acceptance_rate']:>7.3f} {row['r_hat']:>9.3f} {row['ess']:>8.0f} "
            f"{shift:>24} {ratio:>20} {row['seconds']:>8.2f}")
    out("\n+- is the Monte Carlo standard error of the figure (from both runs' draws): a "
        "difference within about twice it is noise. The worst sd ratio is the weight's "
        "farthest from 1. rows/iter is the data read per iteration (likelihood queries for "
        "Firefly; the exact tests read every row at each of a Hamiltonian path's gradient "
        "steps); CV: control variates.")

"""Sparse features: a synthetic bag-of-words logistic regression (by default 100,000
documents, a 20,000-word vocabulary, about 50 distinct words a document) fitted from a
``scipy.sparse`` CSR matrix with ``MinibatchMHLogisticRegression`` defaults.

The words' frequencies fall off as a power of their rank (a few common words, a long tail
of rare ones); a document's count of each word it contains is its feature (a CSR matrix of
float64 counts, int32 indices). Each word's true weight is normal with sd 0.5 divided by the
sd of its count, so that every word moves the log-odds by about as much; the labels are drawn
from the logistic model.

Printed: the CSR matrix's bytes and what the same matrix would take dense, the memory the
kernels' machine code takes (loaded by a small fit of the same settings first: the same
whatever the data), the fit's wall time (setup included) and setup time, the peak resident
memory the setup added (resident memory read every 20 ms during the fit's first
``setup_time_`` seconds) and the whole fit added (Linux: the high-water mark reset before
the fit) against the matrix's bytes, with the draws' bytes (which the user asks for with
``n_draws``) apart, the test
and proposal chosen, the full-data passes an iteration (rows read over the rows), the
largest R-hat and smallest bulk ESS over the coefficients and min-ESS per second, and the
test accuracy next to scikit-learn's ``LogisticRegression`` (L2, C=1) on the same CSR
matrix.

Then the training rows' ``p (1 - p)`` at the posterior-mean weights (0.25 on the decision
boundary: how far the rows sit from it, the likelihood's curvature along them) and the
leapfrog steps a path took against those of a Gaussian posterior of the sampled dimension.

Then the largest R-hat's two parts (arviz-stats): the bulk's (rank-normalised split R-hat)
and the folded draws' (the distances from the median: whether the chains agree on the
spread), each beside the largest that *independent* draws give when every coefficient has
the effective sample size it has in the fit (bulk or folded ESS), over three seeds. Over
thousands of coefficients the largest R-hat is a maximum of noisy statistics: a fit whose
R-hats are no larger than independent draws' of the same ESS has chains that agree as
well as converged chains of that length can; only more draws lower it.

    python benchmarks/studies/sparse_text.py [--documents 100000] [--vocabulary 20000]
        [--words 50] [--n-jobs 2] [--setting proposal=hmc ...]
"""
import argparse
import os
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from arviz_stats.base import array_stats
from sklearn.linear_model import LogisticRegression

from skbayes_mh import MinibatchMHLogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import table


def bag_of_words(n_documents, vocabulary, words, seed=0):
    """``(X, y)``: ``X`` a CSR matrix of word counts (``n_documents`` x ``vocabulary``, about
    ``words`` distinct words a row), ``y`` binary labels from a logistic model."""
    rng = np.random.default_rng(seed)
    frequency = 1.0 / (np.arange(vocabulary) + 10.0) ** 1.1
    frequency /= frequency.sum()
    lengths = rng.poisson(words * 1.15, size=n_documents)  # tokens; repeats make ~words distinct
    rows = np.repeat(np.arange(n_documents), lengths)
    columns = rng.choice(vocabulary, size=rows.size, p=frequency)
    X = sp.csr_array((np.ones(rows.size), (rows, columns)), shape=(n_documents, vocabulary))
    X.sum_duplicates()
    X = sp.csr_array((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                     shape=X.shape)
    spread = np.sqrt(np.asarray(X.multiply(X).mean(axis=0)).ravel()
                     - np.asarray(X.mean(axis=0)).ravel() ** 2)
    weights = rng.normal(0.0, 0.5, size=vocabulary) / np.maximum(spread, 1e-3)
    eta = X @ weights
    eta -= np.median(eta)
    y = (rng.random(n_documents) < 1.0 / (1.0 + np.exp(-eta))).astype(int)
    return X, y


def resident_peak_reset():
    """Reset this process's resident-memory high-water mark (Linux); False elsewhere."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def resident_kib(field):
    """``VmHWM`` (peak) or ``VmRSS`` (now) of this process in KiB (Linux)."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class ResidentSampler:
    """Records this process's resident memory (``VmRSS``, KiB) with its time every
    ``interval`` seconds in a background thread, to find the peak within the fit's first
    seconds (its setup) after the fit."""

    def __init__(self, interval=0.02):
        self.interval, self.readings = interval, []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._done.is_set():
            self.readings.append((time.perf_counter(), resident_kib("VmRSS")))
            self._done.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()

    def peak_between(self, start, stop):
        """The largest reading taken from ``start`` to ``stop`` (``time.perf_counter()``)."""
        return max((kib for at, kib in self.readings if start <= at <= stop), default=0)


def independent_draws_rhat(ess, n_chains, method, seed):
    """The largest R-hat (arviz-stats' ``method``: ``"z_scale"`` for the bulk, ``"folded"``)
    over independent normal draws, one set per coefficient with that coefficient's effective
    sample size ``ess`` (shape (n_coefficients,)): the coefficients binned in 40 quantiles of
    their ESS, each bin's drawn as ``n_chains`` chains of ``ESS / n_chains`` draws."""
    rng = np.random.default_rng(seed)
    edges = np.quantile(ess, np.linspace(0.0, 1.0, 41))
    bins = np.clip(np.searchsorted(edges, ess, side="right") - 1, 0, 39)
    largest = 1.0
    for b in range(40):
        count = int(np.sum(bins == b))
        if count:
            n_draws = max(4, int(round((edges[b] + edges[b + 1]) / 2 / n_chains)))
            draws = rng.standard_normal((count, n_chains, n_draws))
            largest = max(largest, float(np.max(array_stats.rhat(draws, method=method))))
    return largest


def rhat_against_independent_draws(draws, seeds=(0, 1, 2)):
    """Rows of the R-hat table: the fit's largest bulk and folded R-hat over the
    coefficients of ``draws`` (chain, draw, coefficient), and the range over ``seeds`` of
    :func:`independent_draws_rhat` at each coefficient's bulk and folded ESS."""
    by_parameter = np.moveaxis(draws, 2, 0)
    fit, reference = [], []
    for rhat_method, ess_method in (("z_scale", "bulk"), ("folded", "folded")):
        fit.append(f"{np.nanmax(array_stats.rhat(by_parameter, method=rhat_method)):.4f}")
        ess = array_stats.ess(by_parameter, method=ess_method)
        values = [independent_draws_rhat(ess, draws.shape[0], rhat_method, seed)
                  for seed in seeds]
        reference.append(f"{min(values):.4f} to {max(values):.4f}")
    return [["this fit", *fit], ["independent draws of each coefficient's ESS", *reference]]


def parse_setting(text):
    name, value = text.split("=", 1)
    try:
        return name, int(value)
    except ValueError:
        try:
            return name, float(value)
        except ValueError:
            return name, value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--vocabulary", type=int, default=20_000)
    parser.add_argument("--words", type=int, default=50)
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--setting", action="append", default=[],
                        help="an estimator parameter, name=value (repeatable)")
    args = parser.parse_args()
    settings = dict(parse_setting(text) for text in args.setting)

    X, y = bag_of_words(args.documents + args.documents // 5, args.vocabulary, args.words)
    n_train = args.documents
    X_train, X_test, y_train, y_test = X[:n_train], X[n_train:], y[:n_train], y[n_train:]
    X_train = sp.csr_array(X_train)
    matrix_bytes = X_train.data.nbytes + X_train.indices.nbytes + X_train.indptr.nbytes
    allocator = {name: value for name, value in os.environ.items()
                 if name.startswith("MALLOC_")}  # glibc's settings change the resident peak
    if allocator:
        print("allocator settings: " + ", ".join(f"{k}={v}" for k, v in allocator.items()))
    print(f"X: {X_train.shape[0]:,} x {X_train.shape[1]:,}, {X_train.nnz / n_train:.1f} "
          f"stored values a row; CSR {matrix_bytes / 2**20:.1f} MiB (dense float64: "
          f"{8 * X_train.shape[0] * X_train.shape[1] / 2**30:.1f} GiB)")

    started = time.perf_counter()
    reference = LogisticRegression(max_iter=2000).fit(X_train, y_train)
    reference_seconds = time.perf_counter() - started

    # The kernels' machine code, which the first fit in a process loads (the same whatever
    # the data's size), is loaded first by a small fit of the same settings and printed
    # apart from the memory the fit itself adds.
    X_small, y_small = bag_of_words(2_000, 300, 20, seed=1)
    code_before = resident_kib("VmRSS")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        MinibatchMHLogisticRegression(n_jobs=args.n_jobs, random_state=0,
                                      **{**settings, "n_draws": 50}).fit(X_small, y_small)
    code_mib = (resident_kib("VmRSS") - code_before) / 2**10
    print(f"kernels loaded by a small fit first: {code_mib:.0f} MiB (once a process, "
          "whatever the data)")

    clf = MinibatchMHLogisticRegression(n_jobs=args.n_jobs, random_state=0, **settings)
    measured = resident_peak_reset()
    before = resident_kib("VmRSS")
    started = time.perf_counter()
    with warnings.catch_warnings(record=True), ResidentSampler() as resident:
        warnings.simplefilter("always")
        clf.fit(X_train, y_train)
    seconds = time.perf_counter() - started
    added = (resident_kib("VmHWM") - before) * 1024 if measured else float("nan")
    # The setup (MAP, Laplace, control variates) allocates no draws: its peak apart.
    setup_added = (resident.peak_between(started, started + clf.setup_time_) - before) * 1024
    coef = clf.posterior_["coef"]
    draws_bytes = coef.nbytes + clf.posterior_["intercept"].nbytes
    r_hat = float(np.nanmax(clf.diagnostics_.r_hat["coef"]))
    ess = float(np.nanmin(clf.diagnostics_.ess_bulk["coef"]))
    # Rows the test read per iteration, over the training rows: full-data passes (an exact
    # test with Hamiltonian paths: one a leapfrog step and one for the test).
    passes = float(clf.posterior_.sample_stats["rows_per_iteration"].mean()) / n_train
    rows = [["ours", f"{seconds:.1f}", f"{clf.setup_time_:.1f}",
             f"{setup_added / 2**20:.0f}", f"{setup_added / matrix_bytes:.2f}",
             f"{added / 2**20:.0f}", f"{(added - draws_bytes) / matrix_bytes:.2f}",
             f"{draws_bytes / 2**20:.0f}", f"{clf.acceptance_.name}+{clf.proposal_.name}",
             int(np.max(clf.thin_)), f"{passes:.1f}", f"{r_hat:.3f}", f"{ess:.0f}",
             f"{ess / seconds:.2f}", f"{clf.score(X_test, y_test):.4f}"],
            ["LogisticRegression", f"{reference_seconds:.1f}", "", "", "", "", "", "",
             "L-BFGS", "",
             "", "", "", "", f"{reference.score(X_test, y_test):.4f}"]]
    table(rows, ["fit", "wall s", "setup s", "setup peak added MiB", "setup peak / CSR",
                 "peak added MiB", "(peak - draws) / CSR",
                 "draws MiB", "sampler", "thin", "passes an iteration", "max R-hat",
                 "min ESS", "ESS/s", "test accuracy"])
    # How far the training rows sit from the decision boundary at the posterior-mean
    # weights (each row's p (1 - p), the likelihood's curvature along it: 0.25 on the
    # boundary), and the leapfrog steps a path took (passes less the test's) against the
    # pi / 2 / d^(-1/4) of a Gaussian posterior of the sampled dimension in its own shape.
    eta = np.asarray(X_train @ clf.coef_.ravel()).ravel() + float(clf.intercept_[0])
    curvature = np.exp(-np.abs(eta)) / (1.0 + np.exp(-np.abs(eta))) ** 2
    sampled = (clf.span_rank_ or X_train.shape[1]) + 1
    print(f"the training rows' p (1 - p) at the posterior-mean weights: median "
          f"{np.median(curvature):.1e}, 90th percentile {np.quantile(curvature, 0.9):.1e}; "
          f"leapfrog steps a path {passes - 1:.1f} (a Gaussian posterior of {sampled:,} "
          f"sampled coordinates in its own shape: {np.pi / 2 * sampled ** 0.25:.1f})")
    print()
    table(rhat_against_independent_draws(coef.reshape(*coef.shape[:2], -1)),
          [f"largest R-hat over {coef[0, 0].size:,} coefficients", "bulk", "folded"])


if __name__ == "__main__":
    main()

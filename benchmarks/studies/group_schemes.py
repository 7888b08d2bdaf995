"""How a group-level sd is sampled, and why (``models/_base.py``: the thresholds
``GROUP_RESCALE_MAX_DETERMINED``, ``GROUP_RESCALE_MIN_EVIDENCE``,
``GROUP_INTERWEAVE_MIN_DETERMINED``): default fits under each scheme forced in turn against
the scheme the rule picks, in one process, over several seeds.

The schemes: centred Hamiltonian paths only; non-centred paths with the rescaling moves;
centred paths with the rescaling moves (interwoven). Each is forced by setting the three
thresholds in ``sampling/_target.py``; ``rule`` leaves them. Printed per data set: the range
over the seeds of its share of determined effects ``gamma / m`` and of the evidence for the
effects over none (nats), and the schemes the rule picked; then per scheme, the seeds'
fits converged (R-hat <= 1.01 over every parameter) and the largest R-hat, their wall
seconds (median, max), their smallest bulk ESS (median) and the median over the seeds of
the sd's 1st percentile, which a scheme that misses the funnel's neck puts too high (table
in ``docs/estimators.md``).

Data: diabetes (``load_diabetes(scaled=False)``, its 331-row training split, the ten
features standardised on it, age in five bands as the grouping, as a ``ColumnTransformer``
gives them) with ``RobustTRegression``; and
simulated groups (logistic or Student-t rows, one feature) of given number, size and sd.

    python benchmarks/studies/group_schemes.py [--seeds 8] [--cases diabetes,t5,logit6,...]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from skbayes_mh import MinibatchMHLogisticRegression, RobustTRegression
from skbayes_mh.models._prior import GROUP_SD, GROUP_SD_INTERWOVEN, GROUP_SD_RESCALED
from skbayes_mh.sampling import _target

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the shared helpers
from _common import cases_option, table

#: Each scheme's thresholds: (rescale below this share, interweave below this evidence,
#: interweave from this share); None: the rule's own.
SCHEMES = {"rule": None, "centred": (-1.0, -np.inf, 0.0),
           "non-centred": (2.0, -np.inf, 0.0), "interwoven": (-1.0, np.inf, -1.0)}
#: The scheme each marking of an sd gives.
PICKED = {GROUP_SD: "centred", GROUP_SD_RESCALED: "non-centred",
          GROUP_SD_INTERWOVEN: "interwoven"}
NAMES = ("GROUP_RESCALE_MAX_DETERMINED", "GROUP_RESCALE_MIN_EVIDENCE",
         "GROUP_INTERWEAVE_MIN_DETERMINED")


def diabetes(seed):
    """As a pipeline gives it: the training split's numeric columns standardised by a
    scaler fitted on them, the band labels (strings) passed through beside them."""
    import pandas as pd
    from sklearn.datasets import load_diabetes
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    frame = load_diabetes(as_frame=True, scaled=False).frame
    frame["age_band"] = pd.cut(frame.age, [0, 30, 40, 50, 60, 100]).astype(str)
    y = frame.pop("target").to_numpy()
    X_train, _, y_train, _ = train_test_split(frame, y, random_state=0)
    numeric = X_train.drop(columns="age_band").to_numpy()
    X = np.column_stack([StandardScaler().fit_transform(numeric).astype(object),
                         X_train["age_band"].to_numpy()])
    return RobustTRegression, X, y_train, numeric.shape[1]


def simulated(n_groups, rows, sd, family):
    def make(seed):
        rng = np.random.default_rng(seed)
        group = np.repeat(np.arange(n_groups), rows)
        x = rng.normal(size=group.size)
        eta = 0.5 * x + sd * rng.normal(size=n_groups)[group]
        if family == "logit":
            y = (rng.random(group.size) < 1.0 / (1.0 + np.exp(-eta))).astype(float)
            return MinibatchMHLogisticRegression, np.column_stack([x, group]), y, 1
        y = eta + 0.5 * rng.standard_t(4, group.size)
        return RobustTRegression, np.column_stack([x, group]), y, 1
    return make


CASES = {"diabetes": ("diabetes, 5 age bands of 66 rows, Student-t", diabetes),
         "t5": ("5 groups of 60 rows, sd 2 noise scales, Student-t", simulated(5, 60, 1.0, "t")),
         "t3": ("3 groups of 100 rows, sd 1 noise scale, Student-t", simulated(3, 100, 0.5, "t")),
         "logit6": ("6 groups of 50 rows that do not differ, logistic",
                    simulated(6, 50, 0.0, "logit")),
         "logit200": ("200 groups of 3 rows, sd 0.5, logistic", simulated(200, 3, 0.5, "logit")),
         "logit500": ("500 groups of 4 rows, sd 0.5, logistic", simulated(500, 4, 0.5, "logit"))}


def fit_once(make, seed, scheme, seen):
    estimator, X, y, grouping = make(seed)
    original = {name: getattr(_target, name) for name in NAMES}
    if SCHEMES[scheme] is not None:
        for name, value in zip(NAMES, SCHEMES[scheme]):
            setattr(_target, name, value)
    linear = _target.Target.linear.__func__

    def recording(cls, model, *args, **kwargs):
        target = linear(cls, model, *args, **kwargs)
        code = target.prior.scale_of[target.prior.group_sds[0]]
        seen.append((float(model.group_determined[0]), float(model.group_evidence[0]),
                     PICKED[code]))
        return target

    _target.Target.linear = classmethod(recording)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            started = time.perf_counter()
            fitted = estimator(group_effects=[grouping], random_state=seed).fit(X, y)
            seconds = time.perf_counter() - started
    finally:
        _target.Target.linear = classmethod(linear)
        for name, value in original.items():
            setattr(_target, name, value)
    r_hat = max(np.nanmax(v) for v in fitted.diagnostics_["r_hat"].values())
    ess = min(np.nanmin(v) for v in fitted.diagnostics_["ess_bulk"].values())
    sd_low = float(np.quantile(fitted.posterior_["group_sd"][..., 0], 0.01))
    return r_hat, seconds, ess, sd_low


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8)
    cases_option(parser, CASES)
    args = parser.parse_args()
    CASES["diabetes"][1](0)  # imports and compiles before the timed fits
    for key in args.cases:
        title, make = CASES[key]
        rows = []
        for scheme in SCHEMES:
            seen = []
            results = np.array([fit_once(make, seed, scheme, seen) for seed in range(args.seeds)])
            if scheme == "rule":
                determined = np.array([entry[0] for entry in seen])
                evidence = np.array([entry[1] for entry in seen])
                picked = ", ".join(f"{sum(entry[2] == name for entry in seen)} {name}"
                                   for name in ("centred", "non-centred", "interwoven")
                                   if any(entry[2] == name for entry in seen))
            r_hat, seconds, ess, sd_low = results.T
            rows.append([scheme, f"{np.sum(r_hat <= 1.01)} of {args.seeds}",
                         f"{np.max(r_hat):.3f}", f"{np.median(seconds):.2f}, {np.max(seconds):.2f}",
                         f"{np.median(ess):.0f}", f"{np.median(sd_low):.3g}"])
        print(f"\n{title}: gamma / m {determined.min():.2f} to {determined.max():.2f}, "
              f"evidence {evidence.min():.2f} to {evidence.max():.2f} nats over the seeds; "
              f"the rule picked {picked}")
        table(rows, ["scheme", "converged", "max R-hat", "seconds (median, max)",
                     "min bulk ESS (median)", "sd's 1st percentile (median)"])


if __name__ == "__main__":
    main()

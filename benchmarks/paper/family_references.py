"""Build the long reference posteriors of the families' agreement tests: for each of
``tests/estimators/test_{binomial,gamma,negative_binomial,ordinal,probit}.py``, a
random-walk Metropolis chain of the model written there apart from the estimators
(``independent_chain``: a user's row log-likelihood and prior through ``sample()``), every
tenth step kept, summarised per coordinate (mean, sd, their Monte Carlo standard errors as
``tests/_stats.py`` computes them, bulk ESS) with the data it was run on, into
``tests/estimators/data/{family}_reference.npz``; likewise the group-level intercepts of
``tests/estimators/test_group_effects.py`` (``grouped_intercepts``, and
``undiffering_groups``: groups that do not differ, sampled in non-centred coordinates),
whose chains are :data:`CHAINS`. The tests compare their fits' draws with
these summaries (``_models.stored_reference``), at both sides' Monte Carlo error. And, with
``control_variates``, the importance-sampling reference of
``tests/sampling/test_control_variates.py`` (its moments and exact starts).

    python benchmarks/paper/family_references.py [--steps N] [--families binomial,...]

2,000,000 steps a family (12 to 47 s each on one core), 10,000,000 for the ordinal model
(169 s), whose slowest coordinate mixes slowest: the references' errors are then a third
or less of a test fit's. The ordinal reference of 2,000,000 steps put the second log gap's
mean 0.006 sd (1.5 of its standard errors) from this one, and 24 seeds of the default fit
0.009 sd from it (2 errors): a shorter reference's own error made the fits look biased.
The group-level references: 5,000,000 steps (``grouped_intercepts``, 131 s beside a busy
second core; bulk ESS 130,755 or more) and 10,000,000 (``undiffering_groups``, whose sd's
heavy tails mix slowest; 341 s, bulk ESS 194,303 or more), which the suite ran as 400,000
and 800,000 steps at every run (7 s and 10 s of a test worker).
"""
import argparse
import importlib
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "estimators"), str(ROOT / "benchmarks")]
from _models import REFERENCES  # noqa: E402  (the tests' own helpers)
from _stats import moments_and_errors  # noqa: E402

from skbayes_mh.diagnostics import ess_bulk  # noqa: E402

#: Not a family: the control variates' tests' exact posterior of 20,000 logistic rows by
#: importance sampling (``tests/sampling/test_control_variates.py``), the suite's draws.
CONTROL_VARIATES = ROOT / "tests" / "sampling" / "data" / "control_variates_reference.npz"

FAMILIES = ("binomial", "gamma", "negative_binomial", "ordinal", "probit", "grouped_intercepts",
            "undiffering_groups", "control_variates")
#: The references that are not a family's: ``(test module, function)`` of their chains.
CHAINS = {"grouped_intercepts": ("test_group_effects", "independent_chain"),
          "undiffering_groups": ("test_group_effects", "undiffering_chain")}
#: Steps of each family's chain (every tenth kept).
STEPS = {"ordinal": 10_000_000, "grouped_intercepts": 5_000_000,
         "undiffering_groups": 10_000_000}
DEFAULT_STEPS = 2_000_000


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, help="steps of every family's chain (default: "
                        f"{DEFAULT_STEPS:,}, the ordinal model's {STEPS['ordinal']:,})")
    parser.add_argument("--families", default=",".join(FAMILIES))
    args = parser.parse_args()
    REFERENCES.mkdir(exist_ok=True)
    for family in args.families.split(","):
        if family == "control_variates":
            control_variates_reference()
            continue
        module_name, function = CHAINS.get(family, (f"test_{family}", "independent_chain"))
        steps = args.steps or STEPS.get(family, DEFAULT_STEPS)
        started = time.perf_counter()
        X, y, chain = getattr(importlib.import_module(module_name), function)(steps)
        seconds = time.perf_counter() - started
        mean, sd, mean_error, sd_error = moments_and_errors(chain)
        ess = ess_bulk(chain[None])
        output = REFERENCES / f"{family}_reference.npz"
        np.savez(output, X=X, y=y, mean=mean, sd=sd, mean_error=mean_error, sd_error=sd_error,
                 ess=ess, steps=steps)
        print(f"{family}: {steps:,} steps in {seconds:.1f} s; bulk ESS {ess.min():,.0f} "
              f"to {ess.max():,.0f}; largest error {np.max(mean_error / sd):.4f} sd on a mean, "
              f"{np.max(sd_error / sd):.4f} on an sd; written to {output.relative_to(ROOT)}",
              flush=True)


def control_variates_reference():
    """Store ``test_control_variates.importance_reference`` of its problem (the draws and
    starts the suite used to compute at every run)."""
    sys.path.insert(0, str(ROOT / "tests" / "sampling"))
    import test_control_variates as module

    rows, target, _ = module.make_tall_logistic_problem()
    started = time.perf_counter()
    reference, starts, effective = module.importance_reference(
        rows, target, module.N_REFERENCE, module.N_CHAINS)
    seconds = time.perf_counter() - started
    CONTROL_VARIATES.parent.mkdir(exist_ok=True)
    np.savez(CONTROL_VARIATES, row_sums=rows.sum(axis=0), mean=reference.mean, sd=reference.sd,
             mean_error=reference.mean_error, sd_error=reference.sd_error, starts=starts,
             effective=effective, n_draws=module.N_REFERENCE)
    print(f"control variates: {module.N_REFERENCE:,} importance draws in {seconds:.1f} s, "
          f"effective {effective:,.0f}; written to {CONTROL_VARIATES.relative_to(ROOT)}",
          flush=True)


if __name__ == "__main__":
    main()

"""Build the long reference posteriors of the families' agreement tests: for each of
``tests/estimators/test_{binomial,gamma,negative_binomial,ordinal,probit}.py``, a
random-walk Metropolis chain of the model written there apart from the estimators
(``independent_chain``: a user's row log-likelihood and prior through ``sample()``), every
tenth step kept, summarised per coordinate (mean, sd, their Monte Carlo standard errors as
``tests/_stats.py`` computes them, bulk ESS) with the data it was run on, into
``tests/estimators/data/{family}_reference.npz``. The tests compare their fits' draws with
these summaries (``_models.stored_reference``), at both sides' Monte Carlo error.

    python benchmarks/paper/family_references.py [--steps 2000000] [--families binomial,...]

2,000,000 steps a family: 15 to 50 s each on one core; the references' errors are then
a third of a default test fit's.
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

FAMILIES = ("binomial", "gamma", "negative_binomial", "ordinal", "probit")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2_000_000)
    parser.add_argument("--families", default=",".join(FAMILIES))
    args = parser.parse_args()
    REFERENCES.mkdir(exist_ok=True)
    for family in args.families.split(","):
        module = importlib.import_module(f"test_{family}")
        started = time.perf_counter()
        X, y, chain = module.independent_chain(args.steps)
        seconds = time.perf_counter() - started
        mean, sd, mean_error, sd_error = moments_and_errors(chain)
        ess = ess_bulk(chain[None])
        output = REFERENCES / f"{family}_reference.npz"
        np.savez(output, X=X, y=y, mean=mean, sd=sd, mean_error=mean_error, sd_error=sd_error,
                 ess=ess, steps=args.steps)
        print(f"{family}: {args.steps:,} steps in {seconds:.1f} s; bulk ESS {ess.min():,.0f} "
              f"to {ess.max():,.0f}; largest error {np.max(mean_error / sd):.4f} sd on a mean, "
              f"{np.max(sd_error / sd):.4f} on an sd; written to {output.relative_to(ROOT)}",
              flush=True)


if __name__ == "__main__":
    main()

"""The samplers and the one driver they run under.

* ``_target.py``: the posterior as the kernels see it, and control variates.
* ``_samplers.py``: Metropolis-Hastings (any proposal, any acceptance test) and Firefly,
  each ``init(theta, rng) -> state`` and ``run(state, n_iter, rng) -> info`` over one numba
  loop.
* ``_shape.py``: a proposal's shape (a factor, or scales corrected in a few directions).
* ``_tuning.py``: warm-up tuners (scale, shape, Firefly's ``q_db``) and the thinning rule.
* ``_driver.py``: warm-up windows, frozen kept draws in timed chunks, progress, stopping.
* ``_parallel.py``: per-chain seeds, chains in parallel through joblib.
* ``_api.py``: :func:`sample` and :func:`acceptance_probability` for user models.
"""
from ._api import SampleResult, acceptance_probability, sample
from ._driver import ChainResult, continue_chain, run_chain
from ._parallel import Progress, chain_seeds, interruptible, run_in_parallel
from ._samplers import FireflySampler, MetropolisHastings, chain_kernel, sampler_for
from ._shape import Shape
from ._target import Target, control_variates, no_control_variates
from ._tuning import AutoThin, QdbTuner, ScaleTuner, ShapeTuner, auto_q_db

__all__ = ["AutoThin", "ChainResult", "FireflySampler", "MetropolisHastings", "Progress",
           "QdbTuner", "SampleResult", "ScaleTuner", "Shape", "ShapeTuner", "Target",
           "acceptance_probability", "auto_q_db", "chain_kernel", "chain_seeds", "continue_chain",
           "control_variates", "interruptible", "no_control_variates", "run_chain",
           "run_in_parallel", "sample", "sampler_for"]
